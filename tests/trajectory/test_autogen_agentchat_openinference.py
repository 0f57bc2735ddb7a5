"""OpenInference's AutoGen AgentChat instrumentor (the `autogen-agentchat_openinference` capture's trace exports).

Its LLM spans flatten AutoGen's FunctionExecutionResultMessage as a message of role "function" whose results are
JSON objects beside it (`llm.input_messages.<i>.function.<k>`), and the `is_error` there is the only record of a
tool that raised: the TOOL span ends OK (`trajectory/mappers/autogen.py`).
"""

from __future__ import annotations

from span_fixtures import capture_spans

from evalkit.trajectory.from_spans import trajectory_from_spans
from evalkit.trajectory.mappers import openinference
from evalkit.trajectory.mappers.reader import SpanReader
from evalkit.trajectory.operations import LlmCall
from evalkit.trajectory.span import STATUS_ERROR

CAPTURE = "autogen-agentchat_openinference"
SESSION = "autogen-oi-weather-1"
SCOPE = "openinference.instrumentation.autogen_agentchat"


def _calls() -> list[LlmCall]:
    calls = []
    for span in capture_spans(CAPTURE):
        if span.scope_name == SCOPE and span.attributes.get("openinference.span.kind") == "LLM":
            call = openinference.map_span(SpanReader(span), ())
            assert isinstance(call, LlmCall)
            calls.append(call)
    return sorted(calls, key=lambda call: call.span.start_time_unix_nano)


def test_function_results_are_tool_results_on_their_call_ids_the_failed_one_flagged() -> None:
    calls = _calls()
    assert len(calls) == 5
    # The retry's call: the parallel calls' results, the timed-out time lookup flagged as AutoGen sent it.
    results = [(p.call_id, p.name, p.text, p.error) for m in calls[1].input_messages if m.role == "tool"
               for p in m.parts]
    assert results == [("call_0_0", "get_weather", "sunny, 21°C", False),
                       ("call_0_1", "get_local_time", "time service timed out", True)]
    assert all(m.role != "function" for call in calls for m in call.input_messages)


def test_the_raising_tool_is_flagged_though_its_span_ended_ok() -> None:
    spans = capture_spans(CAPTURE)
    failed = next(s for s in spans if s.attributes.get("output.value") == "time service timed out")
    assert failed.status_code != STATUS_ERROR  # the instrumentor's ERROR came after its OK, which is final
    result = trajectory_from_spans(spans, session_id=SESSION)
    assert result.valid, [str(issue) for issue in result.issues]
    document = result.document()
    results = [r for s in document["steps"] for r in (s.get("observation") or {}).get("results") or ()]
    flagged = [r["source_call_id"] for r in results if (r.get("extra") or {}).get("is_error")]
    assert flagged == ["call_0_1"]
    (timed_out,) = [r for r in results if r["source_call_id"] == "call_0_1"]
    assert timed_out["content"] == "time service timed out"
    assert timed_out["extra"]["error"] == {"status": "error", "from": "input history"}
    assert timed_out["extra"]["span_id"] == failed.span_id  # the tool span's result, flagged by the next input


def test_two_traces_of_one_using_session_are_the_conversation() -> None:
    document = trajectory_from_spans(capture_spans(CAPTURE), session_id=SESSION).document()
    assert [s["source"] for s in document["steps"]] == ["system", "user", "agent", "agent", "agent", "user", "agent",
                                                        "agent"]
    assert document["agent"]["name"] == "weather_agent"
    assert [r["content"] for s in document["steps"] for r in (s.get("observation") or {}).get("results") or ()] == [
        "sunny, 21°C", "time service timed out", "14:05", "rainy, 9°C"]
    # The streamed turn's calls (`create_stream`, usage asked for) with their tokens.
    assert [s["metrics"]["prompt_tokens"] for s in document["steps"][6:]] == [391, 306]
    assert document["extra"]["unmapped_attributes"] == []
