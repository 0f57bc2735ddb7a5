"""Strands Agents' "agents as tools", traced by Strands' own spans (the `strands_native_agents-as-tools` capture).

The orchestrator (`trip_planner`) has two `@tool` functions, `weather_assistant` and `sights_assistant`, each of
which makes a specialist `Agent`, asks it the orchestrator's query and returns its answer's text. Strands runs a
tool in a worker thread with the caller's context, so each specialist's `invoke_agent` span is a child of the
orchestrator's `execute_tool` span for that call. The builder's tool-span rule (`build.attach_subagent`) makes each
specialist a subagent started by the call that asked it, its answer that call's result. The corpus comparison
checks calls, results and tokens but not which trajectory holds a call, so these tests hold the shape a person
expects, against the fake LLM's log (each call assigned to its agent by the system prompt it was sent).
"""

from __future__ import annotations

from typing import Any

from span_fixtures import capture_document, capture_spans

from evalkit.trajectory.mappers import strands
from evalkit.trajectory.mappers.reader import SpanReader
from evalkit.trajectory.operations import AgentRun
from evalkit.trajectory.summary import summarise
from tests.captures import corpus

CAPTURE = "strands_native_agents-as-tools"
SESSION = "strands-agents-as-tools-trip-1"
QUESTIONS = ["I'm in Lyon tomorrow. What's the forecast, and what should I see?",
             "Which of those is best if it pours?"]
# Each agent by the start of the system prompt record.py gives it, and the specialist each orchestrator tool asks.
SYSTEM_PROMPTS = {"You plan trips": "trip_planner", "You answer weather questions": "weather_specialist",
                  "You suggest sights": "sights_specialist"}
SPECIALISTS = {"weather_assistant": "weather_specialist", "sights_assistant": "sights_specialist"}

Json = dict[str, Any]


def _document() -> Json:
    return capture_document(CAPTURE, SESSION)


def _log() -> list[Json]:
    return corpus.load(CAPTURE).llm_log


def _calls_by_agent() -> dict[str, list[Json]]:
    """The fake LLM's log, each call under the agent whose system prompt it was sent (the ground truth)."""
    found: dict[str, list[Json]] = {}
    for entry in _log():
        system = entry["request"]["messages"][0]
        assert system["role"] == "system"
        (agent,) = [name for start, name in SYSTEM_PROMPTS.items() if str(system["content"]).startswith(start)]
        found.setdefault(agent, []).append(entry)
    return found


def _subagents(document: Json) -> dict[str, Json]:
    return {sub["agent"]["name"]: sub for sub in document["subagent_trajectories"]}


def _llm_steps(trajectory: Json) -> list[Json]:
    return [s for s in trajectory["steps"] if s["source"] == "agent" and s.get("llm_call_count") == 1]


def _results(trajectory: Json) -> list[Json]:
    return [r for s in trajectory["steps"] for r in (s.get("observation") or {}).get("results") or ()]


def test_each_specialist_is_a_subagent_answering_the_tool_call_that_asked_it() -> None:
    document = _document()
    calls = _calls_by_agent()
    truth = corpus.GroundTruth.of(_log())
    assert document["agent"]["name"] == "trip_planner"
    subagents = _subagents(document)
    assert sorted(subagents) == sorted(SPECIALISTS.values())
    # Each agent's trajectory holds its own calls, in order, and no other's.
    for name, trajectory in [("trip_planner", document), *subagents.items()]:
        assert [(s["message"], [c["function_name"] for c in s.get("tool_calls") or ()])
                for s in _llm_steps(trajectory)] == [
            (e["response"]["text"], [c["name"] for c in e["response"]["tool_calls"]]) for e in calls[name]]
    # The orchestrator's parallel calls: each answered with what its model was shown, the specialist's answer,
    # and referring to the specialist that call ran, whose request was the call's query.
    (delegating,) = [s for s in document["steps"] if s.get("tool_calls")]
    results = {r["source_call_id"]: r for r in delegating["observation"]["results"]}
    assert [c["function_name"] for c in delegating["tool_calls"]] == list(SPECIALISTS)
    for call in delegating["tool_calls"]:
        specialist = subagents[SPECIALISTS[call["function_name"]]]
        result = results[call["tool_call_id"]]
        assert result["content"] == truth.tool_results[call["tool_call_id"]]
        assert [ref["trajectory_id"] for ref in result["subagent_trajectory_ref"]] == [specialist["trajectory_id"]]
        assert [s["message"] for s in specialist["steps"] if s["source"] == "user"] == [call["arguments"]["query"]]
        assert specialist["steps"][-1]["message"] == result["content"].strip()


