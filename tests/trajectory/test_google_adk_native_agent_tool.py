"""Google ADK's `AgentTool` under ADK's own tracing (the `google-adk_native_agent-tool` capture's exports).

The root `travel_desk` calls `weather_specialist` as a tool (`AgentTool`: ADK runs it in a runner and session of
its own, under the tool's span); the specialist's two tools run in parallel, one raising once, which ADK's
`ReflectAndRetryToolPlugin` answers in its stead; the second turn, streamed, transfers to `booking_agent`
(`trajectory/mappers/google_adk.py`).
"""

from __future__ import annotations

import json
from typing import Any

from span_fixtures import capture_document, capture_spans

from evalkit.trajectory.mappers import google_adk
from evalkit.trajectory.mappers.reader import SpanReader
from tests.captures import corpus

CAPTURE = "google-adk_native_agent-tool"
SESSION = "adk-agent-tool-1"


def _document() -> dict[str, Any]:
    return capture_document(CAPTURE, SESSION)


def _llm_steps(trajectory: dict[str, Any]) -> list[dict[str, Any]]:
    return [s for s in trajectory["steps"] if s.get("llm_call_count") == 1]


def _results(trajectory: dict[str, Any]) -> list[dict[str, Any]]:
    return [r for s in trajectory["steps"] for r in (s.get("observation") or {}).get("results") or ()]


def test_the_agent_tool_call_is_answered_by_the_specialist_run_under_it() -> None:
    document = _document()
    log = corpus.load(CAPTURE).llm_log
    assert document["agent"]["name"] == "travel_desk"
    assert [sub["agent"]["name"] for sub in document["subagent_trajectories"]] == ["weather_specialist",
                                                                                  "booking_agent"]
    specialist = document["subagent_trajectories"][0]
    # The root's AgentTool call: its result the specialist's answer as ADK sent it the root's model, the
    # specialist's run the subagent it started.
    (asked,) = [s for s in _llm_steps(document) if any(c["function_name"] == "weather_specialist"
                                                       for c in s.get("tool_calls") or ())]
    (result,) = asked["observation"]["results"]
    assert result["content"] == json.dumps({"result": log[3]["response"]["text"]}, ensure_ascii=False)
    assert [ref["trajectory_id"] for ref in result["subagent_trajectory_ref"]] == [specialist["trajectory_id"]]
    # The specialist's own request (the call's `request`), its three calls, its answer.
    assert [s["message"] for s in specialist["steps"] if s["source"] == "user"] == [
        log[0]["response"]["tool_calls"][0]["arguments"]["request"]]
    assert [s["message"] for s in _llm_steps(specialist)][-1] == log[3]["response"]["text"]
    assert len(_llm_steps(document)) == 3 and len(_llm_steps(specialist)) == 3
    assert len(corpus.llm_steps(document)) == len(log) == 7


def test_the_tool_the_plugin_answered_for_is_flagged_with_its_error() -> None:
    """`get_sea_temperature` raised `TimeoutError`; `ReflectAndRetryToolPlugin` answered the model in its stead and
    ADK ended the span OK. That answer is the result, flagged as the failure it reports; no other result is."""
    document = _document()
    flagged = [r for t in corpus.all_trajectories(document) for r in _results(t) if r["extra"].get("is_error")]
    assert [r["source_call_id"] for r in flagged] == ["call_1_1"]
    (failed,) = flagged
    assert json.loads(failed["content"])["response_type"] == google_adk.REFLECTED_FAILURE
    assert failed["extra"]["error"] == {"status": "error", "message": "the Bergen sea station did not answer",
                                        "type": "TimeoutError"}
    # The span itself says nothing failed: the result is the only sign.
    (span,) = [s for s in capture_spans(CAPTURE) if s.attributes.get("gen_ai.tool.call.id") == "call_1_1"]
    assert span.status_code != 2 and not span.events


def test_the_agent_tools_nested_workflow_mark_is_read() -> None:
    """The AgentTool's runner opens an `invoke_workflow` marked `gen_ai.workflow.nested` (in its own session id): the
    nesting its place under the tool's span already gives. Read, so the session maps every attribute."""
    (nested,) = [s for s in capture_spans(CAPTURE) if "gen_ai.workflow.nested" in s.attributes]
    assert nested.attributes["gen_ai.conversation.id"] != SESSION
    reader = SpanReader(nested)
    google_adk.map_span(reader, ())
    assert "gen_ai.workflow.nested" not in reader.unused()
    assert _document()["extra"]["unmapped_attributes"] == []
