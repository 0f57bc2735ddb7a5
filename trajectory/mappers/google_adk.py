"""Google ADK's own tracing (scope `gcp.vertex.agent`): the GenAI semantic conventions, and ADK's ways.

ADK 2.x writes `invoke_workflow` (the run of an app: no agent of its own), `invoke_agent <name>`,
`generate_content <model>` and `execute_tool <name>` spans in the GenAI conventions, read by the
GenAI mapper; message content only with `OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT`
(`SPAN_ONLY` puts it on the spans). What is ADK's own:

- parallel tool calls answered in one event add an `execute_tool (merged)` span, tool name
  `(merged tools)`, whose call id is the event's: the calls are its siblings, it is none itself;
- on a Gemini model, function calls and responses have no id; ADK's converter writes `<name>_<index of the part in
  its content>` in their stead (`_experimental_semconv._to_part`), as the Google Gen AI SDK's instrumentation does, and
  they are forgotten so (`otel_genai._forget_made_up_ids`): after a thought part, or in the next call's input, they
  name the wrong calls. ADK runs each call under an id of its own (`adk-…`, on the tool's span; a streamed call's
  output names it too), so calls and tools pair by name and order. The same converter writes a thought part
  (`Part.thought`) as a text part, the flag lost: no span says which text the model thought;
- `transfer_to_agent` (tool type `TransferToAgentTool`) hands the conversation to the agent named
  in its arguments: a handoff, the receiving `invoke_agent` span its sibling;
- `gcp.vertex.agent.event_id` / `invocation_id` are ADK's bookkeeping ids; `gen_ai.workflow.nested` marks the
  `invoke_workflow` of a runner started inside another's run (an `AgentTool`'s: the wrapped agent in a session of
  its own), which its span's place under the tool's span already says;
- an MCP tool (`McpToolset`'s `McpTool`) answers the model the whole `CallToolResult` it got (`content`,
  `structuredContent`, `isError`): that is its result. An `isError` one ends its span ERROR with `error.type`
  `MCP_TOOL_ERROR` and that type again as the status description (no tool content in an attribute the content toggle
  cannot gate): the error's message is the result's text (`_mcp_error_text`);
- ADK's `ReflectAndRetryToolPlugin` answers the model in a failed tool's stead (an exception it caught, or an error a
  subclass reads in a result) with reflection guidance, `response_type` `ERROR_HANDLED_BY_REFLECT_AND_RETRY_PLUGIN`
  beside the error's type and message (`ToolFailureResponse`); the tool's span ends OK, its result that answer:
  a failure (`_reflected_failure`);
- a streamed call (`RunConfig(streaming_mode=SSE)`) is reported as every response it got, one output message each
  (`set_operation_details_attributes_from_response`), the chunks with no finish reason, the last with one: the
  answer in pieces (`_streamed_answer`). A model that hands ADK the whole answer again at the end (LiteLlm's
  aggregate: the text, and the calls whose arguments it streamed in pieces) ends it so: then the last is the answer.
  Its function calls carry ADK's own ids (`adk-…`), which the next call's input re-sends made up: they are forgotten
  too (`_forget_run_ids`), so that the re-sent answer is the call's, not a step of its own;
- a message's inline data (`types.Part.inline_data`: an image the user sent) is a `blob` part whose `data` is the
  bytes, which the JSON of the attribute cannot hold: ADK writes `"<not serializable>"` in their stead
  (`_experimental_semconv._safe_json_serialize_no_whitespaces`), so no span holds an inline image: it is media saying
  so (`_unrecorded_inline_data`), never an image a reference could not read back. A `file_data` part
  (`types.Part.from_uri`) keeps its URI: the image at its address. Media a tool returns (ADK 2.15 moves it into the
  `FunctionResponse`'s `parts`, which LiteLlm sends the model in a user message after the tool messages) is in no span:
  the tool's span and the next call's input record the response's `response` alone;
- a tool needing a person's confirmation (`require_confirmation=True`) answers with ADK's stand-in, which the model is
  never shown: no result; the run asks, the next run carries on with the answers (`google_adk_confirmation`);
- the agent a transfer or a workflow runs next is sent each event of another agent as a user message opening "For
  context:" (what it said, a tool it called, what the tool returned): no person's words, marked as the context ADK
  handed over, from that agent (`google_adk_handed_over_context`, under every instrumentation read here);
- a workflow agent (`SequentialAgent`, `ParallelAgent`, `LoopAgent`) calls no model and runs its sub-agents; its
  `invoke_agent` span has an `LlmAgent`'s attributes (nothing says its kind) and holds theirs. A run holding runs and
  doing nothing itself is what the builder takes for a synthetic root and looks through (the workflow's structure
  lost, its agents' calls one trajectory), but ADK opens `invoke_agent` spans only for the app's own agents: each is
  an agent (`AgentRun.app_agent`), a workflow agent's run a trajectory whose subagents are its sub-agents' runs.
  ADK records no input or output on them: the user's message is in each `LlmAgent`'s trajectory, not the root's.

openinference-instrumentation-google-adk (scope `openinference.instrumentation.google_adk`) replaces
ADK's tracers: `invocation [<app>]` (CHAIN, ADK's session id as `session.id`), `agent_run [<name>]`
(AGENT), `call_llm` (LLM) and ADK's `execute_tool` spans made OpenInference TOOL spans. The
OpenInference mapper reads them; ADK still writes its own attributes on them (`gen_ai.*`,
`gcp.vertex.agent.*`), so the same ADK ways are read here (`openinference_tool`): the `(merged)` span,
no TOOL kind of its own, is no tool; `transfer_to_agent` is a handoff; a tool's `output.value`
is the `FunctionResponse` ADK sent the model, whose `response` is the result, a failure where it is
`ReflectAndRetryToolPlugin`'s answer (the span ends OK here too). Its `call_llm` span records a
streamed answer whole, its function calls under ADK's `adk-…` run ids: forgotten as on ADK's own
spans (`openinference_call`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from evalkit.trajectory.mappers import google_adk_confirmation, google_adk_handed_over_context, otel_genai
from evalkit.trajectory.mappers.reader import SpanReader, parse_json
from evalkit.trajectory.operations import AgentRun, ErrorInfo, LlmCall, Message, Operation, Part, ToolExecution
from evalkit.trajectory.span import LogRecord, Span

NAME = "google-adk"
SCOPE = "gcp.vertex.agent"
OPENINFERENCE_SCOPE = "openinference.instrumentation.google_adk"
_MERGED = "(merged tools)"
_TRANSFER_TYPE = "TransferToAgentTool"
# The prefix of the id ADK gives a function call the model gave none (`AF_FUNCTION_CALL_ID_PREFIX`).
_RUN_ID_PREFIX = "adk-"
# `ReflectAndRetryToolPlugin`'s answer for a failed tool (`google.adk.plugins._reflect_retry_utils.
# REFLECT_AND_RETRY_RESPONSE_TYPE`): what the session list's `failed` reads too (trajectory/tables.py, migration 221).
REFLECTED_FAILURE = "ERROR_HANDLED_BY_REFLECT_AND_RETRY_PLUGIN"
# The `error.type` ADK gives an MCP tool's `isError` result (`McpTool._detect_error_in_response`).
_MCP_TOOL_ERROR = "MCP_TOOL_ERROR"
# What a media part says of inline data ADK could not write (its JSON encoder's fallback for bytes).
_UNRECORDED_INLINE_DATA = "not recorded (ADK's tracing writes inline bytes as <not serializable>)"


def detect(span: Span) -> bool:
    # The OpenInference instrumentation's spans are the OpenInference mapper's, but for the one it
    # gives no kind: ADK's `execute_tool (merged)`, made by its tracer with ADK's attributes alone.
    return span.scope_name == SCOPE or (
        span.scope_name == OPENINFERENCE_SCOPE and "openinference.span.kind" not in span.attributes
    )


def map_span(reader: SpanReader, logs: Sequence[LogRecord]) -> Operation | None:
    reader.consume("gcp.vertex.agent.event_id", "gcp.vertex.agent.invocation_id", "gen_ai.workflow.name",
                   "gen_ai.workflow.nested")
    if reader.span.scope_name == OPENINFERENCE_SCOPE:  # the `(merged)` span, made by the instrumentation's tracer
        consume_openinference(reader)
        reader.consume("user.id")  # OpenInference's context attributes, on every span of its tracer
    if reader.text("gen_ai.tool.name") == _MERGED:
        reader.consume_prefix("gen_ai.")
        return None
    if reader.span.scope_name == SCOPE and google_adk_confirmation.asks_confirmation(
            reader.span.attributes.get("gen_ai.tool.call.result")):
        # A call waiting for a person's confirmation: ADK's stand-in answer, never shown the model, is no result; the
        # run asks (`google_adk_confirmation.complete_runs`), the call's result is its run once answered.
        reader.consume_prefix("gen_ai.")
        return None
    operation = otel_genai.map_span(reader, logs)
    if isinstance(operation, ToolExecution):
        _transfer(operation, reader)
        _reflected_failure(operation)
        _mcp_error_text(operation)
    elif isinstance(operation, AgentRun) and reader.span.scope_name == SCOPE:
        operation.app_agent = True  # a workflow agent's run too (see above)
    elif isinstance(operation, LlmCall) and reader.span.scope_name == SCOPE:
        _streamed_answer(operation, reader.span)
        _forget_run_ids(operation)
        _unrecorded_inline_data(operation)
        google_adk_handed_over_context.handed_over(operation)  # another agent's events, "For context:"
    return operation


def _unrecorded_inline_data(call: LlmCall) -> None:
    """The input's inline data (a `blob` part: ADK writes its bytes as `"<not serializable>"`, which the reader leaves
    out, so it has no URL) as media no span holds, saying so. The messages are the memo's, shared with other calls:
    changed ones are new messages."""
    if any(_without_bytes(part) for message in call.input_messages for part in message.parts):
        call.input_messages = [
            replace(message, parts=[replace(part, text=_UNRECORDED_INLINE_DATA) if _without_bytes(part) else part
                                    for part in message.parts])
            if any(_without_bytes(part) for part in message.parts) else message
            for message in call.input_messages]


def _without_bytes(part: Part) -> bool:
    return part.kind == "media" and not part.uri and not part.text


def _forget_run_ids(call: LlmCall) -> None:
    """A streamed Gemini answer's function calls under the ids ADK ran them with (`adk-…`), which the next call's
    input re-sends with none (a made-up `<name>_<index>`, forgotten): id-less too, so that the re-sent answer is
    the call's and not a step of its own; the tools' spans answer them by name and order, as a non-streamed call's."""
    for message in call.output_messages:
        for part in message.parts:
            if part.kind == "tool_call" and part.call_id is not None and part.call_id.startswith(_RUN_ID_PREFIX):
                part.call_id = None


