"""A LangChain `create_agent` on ChatAnthropic with extended thinking, under OpenInference (the
`langgraph_openinference_anthropic-thinking` capture).

Every call answers a `thinking` block first (distinct text each time), re-sent in the next call's history; turn 1 is
invoked (parallel tools, one raising a handled ToolException, retried), turn 2 streamed. OpenInference's LangChain
tracer flattens no `thinking` block, and records no reasoning tokens for the non-streamed calls (read from
Anthropic's raw usage): `trajectory/mappers/langchain_openinference.py` reads both back from the serialised
generation (`output.value`).
"""

from __future__ import annotations

from typing import Any

from span_fixtures import capture_document, capture_spans, capture_truth, results_by_call

from tests.captures import corpus

CAPTURE = "langgraph_openinference_anthropic-thinking"
SESSION = "lg-oi-anthropic-thinking-1"


def _call_spans() -> list[Any]:
    return [s for s in capture_spans(CAPTURE) if s.attributes.get("openinference.span.kind") == "LLM"]


def _agent_steps(document: dict[str, Any]) -> list[dict[str, Any]]:
    return [step for step in document["steps"] if step["source"] == "agent"]


def test_the_session_is_the_conversation_that_happened() -> None:
    document = capture_document(CAPTURE, SESSION)
    assert corpus.compare(document, capture_truth(CAPTURE)) == []
    assert document["agent"]["name"] == "travel_agent"
    assert [s["source"] for s in document["steps"]] == ["system", "user", "agent", "agent", "agent", "user", "agent",
                                                        "agent"]
    # The ToolException's text, handled into the ToolMessage the model was sent, is flagged as the failure it was.
    first = _agent_steps(document)[0]
    failed = results_by_call(first)[first["tool_calls"][0]["tool_call_id"]]
    assert failed["content"] == "the booking service did not answer in time"
    assert failed["extra"]["is_error"] is True


def test_each_step_has_its_own_calls_thinking_and_never_as_text() -> None:
    """The tracer drops each answer's `thinking` block from the flattened messages (its index skipped); each agent
    step's reasoning is the thinking its call answered, in order, and no step's message or later step repeats it."""
    log = corpus.load(CAPTURE).llm_log
    thinking = [entry["response"]["reasoning"] for entry in log]
    assert len(set(thinking)) == len(log) == 5 and all(thinking)
    for span in _call_spans():  # the premise: no flattened attribute holds the thinking
        assert not any(isinstance(v, str) and v in thinking for k, v in span.attributes.items()
                       if k.startswith(("llm.output_messages.", "llm.input_messages.")))

    steps = _agent_steps(capture_document(CAPTURE, SESSION))
    assert [step.get("reasoning_content") for step in steps] == thinking
    for step in capture_document(CAPTURE, SESSION)["steps"]:
        assert not any(text in corpus.message_text(step.get("message")) for text in thinking)
        assert not step.get("is_copied_context")


def test_each_steps_reasoning_tokens_are_its_calls_thinking_tokens() -> None:
    """Anthropic counts the thinking within `output_tokens` and again as `output_tokens_details.thinking_tokens`. The
    tracer records the streamed calls' reasoning count (from LangChain's `usage_metadata`) and not the non-streamed
    ones' (from Anthropic's raw usage, whose details it does not read): every step shows its call's."""
    log = corpus.load(CAPTURE).llm_log
    # The premise, each span known by its output count (distinct in the script).
    recorded = {span.attributes["llm.token_count.completion"]:
                span.attributes.get("llm.token_count.completion_details.reasoning") for span in _call_spans()}
    assert recorded == {entry["response"]["usage"]["output_tokens"]:
                        entry["response"]["usage"]["reasoning_tokens"] if entry["stream"] else None for entry in log}

    steps = _agent_steps(capture_document(CAPTURE, SESSION))
    assert [(s["metrics"]["completion_tokens"], s["metrics"]["extra"].get("reasoning_tokens")) for s in steps] == [
        (entry["response"]["usage"]["output_tokens"], entry["response"]["usage"]["reasoning_tokens"]) for entry in log]
