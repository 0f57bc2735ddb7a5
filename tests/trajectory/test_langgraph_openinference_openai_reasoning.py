"""A LangChain `create_agent` on ChatOpenAI with the Responses API and a reasoning model (o4-mini, reasoning summaries
on, effort medium), under OpenInference (the `langgraph_openinference_openai-reasoning` capture).

Every call answers a Responses `reasoning` item first (a distinct summary each time), which langchain-openai keeps as
a content block of the AIMessage and re-sends as an input item of the next call; turn 1 is invoked (parallel tools,
one raising a handled ToolException, retried), turn 2 streamed. OpenInference's LangChain tracer flattens no
`reasoning` block and records the request's `reasoning={"effort": …}` as given in the invocation parameters:
`trajectory/mappers/langchain_openinference.py` reads the summary back from the serialised generation
(`output.value`) and the effort from those parameters.
"""

from __future__ import annotations

import json
from typing import Any

from span_fixtures import capture_document, capture_spans, capture_truth, results_by_call

from tests.captures import corpus

CAPTURE = "langgraph_openinference_openai-reasoning"
SESSION = "lg-oi-openai-reasoning-1"


def _call_spans() -> list[Any]:
    return [s for s in capture_spans(CAPTURE) if s.attributes.get("openinference.span.kind") == "LLM"]


def _agent_steps(document: dict[str, Any]) -> list[dict[str, Any]]:
    return [step for step in document["steps"] if step["source"] == "agent"]


def test_the_session_is_the_conversation_that_happened() -> None:
    document = capture_document(CAPTURE, SESSION)
    # Each call and result named by its `call_id` (`call_…`), as the flattened messages name it; its Responses item's
    # own id (`fc_…`) is only in the serialised blocks of `input.value` / `output.value`.
    assert corpus.compare(document, capture_truth(CAPTURE), call_ids=True) == []
    assert document["agent"]["name"] == "travel_agent"
    assert [s["source"] for s in document["steps"]] == ["system", "user", "agent", "agent", "agent", "user", "agent",
                                                        "agent"]
    # The ToolException's text, handled into the ToolMessage the model was sent, is flagged as the failure it was.
    first = _agent_steps(document)[0]
    failed = results_by_call(first)[first["tool_calls"][0]["tool_call_id"]]
    assert failed["content"] == "the booking service did not answer in time"
    assert failed["extra"]["is_error"] is True
    # The reasoning tokens, which the tracer records for every call here, within each step's completion tokens.
    log = corpus.load(CAPTURE).llm_log
    assert [(s["metrics"]["completion_tokens"], s["metrics"]["extra"].get("reasoning_tokens"))
            for s in _agent_steps(document)] == [
        (entry["response"]["usage"]["output_tokens"], entry["response"]["usage"]["reasoning_tokens"]) for entry in log]


def test_each_step_has_its_own_calls_reasoning_summary_and_never_as_text() -> None:
    """The tracer drops each answer's `reasoning` block (the Responses item, its text in `summary`) from the flattened
    messages; each agent step's reasoning is the summary its call answered, in order, streamed or not, and no step's
    message or later step repeats it."""
    log = corpus.load(CAPTURE).llm_log
    summaries = [entry["response"]["reasoning"] for entry in log]
    assert len(set(summaries)) == len(log) == 5 and all(summaries)
    assert [entry["stream"] for entry in log] == [False, False, False, True, True]
    for span, summary in zip(_call_spans(), summaries, strict=True):
        # The premise: no flattened attribute holds the summary; the serialised answer holds it as the item it was.
        assert not any(isinstance(v, str) and summary in v for k, v in span.attributes.items()
                       if k.startswith(("llm.output_messages.", "llm.input_messages.")))
        output = json.loads(span.attributes["output.value"])
        content = output["generations"][0][0]["message"]["kwargs"]["content"]
        assert [block["summary"][0]["text"] for block in content if block["type"] == "reasoning"] == [summary]

    document = capture_document(CAPTURE, SESSION)
    assert [step.get("reasoning_content") for step in _agent_steps(document)] == summaries
    for step in document["steps"]:
        assert not any(summary in corpus.message_text(step.get("message")) for summary in summaries)
        assert not step.get("is_copied_context")


def test_each_step_has_the_reasoning_effort_its_request_set() -> None:
    """ChatOpenAI's `reasoning={"effort": "medium", "summary": "auto"}`, sent as the Responses API's `reasoning`, is
    recorded as given in the invocation parameters (no `reasoning_effort` there): each step's effort is its
    request's."""
    log = corpus.load(CAPTURE).llm_log
    efforts = [entry["request"]["reasoning"]["effort"] for entry in log]
    assert efforts == ["medium"] * 5
    for span in _call_spans():  # the premise
        parameters = json.loads(span.attributes["llm.invocation_parameters"])
        assert parameters["reasoning"]["effort"] == "medium" and "reasoning_effort" not in parameters

    steps = _agent_steps(capture_document(CAPTURE, SESSION))
    assert [step.get("reasoning_effort") for step in steps] == efforts
