"""A pydantic-ai agent on an OpenAI reasoning model asking a person to approve its tool calls, under pydantic-ai's own
instrumentation (the `pydantic-ai_openai_deferred-approval` capture).

Run one ends with `DeferredToolRequests` (two parallel calls needing approval), recorded only as its span's
`final_result`; run two carries it on with the person's `DeferredToolResults` (one call approved and run, one denied
with a message), recorded by no span but as the tool returns its new messages open with and the approved call's tool
span (`trajectory/mappers/pydantic_ai_deferred.py`). The agent thinks at pydantic-ai's unified `thinking="low"`,
recorded as the requests' `model_request_parameters.thinking` and, in the history, as a "Model settings changed"
system message no model was sent. Run three is streamed, its forecast tool raising `ModelRetry` once.
"""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

from span_fixtures import capture_document, capture_spans, results_by_call

from evalkit.trajectory.mappers import pydantic_ai_deferred
from evalkit.trajectory.mappers.reader import SpanReader
from evalkit.trajectory.operations import AgentRun
from evalkit.trajectory.span import Span
from tests.captures import corpus

CAPTURE = "pydantic-ai_openai_deferred-approval"
SESSION = "pai-deferred-approval-1"


def _document() -> dict[str, Any]:
    return capture_document(CAPTURE, SESSION)


def _log() -> list[dict[str, Any]]:
    return corpus.load(CAPTURE).llm_log


def _llm_step_index(steps: list[dict[str, Any]], seq: int) -> int:
    """The position of the step of the log's call `seq` (known by its reasoning, distinct per call)."""
    reasoning = _log()[seq]["response"]["reasoning"]
    (index,) = [i for i, step in enumerate(steps) if step.get("reasoning_content") == reasoning]
    return index


def _shown_output(seq: int, call_id: str) -> str:
    """What the model was sent as a call's result (its function_call_output), in the log's request `seq`."""
    (output,) = [item["output"] for item in _log()[seq]["request"]["input"]
                 if item.get("type") == "function_call_output" and item["call_id"] == call_id]
    return str(output)


def _runs() -> list[tuple[Span, AgentRun]]:
    """The three `invoke_agent` spans, mapped, in the order they ran."""
    from evalkit.trajectory.mappers import pydantic_ai

    spans = sorted((s for s in capture_spans(CAPTURE) if s.name.startswith("invoke_agent")),
                   key=lambda s: s.start_time_unix_nano)
    runs = []
    for span in spans:
        run = pydantic_ai.map_span(SpanReader(span), ())
        assert isinstance(run, AgentRun)
        runs.append((span, run))
    return runs


def test_what_the_agent_asked_approval_for_is_a_step_where_its_run_ended() -> None:
    """The premise: the first run's `final_result` is the DeferredToolRequests, no answer."""
    (first_span, first), *_ = _runs()
    recorded = json.loads(first_span.attributes["final_result"])
    assert [call["tool_name"] for call in recorded["approvals"]] == ["cancel_booking", "book_room"]
    assert first.output_text is None and first.interrupt is not None

    steps = _document()["steps"]
    first_call = _llm_step_index(steps, 0)
    asked = steps[first_call + 1]
    assert (asked["source"], asked["llm_call_count"]) == ("agent", 0)
    assert asked["message"] == ('Approval asked for cancel_booking {"reference": "CP-1042"}\n'
                                'Approval asked for book_room {"hotel": "Hotel Sol", "date": "2026-12-11"}')
    assert [call["tool_call_id"] for call in asked["extra"]["interrupt"][0]["approvals"]] == [
        call["tool_call_id"] for call in steps[first_call]["tool_calls"]]
    assert asked["extra"]["span_id"] == first_span.span_id
    # The DeferredToolRequests is shown as no text of any step (it was no answer).
    assert not any("'approvals'" in corpus.message_text(step.get("message")) for step in steps)


def test_the_persons_decisions_are_a_user_step_where_the_run_carrying_on_starts() -> None:
    """Approved: its tool ran in the second run; denied: no tool ran, the model told the denial's message."""
    steps = _document()["steps"]
    second_call = _llm_step_index(steps, 1)
    decided = steps[second_call - 1]
    assert decided["source"] == "user"
    assert decided["extra"]["from"] == "resume"
    denial = _shown_output(1, "call_book_sol")
    assert decided["message"] == ('Approved cancel_booking {"reference": "CP-1042"}\n'
                                  f'Denied book_room {{"hotel": "Hotel Sol", "date": "2026-12-11"}}: {denial}')
    assert steps[second_call - 2]["extra"].get("interrupt")  # right after what it answers
    (_, _), (second_span, _), _ = _runs()
    assert decided["extra"]["span_id"] == second_span.span_id


