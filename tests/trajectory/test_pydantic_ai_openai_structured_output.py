"""pydantic-ai's structured output, by its output tool then natively (the `pydantic-ai_openai_structured-output`
capture).

Turn one's agent has a pydantic model as `output_type` in the default tool output mode: the model ends the run by
calling the `final_result` output tool, whose arguments are the output. An output validator refuses the first one
(`ModelRetry`), which pydantic-ai answers as a retried tool return: Chat Completions sent the model `{"error": …}` for
it, and no span records that it was a refusal (no tool span is made for an output tool; the next call's input records
the bare message). A return to an output tool call that is none of pydantic-ai's status texts ("Final result
processed.") is a refusal (`trajectory/mappers/pydantic_ai_output_tools.py`). Each output tool call is marked
`extra.output_tool`, and the step of the call that gave a run its output holds it as `extra.structured_output` (the run
span's `final_result`). Turn two's `NativeOutput` answer is the message's text, a JSON document.
"""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

from evalkit.trajectory.from_spans import trajectory_from_spans
from evalkit.trajectory.span import Span
from evalkit.trajectory.summary import summarise
from tests.captures import corpus
from tests.trajectory.span_fixtures import capture_document, capture_spans, capture_truth, results_by_call

CAPTURE = "pydantic-ai_openai_structured-output"
SESSION = "pai-structured-trip-1"
REFUSED, ACCEPTED = "call_2_0", "call_3_0"  # the final_result calls: refused by the output validator, then accepted
REFUSAL = "The reason must give both cities' temperatures."  # the validator's ModelRetry

Json = dict[str, Any]


def _step_of(document: Json, seq: int) -> Json:
    """The step of the log's call `seq`, by the response id the fake LLM gave it."""
    (step,) = [s for s in corpus.llm_steps(document) if s["extra"].get("response_id") == f"openai-resp-{seq}"]
    return step


def _sent_for(call_id: str) -> str:
    """What the fake LLM was sent as the tool message of a call: the ground truth."""
    return capture_truth(CAPTURE).tool_results[call_id]


def _rewritten(spans: list[Span], rewrite: dict[str, Any]) -> list[Span]:
    """The capture's spans with the given attributes of its chat spans replaced (each a function of the old value)."""
    return [replace(span, attributes={**span.attributes, **{key: change(span.attributes[key])
                                                            for key, change in rewrite.items()}})
            if span.attributes.get("gen_ai.operation.name") == "chat" else span for span in spans]


def _result_of(document: Json, call_id: str) -> Json:
    (result,) = [r for s in corpus.llm_steps(document) for key, r in results_by_call(s).items() if key == call_id]
    return result


def test_the_refused_output_is_its_call_s_result_as_the_model_was_sent_it() -> None:
    document = capture_document(CAPTURE, SESSION)
    assert _sent_for(REFUSED) == json.dumps({"error": REFUSAL}, separators=(",", ":"))  # the premise: wrapped
    refusal = results_by_call(_step_of(document, 2))[REFUSED]
    assert refusal["content"] == _sent_for(REFUSED)
    assert refusal["extra"]["is_error"] is True
    # What the model was told, on the call it answers: never a question of the user's.
    assert not [s for s in document["steps"] if s["source"] == "user" and REFUSAL in corpus.message_text(s["message"])]
    # The session's two failures: the weather tool's ModelRetry (its span's) and the refusal.
    assert summarise(document).errors == 2
    assert corpus.compare(document, capture_truth(CAPTURE), call_ids=True) == []