def _streamed_answer(call: LlmCall, span: Span) -> None:
    """A streamed call's output messages, each a response ADK got, as the one answer they are. Several answers
    (choices) each carry a finish reason; a stream's chunks carry none (`finish_reason` ""), its last response one."""
    reported = parse_json(span.attributes.get("gen_ai.output.messages"))
    if not isinstance(reported, list) or len(reported) < 2 or len(reported) != len(call.output_messages):
        return
    if any(not isinstance(message, dict) or message.get("finish_reason") for message in reported[:-1]):
        return
    *chunks, last = call.output_messages
    if _restates(last, chunks):
        call.output_messages = [last]  # the whole answer again after its pieces (LiteLlm's aggregate)
        return
    parts: list[Part] = []
    for part in (part for message in call.output_messages for part in message.parts):
        if parts and part.kind in ("text", "reasoning") and parts[-1].kind == part.kind:
            parts[-1] = Part(part.kind, (parts[-1].text or "") + (part.text or ""))  # the next piece of it
        else:
            parts.append(part)
    call.output_messages = [Message(last.role, parts, last.name)]


def _restates(last: Message, chunks: list[Message]) -> bool:
    """Whether a stream's last response is its chunks' whole answer: their text and reasoning joined, each tool call
    they began (LiteLlm streams a call's arguments in pieces, under the call's id) among its calls."""
    pieces = [part for message in chunks for part in message.parts]
    called = {part.call_id for part in last.tool_calls}
    return (
        last.text == "".join(part.text or "" for part in pieces if part.kind == "text")
        and last.reasoning == "".join(part.text or "" for part in pieces if part.kind == "reasoning")
        and all(part.kind in ("text", "reasoning") or (part.kind == "tool_call" and part.call_id in called)
                for part in pieces)
    )


