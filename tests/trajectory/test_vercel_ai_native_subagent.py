"""The Vercel AI SDK's subagent (a `ToolLoopAgent` run inside another's tool), in @ai-sdk/otel's LegacyOpenTelemetry.

AI SDK 7 puts an `ai.toolCall` span under the `doGenerate` / `doStream` span of the call that asked for the tool, so
a subagent the tool runs (`ai.generateText research-agent` and its own calls) sits under the main agent's LLM call.
That call is no framework span wrapping a client library's report of the same call: each is a call of its own
(`build._map_session`'s wrapper rule stops at a tool's execution). The capture `vercel-ai_native_subagent`: the main
agent's `research` tool runs the research agent (two parallel tools, one throwing), twice, the second turn streamed.
"""

from __future__ import annotations

from typing import Any

from evalkit.trajectory.from_spans import trajectory_from_spans
from tests.captures import corpus
from tests.trajectory.span_fixtures import capture_spans

CAPTURE = "vercel-ai_native_subagent"
SESSION = "vercel-subagent-1"
MAIN_INSTRUCTIONS = "You are a helpful travel assistant that can delegate research tasks."


def _built() -> tuple[dict[str, Any], list[str]]:
    built = trajectory_from_spans(capture_spans(CAPTURE), session_id=SESSION)
    assert built.valid, [str(issue) for issue in built.issues]
    return built.document(), built.warnings


def _main_agent_calls() -> list[corpus.Call]:
    """The ground truth's calls the main agent made: those sent its instructions."""
    log = corpus.load(CAPTURE).llm_log
    truth = corpus.GroundTruth.of(log)
    mine = {entry["seq"] for entry in log if entry["request"]["input"][0].get("content") == MAIN_INSTRUCTIONS}
    return [call for call in truth.calls if call.seq in mine]


def _llm_steps(trajectory: dict[str, Any]) -> list[dict[str, Any]]:
    return [step for step in trajectory["steps"] if step["source"] == "agent" and step.get("llm_call_count") == 1]


def test_a_call_whose_tool_runs_a_subagent_is_a_step_of_its_own() -> None:
    document, warnings = _built()
    calls = _main_agent_calls()
    assert len(calls) == 4
    steps = _llm_steps(document)
    # Each of the main agent's calls a step with its answer and tokens: the two that called `research` were taken
    # for wrappers of the subagent's calls under them, their steps made up from the next call's input, tokenless.
    assert [(corpus.message_text(s.get("message")), [c["function_name"] for c in s.get("tool_calls") or ()],
             s["metrics"]["prompt_tokens"], s["metrics"]["completion_tokens"]) for s in steps] == [
        (c.text, [t["name"] for t in c.tool_calls], c.input_tokens, c.output_tokens) for c in calls]
    assert not any("reconstructed_from" in (step.get("extra") or {}) for step in document["steps"])
    assert not any("wrapping another LLM span" in warning for warning in warnings)


def test_the_session_counts_every_call_once() -> None:
    document, _warnings = _built()
    truth = corpus.GroundTruth.of(corpus.load(CAPTURE).llm_log)
    assert len(corpus.llm_steps(document)) == len(truth.calls)
    final = document["final_metrics"]
    assert (final["total_prompt_tokens"], final["total_completion_tokens"]) == (truth.input_tokens,
                                                                                truth.output_tokens)


def test_each_research_result_is_the_subagents_answer_and_references_its_run() -> None:
    document, _warnings = _built()
    subagents = {sub["trajectory_id"]: sub for sub in document["subagent_trajectories"]}
    assert [sub["agent"]["name"] for sub in subagents.values()] == ["research-agent", "research-agent"]
    delegations = [(call, step) for step in document["steps"] for call in step.get("tool_calls") or ()
                   if call["function_name"] == "research"]
    assert len(delegations) == 2
    for call, step in delegations:
        (result,) = [r for r in step["observation"]["results"] if r["source_call_id"] == call["tool_call_id"]]
        (ref,) = result["subagent_trajectory_ref"]
        subagent = subagents.pop(ref["trajectory_id"])
        assert ref["session_id"] == SESSION
        # The subagent was asked the task the call gave, and its last answer is what the main agent was shown.
        assert [s["message"] for s in subagent["steps"] if s["source"] == "user"] == [call["arguments"]["task"]]
        assert corpus.message_text(result["content"]) == corpus.message_text(_llm_steps(subagent)[-1]["message"])
    assert not subagents


def test_the_subagents_parallel_tools_are_answered_on_their_calls_and_the_failure_flagged() -> None:
    document, _warnings = _built()
    first = document["subagent_trajectories"][0]
    (parallel,) = [step for step in _llm_steps(first) if step.get("tool_calls")]
    assert [c["function_name"] for c in parallel["tool_calls"]] == ["get_weather", "get_events"]
    results = {r["source_call_id"]: r for r in parallel["observation"]["results"]}
    assert set(results) == {c["tool_call_id"] for c in parallel["tool_calls"]}
    flagged = [call_id for call_id, r in results.items() if (r.get("extra") or {}).get("is_error")]
    assert flagged == [parallel["tool_calls"][0]["tool_call_id"]]
    assert "weather service timed out" in corpus.message_text(results[flagged[0]]["content"])


def test_every_call_and_result_is_named_by_its_call_id_not_its_items_id() -> None:
    """The Responses API gives a function call two ids: its `call_id` (`call_…`), which the result sent back names, and
    its item's own `id` (`fc_…`). The SDK names a call by the first (`toolCallId`, `ai.toolCall.id`) and keeps the
    second as provider metadata (`providerOptions.openai.itemId` of a re-sent call in `ai.prompt.messages`). Every
    call of both agents and every result is under the `call_id`: the corpus cannot check it here, its comparison
    failing on the capture's known gap (the thrown tool's `{"error": …}` wrapping) whatever the ids."""
    model_calls = [call for entry in corpus.load(CAPTURE).llm_log for call in entry["response"]["tool_calls"]]
    assert all(c["id"].startswith("call_") and c["item_id"].startswith("fc_") for c in model_calls)
    resent = " ".join(str(span.attributes.get("ai.prompt.messages")) for span in capture_spans(CAPTURE))
    assert all(c["item_id"] in resent for c in model_calls)  # each call is re-sent to its agent's next call
    document, _warnings = _built()
    steps = [step for trajectory in corpus.all_trajectories(document) for step in _llm_steps(trajectory)]
    named = {c["tool_call_id"]: (c["function_name"], c["arguments"]) for s in steps for c in s.get("tool_calls") or ()}
    assert named == {c["id"]: (c["name"], c["arguments"]) for c in model_calls}
    answered = [r["source_call_id"] for s in steps for r in (s.get("observation") or {}).get("results") or ()]
    assert sorted(answered) == sorted(named)
