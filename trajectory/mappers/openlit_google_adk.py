"""OpenLIT's Google ADK and Google AI Studio instrumentations (scopes `openlit.instrumentation.google_adk` and
`openlit.instrumentation.google_ai_studio`, as of openlit 1.45), as they record an ADK agent's run on Gemini.

The Google ADK one wraps ADK's classes (openlit/instrumentation/google_adk) and replaces ADK's runner tracer by a
pass-through. ADK's own spans (`invoke_workflow`, `invoke_agent`, `generate_content`, `execute_tool`: scope
`gcp.vertex.agent`, `trajectory/mappers/google_adk.py`) still go to the global provider `openlit.init` sets, beside
its own. Its hooks into ADK's `trace_call_llm` / `trace_tool_call` no longer find those functions in ADK 2.x
(`telemetry/tracing.py` holds them now): ADK's call and tool spans get nothing from OpenLIT. Its spans:

- `create_agent <agent>` (`LlmAgent.__init__`): an agent built, a trace of its own: no step;
- `invoke_agent <app>` (`Runner.run_async`, `gen_ai.execution.mode`): the Runner's turn, named after the app, not an
  agent: it holds ADK's `invoke_workflow` and the agents' runs; no run of its own;
- `invoke_agent <agent>` (`BaseAgent.run_async`): the agent's run. ADK's own `invoke_agent <agent>` runs inside it:
  the one run reported twice, whose outer report holds no work of its own (the builder's synthetic root). Its
  `gen_ai.output.messages` restates the agent's final answer (ADK's final-response event): its last call's.

The Google AI Studio one wraps google-genai's `generate_content` / `generate_content_stream`: a `chat <model>` span
per call, under ADK's `generate_content` span (which, ADK's content capture off, records only usage): the call's
report with its messages. What is its own:

- a non-streamed answer's text is `str(response.text)`, which is None for an answer of function calls alone
  (utils.py, `process_chat_response`): such an answer carries a text part "None" beside its calls. Dropped;
- a function response in the input is `str()` of its `response` dict (a Python repr, `{'result': 'sunny'}`), with
  no id and no name; the model was sent the dict as JSON: read back as the dict;
- a streamed call's span opens only when the stream ends (`__anext__` at `StopAsyncIteration`): after ADK's own
  span of the call has ended, beside it, not under it (`trajectory/same_call.py` takes them for one call);
- its answer's tool calls restated (`gen_ai.tool.call.arguments` here, besides OpenLIT's usual three), and the
  request's `stream` flag.

The request holds ADK's "For context:" messages (another agent's events handed to the agent that runs next), marked
as the other ADK readings mark them (`google_adk_handed_over_context`): the check is a prefix test of the first text
of a user message, which a google-genai call outside ADK pays too (its span does not say ADK made the request).
"""

from __future__ import annotations

from collections.abc import Sequence

from evalkit.trajectory.mappers import google_adk_handed_over_context, otel_genai, python_repr
from evalkit.trajectory.mappers.messages import render
from evalkit.trajectory.mappers.reader import SpanReader
from evalkit.trajectory.operations import LlmCall, Message, Operation, Part
from evalkit.trajectory.span import LogRecord, Span

ADK_SCOPE = "openlit.instrumentation.google_adk"
AI_STUDIO_SCOPE = "openlit.instrumentation.google_ai_studio"
_BOOKKEEPING = ("gen_ai.provider.name", "gen_ai.request.model")
_RUNNER_MODE = "gen_ai.execution.mode"  # set on the Runner's span only (`_set_runner_agent_attributes`)
_RESTATED_TOOL_CALLS = ("gen_ai.tool.call.arguments",)
_NO_TEXT = "None"  # `str(response.text)` of an answer with no text part


def is_google_adk(span: Span) -> bool:
    return span.scope_name in (ADK_SCOPE, AI_STUDIO_SCOPE)


def map_span(reader: SpanReader, logs: Sequence[LogRecord], emitter: str) -> Operation | None:
    """One span of either instrumentation, OpenLIT's common bookkeeping already read (`openlit.map_span`)."""
    if reader.span.scope_name == AI_STUDIO_SCOPE:
        return _model_call(reader, logs)
    reader.consume(*_BOOKKEEPING, *otel_genai.IDENTITY_KEYS)  # the identity: the builder's to read
    operation = otel_genai.operation_name(reader)
    if operation != "invoke_agent" or reader.has(_RUNNER_MODE):
        reader.consume_prefix("gen_ai.")  # an agent's setup (`create_agent`), the Runner's turn
        return None
    reader.consume("gen_ai.output.messages")  # the agent's final answer again: its last call's
    return otel_genai.agent_run(reader, emitter)


def _model_call(reader: SpanReader, logs: Sequence[LogRecord]) -> Operation | None:
    found = otel_genai.map_span(reader, logs)
    if not isinstance(found, LlmCall):
        return found
    reader.consume(*_RESTATED_TOOL_CALLS)
    found.input_messages = [_with_results_read(message) for message in found.input_messages]
    google_adk_handed_over_context.handed_over(found)  # ADK's "For context:" messages: another agent's events
    if reader.attributes.get("gen_ai.request.stream") is False:
        found.output_messages = [_without_absent_text(message) for message in found.output_messages]
    return found


def _without_absent_text(message: Message) -> Message:
    """An answer of function calls without the "None" OpenLIT wrote for its missing text."""
    if not message.tool_calls or not any(p.kind == "text" and p.text == _NO_TEXT for p in message.parts):
        return message
    return Message(message.role, [p for p in message.parts if not (p.kind == "text" and p.text == _NO_TEXT)],
                   message.name)


def _with_results_read(message: Message) -> Message:
    """A message whose function responses are Python reprs, with each as the JSON the model was sent.

    A new message: the memo hands one decoded message to every call that re-sent it."""
    if not message.tool_results:
        return message
    return Message(message.role, [_result_read(part) for part in message.parts], message.name)


def _result_read(part: Part) -> Part:
    value = python_repr.literal(part.text) if part.kind == "tool_result" else None
    if not isinstance(value, dict):
        return part
    return Part("tool_result", text=render(value), call_id=part.call_id, name=part.name, error=part.error)
