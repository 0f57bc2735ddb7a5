"""LangChain / LangGraph and LlamaIndex captures: what `corpus.compare` does not check on its own.

Replayed through a running service like every capture (`test_capture_corpus.py`), then: each tool
result is exactly what the model was shown (the framework's wrapper — LangChain's ToolMessage,
LlamaIndex's ToolOutput — taken off, never served raw), on the call with its id; the failing tool's
result carries the error text and the error flag; the session list and the session's summary count
the LLM calls the trajectory has; and per capture, its structure: a nested agent graph is a
subagent, not inlined into its parent (its system prompt and task are not the user's); LlamaIndex's
span preparing a call adds no step.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from tests.captures import corpus
from tests.trajectory_service.conftest import Service, ServiceFactory

Json = dict[str, Any]
FAILURE_TEXT = "quote service unavailable for ACME; try again later"


async def _replayed(service: Service, name: str) -> tuple[Json, Json]:
    """The capture's trajectory and its row in the session list (with the session view's summary)."""
    capture = corpus.load(name)
    agent, key = await service.new_agent(name.replace("_", "-")[:60])
    await asyncio.to_thread(corpus.replay, capture, service.running.otlp_http, key)
    listed = await service.get(f"/api/agents/{agent}/sessions?limit=100")
    assert listed.status == 200, listed.text
    if capture.session_id is None:
        assert len(listed.body["sessions"]) == 1, listed.body
    session = capture.session_id or listed.body["sessions"][0]["session_id"]
    reply = await service.trajectory(agent, str(session), "?wait=10")
    assert reply.status == 200, reply.text
    assert reply.body["extra"]["status"] == "valid", reply.body["extra"]
    rows = [row for row in listed.body["sessions"] if row["session_id"] == session]
    assert len(rows) == 1, listed.body
    spans = await service.get(f"/api/agents/{agent}/sessions/{session}")
    assert spans.status == 200, spans.text
    return reply.body, {**rows[0], "summary": spans.body["summary"]}


def _results(document: Json) -> dict[str, Json]:
    return {result["source_call_id"]: result
            for trajectory in corpus.all_trajectories(document) for step in trajectory["steps"]
            for result in (step.get("observation") or {}).get("results") or () if "source_call_id" in result}


def tool_results_are_what_the_model_was_shown(name: str, document: Json, row: Json) -> None:
    truth = corpus.GroundTruth.of(corpus.load(name).llm_log)
    results = _results(document)
    assert set(truth.tool_results) <= set(results)
    for call_id, shown in truth.tool_results.items():
        result = results[call_id]
        assert corpus.message_text(result["content"]) == shown, (call_id, result)
        failed = (result.get("extra") or {}).get("is_error") is True
        assert failed == (shown == FAILURE_TEXT), (call_id, result)
    steps = len(corpus.llm_steps(document))
    assert row["steps"] == row["summary"]["llm_calls"] == steps == len(truth.calls), row


def _texts(trajectory: Json, source: str) -> list[str]:
    return [corpus.message_text(s["message"]) for s in trajectory["steps"] if s["source"] == source]


def the_researcher_run_from_a_tool_is_a_subagent(document: Json, row: Json) -> None:
    assert document["agent"]["name"] == "travel_agent"
    [researcher] = document.get("subagent_trajectories") or []
    assert researcher["agent"]["name"] == "researcher"
    assert not researcher.get("subagent_trajectories")
    # The researcher's instructions and task are its own, not the travel agent's user's.
    assert _texts(document, "system") == ["You are a travel assistant. Use tools."]
    assert _texts(document, "user") == ["Weather in Oslo and Paris, the ACME quote, and when Oslo was founded?"]
    assert _texts(researcher, "system") == ["You are a meticulous historian. Answer from the notes."]
    assert _texts(researcher, "user") == ["When was Oslo founded?"]
    # Its two calls (the search, then the answer) are its steps, not the parent's.
    asked = [s.get("tool_calls", [{}])[0].get("function_name") for s in document["steps"] if s["source"] == "agent"]
    assert asked == ["get_weather", "lookup_stock", "ask_researcher", None]
    assert _texts(researcher, "agent") == ["", "Oslo was founded around 1040."]
    # The tool call that started it references it, with the answer it gave.
    [asking] = [s for s in document["steps"] if any(c["function_name"] == "ask_researcher"
                                                     for c in s.get("tool_calls") or ())]
    [result] = asking["observation"]["results"]
    assert [ref["trajectory_id"] for ref in result["subagent_trajectory_ref"]] == [researcher["trajectory_id"]]
    assert result["content"] == "Oslo was founded around 1040."


def the_agent_graph_node_is_a_subagent(document: Json, row: Json) -> None:
    top = [(s["source"], s["message"]) for s in document["steps"]]
    assert top == [("system", "You triage questions for specialists."), ("user", "When was Oslo founded?"),
                   ("agent", "A history question about Oslo: passing it to the researcher.")]
    [researcher] = document.get("subagent_trajectories") or []
    assert researcher["agent"]["name"] == "researcher"
    assert researcher["steps"][0]["message"] == "You are a meticulous historian. Answer from the notes."
    assert len(corpus.llm_steps(researcher)) == 2
    [result] = document["steps"][-1]["observation"]["results"]
    assert [ref["trajectory_id"] for ref in result["subagent_trajectory_ref"]] == [researcher["trajectory_id"]]
    assert result["content"] == "Oslo was founded around 1040."  # its answer, though OpenLLMetry records none


def preparing_a_call_adds_no_step(document: Json, row: Json) -> None:
    assert [step["source"] for step in document["steps"]] == ["system", "user", "agent", "agent", "agent"]
    assert document["steps"][1]["message"] == "Weather in Oslo and Paris, and the ACME quote?"
    assert row["steps"] == 3


def nothing_more(document: Json, row: Json) -> None:
    pass


CHECKS: dict[str, Callable[[Json, Json], None]] = {
    "langchain_openinference": the_researcher_run_from_a_tool_is_a_subagent,
    "langchain_openllmetry": the_researcher_run_from_a_tool_is_a_subagent,
    "langchain_openinference_no-session": the_researcher_run_from_a_tool_is_a_subagent,
    "langchain_openllmetry_no-session": the_researcher_run_from_a_tool_is_a_subagent,
    "langchain_openinference_streamed": nothing_more,
    "langgraph_openinference_subgraph": the_agent_graph_node_is_a_subagent,
    "langgraph_openllmetry_subgraph": the_agent_graph_node_is_a_subagent,
    "llamaindex_openinference": preparing_a_call_adds_no_step,
    "llamaindex_openinference_no-session": preparing_a_call_adds_no_step,
    "llamaindex_openinference_agent-workflow": nothing_more,
}


async def test_langchain_and_llamaindex_captures_are_the_runs_that_happened(start_service: ServiceFactory) -> None:
    # One service for all of them (an agent each): starting one is most of a capture's cost.
    service = await start_service()
    failures = []
    for name, check in CHECKS.items():
        try:
            document, row = await _replayed(service, name)
            tool_results_are_what_the_model_was_shown(name, document, row)
            check(document, row)
        except AssertionError as error:
            failures.append(f"{name}: {check.__name__}: {error}")
    assert not failures, "\n".join(failures)
