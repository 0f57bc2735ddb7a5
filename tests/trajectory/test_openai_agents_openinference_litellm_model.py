"""openai-agents on a Claude model through LiteLLM (`LitellmModel`), traced by OpenInference's openai-agents
instrumentor alone (the `openai-agents_openinference_litellm-model` capture).

Each call is only the SDK's `generation` span. Not streamed, its answer is the Chat Completions message
(`llm.output_messages`); streamed (turn 2, `run_streamed`), the SDK records the `Response` it built from the stream as
`output.value` and OpenInference writes no output messages: the answer is that Response's output items
(`trajectory/mappers/openai_agents_streamed_generations.py`). Each call must be one step with its text and tool calls,
each result on its call, the handoff a subagent of the transfer call, each question once.
"""

from __future__ import annotations

from typing import Any

from span_fixtures import capture_document, capture_spans, results_by_call

from evalkit.trajectory.mappers import openinference
from evalkit.trajectory.mappers.reader import SpanReader
from evalkit.trajectory.operations import LlmCall
from evalkit.trajectory.span import Span
from tests.captures import corpus

CAPTURE = "openai-agents_openinference_litellm-model"
SESSION = "oa-oi-litellm-model-1"
# The same scenario with both instrumentors, its booking agent's instructions cached: its streamed generation spans'
# Responses hold the cache reads the SDK counted.
BOTH = "openai-agents_openinference_litellm"


def _log() -> list[dict[str, Any]]:
    return corpus.load(CAPTURE).llm_log


def _document() -> dict[str, Any]:
    return capture_document(CAPTURE, SESSION)


def _generations(name: str) -> list[Span]:
    return sorted((span for span in capture_spans(name) if span.name == "generation"),
                  key=lambda span: span.start_time_unix_nano)


def _read(span: Span) -> LlmCall:
    call = openinference.map_span(SpanReader(span), ())
    assert isinstance(call, LlmCall)
    return call


def test_the_trajectory_is_the_conversation_that_happened() -> None:
    """One step per call with its text and tool calls under the model's ids, every result on its call, each question
    once, the tokens: the streamed turn's calls too."""
    document = _document()
    assert corpus.compare(document, corpus.GroundTruth.of(_log()), call_ids=True) == []
    top = [(step["source"], bool(step.get("is_copied_context"))) for step in document["steps"]]
    assert top == [("system", False), ("user", False), ("agent", False), *[("agent", True)] * 4, ("user", False),
                   ("agent", False)]
    assert len(corpus.llm_steps(document)) == len(_log()) == 7


def test_a_streamed_call_is_the_answer_the_sdk_built_from_the_stream() -> None:
    """Turn 2's calls were streamed: their spans hold no output messages, only the SDK's `[Response]`; each is read
    as the answer the fake LLM streamed, its function calls under their `call_id`s."""
    streamed = [entry for entry in _log() if entry["stream"]]
    spans = _generations(CAPTURE)[-len(streamed):]
    assert len(streamed) == 3
    for span, entry in zip(spans, streamed, strict=True):
        assert not any(key.startswith("llm.output_messages.") for key in span.attributes)
        assert str(span.attributes["output.value"]).startswith('[{"id": "__fake_id__"')
        [answer] = _read(span).output_messages
        response = entry["response"]
        assert (answer.role, answer.text) == ("assistant", response["text"])
        assert [(part.call_id, part.name, part.arguments) for part in answer.tool_calls] == [
            (c["id"], c["name"], c["arguments"]) for c in response["tool_calls"]]


def test_turn_two_hands_off_and_the_booking_agent_answers() -> None:
    """The streamed handoff is the travel desk's `transfer_to_booking_agent` call, answered with what the model was
    shown and starting the booking agent, whose streamed call and answer are its steps (no made-up call, no tool step
    of its own)."""
    document, log = _document(), _log()
    transfer = document["steps"][-1]
    [call] = transfer["tool_calls"]
    assert (call["tool_call_id"], call["function_name"]) == (log[4]["response"]["tool_calls"][0]["id"],
                                                              "transfer_to_booking_agent")
    result = results_by_call(transfer)[call["tool_call_id"]]
    assert result["content"] == '{"assistant": "Booking agent"}'
    run = document["subagent_trajectories"][1]
    assert [ref["trajectory_id"] for ref in result["subagent_trajectory_ref"]] == [run["trajectory_id"]]
    assert [(s["source"], bool(s.get("is_copied_context"))) for s in run["steps"]] == [
        ("system", False), ("agent", False), ("agent", False)]
    weather = log[5]["response"]["tool_calls"][0]
    assert [c["tool_call_id"] for c in run["steps"][1]["tool_calls"]] == [weather["id"]]
    assert results_by_call(run["steps"][1])[weather["id"]]["content"] == "windy, 7°C"
    assert run["steps"][2]["message"] == log[6]["response"]["text"]


def test_a_streamed_call_s_cache_reads_are_the_response_s() -> None:
    """The processor writes a generation's prompt and completion counts alone; a streamed one's Response has the cache
    reads the SDK counted (the cached scenario, its booking agent's instructions read from the cache)."""
    log = corpus.load(BOTH).llm_log
    for span, entry in zip(_generations(BOTH)[4:], log[4:], strict=True):
        assert not any("cache" in key for key in span.attributes)
        usage = _read(span).usage
        assert (usage.input_tokens, usage.cache_read_tokens) == (
            entry["response"]["usage"]["input_tokens"], entry["response"]["usage"].get("cache_read_tokens") or None)
    assert [entry["response"]["usage"].get("cache_read_tokens") for entry in log[4:]] == [None, 1_236, 1_236]
