"""LiteLLM's `raw_gen_ai_request` spans: what a call's own span leaves out of a reasoning model's answer.

LiteLLM's OpenTelemetry callback (1.110) writes a call's messages on its `litellm_request` span with their content and
tool calls only: a DeepSeek-R1-style answer's `reasoning_content` is in neither `gen_ai.output.messages` nor, re-sent,
`gen_ai.input.messages`, and the effort the request asked (`reasoning_effort`) is on no attribute. With message content
on, the span's `raw_gen_ai_request` child holds the request LiteLLM sent the provider, a field a key
(`llm.<provider>.<field>`, a Python repr), and, for a call not streamed, the provider's response the same way:

- `llm.<provider>.reasoning_effort`: the effort asked (LiteLLM forwards it to DeepSeek, OpenAI, vLLM…);
- `llm.<provider>.choices`: the response's choices, the answer's `reasoning_content` (`reasoning`) beside its content;
- a streamed call has no response there (`stringified_raw_response` is "first stream response received"): its answer's
  reasoning is recorded only where a later call re-sends it (DeepSeek's thinking mode wants it re-sent;
  LiteLLM's stream_chunk_builder puts it in the message an app appends to its history). That later call's
  `llm.<provider>.messages` are the streamed call's own, then its answer. The conversation's last answer, re-sent
  by no call, has its reasoning recorded nowhere.

`complete_calls` reads these into the call of the span above each (`registry.Emitter.complete_calls`), where the call
has none of its own: never as a message of its own, never as a step.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Iterable, Mapping, Sequence
from functools import cached_property
from typing import Any

from evalkit.trajectory.mappers import python_repr
from evalkit.trajectory.mappers.litellm import is_raw_request
from evalkit.trajectory.mappers.messages import parse_message
from evalkit.trajectory.operations import LlmCall, Message, Part
from evalkit.trajectory.span import Span

# In the key naming the thinking (`reasoning_content`: LiteLLM's `Message`, DeepSeek; `reasoning`: newer vLLM): a raw
# request or response that never mentions it has none to read, and its (often long) history is not parsed.
_REASONING_KEY = "reasoning"


class RawRequest:
    """One `raw_gen_ai_request` span and the call it details."""

    def __init__(self, span: Span, call: LlmCall) -> None:
        self.span = span
        self.call = call
        # `llm.<provider>.<field>` -> value (the provider's name has no dot: `deepseek`, `hosted_vllm`, `openai`…).
        self.fields: dict[str, Any] = {}
        for key, value in span.attributes.items():
            if key.startswith("llm."):
                _provider, _, field = key[4:].partition(".")
                if field:
                    self.fields[field] = value

    def text(self, field: str) -> str:
        value = self.fields.get(field)
        return value if isinstance(value, str) else ""

    @cached_property
    def messages(self) -> list[Any] | None:
        """The messages LiteLLM sent the provider, as plain values."""
        sent = python_repr.literal(self.text("messages"))
        return sent if isinstance(sent, list) else None

    def answer(self) -> Message | None:
        """The provider's response, where the span recorded it (a call not streamed): an OpenAI-compatible response's
        first choice (`choices`), an Anthropic message's content blocks (`content`)."""
        raw: Any = None
        if "choices" in self.fields:
            choices = python_repr.literal(self.text("choices"))
            first = choices[0] if isinstance(choices, list) and choices else None
            raw = first.get("message") if isinstance(first, Mapping) else None
        elif "content" in self.fields:
            content = python_repr.literal(self.text("content"))
            raw = {"role": "assistant", "content": content} if isinstance(content, list) else None
        return parse_message(raw, "assistant") if isinstance(raw, Mapping) else None

    def answer_reasoning(self) -> str:
        """The reasoning of the provider's response, where the span recorded the response (a call not streamed)."""
        choices = python_repr.literal(self.text("choices")) if _REASONING_KEY in self.text("choices") else None
        first = choices[0] if isinstance(choices, list) and choices else None
        message = parse_message(first.get("message"), "assistant") if isinstance(first, Mapping) else None
        return message.reasoning.strip() if message is not None else ""


def raw_requests(spans: Sequence[Span], calls: Iterable[LlmCall]) -> list[RawRequest]:
    """The raw requests of `calls` among `spans`, in the order they were sent."""
    by_span = {(call.span.trace_id, call.span.span_id): call for call in calls}
    return sorted(
        (RawRequest(span, call) for span in spans
         if (call := by_span.get((span.trace_id, span.parent_span_id))) is not None and is_raw_request(span)),
        key=lambda request: (request.span.start_time_unix_nano, request.span.span_id))


def complete_calls(spans: Sequence[Span], calls: Iterable[LlmCall]) -> None:
    """Each LiteLLM call whose span recorded no reasoning effort or no reasoning, given them from its raw request."""
    requests = raw_requests(spans, calls)
    resending = [index for index, request in enumerate(requests) if _REASONING_KEY in request.text("messages")]
    for index, request in enumerate(requests):
        call = request.call
        effort = request.fields.get("reasoning_effort")
        if call.reasoning_effort is None and isinstance(effort, str) and effort:
            call.reasoning_effort = effort
        if any(message.reasoning for message in call.output_messages):
            continue
        if "choices" in request.fields:
            reasoning = request.answer_reasoning()
        else:  # streamed: only a later request re-sending reasoning may hold this answer's
            later = resending[bisect_right(resending, index):]
            reasoning = _resent_reasoning(request, [requests[other] for other in later]) if later else ""
        if reasoning:
            _add_reasoning(call, reasoning)


def _resent_reasoning(request: RawRequest, later: Iterable[RawRequest]) -> str:
    """The reasoning of `request`'s answer as the first later request re-sending its messages re-sends the answer
    after them ("": none does, or the message there is not the answer the call recorded)."""
    sent = request.messages
    if sent is None:
        return ""
    answer = _answer(request.call)
    for other in later:
        resent = other.messages
        if resent is None or len(resent) <= len(sent) or resent[:len(sent)] != sent:
            continue
        message = parse_message(resent[len(sent)], "assistant")
        if message is None or message.role != "assistant" or not _same_answer(message, answer):
            return ""
        return message.reasoning.strip()
    return ""


def _answer(call: LlmCall) -> Message:
    return next((m for m in call.output_messages if m.role == "assistant"), Message("assistant"))


def _same_answer(resent: Message, answer: Message) -> bool:
    """Whether a re-sent message is the answer a call recorded: its text and the tools it called."""
    return resent.text.strip() == answer.text.strip() and \
        [part.name for part in resent.tool_calls] == [part.name for part in answer.tool_calls]


def _add_reasoning(call: LlmCall, reasoning: str) -> None:
    """The reasoning first in the call's answer, as a model's thinking comes before its text and calls."""
    answers = [m for m in call.output_messages if m.role == "assistant"]
    if not answers:
        answers = [Message("assistant")]
        call.output_messages.append(answers[0])
    answers[0].parts.insert(0, Part("reasoning", text=reasoning))
