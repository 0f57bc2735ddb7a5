"""OpenInference's Claude Agent SDK instrumentation (the `claude-agent-sdk_openinference` capture's trace exports).

No span of the instrumentation's is a model call: each turn's AGENT span records the SDK's assistant messages, one
content block a message, and the builder derives one LLM span a call from them
(`trajectory/mappers/openinference_claude_agent_sdk.py`); a subagent's closing answer from the `Agent` tool's output.
Checked against the fake LLM's log, call by call, and what is still not recorded (per-call usage, the output tokens,
the subagent's own tool-calling answer, Read's and the hand-back's text as the model was shown them) said so.
"""

from __future__ import annotations

from typing import Any

from span_fixtures import capture_document, capture_spans, capture_truth

from evalkit.trajectory.mappers import openinference_claude_agent_sdk
from tests.captures import corpus

CAPTURE = "claude-agent-sdk_openinference"
SESSION = "7c1f0a52-93d4-4b8e-a6f2-5e0d8b14c3a9"


def _document() -> dict[str, Any]:
    return capture_document(CAPTURE, SESSION)


def _step_calls(step: dict[str, Any]) -> list[tuple[str, Any]]:
    return [(c["function_name"], c["arguments"]) for c in step.get("tool_calls") or ()]


def test_each_main_agent_call_is_one_step_with_its_text_and_tool_calls() -> None:
    truth = capture_truth(CAPTURE)
    main = [call for call in truth.calls if call.seq not in (4, 5)]  # 4, 5: the forecaster's requests
    steps = [s for s in _document()["steps"] if s["source"] == "agent"]
    assert [(corpus.message_text(s.get("message")), _step_calls(s)) for s in steps] == [
        (call.text, [(c["name"], c["arguments"]) for c in call.tool_calls]) for call in main]
    # Every step is a model call's: no tool is a step of its own.
    assert all(s.get("llm_call_count") != 0 for s in steps)


def test_each_question_is_a_user_step_once_before_its_answer() -> None:
    sources = [(s["source"], corpus.message_text(s.get("message"))[:20]) for s in _document()["steps"]]
    assert sources == [("user", "Read my itinerary, c"), ("agent", "I'll read your itiner"[:20]),
                       ("agent", "The Porto lookup tim"), ("agent", "Porto is cloudy at 1"),
                       ("user", "Ask the forecaster w"), ("agent", ""), ("agent", "No: the forecaster s")]


def test_results_on_their_calls_the_failure_and_the_denial_flagged_with_the_text_the_model_was_shown() -> None:
    shown = capture_truth(CAPTURE).tool_results
    results = {r["source_call_id"]: r for s in _document()["steps"]
               for r in (s.get("observation") or {}).get("results") or ()}
    # An MCP tool's content blocks, recorded as JSON, are the text the model was shown.
    assert results["toolu_1_0"]["content"] == shown["toolu_1_0"] == "cloudy, 18°C"
    # The raising tool and the one `can_use_tool` denied: no output recorded, their error the result the CLI sent.
    for call_id in ("toolu_0_1", "toolu_1_1"):
        assert results[call_id]["content"] == shown[call_id]
        assert results[call_id]["extra"]["is_error"] is True
    assert shown["toolu_1_1"] == "The traveller books hotels themselves: ask them before booking."


def test_the_subagent_is_named_for_its_agent_and_ends_with_the_report_its_call_recorded() -> None:
    document = _document()
    agent_call = next(r for s in document["steps"] for r in (s.get("observation") or {}).get("results") or ()
                      if r["source_call_id"] == "toolu_3_0")
    (subagent,) = document["subagent_trajectories"]
    assert agent_call["subagent_trajectory_ref"][0]["trajectory_id"] == subagent["trajectory_id"]
    assert subagent["agent"]["name"] == "forecaster"
    report = capture_truth(CAPTURE).calls[5]  # the forecaster's closing answer
    last = subagent["steps"][-1]
    assert corpus.message_text(last["message"]) == report.text
    assert (last["metrics"]["prompt_tokens"], last["metrics"]["completion_tokens"]) == (
        report.input_tokens, report.output_tokens)
    # The Agent call's result is that report (the instrumentation keeps it beside the CLI's bookkeeping of the run).
    assert agent_call["content"] == report.text


def test_prompt_and_cache_tokens_are_the_turns_sums_on_each_turns_last_call() -> None:
    truth = capture_truth(CAPTURE)
    main = [call for call in truth.calls if call.seq not in (4, 5)]
    steps = [s for s in _document()["steps"] if s["source"] == "agent"]
    turn_one, turn_two = main[:3], main[3:]
    assert steps[2]["metrics"]["prompt_tokens"] == sum(c.input_tokens for c in turn_one)
    assert steps[2]["metrics"]["cached_tokens"] == sum(c.cache_read_tokens for c in turn_one)
    assert steps[2]["metrics"]["extra"]["cache_creation_input_tokens"] == sum(c.cache_write_tokens for c in turn_one)
    assert steps[4]["metrics"]["prompt_tokens"] == sum(c.input_tokens for c in turn_two)
    # Not recorded: the output tokens (each SDK message carries the stream's message_start count, 1).
    assert steps[2]["metrics"]["completion_tokens"] == 3 != sum(c.output_tokens for c in turn_one)


def test_answers_are_split_where_a_tool_call_follows_results_already_back() -> None:
    """Two answers that only call tools, one after the other, are two calls: the second's tool started after the
    first's ended (the model was answered before it asked)."""
    turn = next(s for s in capture_spans(CAPTURE) if s.name == "ClaudeAgentSDK.ClaudeSDKClient.receive_response")
    tools = [s for s in capture_spans(CAPTURE) if s.parent_span_id == turn.span_id and "tool.id" in s.attributes]
    by_id = {str(s.attributes["tool.id"]): s for s in tools}
    blocks = [{"message.tool_calls.0.tool_call.id": "toolu_0_1"}, {"message.tool_calls.0.tool_call.id": "toolu_1_0"}]
    assert len(openinference_claude_agent_sdk.answers(blocks, by_id)) == 2
    # Parallel calls of one answer (the second asked before the first's result was back) are one call.
    parallel = [{"message.tool_calls.0.tool_call.id": "toolu_1_0"}, {"message.tool_calls.0.tool_call.id": "toolu_1_1"}]
    assert len(openinference_claude_agent_sdk.answers(parallel, by_id)) == 1


def test_what_the_instrumentation_does_not_record_is_not_made_up() -> None:
    truth = capture_truth(CAPTURE)
    document = _document()
    problems = corpus.compare(document, truth)
    # The forecaster's tool-calling answer (no span holds it: its tool's is a step of no call), the output tokens,
    # Read's result (the hook's structured file, not the numbered lines the model read), the hand-back text.
    assert problems, "the capture is now right: remove its KNOWN_GAPS entry"
    assert not any("no step with text" in p and "call 4" not in p for p in problems), problems


def test_the_turns_record_of_its_calls_is_read_not_left_unmapped() -> None:
    """The turn span's messages, model and summed usage are its calls' (their derived spans): read, none unmapped."""
    assert _document()["extra"]["unmapped_attributes"] == []
