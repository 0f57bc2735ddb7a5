"""Built-in checks: deterministic evaluators on the answer, the structured output
or the ATIF trajectory of a run.

Output checks look at `answer` (text) or `output` (structured), optionally at a
field by dotted `path`; where a config leaves `expected` unset, the case's
expected output is used.

Trajectory checks read the ATIF dict and, by default, the embedded subagent
trajectories too. A run without a trajectory fails a trajectory check (it cannot
be shown to satisfy it) with an explanation saying so — it is not an evaluator
error, because the evaluator worked; the run left nothing to check.

Error markers (agreed with `trajectory/`): a step, a tool call or an observation
result whose `extra.error` is set (a message string, or an object with `type`
and `message`) records an error of the agent's run.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterator
from typing import Any, Literal

from jsonschema import exceptions as jsonschema_exceptions
from jsonschema import validators as jsonschema_validators
from pydantic import Field, model_validator

from .base import (
    Evaluation,
    EvaluationInput,
    Evaluator,
    EvaluatorConfig,
    Target,
    select_target,
)

__all__ = [
    "ContainsCheck",
    "ContainsConfig",
    "ExactMatch",
    "ExactMatchConfig",
    "JsonSchemaCheck",
    "JsonSchemaConfig",
    "MaxCostCheck",
    "MaxCostConfig",
    "MaxStepsCheck",
    "MaxStepsConfig",
    "NoErrorsCheck",
    "NoErrorsConfig",
    "NumericTolerance",
    "NumericToleranceConfig",
    "RegexCheck",
    "RegexConfig",
    "ToolCalledCheck",
    "ToolCalledConfig",
    "ToolNotCalledCheck",
    "ToolNotCalledConfig",
    "iter_steps",
]


def _excerpt(value: Any, limit: int = 200) -> str:
    text = value if isinstance(value, str) else json.dumps(value, default=str, ensure_ascii=False)
    return text if len(text) <= limit else text[:limit] + "…"


class _OutputConfig(EvaluatorConfig):
    target: Target = "answer"
    path: str | None = Field(default=None, description="dotted path into the target, e.g. 'result.total'")


def _no_target(problem: str) -> Evaluation:
    return Evaluation.verdict(False, f"nothing to check: {problem}", label="missing")


# --- exact --------------------------------------------------------------------------------


class ExactMatchConfig(_OutputConfig):
    expected: Any = Field(default=None, description="default: the case's expected output")
    case_sensitive: bool = True
    strip: bool = Field(default=True, description="ignore leading and trailing whitespace of strings")


class ExactMatch(Evaluator[ExactMatchConfig]):
    """Equality with the expected value: strings after optional strip/casefold,
    anything else (numbers, JSON objects) by value."""

    type = "exact"
    version = "1"
    config_model = ExactMatchConfig

    def _norm(self, v: Any) -> Any:
        if isinstance(v, str):
            if self.config.strip:
                v = v.strip()
            if not self.config.case_sensitive:
                v = v.casefold()
        return v

    async def evaluate(self, item: EvaluationInput) -> Evaluation:
        expected = self.config.expected if self.config.expected is not None else item.expected
        if expected is None:
            return Evaluation.failure(
                "exact: no expected value; set `expected` in the evaluator config or on the case"
            )
        value, problem = select_target(item, self.config.target, self.config.path)
        if problem:
            return _no_target(problem)
        ok = self._norm(value) == self._norm(expected)
        if ok:
            return Evaluation.verdict(True, f"{self.config.target} equals the expected value")
        return Evaluation.verdict(
            False, f"expected {_excerpt(expected)}, got {_excerpt(value)}", expected=expected
        )


# --- contains -----------------------------------------------------------------------------


class ContainsConfig(_OutputConfig):
    substrings: list[str] | None = Field(
        default=None, description="default: the case's expected output (a string or a list of strings)"
    )
    mode: Literal["all", "any"] = "all"
    case_sensitive: bool = True


class ContainsCheck(Evaluator[ContainsConfig]):
    type = "contains"
    version = "1"
    config_model = ContainsConfig

    async def evaluate(self, item: EvaluationInput) -> Evaluation:
        needles: Any = self.config.substrings if self.config.substrings is not None else item.expected
        if isinstance(needles, str):
            needles = [needles]
        if not needles or not all(isinstance(n, str) for n in needles):
            return Evaluation.failure(
                "contains: no substrings; set `substrings` in the config, or give the case an expected "
                "string or list of strings"
            )
        value, problem = select_target(item, self.config.target, self.config.path)
        if problem:
            return _no_target(problem)
        text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)
        fold = (lambda s: s) if self.config.case_sensitive else str.casefold
        haystack = fold(text)
        found = [n for n in needles if fold(n) in haystack]
        missing = [n for n in needles if n not in found]
        ok = not missing if self.config.mode == "all" else bool(found)
        if ok:
            return Evaluation.verdict(True, f"found {', '.join(map(repr, found))}")
        what = "missing " + ", ".join(map(repr, missing)) if self.config.mode == "all" else "none found"
        return Evaluation.verdict(False, f"{what} in {_excerpt(text)}", missing=missing)


# --- regex --------------------------------------------------------------------------------


class RegexConfig(_OutputConfig):
    pattern: str
    full_match: bool = Field(default=False, description="the whole text must match, not just a part")
    ignore_case: bool = False
    multiline: bool = False
    dotall: bool = False

    @model_validator(mode="after")
    def _compiles(self) -> RegexConfig:
        try:
            re.compile(self.pattern)
        except re.error as exc:
            raise ValueError(f"regex pattern {self.pattern!r} does not compile: {exc}") from exc
        return self


class RegexCheck(Evaluator[RegexConfig]):
    type = "regex"
    version = "1"
    config_model = RegexConfig

    def __init__(self, config: RegexConfig, *, name: str | None = None) -> None:
        super().__init__(config, name=name)
        flags = (
            (re.IGNORECASE if config.ignore_case else 0)
            | (re.MULTILINE if config.multiline else 0)
            | (re.DOTALL if config.dotall else 0)
        )
        self._regex = re.compile(config.pattern, flags)

    async def evaluate(self, item: EvaluationInput) -> Evaluation:
        value, problem = select_target(item, self.config.target, self.config.path)
        if problem:
            return _no_target(problem)
        text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)
        m = self._regex.fullmatch(text) if self.config.full_match else self._regex.search(text)
        if m:
            return Evaluation.verdict(True, f"matched {_excerpt(m.group(0), 80)!r}", match=m.group(0))
        how = "fully match" if self.config.full_match else "match"
        return Evaluation.verdict(False, f"{self.config.pattern!r} did not {how} {_excerpt(text)}")


# --- JSON schema --------------------------------------------------------------------------


class JsonSchemaConfig(_OutputConfig):
    target: Target = "output"
    json_schema: dict[str, Any] = Field(alias="schema")

    model_config = EvaluatorConfig.model_config | {"populate_by_name": True}

    @model_validator(mode="after")
    def _valid_schema(self) -> JsonSchemaConfig:
        cls = jsonschema_validators.validator_for(self.json_schema)
        try:
            cls.check_schema(self.json_schema)
        except jsonschema_exceptions.SchemaError as exc:
            raise ValueError(f"not a valid JSON Schema: {exc.message} (at {list(exc.path)})") from exc
        return self


class JsonSchemaCheck(Evaluator[JsonSchemaConfig]):
    """The target validates against a JSON Schema (its `$schema` picks the draft;
    default: the latest). A string target is parsed as JSON first."""

    type = "json_schema"
    version = "1"
    config_model = JsonSchemaConfig

    def __init__(self, config: JsonSchemaConfig, *, name: str | None = None) -> None:
        super().__init__(config, name=name)
        self._validator = jsonschema_validators.validator_for(config.json_schema)(config.json_schema)

    async def evaluate(self, item: EvaluationInput) -> Evaluation:
        value, problem = select_target(item, self.config.target, self.config.path)
        if problem:
            return _no_target(problem)
        if isinstance(value, str):
            try:
                value = json.loads(value)
            except json.JSONDecodeError as exc:
                return Evaluation.verdict(
                    False, f"the {self.config.target} is not JSON: {exc}", label="not_json"
                )
        errors = sorted(self._validator.iter_errors(value), key=lambda e: list(e.absolute_path))
        if not errors:
            return Evaluation.verdict(True, "valid against the schema")
        shown = "; ".join(
            f"{'/'.join(map(str, e.absolute_path)) or '(root)'}: {e.message}" for e in errors[:5]
        )
        more = f" (and {len(errors) - 5} more)" if len(errors) > 5 else ""
        return Evaluation.verdict(False, f"{len(errors)} schema error(s): {shown}{more}", errors=len(errors))


# --- numeric ------------------------------------------------------------------------------

_NUMBER = re.compile(r"[-+]?(?:\d{1,3}(?:,\d{3})+|\d+)?(?:\.\d+)?(?:[eE][-+]?\d+)?")


def _parse_number(value: Any, extract: Literal["whole", "last_number"]) -> float | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        return float(value)
    if not isinstance(value, str):
        return None
    if extract == "whole":
        try:
            return float(value.strip().replace(",", ""))
        except ValueError:
            return None
    found = [m.group(0) for m in _NUMBER.finditer(value) if any(ch.isdigit() for ch in m.group(0))]
    if not found:
        return None
    try:
        return float(found[-1].replace(",", ""))
    except ValueError:
        return None


class NumericToleranceConfig(_OutputConfig):
    expected: float | None = Field(default=None, description="default: the case's expected output")
    abs_tol: float = Field(default=0.0, ge=0)
    rel_tol: float = Field(default=0.0, ge=0)
    extract: Literal["whole", "last_number"] = Field(
        default="whole",
        description="'whole': the target must be a number; 'last_number': the last number in the text",
    )


class NumericTolerance(Evaluator[NumericToleranceConfig]):
    """|value − expected| ≤ max(rel_tol·max(|value|, |expected|), abs_tol), as math.isclose."""

    type = "numeric"
    version = "1"
    config_model = NumericToleranceConfig

    async def evaluate(self, item: EvaluationInput) -> Evaluation:
        expected: Any = self.config.expected if self.config.expected is not None else item.expected
        exp_num = _parse_number(expected, "whole")
        if exp_num is None:
            return Evaluation.failure(
                f"numeric: expected value {_excerpt(expected)} is not a number; set `expected` in the config "
                "or give the case a numeric expected output"
            )
        value, problem = select_target(item, self.config.target, self.config.path)
        if problem:
            return _no_target(problem)
        got = _parse_number(value, self.config.extract)
        if got is None:
            hint = (
                "" if self.config.extract == "last_number" else " (extract='last_number' finds one in text)"
            )
            return Evaluation.verdict(False, f"not a number: {_excerpt(value)}{hint}", label="not_a_number")
        ok = math.isclose(got, exp_num, rel_tol=self.config.rel_tol, abs_tol=self.config.abs_tol)
        relation = "within" if ok else "outside"
        return Evaluation.verdict(
            ok,
            f"{got:g} vs expected {exp_num:g}: {relation} tolerance "
            f"(abs {self.config.abs_tol:g}, rel {self.config.rel_tol:g})",
            value=got,
            expected=exp_num,
        )


# --- trajectory checks --------------------------------------------------------------------


def iter_steps(trajectory: dict[str, Any], *, include_subagents: bool = True) -> Iterator[dict[str, Any]]:
    """The steps of an ATIF trajectory, then those of its embedded subagents."""
    for step in trajectory.get("steps") or ():
        if isinstance(step, dict):
            yield step
    if include_subagents:
        for sub in trajectory.get("subagent_trajectories") or ():
            if isinstance(sub, dict):
                yield from iter_steps(sub, include_subagents=True)


class _TrajectoryConfig(EvaluatorConfig):
    include_subagents: bool = True


def _no_trajectory(check: str) -> Evaluation:
    return Evaluation.verdict(
        False,
        f"{check}: the run has no trajectory (status unavailable), so the check cannot pass; re-fetch it "
        "(evaluate_experiment(..., refetch_trajectories=True)) or find why the agent's spans did not arrive",
        label="no_trajectory",
    )


def _tool_counts(trajectory: dict[str, Any], include_subagents: bool) -> dict[str, int]:
    counts: dict[str, int] = {}
    for step in iter_steps(trajectory, include_subagents=include_subagents):
        for call in step.get("tool_calls") or ():
            name = call.get("function_name") if isinstance(call, dict) else None
            if isinstance(name, str):
                counts[name] = counts.get(name, 0) + 1
    return counts


class ToolCalledConfig(_TrajectoryConfig):
    tool: str = Field(min_length=1)
    min_count: int = Field(default=1, ge=1)


class ToolCalledCheck(Evaluator[ToolCalledConfig]):
    type = "tool_called"
    version = "1"
    config_model = ToolCalledConfig

    async def evaluate(self, item: EvaluationInput) -> Evaluation:
        if item.trajectory is None:
            return _no_trajectory(self.type)
        counts = _tool_counts(item.trajectory, self.config.include_subagents)
        n = counts.get(self.config.tool, 0)
        ok = n >= self.config.min_count
        called = ", ".join(f"{k}×{v}" for k, v in sorted(counts.items())) or "no tools"
        return Evaluation.verdict(
            ok,
            f"{self.config.tool!r} called {n} time(s), at least {self.config.min_count} required "
            f"(called: {called})",
            count=n,
        )


class ToolNotCalledConfig(_TrajectoryConfig):
    tool: str = Field(min_length=1)


class ToolNotCalledCheck(Evaluator[ToolNotCalledConfig]):
    type = "tool_not_called"
    version = "1"
    config_model = ToolNotCalledConfig

    async def evaluate(self, item: EvaluationInput) -> Evaluation:
        if item.trajectory is None:
            return _no_trajectory(self.type)
        n = _tool_counts(item.trajectory, self.config.include_subagents).get(self.config.tool, 0)
        if n == 0:
            return Evaluation.verdict(True, f"{self.config.tool!r} was not called", count=0)
        return Evaluation.verdict(False, f"{self.config.tool!r} was called {n} time(s)", count=n)


class MaxStepsConfig(_TrajectoryConfig):
    max_steps: int = Field(ge=0)
    count: Literal["agent", "all"] = Field(
        default="agent",
        description="'agent': steps with source 'agent' (the agent's turns); 'all': every step",
    )


class MaxStepsCheck(Evaluator[MaxStepsConfig]):
    type = "max_steps"
    version = "1"
    config_model = MaxStepsConfig

    async def evaluate(self, item: EvaluationInput) -> Evaluation:
        if item.trajectory is None:
            return _no_trajectory(self.type)
        steps = [
            s
            for s in iter_steps(item.trajectory, include_subagents=self.config.include_subagents)
            if self.config.count == "all" or s.get("source") == "agent"
        ]
        n = len(steps)
        ok = n <= self.config.max_steps
        what = "agent steps" if self.config.count == "agent" else "steps"
        return Evaluation.verdict(ok, f"{n} {what}, at most {self.config.max_steps} allowed", steps=n)


class MaxCostConfig(_TrajectoryConfig):
    max_usd: float = Field(ge=0)


def trajectory_cost(trajectory: dict[str, Any], include_subagents: bool = True) -> tuple[float | None, str]:
    """The cost of a trajectory in USD, or None with the reason it is unknown.

    `final_metrics.total_cost_usd` (which includes subagents) wins when present;
    otherwise the steps' `metrics.cost_usd` are summed, and any agent step that made
    an LLM call without a cost makes the whole cost unknown — never $0.
    """
    final = trajectory.get("final_metrics") or {}
    total = final.get("total_cost_usd") if isinstance(final, dict) else None
    if isinstance(total, int | float):
        return float(total), "final_metrics.total_cost_usd"
    cost = 0.0
    unpriced = []
    for step in iter_steps(trajectory, include_subagents=include_subagents):
        if step.get("source") != "agent" or step.get("llm_call_count") == 0:
            continue
        metrics = step.get("metrics") or {}
        value = metrics.get("cost_usd") if isinstance(metrics, dict) else None
        if isinstance(value, int | float):
            cost += float(value)
        else:
            unpriced.append(str(step.get("step_id", "?")))
    if unpriced:
        shown = ", ".join(unpriced[:10]) + (" …" if len(unpriced) > 10 else "")
        return None, f"{len(unpriced)} agent step(s) have no cost_usd (step {shown})"
    return cost, "sum of step metrics.cost_usd"


class MaxCostCheck(Evaluator[MaxCostConfig]):
    """Unpriced is a failure: a budget check that cannot see the spend cannot vouch for it."""

    type = "max_cost"
    version = "1"
    config_model = MaxCostConfig

    async def evaluate(self, item: EvaluationInput) -> Evaluation:
        if item.trajectory is None:
            return _no_trajectory(self.type)
        cost, source = trajectory_cost(item.trajectory, self.config.include_subagents)
        if cost is None:
            return Evaluation.verdict(
                False,
                f"cost unknown, so it cannot be shown to be at most ${self.config.max_usd:g}: {source}; "
                "price the model with a rule in <data-dir>/prices.yaml (docs/trajectories.md, Prices), restart "
                "`evalkit serve` and run the case again",
                label="unpriced",
            )
        ok = cost <= self.config.max_usd
        return Evaluation.verdict(
            ok,
            f"cost ${cost:.6f} {'≤' if ok else '>'} ${self.config.max_usd:g} ({source})",
            cost_usd=cost,
        )


class NoErrorsConfig(_TrajectoryConfig):
    pass


def _error_text(marker: Any) -> str:
    if isinstance(marker, str):
        return marker
    if isinstance(marker, dict):
        kind, msg = marker.get("type"), marker.get("message")
        if kind or msg:
            return ": ".join(str(x) for x in (kind, msg) if x)
    return _excerpt(marker, 120)


def find_errors(trajectory: dict[str, Any], include_subagents: bool = True) -> list[str]:
    """Error markers (`extra.error`) on steps, tool calls and observation results."""
    found: list[str] = []
    for step in iter_steps(trajectory, include_subagents=include_subagents):
        where = f"step {step.get('step_id', '?')}"
        extra = step.get("extra")
        if isinstance(extra, dict) and extra.get("error"):
            found.append(f"{where}: {_error_text(extra['error'])}")
        for call in step.get("tool_calls") or ():
            cx = call.get("extra") if isinstance(call, dict) else None
            if isinstance(cx, dict) and cx.get("error"):
                found.append(f"{where} tool {call.get('function_name', '?')}: {_error_text(cx['error'])}")
        observation = step.get("observation")
        results = observation.get("results") if isinstance(observation, dict) else None
        for res in results or ():
            rx = res.get("extra") if isinstance(res, dict) else None
            if isinstance(rx, dict) and rx.get("error"):
                found.append(f"{where} result {res.get('source_call_id') or ''}: {_error_text(rx['error'])}")
    return found


class NoErrorsCheck(Evaluator[NoErrorsConfig]):
    type = "no_errors"
    version = "1"
    config_model = NoErrorsConfig

    async def evaluate(self, item: EvaluationInput) -> Evaluation:
        if item.trajectory is None:
            return _no_trajectory(self.type)
        errors = find_errors(item.trajectory, self.config.include_subagents)
        if not errors:
            return Evaluation.verdict(True, "no error markers in the trajectory", errors=0)
        shown = "; ".join(errors[:5]) + (f" (and {len(errors) - 5} more)" if len(errors) > 5 else "")
        return Evaluation.verdict(False, f"{len(errors)} error(s): {shown}", errors=len(errors))


BUILTIN_EVALUATORS: tuple[type[Evaluator[Any]], ...] = (
    ExactMatch,
    ContainsCheck,
    RegexCheck,
    JsonSchemaCheck,
    NumericTolerance,
    ToolCalledCheck,
    ToolNotCalledCheck,
    MaxStepsCheck,
    MaxCostCheck,
    NoErrorsCheck,
)
