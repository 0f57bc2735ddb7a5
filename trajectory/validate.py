"""Validation of ATIF documents: the committed JSON Schema plus the cross-field rules it cannot say.

Returns every problem found, each naming the JSON path and the rule, instead of stopping
at the first one as pydantic does. Rules (names used in `ValidationIssue.rule`):

- `schema:<keyword>`   the JSON Schema (`atif.schema.json`) rejected the value
- `step-id`            step ids are 1..n in order
- `agent-only`         model_name, reasoning_effort, reasoning_content, tool_calls, metrics: agent steps only
- `source-call-id`     an observation result's source_call_id names a tool call of its own step
- `tool-arguments`     tool call arguments are a JSON object (not a JSON string)
- `llm-call-count`     llm_call_count == 0 on an agent step: no metrics, no reasoning_content
- `subagent-ref`       a subagent ref sets trajectory_id or trajectory_path
- `subagent-id`        embedded subagent trajectories have a trajectory_id, unique among siblings
- `timestamp`          timestamps parse as ISO 8601
- `content-part`       text parts carry text, image/audio parts carry the matching source
- `subagent-ref-resolves` (warning) an embedded ref names a trajectory that is embedded in the document
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from functools import cache
from typing import Any, Literal

from jsonschema import Draft202012Validator
from jsonschema.exceptions import ValidationError as JsonSchemaError
from pydantic import BaseModel

from evalkit.trajectory.atif import AGENT_ONLY_FIELDS, is_iso_timestamp
from evalkit.trajectory.schema import load_schema

Severity = Literal["error", "warning"]


@dataclass(frozen=True)
class ValidationIssue:
    path: str
    rule: str
    message: str
    severity: Severity = "error"

    def __str__(self) -> str:
        return f"{self.path or '<root>'}: {self.message} (rule: {self.rule})"


@cache
def _schema_validator() -> Draft202012Validator:
    return Draft202012Validator(load_schema())


def _join(path: str, key: str | int) -> str:
    if isinstance(key, int):
        return f"{path}[{key}]"
    return f"{path}.{key}" if path else key


def _path_of(parts: Any) -> str:
    path = ""
    for part in parts:
        path = _join(path, part)
    return path


def validate_trajectory(
    document: Mapping[str, Any] | str | bytes | BaseModel, *, schema: bool = True
) -> list[ValidationIssue]:
    """All problems of an ATIF document (errors and warnings); an empty list means valid.

    `schema=False` checks the cross-field rules only: for documents our builder made (in the shape
    of the models the schema is generated from), where the per-node JSON Schema walk is the slow part.
    """
    data: Any
    if isinstance(document, BaseModel):
        data = document.model_dump(mode="json", exclude_none=True)
    elif isinstance(document, str | bytes):
        try:
            data = json.loads(document)
        except ValueError as exc:
            return [ValidationIssue("", "json", f"not JSON: {exc}")]
    else:
        data = document
    if not isinstance(data, Mapping):
        return [ValidationIssue("", "schema:type", "a trajectory must be a JSON object")]

    # One walk: the step rules collect the subagent references they pass, checked once the
    # embedded trajectories are all known.
    refs: list[_Ref] = []
    rule_issues = list(_cross_field_issues(data, "", refs))
    rule_issues.extend(_dangling_refs(data, refs))
    covered = {issue.path for issue in rule_issues}
    schema_issues = []
    for error in map(_deepest, _schema_validator().iter_errors(data) if schema else ()):
        path = _path_of(error.absolute_path)
        # A rule that already explains this value says it better than the generic schema message.
        if path in covered:
            continue
        schema_issues.append(ValidationIssue(path, f"schema:{error.validator}", _short(error.message)))
    issues = schema_issues + rule_issues
    return sorted(set(issues), key=lambda issue: (issue.path, issue.rule, issue.message))


def _deepest(error: JsonSchemaError) -> JsonSchemaError:
    """For `anyOf [X, null]` the useful message is X's own, deeper one."""
    while error.validator in ("anyOf", "oneOf") and error.context:
        error = max(error.context, key=lambda sub: (len(sub.absolute_path), sub.validator != "type"))
    return error