def test_each_call_answered_once_on_the_call_that_asked() -> None:
    """The approved call's result is its tool's (run in the second run's trace), the denied one's what the model was
    told; one step asks, one user step answers, every LLM call one step."""
    document = _document()
    steps = document["steps"]
    assert len(corpus.llm_steps(document)) == len(_log()) == 5
    assert sum(1 for step in steps if step.get("llm_call_count") == 0) == 1
    assert sum(1 for step in steps if (step.get("extra") or {}).get("from") == "resume") == 1
    first = steps[_llm_step_index(steps, 0)]
    results = results_by_call(first)
    cancelled = results["call_cancel_cp1042"]
    assert cancelled["content"] == _shown_output(1, "call_cancel_cp1042")
    spans = {span.span_id: span for span in capture_spans(CAPTURE)}
    (_, _), (second_span, _), _ = _runs()
    assert spans[cancelled["extra"]["span_id"]].trace_id == second_span.trace_id
    assert results["call_book_sol"]["content"] == _shown_output(1, "call_book_sol")
    # No other step shows either result again.
    shown = [r["source_call_id"] for step in steps for r in (step.get("observation") or {}).get("results") or ()]
    assert shown.count("call_cancel_cp1042") == shown.count("call_book_sol") == 1


def test_each_step_thinks_at_the_effort_the_request_set() -> None:
    """pydantic-ai's unified `thinking="low"`, sent as the Responses API's `reasoning.effort`, recorded as the
    requests' `model_request_parameters.thinking`."""
    steps = corpus.llm_steps(_document())
    assert [step.get("reasoning_effort") for step in steps] == [
        entry["request"]["reasoning"]["effort"] for entry in _log()] == ["low"] * 5


def test_a_settings_change_is_no_message() -> None:
    """The ModelSettingsDeltaPart pydantic-ai records in the history is written as a system message no model was
    sent: the only system step is the agent's instructions."""
    assert any("Model settings changed: thinking='low'" in str(span.attributes.get("gen_ai.input.messages"))
               for span in capture_spans(CAPTURE))
    assert not any("Model settings changed" in json.dumps(entry["request"]) for entry in _log())
    steps = _document()["steps"]
    assert [step["message"] for step in steps if step["source"] == "system"] == [_log()[0]["request"]["instructions"]]


def test_each_step_shows_its_own_reasoning_and_tokens() -> None:
    """Each call's reasoning summary on its step, never as text nor copied from a later call's history; its reasoning
    tokens within its output tokens."""
    document = _document()
    steps = corpus.llm_steps(document)
    assert [step["reasoning_content"] for step in steps] == [entry["response"]["reasoning"] for entry in _log()]
    assert [(step["metrics"]["completion_tokens"], step["metrics"]["extra"]["reasoning_tokens"]) for step in steps] == [
        (entry["response"]["usage"]["output_tokens"], entry["response"]["usage"]["reasoning_tokens"])
        for entry in _log()]
    assert all(step.get("reasoning_content") is None for step in document["steps"] if step.get("is_copied_context"))
    assert not any(entry["response"]["reasoning"] in corpus.message_text(step.get("message"))
                   for step in document["steps"] for entry in _log())


def test_the_new_message_index_is_read() -> None:
    assert "pydantic_ai.new_message_index" not in _document()["extra"].get("unmapped_attributes", [])


def _with(span: Span, **attributes: Any) -> Span:
    return replace(span, attributes={**span.attributes, **attributes})


def test_an_approval_with_other_arguments_and_an_external_result_say_so() -> None:
    """`ToolApproved(override_args=…)` runs the tool with other arguments than the model gave; a call in the
    requests' `calls` (run outside the agent, `CallDeferred`) is answered with the result the application gave."""
    spans = capture_spans(CAPTURE)
    (first_span, _), (second_span, _), (third_span, _) = _runs()
    recorded = json.loads(first_span.attributes["final_result"])
    booking = recorded["approvals"].pop()
    recorded["calls"].append(booking)
    first_span = _with(first_span, final_result=json.dumps(recorded))
    tools = [_with(span, **{"gen_ai.tool.call.arguments": '{"reference":"CP-1043"}'})
             if span.attributes.get("gen_ai.tool.call.id") == "call_cancel_cp1042" else span for span in spans]
    runs = [AgentRun(span=span, emitter="pydantic-ai") for span in (first_span, second_span, third_span)]
    pydantic_ai_deferred.complete_runs(tools, runs)
    assert runs[1].resumed_with == (
        'Approved cancel_booking {"reference": "CP-1042"} with {"reference": "CP-1043"}\n'
        f'Result for book_room {{"hotel": "Hotel Sol", "date": "2026-12-11"}}: {_shown_output(1, "call_book_sol")}')
    assert runs[0].resumed_with is None and runs[2].resumed_with is None  # the third run answers no request
    asked = pydantic_ai_deferred.interrupt(first_span, "pydantic-ai", recorded).asked
    assert asked.splitlines()[1] == 'Result asked for book_room {"hotel": "Hotel Sol", "date": "2026-12-11"}'


def test_a_structured_answer_is_no_request() -> None:
    """Only a DeferredToolRequests is: an answer of any other object is the run's output."""
    assert pydantic_ai_deferred.deferred_requests('{"city": "Madrid", "days": 2}') is None
    assert pydantic_ai_deferred.deferred_requests('{"calls": [], "approvals": [], "metadata": {}}') is None
    assert pydantic_ai_deferred.deferred_requests("Friday in Madrid looks sunny.") is None
