"""A LangChain `create_agent` compacting its context with LangChain v1's `SummarizationMiddleware` (the
`langgraph_openinference_summarization` capture: `trigger=("messages", 8)`, `keep=("messages", 4)`, three turns of
one thread, summarizing before turn two's first call and again before turn three's).

The middleware's summary call (gpt-4o-mini, its metadata `lc_source: summarization`) is a compaction of the agent's
context (`trajectory/mappers/langchain_summarization.py`), built by the rule every emitter's compaction shares
(`trajectory/context_compaction.py`): its step is the summary, marked; its summary prompt is no question; the summary
message the agent's later calls are sent in place of the history is no step; nothing earlier is lost.
"""

from __future__ import annotations

from typing import Any

from span_fixtures import capture_document, capture_spans, capture_truth, results_by_call

from evalkit.trajectory.build import map_one_span
from evalkit.trajectory.mappers import langchain_summarization
from evalkit.trajectory.operations import ContextCompaction, LlmCall
from tests.captures import corpus

CAPTURE = "langgraph_openinference_summarization"
SESSION = "lg-oi-summarization-1"
SUMMARY_MODEL = "gpt-4o-mini"  # the middleware's model; the agent's is gpt-4o
QUESTIONS = ["I'm going to Bergen for 3 nights: what's the weather there, and find me a hotel.",
             "What do 3 nights there cost in euros?",
             "Is that hotel close to the fish market?"]
# How the middleware re-sends a summary to the agent's later calls (`SummarizationMiddleware._build_new_messages`).
RESENT_SUMMARY = "Here is a summary of the conversation to date:"
# Where its summary prompt starts the messages it summarizes (`DEFAULT_SUMMARY_PROMPT`).
SUMMARY_PROMPT = "Messages to summarize:"

Json = dict[str, Any]


def _summaries() -> list[str]:
    """What the middleware's model answered, in order: the ground truth of the summaries."""
    return [call.text for call in capture_truth(CAPTURE).calls if call.model == SUMMARY_MODEL]


def _calls() -> list[LlmCall]:
    calls = [op for op in map(map_one_span, capture_spans(CAPTURE)) if isinstance(op, LlmCall)]
    return sorted(calls, key=lambda call: call.span.start_time_unix_nano)


def test_the_summary_calls_are_marked_compactions_with_what_they_summarized_and_kept() -> None:
    calls = _calls()
    assert len(calls) == 8
    langchain_summarization.complete_calls(capture_spans(CAPTURE), calls)
    marked = [(call.model, call.compaction) for call in calls if call.compaction is not None]
    # The first summarized turn one's question, the first answer and its two results, keeping the get_weather retry,
    # its result, turn one's answer and turn two's question; the second the first summary and four more, keeping turn
    # two's call, its result, its answer and turn three's question (what the next calls were sent after the summary).
    assert marked == [
        (SUMMARY_MODEL, ContextCompaction("SummarizationMiddleware", summarized_messages=4, kept_messages=4)),
        (SUMMARY_MODEL, ContextCompaction("SummarizationMiddleware", summarized_messages=5, kept_messages=4)),
    ]
    log = corpus.load(CAPTURE).llm_log
    for seq in (4, 7):  # the agent's first call after each summary: the system prompt, the summary, the kept
        assert len(log[seq]["request"]["messages"]) == 2 + 4


def test_each_question_and_answer_once_in_order_the_compactions_steps_of_their_own() -> None:
    document = capture_document(CAPTURE, SESSION)
    steps = document["steps"]
    assert not any(step.get("is_copied_context") for step in steps)
    assert [step["message"] for step in steps if step["source"] == "user"] == QUESTIONS
    answers = [call.text for call in capture_truth(CAPTURE).calls]
    agent = [step for step in steps if step["source"] == "agent"]
    assert [step["message"] for step in agent] == answers
    assert all(step["llm_call_count"] == 1 for step in agent)
    compactions = [(step["message"], step["model_name"], step["extra"]["context_compaction"])
                   for step in agent if "context_compaction" in step.get("extra", {})]
    first, second = _summaries()
    assert compactions == [
        (first, SUMMARY_MODEL, {"kind": "summary", "by": "SummarizationMiddleware", "summarized_messages": 4,
                                "kept_messages": 4}),
        (second, SUMMARY_MODEL, {"kind": "summary", "by": "SummarizationMiddleware", "summarized_messages": 5,
                                 "kept_messages": 4}),
    ]
    # Where they happened: after turn one's answer, after turn two's, each before the question the agent answered next.
    order = [("compaction" if "context_compaction" in step.get("extra", {}) else step["source"]) for step in steps]
    assert order == ["system", "user", "agent", "agent", "agent", "compaction", "user", "agent", "agent",
                     "compaction", "user", "agent"]


def test_the_summary_prompt_is_no_question() -> None:
    document = capture_document(CAPTURE, SESSION)
    assert not any(SUMMARY_PROMPT in str(step["message"]) for step in document["steps"])


def test_the_summary_sent_again_is_no_step() -> None:
    document = capture_document(CAPTURE, SESSION)
    assert not any(RESENT_SUMMARY in str(step["message"]) for step in document["steps"])


def test_nothing_the_summary_replaced_is_lost() -> None:
    """Turn one's parallel calls, the raising tool flagged with the text the model was shown and its retry, though
    the model was later sent a summary of them."""
    document = capture_document(CAPTURE, SESSION)
    calls = [step for step in document["steps"] if step.get("tool_calls")]
    first = results_by_call(calls[0])
    assert [(c["function_name"], first[c["tool_call_id"]]["content"]) for c in calls[0]["tool_calls"]] == [
        ("get_weather", "the weather service did not answer in time"),
        ("find_hotel", "Hotel Bryggen, Bergen: a room free for 3 nights, 1400 NOK a night")]
    assert first["call_0_0"]["extra"]["error"]["status"] == "error"
    assert [r["content"] for r in results_by_call(calls[1]).values()] == ["rainy, 8°C"]
    assert [r["content"] for r in results_by_call(calls[2]).values()] == ["4200 NOK is 359 EUR"]