def test_each_agent_is_defined_with_the_tools_its_model_was_offered() -> None:
    document = _document()
    calls = _calls_by_agent()
    for name, trajectory in [("trip_planner", document), *_subagents(document).items()]:
        offered = {str(e["request"]["tools"]) for e in calls[name]}
        assert len(offered) == 1  # an agent offers its model the same tools on every call
        assert [trajectory["agent"]["tool_definitions"]] == [calls[name][0]["request"]["tools"]]


def test_the_weather_specialists_timed_out_forecast_is_flagged_and_called_again() -> None:
    document = _document()
    truth = corpus.GroundTruth.of(_log())
    weather = _subagents(document)["weather_specialist"]
    calls = [c for s in weather["steps"] for c in s.get("tool_calls") or ()]
    assert [(c["function_name"], c["arguments"]) for c in calls] == [("get_forecast", {"city": "Lyon", "days": 1})] * 2
    results = _results(weather)
    assert [r["source_call_id"] for r in results] == [c["tool_call_id"] for c in calls]
    assert [r["content"] for r in results] == [truth.tool_results[c["tool_call_id"]] for c in calls]
    assert results[0]["content"] == "Error: TimeoutError - forecast service timed out"
    # Only the raising call is flagged: not its retry, nor the sights specialist's tool, nor the orchestrator's call
    # whose specialist answered around it.
    flagged = [r["source_call_id"] for t in corpus.all_trajectories(document) for r in _results(t)
               if r.get("extra", {}).get("is_error")]
    assert flagged == [calls[0]["tool_call_id"]]
    summary = summarise(document)
    assert (summary.llm_calls, summary.tool_calls, summary.tool_errors, summary.subagents) == (len(_log()), 5, 1, 2)


def test_each_question_is_one_user_step_and_both_turns_are_the_orchestrators() -> None:
    document = _document()
    assert document["session_id"] == SESSION
    # Turn two's call re-sent turn one (the question, the delegations, the answer): no step of it again.
    assert [s["message"] for s in document["steps"] if s["source"] == "user"] == QUESTIONS
    assert not any(s.get("is_copied_context") for t in corpus.all_trajectories(document) for s in t["steps"])
    truth = corpus.GroundTruth.of(_log())
    final = document["final_metrics"]
    assert (final["total_prompt_tokens"], final["total_completion_tokens"]) == (truth.input_tokens,
                                                                                truth.output_tokens)
    # Two traces, one a turn, only the orchestrator's spans naming the session: the specialists' runs are in the
    # first turn's trace under its tool spans, the call ids of the calls that asked them.
    spans = capture_spans(CAPTURE)
    by_id = {s.span_id: s for s in spans}
    roots = sorted((s for s in spans if not s.parent_span_id), key=lambda s: s.start_time_unix_nano)
    assert [(s.name, s.attributes.get("session.id")) for s in roots] == [("invoke_agent trip_planner", SESSION)] * 2
    runs = {}
    for span in spans:
        reader = SpanReader(span)
        run = strands.map_span(reader, ())
        if isinstance(run, AgentRun) and span.parent_span_id:
            tool = by_id[span.parent_span_id]
            runs[str(tool.attributes["gen_ai.tool.name"])] = (run.name, span.trace_id, "session.id" in span.attributes)
    assert runs == {tool: (agent, roots[0].trace_id, False) for tool, agent in SPECIALISTS.items()}
