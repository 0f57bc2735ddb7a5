"""openai-agents on a Claude model through LiteLLM (`LitellmModel`), traced by OpenInference's openai-agents and LiteLLM
instrumentors at once, as Phoenix's `register(auto_instrument=True)` sets them up (the
`openai-agents_openinference_litellm` capture).

Every model call is reported twice in one trace: the SDK's `generation` span and, inside it, LiteLLM's `acompletion`
span. The wrapper rule keeps the span inside (the provider's view: Anthropic's cache reads and writes, LiteLLM's cost,
the provider), but LiteLLM's instrumentor drops each tool message's `tool_call_id`, which the SDK's report of the same
request keeps: taken from it (`same_call.complete_wrapped`), each result the model was shown is on the call that asked
for it, the handoff's among them. Each call must be one step, its tokens and cost once, priced as the Claude model it
is; the handoff a subagent of the transfer call; each question once.
"""

from __future__ import annotations

from typing import Any

import pytest
from span_fixtures import capture_document, capture_spans, results_by_call

from evalkit.trajectory.mappers import openinference
from evalkit.trajectory.mappers.reader import SpanReader
from evalkit.trajectory.operations import LlmCall
from evalkit.trajectory.same_call import complete_wrapped, wraps_same_request
from evalkit.trajectory.span import Span
from tests.captures import corpus

CAPTURE = "openai-agents_openinference_litellm"
SESSION = "oa-oi-litellm-1"
SDK_SCOPE = "openinference.instrumentation.openai_agents"
LITELLM_SCOPE = "openinference.instrumentation.litellm"
# claude-sonnet-4-5, USD a token: input, output, cache write (5 minutes), cache read.
PRICES = {"input": 3e-6, "output": 15e-6, "cache_write": 3.75e-6, "cache_read": 0.3e-6}


def _log() -> list[dict[str, Any]]:
    return corpus.load(CAPTURE).llm_log


def _document() -> dict[str, Any]:
    return capture_document(CAPTURE, SESSION)


def _read(span: Span) -> LlmCall:
    call = openinference.map_span(SpanReader(span), ())
    assert isinstance(call, LlmCall)
    return call


def _reports() -> list[tuple[Span, Span]]:
    """Each call's two reports, in call order: (the SDK's `generation` span, LiteLLM's span inside it)."""
    spans = capture_spans(CAPTURE)
    by_id = {span.span_id: span for span in spans}
    inner = sorted((span for span in spans if span.scope_name == LITELLM_SCOPE),
                   key=lambda span: span.start_time_unix_nano)
    return [(by_id[span.parent_span_id], span) for span in inner]


def _cost(usage: dict[str, Any]) -> float:
    read, written = usage.get("cache_read_tokens", 0), usage.get("cache_write_tokens", 0)
    return ((usage["input_tokens"] - read - written) * PRICES["input"] + written * PRICES["cache_write"]
            + read * PRICES["cache_read"] + usage["output_tokens"] * PRICES["output"])


def test_the_trajectory_is_the_conversation_that_happened() -> None:
    """One step per call with its text and tool calls under the model's ids, every result on its call (the handoff's
    what the model was shown), each question once, the tokens."""
    document = _document()
    assert corpus.compare(document, corpus.GroundTruth.of(_log()), call_ids=True) == []
    top = [(step["source"], bool(step.get("is_copied_context"))) for step in document["steps"]]
    # Turn 2's call re-sends turn 1, the booking agent's calls among them: copied context, not the travel desk's steps.
    assert top == [("system", False), ("user", False), ("agent", False), *[("agent", True)] * 4, ("user", False),
                   ("agent", False)]
    assert [step["message"] for step in document["steps"] if step["source"] == "user"] == [
        entry["request"]["messages"][-1]["content"][0]["text"] for entry in _log() if entry["script_index"] in (0, 4)]


