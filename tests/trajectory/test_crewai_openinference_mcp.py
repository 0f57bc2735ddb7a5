"""CrewAI's native MCP tools under OpenInference (the `crewai_openinference_mcp` capture's trace exports).

One agent's tools are a stdio MCP server's (`Agent(mcps=[MCPServerStdio(…)])`); the server answers get_weather with
`isError` once, which CrewAI's MCP tool returns as a `ToolFailure` (its TOOL span OK, its output the failure's JSON),
the model shown the failure's message (`trajectory/mappers/crewai.py`). The crew is kicked off twice in one session,
the second kickoff streamed (`Crew.stream`): CrewAI's first `kickoff` returns the stream, the run is a second
`kickoff` its iteration starts, in a trace of its own.
"""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

from span_fixtures import capture_document, capture_spans, capture_truth, results_by_call

from evalkit.trajectory.mappers import crewai, openinference
from evalkit.trajectory.mappers.reader import SpanReader
from evalkit.trajectory.operations import ToolExecution
from evalkit.trajectory.span import Span

CAPTURE = "crewai_openinference_mcp"
SESSION = "crew-mcp-1"
REQUESTS = ["Plan a day in Oslo: check the weather and what 200 EUR is in NOK.",
            "Book me a hotel in Oslo for two nights."]


def _subagents(document: dict[str, Any]) -> list[dict[str, Any]]:
    return document.get("subagent_trajectories") or []


def _failed_tool_span() -> Span:
    """The TOOL span of the get_weather call the server answered isError."""
    (span,) = [s for s in capture_spans(CAPTURE) if s.attributes.get("openinference.span.kind") == "TOOL"
               and "mcp_error" in str(s.attributes.get("output.value"))]
    return span


def test_an_mcp_is_error_result_is_what_the_model_was_shown_and_the_call_failed() -> None:
    document = capture_document(CAPTURE, SESSION)
    truth = capture_truth(CAPTURE)
    first_turn = _subagents(document)[0]
    calls = [s for s in first_turn["steps"] if s.get("llm_call_count") == 1]
    parallel = results_by_call(calls[0])
    # The MCP tools are the model's calls, named as it called them (CrewAI's sanitized `<server>_<tool>`).
    assert [(c["tool_call_id"], c["function_name"]) for c in calls[0]["tool_calls"]] == [
        ("call_0_0", "python_travel_server_py_get_weather"), ("call_0_1", "python_travel_server_py_convert_currency")]
    failed = parallel["call_0_0"]
    assert failed["content"] == truth.tool_results["call_0_0"]
    assert failed["content"] == "Error executing tool get_weather: the weather service did not answer in time"
    assert failed["extra"]["is_error"] is True
    assert failed["extra"]["error"] == {"status": "error", "type": "mcp_error", "message": failed["content"]}
    # The other parallel call and the retry answered.
    for step, call_id in ((calls[0], "call_0_1"), (calls[1], "call_1_0")):
        result = results_by_call(step)[call_id]
        assert result["content"] == truth.tool_results[call_id]
        assert "is_error" not in result.get("extra", {})


def test_a_tool_failure_with_a_code_is_shown_with_it_and_failed_of_that_code() -> None:
    span = _failed_tool_span()
    failure = {**json.loads(span.attributes["output.value"]), "code": "UPSTREAM_TIMEOUT"}
    coded = replace(span, attributes={**span.attributes, "output.value": json.dumps(failure)})
    execution = openinference.map_span(SpanReader(coded), ())
    assert isinstance(execution, ToolExecution)
    assert execution.result == f"{failure['message']} (code: UPSTREAM_TIMEOUT)"  # `ToolFailure.as_agent_message`
    assert execution.error is not None and execution.error.error_type == "UPSTREAM_TIMEOUT"
    # A result that only looks like one (not the failure's fields) is the tool's answer: a dict, shown as CrewAI shows
    # one (its `str()`).
    answer = {"message": "Oslo is rainy", "reason": "forecast"}
    plain = replace(span, attributes={**span.attributes, "output.value": json.dumps(answer)})
    execution = openinference.map_span(SpanReader(plain), ())
    assert isinstance(execution, ToolExecution)
    assert execution.result == str(answer) and execution.error is None


def test_the_streamed_kickoff_is_one_turn() -> None:
    document = capture_document(CAPTURE, SESSION)
    # Each kickoff: the request, then the crew's agent (a subagent) answering it; the streamed one once.
    assert [(s["source"], s.get("message")) for s in document["steps"]] == [
        ("user", json.dumps({"request": REQUESTS[0]})), ("system", "Delegated to subagent Travel agent"),
        ("user", json.dumps({"request": REQUESTS[1]})), ("system", "Delegated to subagent Travel agent")]
    streamed = _subagents(document)[1]
    assert [s["extra"]["request"].get("stream") for s in streamed["steps"] if s.get("llm_call_count") == 1] == [
        True, True]
    # The kickoff that returned the stream is no operation, and leaves nothing of its span unread.
    (handle,) = [s for s in capture_spans(CAPTURE)
                 if str(s.attributes.get("output.value")).startswith("<crewai.types.streaming.CrewStreamingOutput")]
    reader = SpanReader(handle)
    assert crewai.is_crew_run(reader)
    assert openinference.map_span(reader, ()) is None
    assert reader.unused() == set()