def _reflected_failure(execution: ToolExecution) -> None:
    """A tool whose result is `ReflectAndRetryToolPlugin`'s answer in its stead failed: the error it names."""
    result = execution.result
    if execution.error is None and isinstance(result, dict) and result.get("response_type") == REFLECTED_FAILURE:
        error_type = result.get("error_type")
        execution.error = ErrorInfo(status_message=str(result.get("error_details") or ""),
                                    error_type=error_type if isinstance(error_type, str) and error_type else None)


def _mcp_error_text(execution: ToolExecution) -> None:
    """An MCP tool's `isError` result: ADK's span says only the error's type (`MCP_TOOL_ERROR`, as its status
    description too); what went wrong is the result's text content, as the server wrote it and the model read it."""
    error, result = execution.error, execution.result
    if error is None or error.error_type != _MCP_TOOL_ERROR or error.status_message not in ("", _MCP_TOOL_ERROR):
        return
    # ADK dumps the result with MCP 1.x's key names on either major (`_dump_mcp_model`); a dump made elsewhere keeps
    # its SDK's, as ADK's own check allows for.
    if not isinstance(result, dict) or not (result.get("isError") or result.get("is_error")):
        return
    texts = [block["text"] for block in result.get("content") or ()
             if isinstance(block, dict) and block.get("type") == "text" and isinstance(block.get("text"), str)]
    if texts:
        error.status_message = "\n".join(texts)


