"""OpenLIT's Claude Agent SDK instrumentation (scope `openlit.instrumentation.claude_agent_sdk`, as of openlit 1.45).

The model calls are made by the Claude Code CLI the SDK drives, a process OpenLIT does not see: the
instrumentation (openlit/instrumentation/claude_agent_sdk) wraps `ClaudeSDKClient` (and `query()`) and makes its
spans from the messages the SDK yields and from hooks it adds to the options. What each is:

- `create_agent <name>`: `ClaudeSDKClient.connect`, a trace of its own: setting the client up, no step. (The
  in-process MCP server's tasks start under it, so an `mcp` instrumentation's spans of the server land in that
  trace, for the client's whole life: no session's.)
- `invoke_agent <name>` with no parent: one turn, `receive_response`: the prompt (`gen_ai.input.messages`), the
  SDK's session id (`gen_ai.conversation.id`), and from the turn's `ResultMessage` the main agent's summed usage
  and the CLI's own price of it (`total_cost_usd`), the final text, turns and durations: the calls' own spans
  count them. Its name is OpenLIT's fallback, `claude_agent_sdk` (it looks for the model on the client's
  `_options`, which the client does not have).
- `invoke_agent <description>` under an `execute_tool Agent` span: a subagent the `Agent` (formerly `Task`) tool
  started, from the SDK's task messages: named after the call's `description` argument (the task, not the agent
  type), its usage the CLI's task summary (`total_tokens` as `gen_ai.usage.input_tokens`: not a count of calls).
- `chat <model>`: one model answer, made up from the SDK's `AssistantMessage`s of one message id: its output,
  usage and, as input, the prompt or the tool results the SDK yielded just before (as
  `tool_call_response` parts; of results yielded as several `UserMessage`s, only the last's).
- `execute_tool <tool>`: a tool's run between the `PreToolUse` and `PostToolUse` / `PostToolUseFailure` hooks:
  its call id, arguments and result.

What is read here rather than by the GenAI mapper:

- a tool's result (`gen_ai.tool.call.result`, and `tool_call_response` parts in a call's input) is `str()` of
  what the hook was given: for an MCP tool (and the `Agent` tool's hand-back) the Python repr of its content
  blocks, `[{'type': 'text', 'text': '…'}]`: read back into the text the model was shown;
- a tool that failed has no result but its error (`error.type`, the status message): the hook's `error`, the
  text the CLI sent the model as the `is_error` tool result. It is the result.

Not recorded, so not read: the text of an answer that also calls tools and of every tool call but its last (the
SDK yields each content block as an `AssistantMessage` of the same message id, and OpenLIT keeps the last it
buffered: of parallel calls the others are only on their `execute_tool` spans); the answers' output tokens (each
`AssistantMessage` carries the stream's `message_start` usage, so 1); a subagent's answers that call no tool (the
SDK does not yield them). And the `chat` spans end before they start (their start is when the last message was
handled, after the end OpenLIT took when it buffered the answer): evalkit's ingest refuses such spans.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from evalkit.trajectory.mappers import otel_genai, python_repr
from evalkit.trajectory.mappers.reader import SpanReader
from evalkit.trajectory.operations import LlmCall, Operation, ToolExecution
from evalkit.trajectory.span import LogRecord, Span

SCOPE = "openlit.instrumentation.claude_agent_sdk"
_BOOKKEEPING = ("gen_ai.provider.name", "gen_ai.system")
# What a turn's or subagent's span says of the run besides what it was asked: the final text (its last call's
# span has it), the number of turns, durations, the subagent's tool count.
_RUN_EXTRAS = ("gen_ai.output.messages", "gen_ai.agent.num_turns", "gen_ai.agent.duration_ms",
               "gen_ai.agent.duration_api_ms", "gen_ai.agent.tool_uses")


def is_claude_agent_sdk(span: Span) -> bool:
    return span.scope_name == SCOPE


def map_span(reader: SpanReader, logs: Sequence[LogRecord], emitter: str) -> Operation | None:
    """One span of the instrumentation's, OpenLIT's common bookkeeping already read (`openlit.map_span`)."""
    reader.consume(*_BOOKKEEPING)
    operation = otel_genai.operation_name(reader)
    if operation == "create_agent":
        reader.consume(*otel_genai.IDENTITY_KEYS)
        return None
    if operation == "execute_tool":
        return tool_execution(reader, emitter)
    if operation == "invoke_agent":
        run = otel_genai.agent_run(reader, emitter)  # its usage consumed: the calls' spans count it
        reader.consume(*_RUN_EXTRAS)
        return run
    call = otel_genai.map_span(reader, logs)
    if isinstance(call, LlmCall):
        for message in call.input_messages:
            for part in message.tool_results:
                part.text = shown_text(part.text)
    return call


def tool_execution(reader: SpanReader, emitter: str) -> ToolExecution:
    """A tool's run: its result the text the model was shown, a failure's the error the CLI sent it."""
    execution = otel_genai.tool_execution(reader, emitter)
    if execution.error is not None and execution.result is None:
        execution.result = execution.error.error_type or execution.error.status_message or None
    else:
        execution.result = shown_text(execution.result)
    return execution


def shown_text(result: Any) -> Any:
    """The text of a tool result recorded as the Python repr of its MCP content blocks (all text); else as it is."""
    blocks = python_repr.literal(result) if isinstance(result, str) and result.startswith("[{") else None
    if not isinstance(blocks, list) or not blocks or not all(
            isinstance(block, dict) and block.get("type") == "text" and isinstance(block.get("text"), str)
            for block in blocks):
        return result
    return "\n".join(block["text"] for block in blocks)
