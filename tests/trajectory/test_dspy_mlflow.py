"""MLflow's DSPy autolog on a program running a ChainOfThought and then a `dspy.ReAct`, read from its capture.

`dspy_mlflow` (tests/captures/dspy_mlflow/record.py): `mlflow.dspy.autolog()` exported over OTLP. Each turn's trace: the
program's CHAIN span, the ChainOfThought (a Predict LLM span around an `LM.__call__` CHAT_MODEL span), the ReAct AGENT
span with a Predict and an LM call per step, a `Tool.<name>` TOOL span per tool ReAct ran (none for `finish`), and the
extract call's ChainOfThought. Turn 1: the weather in Paris, then Oslo; turn 2 (streamed): a flight search that raises
(ReAct shows the model "Execution error in lookup_flight: …"), the search again, `finish`, the answer.

The session (`mlflow.tracing.context(session_id=…)`) is trace metadata, which MLflow's OTLP export drops (KNOWN_GAPS in
tests/trajectory_service/test_capture_corpus.py): each turn's trace is read as the session it is on the wire and
compared with the calls it made. No LM call's span records its tokens: DSPy's usage tracking reaches only the program's
root span, the trace's total, which the trajectory's `final_metrics` take (trajectory/run_totals.py).
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from evalkit.trajectory import from_spans
from evalkit.trajectory.mappers import mlflow
from evalkit.trajectory.mappers.reader import SpanReader
from evalkit.trajectory.operations import LlmCall, ToolExecution
from evalkit.trajectory.span import Span
from tests.captures import corpus, questions
from tests.trajectory.span_fixtures import by_trace, capture_spans

CAPTURE = "dspy_mlflow"
TURNS = ((0, 5), (5, 10))  # each turn's calls in the fake LLM's log
RAISED = "ConnectionError: flight search timed out for Oslo"  # the last line of what ReAct showed the model


def _traces() -> list[list[Span]]:
    """Each turn's spans, in the order the turns ran."""
    return sorted(by_trace(capture_spans(CAPTURE)).values(), key=lambda spans: min(s.start_time_unix_nano
                                                                                     for s in spans))


def _document(turn: int) -> dict[str, Any]:
    spans = _traces()[turn]
    result = from_spans.trajectory_from_spans(spans, session_id=spans[0].trace_id)
    assert result.valid, [str(issue) for issue in result.issues]
    return result.document()


def _log(turn: int) -> list[dict[str, Any]]:
    start, end = TURNS[turn]
    return corpus.load(CAPTURE).llm_log[start:end]


def _agent_steps(turn: int) -> list[dict[str, Any]]:
    return [step for trajectory in corpus.all_trajectories(_document(turn)) for step in trajectory["steps"]
            if step["source"] == "agent"]


def _lm_calls() -> list[Span]:
    return sorted((span for span in capture_spans(CAPTURE) if span.name == "LM.__call__"),
                  key=lambda span: span.start_time_unix_nano)


def _last_line(content: Any) -> str:
    return str(content).strip().splitlines()[-1]


def test_each_turn_is_the_conversation_of_its_calls() -> None:
    """One step per LM call with its text and tool calls, each tool's result on its call, each question a user step
    before its call's step, the turn's tokens the program's total (before: 0 prompt and completion tokens)."""
    for turn in (0, 1):
        document = _document(turn)
        truth = corpus.GroundTruth.of(_log(turn))
        assert corpus.compare(document, truth) == []
        assert questions.missing_questions(document, _log(turn)) == []


def test_the_turns_tokens_and_cost_are_the_programs_total_no_call_given_a_share() -> None:
    """DSPy's usage tracking records the program's total on its root CHAIN span (`mlflow.chat.tokenUsage`), no LM
    call's: `final_metrics` take it, priced as the calls' model, and say where it came from; each call's step keeps
    the usage it reported, none (before: 0 tokens and no cost, every step unpriced)."""
    for turn, (prompt, completion) in enumerate(((2919, 187), (3690, 176))):
        document = _document(turn)
        truth = corpus.GroundTruth.of(_log(turn))
        assert (truth.input_tokens, truth.output_tokens) == (prompt, completion)
        final = document["final_metrics"]
        assert (final["total_prompt_tokens"], final["total_completion_tokens"]) == (prompt, completion)
        # gpt-4o-mini's rates ($0.15 and $0.60 a million), as the fake LLM's calls were made
        assert final["total_cost_usd"] == pytest.approx((prompt * 0.15 + completion * 0.6) / 1e6, abs=1e-12)
        (total,) = final["extra"]["run_totals"]
        assert final["extra"]["tokens_from"] == "run total" and "unpriced_steps" not in final["extra"]
        root = next(s for s in _traces()[turn] if not s.parent_span_id)
        assert (total["span_id"], total["span_name"], total["model"], total["calls"]) == (
            root.span_id, "TripDesk.forward", "openai/gpt-4o-mini", 5)
        steps = [s for s in _agent_steps(turn)]
        assert all("prompt_tokens" not in (s.get("metrics") or {}) and "cost_usd" not in (s.get("metrics") or {})
                   for s in steps)