def _transfer(execution: ToolExecution, reader: SpanReader) -> None:
    """`transfer_to_agent` hands the conversation to the agent its arguments name. With ADK's content capture off
    its span records no arguments: the agent ADK runs next, the first run after it ("")."""
    if reader.text("gen_ai.tool.type") == _TRANSFER_TYPE:
        target = execution.arguments.get("agent_name") if isinstance(execution.arguments, dict) else None
        execution.handoff_to = target if isinstance(target, str) and target else ""


def consume_openinference(reader: SpanReader) -> None:
    """ADK's own attributes on an OpenInference span: its bookkeeping ids and restatements of what the
    OpenInference attributes say (`llm_request` / `llm_response` / `tool_call_args` / `tool_response`,
    the session id), the agent's description (`agent_run`), which no step has a place for, and ADK 2.13's
    workflow name (its `invoke_workflow` span, a CHAIN of the instrumentation's)."""
    reader.consume_prefix("gcp.vertex.agent.")
    reader.consume("gen_ai.agent.description", "gen_ai.workflow.name")


def openinference_tool(execution: ToolExecution, reader: SpanReader) -> ToolExecution:
    """An OpenInference TOOL span of ADK's. Its `output.value` is the `FunctionResponse` ADK made of
    the tool's return and sent the model (`responses[0].model_dump_json(exclude_none=True)`,
    `_TraceToolCall`): `{"id", "name", "response"}`; the model was shown `response`."""
    result = execution.result
    if isinstance(result, dict) and "response" in result and set(result) <= {"id", "name", "response"}:
        execution.result = result["response"]
    _transfer(execution, reader)
    _reflected_failure(execution)  # the span ends OK, as ADK's own: the plugin's answer is the only record
    return execution


def openinference_call(call: LlmCall) -> LlmCall:
    """An OpenInference LLM span of ADK's (`call_llm`). A streamed answer is recorded whole (the instrumentation
    aggregates the stream), its function calls under the ids ADK ran them with (`adk-…`), which the next call's input
    re-sends with none: forgotten, as on ADK's own spans (`_forget_run_ids`), so that the re-sent answer is the call's
    and not a copied step; the tools' spans answer them by name and order, as a non-streamed call's. ADK's "For
    context:" messages marked as on ADK's own spans (`google_adk_handed_over_context`)."""
    _forget_run_ids(call)
    google_adk_handed_over_context.handed_over(call)  # another agent's events ADK handed over, "For context:"
    return call