def test_each_output_tool_call_is_marked_and_the_accepted_one_holds_the_run_s_output() -> None:
    document = capture_document(CAPTURE, SESSION)
    calls = [c for s in corpus.llm_steps(document) for c in s.get("tool_calls") or ()]
    marked = [c["tool_call_id"] for c in calls if (c.get("extra") or {}).get("output_tool")]
    assert marked == [REFUSED, ACCEPTED]
    assert {c["function_name"] for c in calls if c["tool_call_id"] not in marked} == {"get_weather", "get_forecast"}
    # The accepted call's arguments are what the run output (its span's `final_result`); it was answered with
    # pydantic-ai's status text, which is no refusal.
    (run,) = [s for s in capture_spans(CAPTURE) if s.name.startswith("invoke_agent") and s.trace_id
              == _step_of(document, 3)["extra"]["trace_id"]]
    (accepted,) = [c for c in calls if c["tool_call_id"] == ACCEPTED]
    assert accepted["arguments"] == json.loads(run.attributes["final_result"])
    # ... and the step of the call that gave it holds it, as the run output it (as LangChain's structured output).
    assert [s["extra"]["response_id"] for s in corpus.llm_steps(document) if "structured_output" in s["extra"]] == [
        "openai-resp-3", "openai-resp-5"]
    assert _step_of(document, 3)["extra"]["structured_output"] == json.loads(run.attributes["final_result"])
    result = _result_of(document, ACCEPTED)
    assert result["content"] == "Final result processed." == _sent_for(ACCEPTED)
    assert not (result.get("extra") or {}).get("is_error")


def test_the_native_output_is_the_answer_s_message_and_its_structured_output() -> None:
    document = capture_document(CAPTURE, SESSION)
    answer = _step_of(document, 5)
    runs = [s for s in capture_spans(CAPTURE) if s.name.startswith("invoke_agent")]
    (run,) = [s for s in runs if s.trace_id == answer["extra"]["trace_id"]]
    assert json.loads(answer["message"]) == json.loads(run.attributes["final_result"])
    assert answer["extra"]["structured_output"] == json.loads(run.attributes["final_result"])
    assert not answer.get("tool_calls")


def test_a_refusal_on_a_provider_with_an_error_channel_is_flagged_as_recorded() -> None:
    # Anthropic's adapter sends a retried return as it is, with `is_error`: nothing to wrap, the flag all the same.
    spans = _rewritten(capture_spans(CAPTURE), {"gen_ai.provider.name": lambda _: "anthropic",
                                                "gen_ai.system": lambda _: "anthropic"})
    document = trajectory_from_spans(spans, session_id=SESSION).document()
    refusal = _result_of(document, REFUSED)
    assert refusal["content"] == REFUSAL
    assert refusal["extra"]["is_error"] is True


def test_a_refusal_of_invalid_arguments_is_wrapped_as_its_validation_errors() -> None:
    # An output tool call whose arguments fail validation is refused with the errors as structured content, recorded
    # as the JSON array it is, and sent inside the wrapper as that array, not as a string of it.
    errors = [{"type": "missing", "loc": ["reason"], "msg": "Field required", "input": {"city": "Madrid", "days": 2}}]

    def invalid_arguments(messages: str) -> str:
        parsed = json.loads(messages)
        for message in parsed:
            for part in message.get("parts") or ():
                if part.get("id") == REFUSED and part.get("type") == "tool_call_response":
                    part["result"] = errors
        return json.dumps(parsed)

    spans = _rewritten(capture_spans(CAPTURE), {"gen_ai.input.messages": invalid_arguments})
    document = trajectory_from_spans(spans, session_id=SESSION).document()
    refusal = _result_of(document, REFUSED)
    assert refusal["content"] == '{"error":' + json.dumps(errors, separators=(",", ":")) + "}"
    assert refusal["extra"]["is_error"] is True


def test_a_status_text_answering_an_output_tool_call_is_no_refusal() -> None:
    # Turn two re-sends "Final result processed." for the accepted call; its calls offer no output tool (NativeOutput).
    # Had they offered the same one (the agent run again with its output_type), the status text is still no refusal.
    spans = capture_spans(CAPTURE)
    (offered,) = [json.loads(s.attributes["model_request_parameters"])["output_tools"]
                  for s in spans if REFUSED in s.attributes.get("gen_ai.output.messages", "")]
    assert [tool["name"] for tool in offered] == ["final_result"]

    def offering_the_output_tool(parameters: str) -> str:
        return json.dumps({**json.loads(parameters), "output_tools": offered})

    document = trajectory_from_spans(_rewritten(spans, {"model_request_parameters": offering_the_output_tool}),
                                     session_id=SESSION).document()
    result = _result_of(document, ACCEPTED)
    assert result["content"] == "Final result processed."
    assert not (result.get("extra") or {}).get("is_error")
    assert _result_of(document, REFUSED)["extra"]["is_error"] is True
