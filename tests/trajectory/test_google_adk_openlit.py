"""Google ADK traced by OpenLIT (the `google-adk_openlit` capture's exports).

`openlit.init` instruments ADK (agent and Runner spans, scope `openlit.instrumentation.google_adk`) and google-genai
(`chat` spans, `openlit.instrumentation.google_ai_studio`); ADK's own spans (`gcp.vertex.agent`, its content
capture off: usage, no messages) are exported beside them. Each model call is reported twice: the non-streamed ones
OpenLIT's span under ADK's `generate_content`, the streamed ones OpenLIT's span beside it, opened when the stream
ended (`trajectory/mappers/openlit_google_adk.py`, `trajectory/same_call.py`).
"""

from __future__ import annotations

from typing import Any

from span_fixtures import capture_logs, capture_spans

from evalkit.trajectory.from_spans import trajectory_from_spans
from evalkit.trajectory.mappers import openlit
from evalkit.trajectory.mappers.reader import SpanReader
from evalkit.trajectory.operations import AgentRun, LlmCall
from tests.captures import corpus

CAPTURE = "google-adk_openlit"
SESSION = "adk-openlit-travel-1"
REFLECTION = "ERROR_HANDLED_BY_REFLECT_AND_RETRY_PLUGIN"  # ADK's ReflectAndRetryToolPlugin's answer to a raise


def _document() -> dict[str, Any]:
    result = trajectory_from_spans(capture_spans(CAPTURE), capture_logs(CAPTURE), session_id=SESSION)
    assert result.valid, [str(issue) for issue in result.issues]
    return result.document()


def _results(step: dict[str, Any]) -> list[str]:
    return [corpus.message_text(r.get("content")) for r in (step.get("observation") or {}).get("results") or ()]


def test_each_call_once_with_the_tokens_it_used() -> None:
    """Six calls, each reported by ADK and by OpenLIT: the three streamed ones (OpenLIT's span beside ADK's, opened
    once ADK's had ended) too, once each, with their usage counted once."""
    document = _document()
    steps = corpus.llm_steps(document)
    assert len(steps) == 6
    assert all(s["extra"]["emitter"] == openlit.NAME for s in steps)  # the reports with the messages
    final = document["final_metrics"]
    assert (final["total_prompt_tokens"], final["total_completion_tokens"]) == (1896, 98)  # the fake's log's sums


def test_an_answer_of_function_calls_has_no_none_text() -> None:
    """OpenLIT writes a non-streamed answer's text as `str(response.text)`: "None" beside function calls."""
    spans = [s for s in capture_spans(CAPTURE) if s.scope_name == "openlit.instrumentation.google_ai_studio"]
    first = spans[0]
    assert '{"type": "text", "content": "None"}' in first.attributes["gen_ai.output.messages"]
    call = openlit.map_span(SpanReader(first), ())
    assert isinstance(call, LlmCall)
    (answer,) = call.output_messages
    assert answer.text == ""
    assert [(p.name, p.arguments) for p in answer.tool_calls] == [
        ("get_weather", {"city": "Paris"}), ("get_weather", {"city": "Oslo"})]


def test_each_result_is_the_json_the_model_was_sent_on_its_call() -> None:
    """ADK's tool spans record no result (its content capture off); OpenLIT records the function responses in the
    next call's input as Python reprs with no id and no name: each is read back as the JSON the model was sent and
    fills the result of the call before that input, in order, not a call made with that input."""
    steps = corpus.llm_steps(_document())
    first, retry = steps[0], steps[1]
    assert [c["arguments"] for c in first["tool_calls"]] == [{"city": "Paris"}, {"city": "Oslo"}]
    paris, oslo = _results(first)
    assert paris == '{"result": "sunny, 21°C"}'
    assert oslo.startswith('{"response_type": "' + REFLECTION + '", "error_type": "TimeoutError"')
    assert _results(retry) == ['{"result": "rainy, 9°C"}']


def test_the_transfer_starts_the_booking_agent_as_a_subagent() -> None:
    """ADK's `transfer_to_agent` span records no arguments with its content capture off: the agent ADK runs next
    takes over, a subagent of the transfer call, with its own calls."""
    document = _document()
    transfer = next(s for s in document["steps"]
                    if any(c["function_name"] == "transfer_to_agent" for c in s.get("tool_calls") or ()))
    (handoff,) = transfer["observation"]["results"]
    assert handoff["subagent_trajectory_ref"][0]["trajectory_id"].startswith("booking_agent:")
    (booking,) = document["subagent_trajectories"]
    assert booking["agent"]["name"] == "booking_agent"
    calls = [s for s in booking["steps"] if s.get("llm_call_count") == 1]
    assert [_results(s) for s in calls] == [
        ['{"status": "success", "booking": "Hotel Nord in Oslo, 2 nights, ref OSL-42"}'], []]
    assert document["agent"]["name"] == "travel_desk"


def test_agent_spans_runner_and_set_up() -> None:
    """OpenLIT's `invoke_agent <agent>` is a run (ADK's own of the same agent runs inside it); its Runner's
    `invoke_agent <app>` and `create_agent` spans are none; their attributes are all read."""
    spans = [s for s in capture_spans(CAPTURE) if s.scope_name == "openlit.instrumentation.google_adk"]
    read = {}
    for span in spans:
        reader = SpanReader(span)
        read[span.name] = openlit.map_span(reader, ())
        assert reader.unused() == set(), span.name
    assert read["invoke_agent travel"] is None and read["create_agent travel_desk"] is None
    assert isinstance(read["invoke_agent booking_agent"], AgentRun)
    assert _document()["extra"]["unmapped_attributes"] == ["http.method", "http.status_code", "http.url"]