def test_each_react_step_is_its_thought_and_the_call_of_the_tool_it_named() -> None:
    """Before: each ReAct step's message was its raw `[[ ## next_thought ## ]] … [[ ## next_tool_args ## ]]` fields
    with no tool call, and each tool span a step of its own that no call asked for (named `Tool.get_weather`)."""
    def shown(step: dict[str, Any]) -> tuple[str, list[tuple[str, Any]], list[str]]:
        text = step["message"]
        return ("fields" if text.startswith("[[ ## reasoning") else text,
                [(c["function_name"], c["arguments"]) for c in step.get("tool_calls") or ()],
                [_last_line(r["content"]) for r in (step.get("observation") or {}).get("results") or ()
                 if r.get("source_call_id")])

    assert [shown(step) for step in _agent_steps(0)] == [
        ("fields", [], []),  # the ChainOfThought naming the topic
        ("I should look up the weather in Paris first.", [("get_weather", {"city": "Paris"})], ["sunny, 21°C"]),
        ("Now the weather in Oslo.", [("get_weather", {"city": "Oslo"})], ["rainy, 9°C"]),
        ("I know the weather in both cities.", [("finish", {})], ["Completed."]),
        ("fields", [], []),  # the extract call's answer
    ]
    assert [shown(step) for step in _agent_steps(1)] == [
        ("fields", [], []),
        ("I should look up flights to Oslo.", [("lookup_flight", {"city": "Oslo"})], [RAISED]),
        ("The flight search failed; I will try again.", [("lookup_flight", {"city": "Oslo"})],
         ["SK4411, departing 09:40"]),
        ("I have the flight.", [("finish", {})], ["Completed."]),
        ("fields", [], []),
    ]
    assert all(step.get("llm_call_count") == 1 for turn in (0, 1) for step in _agent_steps(turn))


def test_a_tool_span_is_the_tool_dspy_names_beside_it() -> None:
    """The callback names a tool span `Tool.<name>` and records the tool's `name`, `description` and `args` schema:
    the execution is of the tool the model named (before: `Tool.get_weather`, no call's)."""
    tools = [span for span in capture_spans(CAPTURE) if span.name.startswith("Tool.")]
    executions = [mlflow.map_span(SpanReader(span), []) for span in tools]
    assert all(isinstance(e, ToolExecution) for e in executions)
    assert sorted({e.name for e in executions if isinstance(e, ToolExecution)}) == ["get_weather", "lookup_flight"]


def test_the_failing_tool_is_flagged_with_what_react_showed_the_model() -> None:
    (failed,) = [step for step in _agent_steps(1) if any(r.get("extra", {}).get("is_error")
                                                         for r in (step.get("observation") or {}).get("results") or ())]
    (result,) = failed["observation"]["results"]
    assert failed["tool_calls"][0]["function_name"] == "lookup_flight"
    assert result["content"].startswith("Execution error in lookup_flight:") and _last_line(result["content"]) == RAISED
    assert result["extra"]["error"]["exceptions"][0]["type"] == "ConnectionError"


def test_the_rerendered_loop_is_no_user_step() -> None:
    """Every ReAct and extract call re-renders the loop in its one user message (`[[ ## trajectory ## ]]`): those
    are the calls and results already shown, so the agent's user steps are its question once for the ReAct calls and
    once for the extract call's new instructions, each with an empty trajectory (before: each call's user message, the
    loop so far in it, a user step of its own)."""
    for turn in (0, 1):
        (agent,) = _document(turn)["subagent_trajectories"]
        users = [step["message"] for step in agent["steps"] if step["source"] == "user"]
        assert len(users) == 2
        assert all("[[ ## trajectory ## ]]\n\n\nRespond with" in text and "thought_0" not in text for text in users)


def test_a_react_call_s_answer_is_read_as_dspy_s_fields() -> None:
    """The LM call's span (`mlflow.message.format` "dspy") holds the completions as a list of strings: the first
    ReAct call's answer is its thought and its `get_weather` call; the LM's arguments copied onto the span are read."""
    span = _lm_calls()[1]
    assert json.loads(span.attributes["mlflow.message.format"]) == "dspy"
    reader = SpanReader(span)
    call = mlflow.map_span(reader, [])
    assert isinstance(call, LlmCall)
    (message,) = call.output_messages
    assert [(p.kind, p.text or p.name) for p in message.parts] == [
        ("text", "I should look up the weather in Paris first."), ("tool_call", "get_weather")]
    assert reader.unused() == set()


def test_no_attribute_of_the_capture_is_unmapped() -> None:
    """The LM's arguments, the modules' signatures, the tools' definitions, the chains' and adapters' inputs and
    outputs (what the calls inside them were sent and answered) are read."""
    for turn in (0, 1):
        assert _document(turn)["extra"]["unmapped_attributes"] == []