def errors_only(issues: list[ValidationIssue]) -> list[ValidationIssue]:
    return [issue for issue in issues if issue.severity == "error"]


def is_valid(document: Mapping[str, Any] | str | bytes | BaseModel) -> bool:
    return not errors_only(validate_trajectory(document))


def _short(message: str, limit: int = 300) -> str:
    return message if len(message) <= limit else message[: limit - 3] + "..."


# A subagent reference met on the walk: (the steps' path, step, result, reference index, the reference).
_Ref = tuple[str, int, int, int, Mapping[str, Any]]


def _cross_field_issues(doc: Mapping[str, Any], prefix: str, refs: list[_Ref]) -> Iterator[ValidationIssue]:
    steps = doc.get("steps")
    if isinstance(steps, list):
        steps_path = _join(prefix, "steps")
        for index, step in enumerate(steps):
            if isinstance(step, Mapping):
                yield from _step_issues(step, index, steps_path, refs)
    subs = doc.get("subagent_trajectories")
    if isinstance(subs, list):
        seen: set[str] = set()
        for index, sub in enumerate(subs):
            path = _join(_join(prefix, "subagent_trajectories"), index)
            if not isinstance(sub, Mapping):
                continue
            trajectory_id = sub.get("trajectory_id")
            if not isinstance(trajectory_id, str):
                yield ValidationIssue(
                    _join(path, "trajectory_id"),
                    "subagent-id",
                    "an embedded subagent trajectory needs a trajectory_id",
                )
            elif trajectory_id in seen:
                yield ValidationIssue(
                    _join(path, "trajectory_id"),
                    "subagent-id",
                    f"trajectory_id {trajectory_id!r} is repeated",
                )
            else:
                seen.add(trajectory_id)
            yield from _cross_field_issues(sub, path, refs)


def _step_issues(
    step: Mapping[str, Any], index: int, steps_path: str, found: list[_Ref]
) -> Iterator[ValidationIssue]:
    # Every step of every served document passes through here: the JSON paths are only written
    # out for a rule that fails (`steps_path[index]`, as `_join` writes it), never for the rest.
    get = step.get
    step_id = get("step_id")
    if isinstance(step_id, int) and step_id != index + 1:
        yield ValidationIssue(f"{steps_path}[{index}].step_id", "step-id", f"is {step_id}, expected {index + 1}")
    timestamp = get("timestamp")
    if isinstance(timestamp, str) and not is_iso_timestamp(timestamp):
        yield ValidationIssue(f"{steps_path}[{index}].timestamp", "timestamp", f"{timestamp!r} is not ISO 8601")
    source = get("source")
    if source == "system" or source == "user":
        for name in AGENT_ONLY_FIELDS:
            if get(name) is not None:
                yield ValidationIssue(
                    f"{steps_path}[{index}].{name}", "agent-only", f"only allowed on agent steps, not {source}"
                )
    if source == "agent" and get("llm_call_count") == 0:
        for name in ("metrics", "reasoning_content"):
            if get(name) is not None:
                yield ValidationIssue(
                    f"{steps_path}[{index}].{name}", "llm-call-count", "must be absent when llm_call_count is 0"
                )

    call_ids: set[str] = set()
    tool_calls = get("tool_calls")
    if isinstance(tool_calls, list):
        for call_index, call in enumerate(tool_calls):
            if not (type(call) is dict or isinstance(call, Mapping)):
                continue
            call_id = call.get("tool_call_id")
            if isinstance(call_id, str):
                call_ids.add(call_id)
            if "arguments" in call:
                arguments = call["arguments"]
                if not (type(arguments) is dict or isinstance(arguments, Mapping)):
                    what = "a JSON string" if isinstance(arguments, str) else f"a {type(arguments).__name__}"
                    yield ValidationIssue(
                        f"{steps_path}[{index}].tool_calls[{call_index}].arguments",
                        "tool-arguments",
                        f"is {what}; tool arguments must be a JSON object",
                    )
    message = get("message")
    if isinstance(message, list):
        yield from _content_issues(message, f"{steps_path}[{index}].message")

    observation = get("observation")
    results = observation.get("results") if isinstance(observation, Mapping) else None
    if not isinstance(results, list):
        return
    for result_index, result in enumerate(results):
        if not (type(result) is dict or isinstance(result, Mapping)):
            continue
        source_call_id = result.get("source_call_id")
        if isinstance(source_call_id, str) and source_call_id not in call_ids:
            yield ValidationIssue(
                f"{steps_path}[{index}].observation.results[{result_index}].source_call_id",
                "source-call-id",
                f"{source_call_id!r} names no tool call of step {index + 1}",
            )
        content = result.get("content")
        if isinstance(content, list):
            yield from _content_issues(
                content, f"{steps_path}[{index}].observation.results[{result_index}].content"
            )
        result_refs = result.get("subagent_trajectory_ref")
        if isinstance(result_refs, list):
            for ref_index, ref in enumerate(result_refs):
                if not isinstance(ref, Mapping):
                    continue
                found.append((steps_path, index, result_index, ref_index, ref))
                if ref.get("trajectory_id") is None and ref.get("trajectory_path") is None:
                    yield ValidationIssue(
                        f"{steps_path}[{index}].observation.results[{result_index}]"
                        f".subagent_trajectory_ref[{ref_index}]",
                        "subagent-ref",
                        "needs trajectory_id or trajectory_path (session_id alone does not resolve)",
                    )


