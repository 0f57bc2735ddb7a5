"""A Strands agent compacting its context with `SummarizingConversationManager` as it is by default, no summarization
agent (the `strands_native_summarizing_default` capture: `proactive_compression`, three turns of one agent, compacting
before turn two's first call and again before turn three's, the second time the first summary among what it
summarized).

The manager asks the agent's model for each summary itself, outside the agent's tracing: no span holds those two calls
(nor their tokens: a known gap, the corpus's UNRECORDED_CALLS). What the spans hold is the event-loop cycle's span
restating the history before the compaction and its chat span sent the history after, the summary first. Read so
(`trajectory/mappers/strands_summarizing.py`, the shared rule in `trajectory/context_compaction.py`): each compaction
is a step of no LLM call where it happened, the summary its message, marked `extra.context_compaction` (by the
manager, 5 messages summarized, 2 kept, its call unrecorded); the summary the agent's calls are sent is no user step;
nothing earlier is lost. Before, each summary was a user step (copied context) nobody typed, and nothing said the
context was compacted.
"""

from __future__ import annotations

from typing import Any

from span_fixtures import capture_document, capture_spans, capture_truth, results_by_call

from evalkit.trajectory.build import map_one_span
from evalkit.trajectory.mappers import strands_summarizing
from evalkit.trajectory.operations import ContextCompaction, LlmCall
from tests.captures import corpus

CAPTURE = "strands_native_summarizing_default"
SESSION = "strands-summarizing-default-1"
WITH_AGENT = "strands_native_summarizing"  # the same run with a summarization agent: its summary calls recorded
QUESTIONS = ["I'm going to Bergen for 3 nights: what's the weather there, and find me a hotel.",
             "What do 3 nights there cost in euros?",
             "Is that hotel close to the fish market?"]
# Both compactions as their steps show them: by the manager, its call in no span, 5 messages summarized, 2 kept.
COMPACTION = {"kind": "summary", "by": "SummarizingConversationManager", "call_recorded": False,
              "summarized_messages": 5, "kept_messages": 2}

Json = dict[str, Any]


def _summary_calls() -> list[corpus.Call]:
    """The calls the manager made for the summaries, from the fake LLM's log (the ground truth): asked the summary
    request last."""
    log = corpus.load(CAPTURE).llm_log
    seqs = {entry["seq"] for entry in log
            if corpus.message_text(entry["request"]["messages"][-1]["content"]) == strands_summarizing.SUMMARY_REQUEST}
    return [call for call in capture_truth(CAPTURE).calls if call.seq in seqs]


def _summaries() -> list[str]:
    return [call.text for call in _summary_calls()]


def _calls(capture: str) -> list[LlmCall]:
    calls = [op for op in map(map_one_span, capture_spans(capture)) if isinstance(op, LlmCall)]
    return sorted(calls, key=lambda call: call.span.start_time_unix_nano)


def test_the_summary_calls_are_in_no_span() -> None:
    """The known gap: 8 calls were made, 6 are in spans, none of them a summary call."""
    assert len(capture_truth(CAPTURE).calls) == 8
    assert [call.seq for call in _summary_calls()] == [3, 6]
    calls = _calls(CAPTURE)
    assert len(calls) == 6
    assert not any(message.text in _summaries() for call in calls for message in call.output_messages)


def test_the_calls_sent_a_summary_are_marked_sent_that_compaction() -> None:
    spans = capture_spans(CAPTURE)
    calls = _calls(CAPTURE)
    strands_summarizing.complete_calls(spans, calls)
    assert not any(call.compaction for call in calls)  # no call recorded made a summary
    first, second = _summaries()
    cycles = {span.span_id: span for span in spans if span.name == "execute_event_loop_cycle"}
    marked = [(index, call.sent_compaction) for index, call in enumerate(calls) if call.sent_compaction is not None]
    # Turn two's two calls sent the first summary, turn three's call the second.
    assert [(index, compaction.summary) for index, compaction in marked] == [(3, first), (4, first), (5, second)]
    assert marked[0][1] is marked[1][1]  # one compaction, sent twice: one step
    for index, compaction in marked:
        call = calls[index]
        expected = ContextCompaction("SummarizingConversationManager", summarized_messages=5, kept_messages=2,
                                     summary=compaction.summary, time_ns=compaction.time_ns)
        assert compaction == expected
        # The summary is the message before `sent_compaction_at`, after the agent's instructions.
        assert call.sent_compaction_at == 2
        assert call.input_messages[call.sent_compaction_at - 1].text == compaction.summary
    # When it happened: when the cycle whose model call was first sent it started (the summary call before that call).
    assert marked[0][1].time_ns == cycles[calls[3].span.parent_span_id].start_time_unix_nano
    assert marked[2][1].time_ns == cycles[calls[5].span.parent_span_id].start_time_unix_nano
    # The ground truth of the counts: the summary call was sent the 5 Strands messages summarized (two tool results
    # one message, two OpenAI tool messages) and the request; the agent's next call its instructions, the summary and
    # the 2 kept.
    log = corpus.load(CAPTURE).llm_log
    for seq, roles in ((3, ["user", "assistant", "tool", "tool", "assistant", "tool"]),
                       (6, ["user", "assistant", "user", "assistant", "tool"])):
        sent = log[seq]["request"]["messages"]
        assert [message["role"] for message in sent[1:-1]] == roles
        assert [message["role"] for message in log[seq + 1]["request"]["messages"]] == [
            "system", "user", "assistant", "user"]


