"""A Mastra supervisor agent delegating to a subagent (`agents: {weatherAgent}`), through `@mastra/otel-exporter`.

The capture `mastra_native_network`: the Travel Desk delegates through the tool Mastra makes of its subagent,
`agent-weatherAgent`, whose execution runs the Weather Agent inside the tool's span; the Weather Agent calls two tools
in parallel, one throwing. Two turns on one memory thread, the second streamed. What was wrong, and what these check
(trajectory/mappers/mastra.py): each delegation's result was the tool's whole return object, where the model was
sent its text; the Weather Agent's prompt was the JSON of a Mastra stored message's content; the conversation Mastra
sends a delegated agent before its prompt (the supervisor's system prompt, questions and answers) was not shown;
a `mapping` span's attributes were unmapped.
"""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

from span_fixtures import capture_spans

from evalkit.trajectory.from_spans import trajectory_from_spans
from evalkit.trajectory.mappers import mastra
from evalkit.trajectory.mappers.reader import SpanReader
from evalkit.trajectory.operations import AgentRun, LlmCall, ToolExecution
from evalkit.trajectory.span import Span
from tests.captures import corpus, questions
from tests.captures.recording import fake_llm

CAPTURE = "mastra_native_network"
SESSION = "mastra-travel-desk-thread-1"
DELEGATE = "agent-weatherAgent"


def _document() -> dict[str, Any]:
    result = trajectory_from_spans(capture_spans(CAPTURE), session_id=SESSION)
    assert result.valid, [str(issue) for issue in result.issues]
    return result.document()


def _log() -> list[dict[str, Any]]:
    return corpus.load(CAPTURE).llm_log


def _sent_outputs() -> dict[str, str]:
    """Every tool result the model was sent, by call id (the fake LLM's log: the ground truth)."""
    return {item["call_id"]: item["output"] for entry in _log() for item in entry["request"]["input"]
            if isinstance(item, dict) and item.get("type") == "function_call_output"}


def _spans_of(kind: str) -> list[Span]:
    return [span for span in capture_spans(CAPTURE) if span.attributes.get(mastra.SPAN_TYPE) == kind]


def _said(step: dict[str, Any]) -> tuple[str, str, bool]:
    return step["source"], corpus.message_text(step.get("message")), bool(step.get("is_copied_context"))


def test_a_delegation_result_is_the_subagents_text_the_model_was_sent() -> None:
    document = _document()
    sent = _sent_outputs()
    delegations = [(call, step) for step in document["steps"] for call in step.get("tool_calls") or ()
                   if call["function_name"] == DELEGATE]
    assert len(delegations) == 2
    subagents = {sub["trajectory_id"]: sub for sub in document["subagent_trajectories"]}
    for call, step in delegations:
        (result,) = [r for r in step["observation"]["results"] if r["source_call_id"] == call["tool_call_id"]]
        # The tool's span records its whole `{text, subAgentThreadId, subAgentToolResults, …}`.
        assert result["content"] == sent[call["tool_call_id"]]
        # The subagent's run it references answered with that text.
        (ref,) = result["subagent_trajectory_ref"]
        answer = [s for s in subagents.pop(ref["trajectory_id"])["steps"] if s.get("llm_call_count") == 1][-1]
        assert corpus.message_text(answer["message"]) == result["content"]
    assert not subagents


def test_a_delegation_result_with_a_reference_is_sent_with_it() -> None:
    span = min((s for s in _spans_of("tool_call") if s.attributes["gen_ai.tool.name"] == DELEGATE),
               key=lambda s: s.start_time_unix_nano)
    output = json.loads(str(span.attributes["gen_ai.tool.call.result"]))
    # `delegation.enableResultReferences`: the result's `ref`, which `toModelOutput` appends to the text.
    referenced = replace(span, attributes={
        **span.attributes, "gen_ai.tool.call.result": json.dumps({**output, "ref": "weatherAgent-1"})})
    execution = mastra.map_span(SpanReader(referenced), ())
    assert isinstance(execution, ToolExecution)
    assert execution.result == f"{output['text']}\n\n[ref: weatherAgent-1]"


def test_a_delegated_agents_prompt_is_its_text_not_its_stored_message() -> None:
    runs = [span for span in _spans_of("agent_run") if span.attributes["gen_ai.agent.name"] == "Weather Agent"]
    prompts = [call["arguments"]["prompt"]
               for record in _log() for call in record["response"]["tool_calls"] if call["name"] == DELEGATE]
    assert len(runs) == len(prompts) == 2
    for span, prompt in zip(sorted(runs, key=lambda s: s.start_time_unix_nano), prompts, strict=True):
        run = mastra.map_span(SpanReader(span), ())
        assert isinstance(run, AgentRun)
        assert run.input_text == prompt


