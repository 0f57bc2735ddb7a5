"""ATIF models, the committed JSON Schema and the validator against real and broken documents."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import atif
import pytest
from span_fixtures import ATIF

from evalkit.trajectory.atif import ACCEPTED_VERSIONS, Trajectory
from evalkit.trajectory.schema import SCHEMA_PATH, main, render_schema
from evalkit.trajectory.validate import errors_only, is_valid, validate_trajectory

EXAMPLES = sorted(ATIF.glob("*.json"))


def test_committed_schema_matches_the_models() -> None:
    assert SCHEMA_PATH.read_text(encoding="utf-8") == render_schema(), (
        "atif.schema.json drifted from trajectory/atif.py; run python -m evalkit.trajectory.schema"
    )
    assert main(["--check"]) == 0


def test_there_are_examples() -> None:
    assert len(EXAMPLES) == 6


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.name)
def test_real_trajectories_validate(path: Path) -> None:
    document = json.loads(path.read_text())
    issues = validate_trajectory(document)
    assert errors_only(issues) == [], [str(issue) for issue in issues]
    Trajectory.model_validate(document)
    atif.Trajectory.model_validate(document)


def _base() -> dict[str, Any]:
    return json.loads((ATIF / "fast-agent__harbor_multiagent_v1_7.json").read_text())


def _rules(document: dict[str, Any]) -> set[tuple[str, str]]:
    return {(issue.path, issue.rule) for issue in errors_only(validate_trajectory(document))}


def test_source_call_id_must_name_a_tool_call_of_its_step() -> None:
    document = _base()
    document["steps"][1]["observation"]["results"][0]["source_call_id"] = "call_elsewhere"
    issues = errors_only(validate_trajectory(document))
    assert [str(issue) for issue in issues] == [
        "steps[1].observation.results[0].source_call_id: 'call_elsewhere' names no tool call of step 2 "
        "(rule: source-call-id)"
    ]
    with pytest.raises(ValueError):
        Trajectory.model_validate(document)


def test_source_call_id_on_a_step_without_tool_calls_is_an_error() -> None:
    document = _base()
    document["steps"][2]["observation"] = {"results": [{"source_call_id": "call_shell", "content": "x"}]}
    assert _rules(document) == {("steps[2].observation.results[0].source_call_id", "source-call-id")}


def test_step_ids_must_run_from_one_in_order() -> None:
    document = _base()
    document["steps"][1]["step_id"] = 3
    document["steps"][2]["step_id"] = 2
    assert _rules(document) == {("steps[1].step_id", "step-id"), ("steps[2].step_id", "step-id")}


def test_agent_only_fields_on_a_user_step() -> None:
    document = _base()
    document["steps"][0]["metrics"] = {"prompt_tokens": 1}
    document["steps"][0]["model_name"] = "gpt-4o"
    assert _rules(document) == {("steps[0].metrics", "agent-only"), ("steps[0].model_name", "agent-only")}


def test_tool_arguments_as_a_json_string_are_rejected_once() -> None:
    document = _base()
    document["steps"][1]["tool_calls"][0]["arguments"] = '{"task": "inspect"}'
    issues = errors_only(validate_trajectory(document))
    assert [(issue.path, issue.rule) for issue in issues] == [
        ("steps[1].tool_calls[0].arguments", "tool-arguments")
    ]
    assert "JSON string" in issues[0].message


def test_llm_call_count_zero_forbids_metrics_and_reasoning() -> None:
    document = _base()
    document["steps"][1]["llm_call_count"] = 0
    assert _rules(document) == {
        ("steps[1].metrics", "llm-call-count"),
        ("steps[1].reasoning_content", "llm-call-count"),
    }


def test_subagent_ref_needs_an_id_or_a_path() -> None:
    document = _base()
    document["steps"][1]["observation"]["results"][1]["subagent_trajectory_ref"] = [{"session_id": "s"}]
    assert _rules(document) == {
        ("steps[1].observation.results[1].subagent_trajectory_ref[0]", "subagent-ref")
    }


def test_embedded_subagent_ids_are_required_and_unique() -> None:
    document = _base()
    twin = copy.deepcopy(document["subagent_trajectories"][0])
    document["subagent_trajectories"].append(twin)
    nameless = copy.deepcopy(twin)
    del nameless["trajectory_id"]
    document["subagent_trajectories"].append(nameless)
    assert _rules(document) == {
        ("subagent_trajectories[1].trajectory_id", "subagent-id"),
        ("subagent_trajectories[2].trajectory_id", "subagent-id"),
    }


def test_errors_inside_subagents_carry_their_path() -> None:
    document = _base()
    document["subagent_trajectories"][0]["steps"][0]["reasoning_content"] = "no"
    assert _rules(document) == {("subagent_trajectories[0].steps[0].reasoning_content", "agent-only")}


def test_dangling_embedded_ref_is_a_warning_only() -> None:
    document = _base()
    document["steps"][1]["observation"]["results"][1]["subagent_trajectory_ref"][0]["trajectory_id"] = (
        "missing"
    )
    issues = validate_trajectory(document)
    assert [(i.rule, i.severity) for i in issues] == [("subagent-ref-resolves", "warning")]
    assert is_valid(document)


def test_schema_errors_name_path_and_keyword() -> None:
    document = _base()
    document["steps"][0]["colour"] = "blue"
    document["schema_version"] = "ATIF-v2.0"
    document["steps"][1]["metrics"]["prompt_tokens"] = "many"
    del document["agent"]["version"]
    assert _rules(document) == {
        ("steps[0]", "schema:additionalProperties"),
        ("schema_version", "schema:enum"),
        ("steps[1].metrics.prompt_tokens", "schema:type"),
        ("agent", "schema:required"),
    }


def test_timestamps_and_content_parts() -> None:
    document = _base()
    document["steps"][0]["timestamp"] = "yesterday"
    document["steps"][0]["message"] = [
        {"type": "text", "text": "look"},
        {"type": "image", "source": {"media_type": "audio/wav", "path": "a.wav"}},
        {"type": "text"},
    ]
    assert _rules(document) == {
        ("steps[0].timestamp", "timestamp"),
        ("steps[0].message[1].source.media_type", "content-part"),
        ("steps[0].message[2]", "content-part"),
    }


def test_empty_steps_and_non_json() -> None:
    document = _base()
    document["steps"] = []
    assert _rules(document) == {("steps", "schema:minItems")}
    assert [issue.rule for issue in validate_trajectory("{not json")] == ["json"]


@pytest.mark.parametrize("version", ACCEPTED_VERSIONS)
def test_every_version_from_1_0_to_1_8_is_accepted(version: str) -> None:
    document = _base()
    document["schema_version"] = version
    assert is_valid(document)
    assert len(ACCEPTED_VERSIONS) == 9


def test_audio_parts_of_v1_8_with_an_alias_media_type() -> None:
    document = _base()
    document["schema_version"] = "ATIF-v1.8"
    document["steps"][0]["message"] = [
        {"type": "audio", "source": {"media_type": "audio/mp3", "path": "q.mp3"}}
    ]
    assert is_valid(document)
    parsed = Trajectory.model_validate(document)
    assert parsed.steps[0].message[0].source.media_type == "audio/mpeg"  # type: ignore[union-attr,index]
