"""OpenLIT's tool definitions, read from each call's inference event (real OpenLIT captures).

OpenLIT's client instrumentations (OpenAI, Anthropic, …) write `gen_ai.tool.definitions` only in the
`gen_ai.client.inference.operation.details` log record, not on the call span; a streamed call's record is linked
to the span current when its stream ends (a turn function, an agent's step or run), not to the call
(`trajectory/mappers/openlit.py`). The ground truth is the fake LLM's log: the tools each request sent the model.
"""

from __future__ import annotations

from typing import Any

import pytest
from span_fixtures import capture_logs, capture_spans

from evalkit.trajectory.from_spans import trajectory_from_spans
from evalkit.trajectory.mappers import openlit
from evalkit.trajectory.span import LogRecord, Span
from tests.captures import corpus

# Captures whose tools were sent on their calls (OpenLIT's Claude Agent SDK calls are the CLI's, its Google AI
# Studio instrumentation records no tools, its openai-agents calls are Responses calls with none in the event).
CAPTURES = ("ag2_openlit", "agno_openlit", "anthropic-sdk_openlit", "crewai_openlit_no-session", "haystack_openlit",
            "llamaindex_openlit", "openai-sdk_openlit", "pydantic-ai_openlit", "smolagents_openlit")

Definitions = dict[str, tuple[Any, Any]]  # tool name -> (description, parameters)


def _session_logs(name: str, spans: list[Span]) -> list[LogRecord]:
    """The log records the service reads for the session: those of its traces (trajectory/read.py)."""
    traces = {span.trace_id for span in spans}
    return [log for log in capture_logs(name) if log.trace_id in traces]


def _document(name: str) -> dict[str, Any]:
    spans = capture_spans(name)
    result = trajectory_from_spans(spans, _session_logs(name, spans), session_id=corpus.load(name).session_id)
    assert result.valid, [str(issue) for issue in result.issues]
    return result.document()


def _trajectories(document: dict[str, Any]) -> list[dict[str, Any]]:
    """The session's trajectory and every subagent's embedded in it."""
    found = [document]
    for subagent in document.get("subagent_trajectories") or []:
        found.extend(_trajectories(subagent))
    return found


def _sent_tools(request: dict[str, Any]) -> Definitions:
    """The tools a request sent the model: OpenAI's function tools or Anthropic's `input_schema` ones."""
    sent: Definitions = {}
    for tool in request.get("tools") or []:
        function = tool.get("function", tool)
        sent[function["name"]] = (function.get("description"), function.get("parameters", tool.get("input_schema")))
    return sent


def _read(trajectory: dict[str, Any]) -> Definitions:
    return {d["function"]["name"]: (d["function"].get("description"), d["function"].get("parameters"))
            for d in (trajectory.get("agent") or {}).get("tool_definitions") or []}


@pytest.mark.parametrize("name", CAPTURES)
def test_each_agent_has_the_tools_its_calls_sent(name: str) -> None:
    sent_by_response = {entry["response"]["id"]: _sent_tools(entry["request"]) for entry in corpus.load(name).llm_log}
    checked = 0
    for trajectory in _trajectories(_document(name)):
        responses = [step["extra"]["response_id"] for step in trajectory["steps"] if step.get("llm_call_count")]
        sent: Definitions = {}
        for response_id in responses:
            sent.update(sent_by_response[response_id])
        assert _read(trajectory) == sent, (trajectory["agent"]["name"], responses)
        checked += bool(sent)
    assert checked  # some agent was sent tools


def test_a_streamed_call_s_event_is_moved_from_the_span_it_was_emitted_under_to_its_call() -> None:
    # anthropic-sdk_openlit's `messages.create(stream=True)` call: its record is linked to the `@openlit.trace`
    # turn function's span, which holds no call.
    spans = capture_spans("anthropic-sdk_openlit")
    by_key = {(span.trace_id, span.span_id): span for span in spans}
    logs = _session_logs("anthropic-sdk_openlit", spans)
    (stray,) = [log for log in logs if by_key[(log.trace_id, log.span_id)].name == "chat_turn"]
    (call,) = [span for span in spans if span.attributes.get("gen_ai.response.id") == "anthropic-resp-4"]
    assert call.name == "chat claude-sonnet-4-5" and stray.attributes["gen_ai.response.id"] == "anthropic-resp-4"

    relinked = openlit.relink_logs(spans, logs)
    assert [(log.trace_id, log.span_id) for log in relinked if log.event_name == openlit.INFERENCE_EVENT
            and log.attributes.get("gen_ai.response.id") == "anthropic-resp-4"] == [(call.trace_id, call.span_id)]
    # Every other record was on its own call already, and stays there.
    assert [log for log in relinked if log.attributes.get("gen_ai.response.id") != "anthropic-resp-4"] == [
        log for log in logs if log.attributes.get("gen_ai.response.id") != "anthropic-resp-4"]
    on_call = [log for log in relinked if (log.trace_id, log.span_id) == (call.trace_id, call.span_id)]
    assert [d["function"]["name"] for d in openlit.event_tool_definitions(call, on_call)] == [
        "get_weather", "convert_currency"]


def test_the_managing_agent_has_the_managed_agent_s_tool_only_its_calls_events_declare() -> None:
    # smolagents_openlit: every call of the manager is streamed, so each record is linked to its `… step_<n>` span;
    # smolagents' own spans list `agent.tools` alone, without the managed agent the model is offered as a tool.
    document = _document("smolagents_openlit")
    assert "hotel_desk" in _read(document)
    assert _read(document)["hotel_desk"][1]["required"] == ["task"]


def test_a_record_of_another_response_is_not_the_call_s() -> None:
    spans = capture_spans("openai-sdk_openlit")
    calls = {span.attributes["gen_ai.response.id"]: span for span in spans if "gen_ai.response.id" in span.attributes}
    logs = _session_logs("openai-sdk_openlit", spans)
    first = calls["openai-resp-0"]
    (own,) = [log for log in logs if log.attributes.get("gen_ai.response.id") == "openai-resp-0"]
    others = [log for log in logs if log.attributes.get("gen_ai.response.id") != "openai-resp-0"]
    assert others and openlit.event_tool_definitions(first, others) == []
    assert [d["function"]["name"] for d in openlit.event_tool_definitions(first, [own])] == [
        "get_weather", "convert_currency"]