def test_each_call_reported_twice_is_one_step_priced_as_the_claude_model() -> None:
    """Seven calls, fourteen LLM spans: seven steps, each with the Anthropic usage the API reported (its cache write,
    then its reads) and its cost once, as claude-sonnet-4-5 prices it (what LiteLLM reports)."""
    assert len(_reports()) == len(_log()) == 7
    document = _document()
    steps = sorted(corpus.llm_steps(document), key=lambda step: step["timestamp"])
    assert len(steps) == 7
    for step, entry in zip(steps, _log(), strict=True):
        usage, metrics = entry["response"]["usage"], step["metrics"]
        assert (step["model_name"], metrics["prompt_tokens"], metrics["completion_tokens"]) == (
            "anthropic/claude-sonnet-4-5", usage["input_tokens"], usage["output_tokens"])
        assert metrics.get("cached_tokens", 0) == usage.get("cache_read_tokens", 0)
        assert metrics.get("extra", {}).get("cache_creation_input_tokens", 0) == usage.get("cache_write_tokens", 0)
        assert metrics["cost_usd"] == pytest.approx(_cost(usage), rel=1e-9)
    totals = document["final_metrics"]
    assert totals["total_cost_usd"] == pytest.approx(sum(_cost(e["response"]["usage"]) for e in _log()), rel=1e-9)
    assert totals["extra"]["total_cache_creation_input_tokens"] == 1_236
    assert document["extra"]["warnings"] == ["7 LLM span(s) wrapping another LLM span were not counted again"]


def test_the_handoff_starts_the_booking_agent_with_what_the_model_was_shown() -> None:
    """Each turn's `transfer_to_booking_agent` call is answered with the SDK's `{"assistant": "Booking agent"}` and
    references the booking agent's run, a subagent with its own instructions (once), its parallel calls' results on
    their calls, the raising tool flagged."""
    document, log = _document(), _log()
    transfers = [step for step in document["steps"] if step["source"] == "agent" and not step.get("is_copied_context")]
    runs = document["subagent_trajectories"]
    assert len(transfers) == len(runs) == 2
    for step, run in zip(transfers, runs, strict=True):
        [call] = step["tool_calls"]
        result = results_by_call(step)[call["tool_call_id"]]
        assert call["function_name"] == "transfer_to_booking_agent"
        assert result["content"] == '{"assistant": "Booking agent"}'
        assert [ref["trajectory_id"] for ref in result["subagent_trajectory_ref"]] == [run["trajectory_id"]]
        assert run["agent"]["name"] == "Booking agent"
        assert [s["source"] for s in run["steps"]].count("system") == 1
    parallel = runs[0]["steps"][1]
    made = log[1]["response"]["tool_calls"]
    assert [c["tool_call_id"] for c in parallel["tool_calls"]] == [c["id"] for c in made]
    results = results_by_call(parallel)
    assert results[made[0]["id"]]["extra"]["is_error"] is True
    assert results[made[0]["id"]]["content"] == "An error occurred while running the tool."
    assert results[made[1]["id"]]["content"] == "rainy, 9°C"


def test_the_span_kept_names_each_result_the_model_was_shown_as_the_wrapping_report_does() -> None:
    """LiteLLM's span (kept: the one inside) records the tool messages without their `tool_call_id`; the SDK's report
    of the same request (another instrumentation's, the same input) names them: the kept call takes the ids, each on
    the result at its place, the messages the memo may share with other calls left as they were."""
    generation, completion = _reports()[5]  # turn 2's booking agent: turn 1's four results re-sent, the handoff's
    wrapper, inner = _read(generation), _read(completion)
    assert (wrapper.span.scope_name, inner.span.scope_name) == (SDK_SCOPE, LITELLM_SCOPE)
    assert wraps_same_request(inner, wrapper)
    read = inner.input_messages
    assert [part.call_id for m in read for part in m.tool_results] == [None] * 5
    complete_wrapped(inner, wrapper)
    named = [(part.call_id, part.text) for m in inner.input_messages for part in m.tool_results]
    assert named == [(part.call_id, part.text) for m in wrapper.input_messages for part in m.tool_results]
    assert [call_id for call_id, _ in named] == ["toolu_0_0", "toolu_1_0", "toolu_1_1", "toolu_2_0", "toolu_4_0"]
    assert [part.call_id for m in read for part in m.tool_results] == [None] * 5  # not changed in place
    # Its own answer, usage and provider kept: the SDK's report says `openai` (its span's `llm.system`).
    assert (inner.provider, inner.usage.cache_read_tokens) == ("anthropic", 1_236)
    assert wrapper.provider == "openai"


def test_a_wrapper_of_the_same_instrumentation_or_another_request_is_no_report_of_the_call() -> None:
    """Only another instrumentation's span given the same input reports the request of the span inside."""
    generation, completion = _reports()[5]
    wrapper, inner = _read(generation), _read(completion)
    assert not wraps_same_request(inner, _read(completion))  # the same instrumentation
    earlier = _read(_reports()[4][0])  # the SDK's report of the call before: other messages
    assert not wraps_same_request(inner, earlier)
    assert wraps_same_request(inner, wrapper)
