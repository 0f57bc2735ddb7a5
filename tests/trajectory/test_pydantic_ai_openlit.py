"""OpenLIT alone on a pydantic-ai agent (the `pydantic-ai_openlit` capture): its pydantic-ai instrumentation's spans
(`create_agent`, `execute_task` for `Agent.run`, the graph nodes') and its OpenAI instrumentation's `chat` spans.
Turn one `Agent.run`: two parallel tool calls, one raising `ModelRetry`, asked again, the answer; turn two
`run_stream` (not wrapped by OpenLIT: no run span) given the first run's history; turn three `run_sync` given the
second's, answered from it.

Before `trajectory/mappers/openlit_pydantic_ai.py` its spans were read as plain GenAI ones: each `CallToolsNode.run`
span (`execute_tool gpt-4o-mini`, made and ended before the tools ran, naming only the model) a tool execution no
LLM call asked for: a step of a tool called `gpt-4o-mini`, no arguments, no result, after each of turn one's three
calls and turn three's; the `Agent.run` span (operation `execute_task`, which the GenAI mapper does not know) no
agent run, its prompt, answer and summed usage left unmapped.
"""

from __future__ import annotations

from typing import Any

from evalkit.trajectory.from_spans import trajectory_from_spans
from evalkit.trajectory.mappers import openlit, openlit_pydantic_ai
from evalkit.trajectory.mappers.reader import SpanReader
from evalkit.trajectory.operations import AgentRun
from evalkit.trajectory.span import Span
from tests.captures import corpus
from tests.trajectory.span_fixtures import capture_logs, capture_spans

CAPTURE = "pydantic-ai_openlit"
SESSION = "pai-openlit-trip-1"
Json = dict[str, Any]


def _instrumentation_spans() -> list[Span]:
    return [s for s in capture_spans(CAPTURE) if openlit_pydantic_ai.is_pydantic_ai(s)]


def _session_document() -> Json:
    """The session as the service reads it: the traces a span names the session in (turn two's node spans, roots of
    traces of their own with no session id, are none of them), with their log records."""
    spans = capture_spans(CAPTURE)
    traces = {s.trace_id for s in spans if s.attributes.get("session.id") == SESSION}
    logs = [log for log in capture_logs(CAPTURE) if log.trace_id in traces]
    result = trajectory_from_spans([s for s in spans if s.trace_id in traces], logs, session_id=SESSION)
    assert result.valid, [str(issue) for issue in result.issues]
    return result.document()


def test_the_graph_node_spans_are_no_tool_executions_and_no_steps() -> None:
    """`CallToolsNode.run`'s `execute_tool <model>` spans (and the other nodes', `Agent.iter`'s, `Agent(...)`'s):
    nothing, every attribute read; the session has a step for each LLM call and none of its own for a tool."""
    document = _session_document()
    assert [s for s in document["steps"] if s["source"] == "agent" and s.get("llm_call_count") == 0] == []
    called = [c["function_name"] for s in document["steps"] for c in s.get("tool_calls") or ()]
    assert called == ["get_weather", "find_hotels", "find_hotels", "get_weather"]
    nodes = [s for s in _instrumentation_spans() if s.attributes.get("gen_ai.operation.name") != "execute_task"]
    assert sorted({s.name for s in nodes}) == ["create_agent travel_desk", "execute_tool gpt-4o-mini",
                                               "invoke_workflow travel_desk", "model_request gpt-4o-mini",
                                               "user_prompt_processing gpt-4o-mini"]
    for span in nodes:
        reader = SpanReader(span)
        assert openlit.map_span(reader, ()) is None, span.name
        assert reader.unused() == set(), span.name


def test_agent_run_is_the_agents_run_and_its_summed_usage_is_not_counted() -> None:
    turn_one, turn_three = sorted((s for s in _instrumentation_spans() if s.name == "execute_task travel_desk"),
                                  key=lambda s: s.start_time_unix_nano)
    reader = SpanReader(turn_one)
    run = openlit.map_span(reader, ())
    assert isinstance(run, AgentRun)
    assert (run.name, run.emitter, run.model) == ("travel_desk", openlit.NAME, "gpt-4o-mini")
    assert run.input_text == "I'm going to Lisbon: what's the weather, and find me a hotel for two nights."
    assert run.output_text == "Lisbon is sunny at 24°C; Casa Alfama has a room for two nights at 110 EUR a night."
    assert run.error is None
    # Every attribute read; the run's usage (its three calls' again) read and dropped.
    assert reader.unused() == set()
    assert turn_one.attributes["gen_ai.usage.input_tokens"] == 214 + 298 + 352
    # Given `message_history`, the run span records no prompt at all; its answer all the same.
    run = openlit.map_span(SpanReader(turn_three), ())
    assert isinstance(run, AgentRun) and run.input_text is None
    assert run.output_text == "Casa Alfama: 220 EUR for the two nights."
    truth = corpus.GroundTruth.of(corpus.load(CAPTURE).llm_log)
    final = _session_document()["final_metrics"]
    assert (final["total_prompt_tokens"], final["total_completion_tokens"]) == (truth.input_tokens,
                                                                                truth.output_tokens)


def test_run_sync_is_no_run_around_the_run_it_runs() -> None:
    """`run_sync`'s `invoke_agent travel_desk` span (operation `execute_task` too) holds the `Agent.run` span it
    runs: that one is the run; read as a run as well, turn three was a subagent of the same agent, the result of no
    call, its history copied."""
    (around,) = [s for s in _instrumentation_spans() if s.name == "invoke_agent travel_desk"]
    (inside,) = [s for s in _instrumentation_spans() if s.parent_span_id == around.span_id
                 and s.name == "execute_task travel_desk"]
    reader = SpanReader(around)
    assert openlit.map_span(reader, ()) is None
    assert reader.unused() == set()
    assert isinstance(openlit.map_span(SpanReader(inside), ()), AgentRun)
    document = _session_document()
    assert not document.get("subagent_trajectories")
    assert [(s["source"], s.get("message")) for s in document["steps"][-2:]] == [
        ("user", "Which hotel was it, and how much for both nights?"),
        ("agent", "Casa Alfama: 220 EUR for the two nights.")]


def test_the_session_is_the_conversation() -> None:
    document = _session_document()
    assert document["agent"]["name"] == "travel_desk"
    assert [s["source"] for s in document["steps"]] == ["system", "user", "agent", "agent", "agent", "user", "agent",
                                                         "agent", "user", "agent"]
    results = [[r["content"] for r in (s.get("observation") or {}).get("results") or ()] for s in document["steps"]]
    # The parallel calls' results by call id, the ModelRetry's prompt as pydantic-ai 2.31 sent it, the list result
    # as the compact JSON the model was shown: all from the next call's input (no span records a tool function).
    assert results[2] == ["sunny, 24°C",
                          "nights must be at least 1: ask again with the number of nights.\n\nFix the errors and try "
                          "again."]
    assert results[3] == ['[{"name":"Casa Alfama","per_night_eur":110}]']
    assert results[6] == ["cloudy, 18°C"]
    # Left unmapped: only the httpx client spans' attributes.
    assert document["extra"]["unmapped_attributes"] == ["http.method", "http.status_code", "http.url"]
    assert corpus.compare(document, corpus.GroundTruth.of(corpus.load(CAPTURE).llm_log)) == []
