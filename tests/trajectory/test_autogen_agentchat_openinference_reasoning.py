"""OpenInference's AutoGen AgentChat instrumentor on a DeepSeek-R1-style reasoning model (the
`autogen-agentchat_openinference_reasoning` capture).

An AssistantAgent on `deepseek-r1` (model_info family "r1") through AutoGen's OpenAI client, the endpoint answering
`reasoning_content` beside `content` on every call. AutoGen's client makes a text answer's `reasoning_content` its
CreateResult's `thought`, and an answer with tool calls the text beside them (its reasoning dropped); the
instrumentor records the CreateResult (`output.value`) and each re-sent AssistantMessage's `thought`
(`llm.input_messages.<i>.thought`). `trajectory/mappers/autogen.py` (`with_thought`) reads the one as reasoning, the
other as the message.
"""

from __future__ import annotations

from typing import Any

from span_fixtures import capture_document, capture_spans, capture_truth

from evalkit.trajectory.mappers import openinference
from evalkit.trajectory.mappers.reader import SpanReader
from evalkit.trajectory.operations import LlmCall
from tests.captures import corpus

CAPTURE = "autogen-agentchat_openinference_reasoning"
SESSION = "autogen-oi-r1-weather-1"
SCOPE = "openinference.instrumentation.autogen_agentchat"
# The answers with tool calls, whose reasoning AutoGen's client drops (the corpus test's UNRECORDED_REASONING).
TOOL_CALL_ANSWERS = (0, 1, 3)


def _log() -> list[dict[str, Any]]:
    return corpus.load(CAPTURE).llm_log


def _calls() -> list[LlmCall]:
    calls = []
    for span in capture_spans(CAPTURE):
        if span.scope_name == SCOPE and span.attributes.get("openinference.span.kind") == "LLM":
            call = openinference.map_span(SpanReader(span), ())
            assert isinstance(call, LlmCall)
            calls.append(call)
    return sorted(calls, key=lambda call: call.span.start_time_unix_nano)


def test_the_session_is_the_conversation_that_happened_but_the_tool_call_answers_reasoning() -> None:
    document = capture_document(CAPTURE, SESSION)
    log = _log()
    assert [entry["stream"] for entry in log] == [False, False, False, True, True]
    truth = capture_truth(CAPTURE).without_reasoning_recorded(TOOL_CALL_ANSWERS).without_reasoning_tokens()
    assert corpus.compare(document, truth) == []
    assert [s["source"] for s in document["steps"]] == ["system", "user", "agent", "agent", "agent", "user", "agent",
                                                        "agent"]
    assert not any(s.get("is_copied_context") for s in document["steps"])


def test_a_text_answers_reasoning_is_its_steps_reasoning_never_its_message() -> None:
    """Both text answers, the streamed reflection's too (AutoGen joins its `reasoning_content` deltas)."""
    document = capture_document(CAPTURE, SESSION)
    log = _log()
    steps = corpus.llm_steps(document)
    answers = [k for k, entry in enumerate(log) if not entry["response"]["tool_calls"]]
    assert answers == [2, 4]
    for k in answers:
        reasoning, text = log[k]["response"]["reasoning"], log[k]["response"]["text"]
        assert steps[k].get("reasoning_content") == reasoning
        assert corpus.message_text(steps[k].get("message")) == text


def test_the_text_beside_tool_calls_is_the_steps_message_not_its_reasoning() -> None:
    """AutoGen's `thought` of the retry's answer is its content, the text written beside the call."""
    document = capture_document(CAPTURE, SESSION)
    retry = _log()[1]["response"]
    assert retry["text"] and retry["tool_calls"]
    step = corpus.llm_steps(document)[1]
    assert corpus.message_text(step.get("message")) == retry["text"]
    assert step.get("reasoning_content") is None
    assert [c["tool_call_id"] for c in step["tool_calls"]] == [c["id"] for c in retry["tool_calls"]]


def test_a_tool_call_answers_reasoning_is_in_no_span() -> None:
    """The premise of the corpus test's entries: no span holds the reasoning of an answer with tool calls, nor any
    call's reasoning tokens (the completion tokens count them, undivided)."""
    log = _log()
    dropped = [log[k]["response"]["reasoning"] for k in TOOL_CALL_ANSWERS]
    recorded = [str(value) for span in capture_spans(CAPTURE) for value in span.attributes.values()]
    assert all(reasoning and not any(reasoning in value for value in recorded) for reasoning in dropped)
    assert not any("reasoning" in key for span in capture_spans(CAPTURE) for key in span.attributes)
    document = capture_document(CAPTURE, SESSION)
    assert [s["metrics"]["completion_tokens"] for s in corpus.llm_steps(document)] == [
        entry["response"]["usage"]["output_tokens"] for entry in log]


def test_a_resent_answers_thought_is_its_reasoning_not_what_the_model_was_sent() -> None:
    """Turn 2's history holds turn 1's answer with its thought (the instrumentor writes AutoGen's AssistantMessage),
    which AutoGen did not send: the message is its content, the thought its reasoning."""
    log = _log()
    sent = [m for m in log[3]["request"]["messages"] if m["role"] == "assistant"]
    resent = [m for m in _calls()[3].input_messages if m.role == "assistant"]
    assert len(resent) == len(sent) == 3
    for message, wire in zip(resent, sent, strict=True):
        assert "".join(p.text or "" for p in message.parts if p.kind == "text") == (wire["content"] or "")
    assert [p.text for p in resent[2].parts if p.kind == "reasoning"] == [log[2]["response"]["reasoning"]]
    assert not any(p.kind == "reasoning" for p in resent[1].parts)  # the retry's thought was its text
