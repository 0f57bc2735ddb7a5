"""A LangChain `create_agent` answering with structured output (the `langgraph_openinference_structured-output`
capture).

Turn 1's agent has `response_format=ToolStrategy(TripPlan)`: LangChain binds the schema as a tool the model answers by
calling; the agent's model node parses the arguments and answers the call itself (no tool runs): first rejecting
`nights: "two"` with its validation error ("… Please fix your mistakes."), then accepting the retry ("Returning
structured response: …", the run's `structured_response`). Turn 2's agent, on the same thread, has
`ProviderStrategy(CostSummary)`: the provider's JSON-schema response format, the model's streamed text the JSON.
OpenInference's LangChain tracer records LangChain's answers and the parsed object only on the model node's CHAIN span
(`trajectory/mappers/langchain_structured_output.py`).
"""

from __future__ import annotations

import json
from typing import Any

from span_fixtures import capture_document, capture_spans, capture_truth

from evalkit.trajectory.from_spans import trajectory_from_spans
from evalkit.trajectory.span import Span
from tests.captures import corpus

CAPTURE = "langgraph_openinference_structured-output"
SESSION = "lg-oi-structured-1"
OUTPUT_TOOL = "TripPlan"
AGENT_TOOLS = ["get_weather", "find_hotel", "convert_currency"]

Json = dict[str, Any]


def _log() -> list[Json]:
    return corpus.load(CAPTURE).llm_log


def _step_of(document: Json, seq: int) -> Json:
    """The step of the log's call `seq`, by the prompt tokens scripted for it (distinct: OpenInference's LangChain
    tracer records no response id)."""
    tokens = _log()[seq]["response"]["usage"]["input_tokens"]
    (step,) = [s for s in corpus.llm_steps(document) if (s.get("metrics") or {}).get("prompt_tokens") == tokens]
    return step


def _shown(seq: int, call_id: str) -> str:
    """What the log's call `seq` showed the model as the result of `call_id`: the ground truth of LangChain's answer."""
    (content,) = [m["content"] for m in _log()[seq]["request"]["messages"]
                  if m["role"] == "tool" and m.get("tool_call_id") == call_id]
    return str(content)


def _output_tool_calls() -> list[Json]:
    """The log's answers calling the output tool, as (seq, call)."""
    return [{"seq": entry["seq"], **call} for entry in _log() for call in entry["response"]["tool_calls"]
            if call["name"] == OUTPUT_TOOL]


def test_the_capture_is_the_conversation_that_happened() -> None:
    document = capture_document(CAPTURE, SESSION)
    assert corpus.compare(document, capture_truth(CAPTURE), call_ids=True) == []
    assert len(corpus.llm_steps(document)) == len(_log()) == 6


def test_the_output_tool_is_how_the_model_answered_not_a_tool_of_the_agent() -> None:
    # The premise: turn 1's calls were sent the schema as a tool beside the agent's, and no tool span ran it.
    assert [[t["function"]["name"] for t in entry["request"]["tools"]] for entry in _log()[:4]] == [
        [*AGENT_TOOLS, OUTPUT_TOOL]] * 4
    spans = capture_spans(CAPTURE)
    assert OUTPUT_TOOL not in {s.attributes.get("tool.name") for s in spans}

    document = capture_document(CAPTURE, SESSION)
    assert [t["function"]["name"] for t in document["agent"]["tool_definitions"]] == AGENT_TOOLS
    marked = [(call["tool_call_id"], call["function_name"], call["arguments"])
              for step in corpus.llm_steps(document) for call in step.get("tool_calls") or ()
              if (call.get("extra") or {}).get("output_tool")]
    assert marked == [(c["id"], OUTPUT_TOOL, c["arguments"]) for c in _output_tool_calls()]
    assert len(marked) == 2
    # The schema is still what the model was sent, in its step's request.
    step = _step_of(document, _output_tool_calls()[0]["seq"])
    assert OUTPUT_TOOL in [t["function"]["name"] for t in step["extra"]["request"]["tools"]]


def test_langchain_rejecting_an_output_is_that_calls_failed_result() -> None:
    document = capture_document(CAPTURE, SESSION)
    rejected, accepted = _output_tool_calls()
    (result,) = _step_of(document, rejected["seq"])["observation"]["results"]
    assert result["source_call_id"] == rejected["id"]
    assert result["content"] == _shown(rejected["seq"] + 1, rejected["id"])
    assert result["content"].startswith("Error: Failed to parse structured output for tool 'TripPlan'")
    assert result["extra"]["is_error"] is True
    (result,) = _step_of(document, accepted["seq"])["observation"]["results"]
    assert result["content"] == _shown(accepted["seq"] + 1, accepted["id"])
    assert result["content"].startswith("Returning structured response: ")
    assert "is_error" not in result["extra"]


def test_the_run_answers_the_object_langchain_parsed() -> None:
    document = capture_document(CAPTURE, SESSION)
    log = _log()
    _, accepted = _output_tool_calls()
    json_answer = log[5]["response"]["text"]
    answers = {step["step_id"]: step["extra"]["structured_output"] for step in corpus.llm_steps(document)
               if "structured_output" in step["extra"]}
    assert answers == {_step_of(document, accepted["seq"])["step_id"]: accepted["arguments"],
                       _step_of(document, 5)["step_id"]: json.loads(json_answer)}
    # ProviderStrategy's answer is the model's text, as it wrote it.
    assert _step_of(document, 5)["message"] == json_answer
    assert log[5]["request"]["response_format"]["json_schema"]["name"] == "CostSummary"


def _first_turn(spans: list[Span]) -> list[Span]:
    first = min((s for s in spans if not s.parent_span_id), key=lambda s: s.start_time_unix_nano)
    return [s for s in spans if s.trace_id == first.trace_id]


def test_a_session_of_one_turn_shows_langchain_accepting_the_output() -> None:
    # No later call re-sends LangChain's answer accepting the output: only the model node's span records it.
    result = trajectory_from_spans(_first_turn(capture_spans(CAPTURE)), session_id=SESSION)
    assert result.valid, [str(issue) for issue in result.issues]
    document = result.document()
    _, accepted = _output_tool_calls()
    steps = corpus.llm_steps(document)
    assert len(steps) == 4
    (result_of_accepted,) = steps[-1]["observation"]["results"]
    assert result_of_accepted["source_call_id"] == accepted["id"]
    assert result_of_accepted["content"] == _shown(accepted["seq"] + 1, accepted["id"])
    assert steps[-1]["extra"]["structured_output"] == accepted["arguments"]
