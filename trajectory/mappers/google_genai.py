"""The Google Gen AI SDK's Gemini contents as its instrumentations record a call's input: OpenInference's
(`openinference-instrumentation-google-genai`, `_RequestAttributesExtractor`: one input message per content, the
role Gemini's `model`, each function response a `tool` message of its own, `message.content` its `response`'s
JSON) and OpenTelemetry's (`opentelemetry-instrumentation-google-genai`: `gen_ai.input.messages`, one message per
content, the role `assistant`, a function response a `tool_call_response` part, its `response`). One reading
for both, of what the SDK sent:

- A streamed answer re-sent in pieces. google-genai's chat keeps a streamed answer as it came, one `model`
  content per chunk (`chats.py`, `record_history`; its automatic function calling loop sends the next call the
  chunks so too), and every later call sends those contents so: the answer's text in pieces, its function calls
  apart from it (the API streams them whole in a chunk of their own). The chat's own `_extract_curated_history`
  reads consecutive `model` contents as one model turn, and so are they read here: one message, text pieces
  joined as Gemini joins a response's text parts (`GenerateContentResponse.text`, no separator). Then the re-sent
  answer is the step of the call that streamed it, not copied steps after it (a text piece each, and its calls
  again with no result).
- A function that failed. A function response's `response` names error details by its `error` key (Gemini's
  `FunctionResponse.response`: "Use "output" key to specify function output and "error" key to specify error
  details"); the SDK's automatic function calling runs the application's Python functions in no span and sends
  `{"error": str(exception)}` for one that raised (`_extra_utils.get_function_response_parts`; a return is
  `{"result": …}`). The next call's input is the only record of it: its function response with an `error` is
  flagged (`Part.error`), and the builder flags the result on the call that asked for it.
"""

from __future__ import annotations

from dataclasses import replace

from evalkit.trajectory.mappers.reader import parse_json
from evalkit.trajectory.operations import LlmCall, Message, Part

OPENINFERENCE_SCOPE = "openinference.instrumentation.google_genai"
# A model content's role: Gemini's own (OpenInference keeps it), or OpenTelemetry's GenAI name for it.
_MODEL_ROLES = frozenset({"model", "assistant"})
_JOINED_KINDS = ("text", "reasoning")  # streamed in pieces; a function call comes whole


def gemini_contents(call: LlmCall) -> None:
    """The call's input messages, each model turn one message and each failed function's response flagged."""
    call.input_messages = [_flag_failed_functions(message) for message in _one_message_per_turn(call.input_messages)]


def _one_message_per_turn(messages: list[Message]) -> list[Message]:
    turns: list[Message] = []
    for message in messages:
        previous = turns[-1] if turns else None
        if previous is None or message.role not in _MODEL_ROLES or message.role != previous.role:
            turns.append(message)
            continue
        parts = list(previous.parts)
        for part in message.parts:
            last = parts[-1] if parts else None
            if last is not None and last.kind == part.kind and part.kind in _JOINED_KINDS:
                parts[-1] = replace(last, text=(last.text or "") + (part.text or ""))
            else:
                parts.append(part)
        turns[-1] = replace(previous, parts=parts)
    return turns


def _flag_failed_functions(message: Message) -> Message:
    if not any(_reports_error(part) for part in message.parts):
        return message
    return replace(message, parts=[replace(part, error=True) if _reports_error(part) else part
                                   for part in message.parts])


def _reports_error(part: Part) -> bool:
    if part.kind != "tool_result" or not part.text or not part.text.startswith("{"):
        return False
    response = parse_json(part.text)
    return isinstance(response, dict) and response.get("error") not in (None, "")