def test_each_compaction_a_step_of_no_llm_call_where_it_happened() -> None:
    document = capture_document(CAPTURE, SESSION)
    assert document["agent"]["name"] == "trip-agent"
    assert not document.get("subagent_trajectories")
    steps = document["steps"]
    compactions = [step for step in steps if "context_compaction" in step.get("extra", {})]
    assert [(step["source"], step["message"], step["extra"]["context_compaction"]) for step in compactions] == [
        ("agent", summary, COMPACTION) for summary in _summaries()]
    # No call recorded: no model, no tokens, no cost.
    assert all(step["llm_call_count"] == 0 and not step.get("model_name") and not step.get("metrics")
               for step in compactions)
    # Where they happened: after turn one's answer, after turn two's, each before the question the agent answered next.
    order = [("compaction" if "context_compaction" in step.get("extra", {}) else step["source"]) for step in steps]
    assert order == ["system", "user", "agent", "agent", "agent", "compaction", "user", "agent", "agent",
                     "compaction", "user", "agent"]


def test_the_summary_sent_is_no_user_step_and_each_question_once() -> None:
    steps = capture_document(CAPTURE, SESSION)["steps"]
    assert [step["message"] for step in steps if step["source"] == "user"] == QUESTIONS
    assert not any(step.get("is_copied_context") for step in steps)
    assert not any(strands_summarizing.SUMMARY_REQUEST in str(step["message"]) for step in steps)


def test_every_recorded_call_a_step_its_tokens_alone() -> None:
    """The answers and tool calls of the 6 calls in spans, in order, their tokens the trajectory's (the summary calls'
    counted nowhere, not made up)."""
    document = capture_document(CAPTURE, SESSION)
    summary_seqs = {call.seq for call in _summary_calls()}
    recorded = [call for call in capture_truth(CAPTURE).calls if call.seq not in summary_seqs]
    llm_steps = corpus.llm_steps(document)
    assert [(step["message"], [c["function_name"] for c in step.get("tool_calls") or ()]) for step in llm_steps] == [
        (call.text, [c["name"] for c in call.tool_calls]) for call in recorded]
    final = document["final_metrics"]
    assert (final["total_prompt_tokens"], final["total_completion_tokens"]) == (
        sum(call.input_tokens for call in recorded), sum(call.output_tokens for call in recorded))


def test_nothing_the_summary_replaced_is_lost() -> None:
    """Turn one's parallel calls, the raising tool flagged with the text the model was shown and its retry, though the
    model was later sent a summary of them."""
    document = capture_document(CAPTURE, SESSION)
    calls = [step for step in document["steps"] if step.get("tool_calls")]
    first = results_by_call(calls[0])
    assert [(c["function_name"], first[c["tool_call_id"]]["content"]) for c in calls[0]["tool_calls"]] == [
        ("get_weather", "Error: TimeoutError - the weather service did not answer in time"),
        ("find_hotel", "Hotel Bryggen, Bergen: a room free for 3 nights, 1400 NOK a night")]
    assert first["call_0_0"]["extra"]["error"]
    assert [r["content"] for r in results_by_call(calls[1]).values()] == ["rainy, 8°C"]
    assert [r["content"] for r in results_by_call(calls[2]).values()] == ["4200 NOK is 359 EUR"]


def test_a_summarization_agents_compaction_is_not_one_of_no_call() -> None:
    """With a summarization agent the same cycles hold its run, whose call is the compaction: no call of the agent's
    is marked sent a compaction of no call (one step per compaction, not two)."""
    calls = _calls(WITH_AGENT)
    strands_summarizing.complete_calls(capture_spans(WITH_AGENT), calls)
    assert sum(call.compaction is not None for call in calls) == 2
    assert not any(call.sent_compaction for call in calls)
    steps = capture_document(WITH_AGENT, "strands-summarizing-1")["steps"]
    assert sum("context_compaction" in step.get("extra", {}) for step in steps) == 2