def _content_issues(content: Any, path: str) -> Iterator[ValidationIssue]:
    if not isinstance(content, list):
        return
    for index, part in enumerate(content):
        if not isinstance(part, Mapping):
            continue
        part_path = _join(path, index)
        kind = part.get("type")
        source = part.get("source")
        if kind == "text":
            if part.get("text") is None or source is not None:
                yield ValidationIssue(part_path, "content-part", "a text part needs `text` and no `source`")
        elif kind in ("image", "audio"):
            if source is None or part.get("text") is not None:
                yield ValidationIssue(
                    part_path, "content-part", f"an {kind} part needs `source` and no `text`"
                )
            elif isinstance(source, Mapping):
                media_type = str(source.get("media_type", ""))
                if not media_type.startswith(f"{kind}/"):
                    yield ValidationIssue(
                        _join(_join(part_path, "source"), "media_type"),
                        "content-part",
                        f"{media_type!r} is not an {kind} media type",
                    )


def _embedded_ids(doc: Mapping[str, Any]) -> set[str]:
    ids: set[str] = set()
    subs = doc.get("subagent_trajectories")
    if isinstance(subs, list):
        for sub in subs:
            if isinstance(sub, Mapping):
                if isinstance(sub.get("trajectory_id"), str):
                    ids.add(sub["trajectory_id"])
                ids |= _embedded_ids(sub)
    return ids


def _dangling_refs(doc: Mapping[str, Any], refs: list[_Ref]) -> Iterator[ValidationIssue]:
    embedded = _embedded_ids(doc)
    for steps_path, step_index, result_index, ref_index, ref in refs:
        trajectory_id = ref.get("trajectory_id")
        if (
            isinstance(trajectory_id, str)
            and ref.get("trajectory_path") is None
            and trajectory_id not in embedded
        ):
            path = (f"{steps_path}[{step_index}].observation.results[{result_index}]"
                    f".subagent_trajectory_ref[{ref_index}]")
            yield ValidationIssue(
                _join(path, "trajectory_id"),
                "subagent-ref-resolves",
                f"{trajectory_id!r} is not among the embedded subagent trajectories",
                severity="warning",
            )