def test_a_delegated_agent_shows_the_conversation_it_was_sent_before_its_prompt() -> None:
    document = _document()
    first, second = document["subagent_trajectories"]
    desk = document["steps"][0]["message"]
    weather = "You look up weather and local time with your tools. Answer in one line."
    # Turn 1: the supervisor's instructions and the user's question, then the prompt: each asked anew.
    assert [_said(s) for s in first["steps"] if s["source"] != "agent" or s.get("is_copied_context")] == [
        ("system", weather, False), ("system", desk, False),
        ("user", "What's the weather and the local time in Paris?", False),
        ("user", "Current weather and local time in Paris.", False)]
    # Turn 2: the first turn, question and answer, is history it was shown (a user message before an answer the call
    # re-sends is copied context: build.py's `_last_answer_or_result`); then the new question and the prompt.
    assert [_said(s) for s in second["steps"] if s["source"] != "agent" or s.get("is_copied_context")] == [
        ("system", weather, False), ("system", desk, False),
        ("user", "What's the weather and the local time in Paris?", True),
        ("agent", "It is 14:05 in Paris. The weather service is not answering right now.", True),
        ("user", "Could you try the weather again?", False),
        ("user", "Current weather in Paris.", False)]
    assert questions.missing_questions(document, _log()) == []


def test_only_a_first_step_asked_more_than_its_prompt_reads_the_preview() -> None:
    steps = {span.span_id: span for span in _spans_of("model_step")}
    read = {key for key, span in steps.items()
            if (call := mastra.map_span(SpanReader(span), ())) is not None and isinstance(call, LlmCall)
            and call.input_messages}
    # The Weather Agent's first step of each delegation; not the Travel Desk's (its question is its run's).
    assert {steps[key].name for key in read} == {"agent_step Weather Agent"}
    assert {steps[key].attributes["mastra.model_step.step_index"] for key in read} == {0}
    assert len(read) == 2
    # A preview cut short (Mastra's serialiser: the rest one text) is not read: the run's span says the prompt.
    span = steps[next(iter(read))]
    preview = json.loads(str(span.attributes["mastra.model_step.input"]))
    cut = replace(span, attributes={**span.attributes,
                                    "mastra.model_step.input": json.dumps([*preview, "[…3 more items]"])})
    call = mastra.map_span(SpanReader(cut), ())
    assert isinstance(call, LlmCall) and call.input_messages == []


def test_the_capture_is_the_conversation_that_happened() -> None:
    document = _document()
    assert corpus.compare(document, corpus.GroundTruth.of(_log())) == []
    assert document["agent"]["name"] == "Travel Desk" and document["session_id"] == SESSION
    # The `mapping` spans (the delegation's result and what the model was sent) restate the tool's: read.
    assert document["extra"]["unmapped_attributes"] == []
    # The subagent's parallel calls, each result on its call, the thrown one flagged with what the model was sent.
    first = document["subagent_trajectories"][0]
    (parallel,) = [s for s in first["steps"] if len(s.get("tool_calls") or ()) == 2]
    results = {r["source_call_id"]: r for r in parallel["observation"]["results"]}
    sent = _sent_outputs()
    assert {call_id: r["content"] for call_id, r in results.items()} == {
        c["tool_call_id"]: sent[c["tool_call_id"]] for c in parallel["tool_calls"]}
    assert [c["function_name"] for c in parallel["tool_calls"] if results[c["tool_call_id"]]["extra"].get("is_error")
            ] == ["get_weather"]


def test_the_fake_llm_streams_a_function_calls_arguments_as_deltas() -> None:
    """As the Responses API does; Mastra's stream builds a call's arguments from the deltas (it ran the streamed
    turn's tools with none when the fake sent them whole in the added item only)."""
    reply = {"id": "openai-resp-9", "text": "", "reasoning": "", "usage": {"input_tokens": 1, "output_tokens": 1},
             "tool_calls": [{"id": "fc_9_0", "name": "get_weather", "arguments": {"city": "Paris"}}]}
    events = list(fake_llm._responses_stream("gpt-4o-mini", reply, {}))
    added = next(e for e in events if e["type"] == "response.output_item.added")
    assert added["item"]["arguments"] == ""
    deltas = [e["delta"] for e in events if e["type"] == "response.function_call_arguments.delta"]
    done = next(e for e in events if e["type"] == "response.output_item.done")
    assert json.loads("".join(deltas)) == {"city": "Paris"} == json.loads(done["item"]["arguments"])
