"""A Strands agent compacting its context with `SummarizingConversationManager` and a summarization agent (the
`strands_native_summarizing` capture: `proactive_compression`, three turns of one agent, compacting before turn two's
first call and again before turn three's, the second time the first summary among what it summarized).

The summarization agent's run (an `invoke_agent` span inside the agent's event-loop cycle) is no subagent, and its call
is a compaction of the agent's context (`trajectory/mappers/strands_summarizing.py`), built by the rule every emitter's
compaction shares (`trajectory/context_compaction.py`): its step is the summary, marked, in the agent's trajectory;
its request and its instructions are no steps; the summary the agent's later calls are sent in place of the history is
no user step; nothing earlier is lost. Before, each summarizer run was a subagent hanging off the previous answer's
step, holding a copy of the conversation it summarized and the request as a question, and each re-sent summary was a
user step of the agent's.
"""

from __future__ import annotations

from typing import Any

from span_fixtures import capture_document, capture_spans, capture_truth, results_by_call

from evalkit.trajectory.build import map_one_span
from evalkit.trajectory.mappers import strands_summarizing
from evalkit.trajectory.operations import ContextCompaction, LlmCall
from tests.captures import corpus

CAPTURE = "strands_native_summarizing"
SESSION = "strands-summarizing-1"
SUMMARY_MODEL = "gpt-4o-mini"  # the summarization agent's model; the agent's is gpt-4o
AGENT_INSTRUCTIONS = "You are a terse travel assistant."
QUESTIONS = ["I'm going to Bergen for 3 nights: what's the weather there, and find me a hotel.",
             "What do 3 nights there cost in euros?",
             "Is that hotel close to the fish market?"]
# Both compactions: the manager, its summarization agent, 5 messages summarized, the latest 2 kept.
COMPACTION = {"kind": "summary", "by": "SummarizingConversationManager", "agent": "summarizer",
              "summarized_messages": 5, "kept_messages": 2}

Json = dict[str, Any]


def _log() -> list[Json]:
    return corpus.load(CAPTURE).llm_log


def _summaries() -> list[str]:
    """What the summarization agent's model answered, in order: the ground truth of the summaries."""
    return [call.text for call in capture_truth(CAPTURE).calls if call.model == SUMMARY_MODEL]


def _calls() -> list[LlmCall]:
    calls = [op for op in map(map_one_span, capture_spans(CAPTURE)) if isinstance(op, LlmCall)]
    return sorted(calls, key=lambda call: call.span.start_time_unix_nano)


def test_the_summarization_agents_runs_are_found() -> None:
    spans = capture_spans(CAPTURE)
    runs = strands_summarizing.summarizer_runs(spans)
    by_key = {(span.trace_id, span.span_id): span for span in spans}
    assert sorted(by_key[key].attributes["gen_ai.agent.name"] for key in runs) == ["summarizer", "summarizer"]
    # The agent's own runs (one a turn) are not.
    assert sum(span.attributes.get("gen_ai.agent.name") == "trip-agent" and span.name.startswith("invoke_agent")
               for span in spans) == 3


def test_the_summary_calls_are_marked_compactions_with_what_they_summarized_and_kept() -> None:
    calls = _calls()
    assert len(calls) == 8
    strands_summarizing.complete_calls(capture_spans(CAPTURE), calls)
    marked = [(call.model, call.compaction) for call in calls if call.compaction is not None]
    expected = ContextCompaction("SummarizingConversationManager", summarized_messages=5, kept_messages=2,
                                 agent="summarizer")
    assert marked == [(SUMMARY_MODEL, expected), (SUMMARY_MODEL, expected)]
    # The ground truth: the summarizer was sent its instructions, the 5 messages of the agent's history (the parallel
    # calls' two results one Strands message of two toolResult blocks, two OpenAI tool messages) and the request; the
    # agent's next call its instructions, the summary and the 2 kept (turn one's answer and turn two's question, then
    # turn two's answer and turn three's question).
    log = _log()
    summarized = (["user", "assistant", "tool", "tool", "assistant", "tool"],
                  ["user", "assistant", "user", "assistant", "tool"])
    for summary_seq, roles, summary in zip((3, 6), summarized, _summaries(), strict=True):
        sent = log[summary_seq]["request"]["messages"]
        assert [message["role"] for message in sent[1:-1]] == roles
        assert sent[-1]["content"][0]["text"] == strands_summarizing.SUMMARY_REQUEST
        following = log[summary_seq + 1]["request"]["messages"]
        assert following[1]["content"][0]["text"] == summary
        assert len(following) == 1 + 1 + 2


def test_each_question_and_answer_once_in_order_the_compactions_steps_of_the_agent() -> None:
    document = capture_document(CAPTURE, SESSION)
    assert document["agent"]["name"] == "trip-agent"
    assert not document.get("subagent_trajectories")  # the summarization agent is no subagent
    steps = document["steps"]
    assert not any(step.get("is_copied_context") for step in steps)
    assert [step["message"] for step in steps if step["source"] == "user"] == QUESTIONS
    agent = [step for step in steps if step["source"] == "agent"]
    assert [step["message"] for step in agent] == [call.text for call in capture_truth(CAPTURE).calls]
    assert all(step["llm_call_count"] == 1 for step in agent)
    compactions = [(step["message"], step["model_name"], step["extra"]["context_compaction"])
                   for step in agent if "context_compaction" in step.get("extra", {})]
    first, second = _summaries()
    assert compactions == [(first, SUMMARY_MODEL, COMPACTION), (second, SUMMARY_MODEL, COMPACTION)]
    # Where they happened: after turn one's answer, after turn two's, each before the question the agent answered next.
    order = [("compaction" if "context_compaction" in step.get("extra", {}) else step["source"]) for step in steps]
    assert order == ["system", "user", "agent", "agent", "agent", "compaction", "user", "agent", "agent",
                     "compaction", "user", "agent"]


def test_the_summary_request_and_the_summarizers_instructions_are_no_steps() -> None:
    steps = [step for trajectory in corpus.all_trajectories(capture_document(CAPTURE, SESSION))
             for step in trajectory["steps"]]
    assert [step["message"] for step in steps if step["source"] == "system"] == [AGENT_INSTRUCTIONS]
    assert not any(strands_summarizing.SUMMARY_REQUEST in str(step["message"]) for step in steps)


def test_the_summary_sent_again_is_no_step() -> None:
    document = capture_document(CAPTURE, SESSION)
    summaries = _summaries()
    assert not any(step["message"] in summaries for step in document["steps"] if step["source"] == "user")


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
