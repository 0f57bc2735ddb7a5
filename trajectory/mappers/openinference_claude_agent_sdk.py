"""OpenInference's Claude Agent SDK instrumentation (scope `openinference.instrumentation.claude_agent_sdk`, 0.1.22).

The model calls are made by the Claude Code CLI the SDK drives, a Node process the instrumentation does not see: it
wraps `ClaudeSDKClient.receive_response` (and `query()`) and records, on one AGENT span a turn
(`ClaudeAgentSDK.ClaudeSDKClient.receive_response`), the prompt (`input.value`) and each `AssistantMessage` the SDK
yielded as an `llm.output_messages.<i>`; its TOOL spans, children of the turn's, come from the hooks it adds and from
the messages' tool_use / tool_result blocks. No span is a model call's. The SDK yields one `AssistantMessage` per
content block of an answer, so an answer with text and two parallel tool calls is three output messages in a row.

What is derived here, before mapping (`with_call_spans`): one OpenInference LLM span a model call of the turn, a child
of the turn's span, its output the turn's output messages of that answer. An answer's blocks come text (and
thinking) first, then its tool calls; the next answer is asked only once every result of the last was sent. So a
call ends where text follows a tool call, or where a tool call follows one whose tool span ended before it started
(the model was answered before it asked). The first call of a turn was sent the prompt; each call lasts from the end
of the last call's tools to the start of its own (the turn's start and end at the ends). The turn's token counts
(the instrumentation sums them over the turn's messages) are the turn's last call's: no span holds a call's own.

Not recorded, so not derived: each call's own usage, and the output tokens at all (each `AssistantMessage` carries
the stream's `message_start` usage, so 1 a message); the system prompt; a subagent's answers (its messages go to its
AGENT span, `ClaudeAgentSDK.Agent`, which records none of them: only its tools' spans, and its report in the `Agent`
tool's output).

A tool's result is what the hook was given: an MCP tool's is its content blocks as JSON, read back into the text the
model was shown; a failed or denied tool's has no output, its error (the status message) the text the CLI sent the
model as the `is_error` result.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from evalkit.trajectory.mappers.reader import SpanReader, parse_json
from evalkit.trajectory.operations import ToolExecution
from evalkit.trajectory.span import Span

SCOPE = "openinference.instrumentation.claude_agent_sdk"
_TURN_NAMES = ("ClaudeAgentSDK.ClaudeSDKClient.receive_response", "ClaudeAgentSDK.query")
_SUBAGENT_NAME = "ClaudeAgentSDK.Agent"  # a subagent's run, under the `Agent` call's TOOL span
_OUTPUT = "llm.output_messages."
_MESSAGE_INDEX = re.compile(r"^llm\.output_messages\.(\d+)\.(.*)$")
_TOOL_CALL = re.compile(r"^message\.tool_calls\.(\d+)\.(.*)$")
_CONTENTS = re.compile(r"^message\.contents\.(\d+)\.(.*)$")
_TEXT = re.compile(r"^message\.content(?:\.(\d+))?$")
_USAGE = ("llm.token_count.prompt", "llm.token_count.completion", "llm.token_count.total",
          "llm.token_count.prompt_details.cache_read", "llm.token_count.prompt_details.cache_write")
_CALL_KEYS = ("llm.model_name", "llm.provider", "llm.system", "session.id")


def with_call_spans(spans: Sequence[Span]) -> Sequence[Span]:
    """`spans`, with one derived LLM span a model call of each of the instrumentation's turns; as given when the
    session holds none of its turns."""
    turns = [span for span in spans if span.scope_name == SCOPE and span.name in _TURN_NAMES]
    if not turns:
        return spans
    tools: dict[tuple[str, str], list[Span]] = {}
    for span in spans:
        if span.scope_name == SCOPE and "tool.id" in span.attributes:
            tools.setdefault((span.trace_id, span.parent_span_id), []).append(span)
    derived: list[Span] = []
    for turn in turns:
        derived.extend(_call_spans(turn, tools.get((turn.trace_id, turn.span_id), [])))
    by_key = {(span.trace_id, span.span_id): span for span in spans}
    renamed: dict[tuple[str, str], Span] = {}
    for span in spans:
        if span.scope_name == SCOPE and span.name == _SUBAGENT_NAME:
            launch = by_key.get((span.trace_id, span.parent_span_id))
            if launch is not None and "tool.id" in launch.attributes:
                subagent, report = _subagent(span, launch, tools.get((span.trace_id, span.span_id), []))
                renamed[(span.trace_id, span.span_id)] = subagent
                derived.extend(report)
    if renamed:
        spans = [renamed.get((span.trace_id, span.span_id), span) for span in spans]
    return [*spans, *derived] if derived else spans


def _subagent(run: Span, launch: Span, tool_spans: list[Span]) -> tuple[Span, list[Span]]:
    """A subagent's span named after the agent its `Agent` call started (the instrumentation names it after the tool),
    and its closing answer's call, which the `Agent` tool's output records (its `content`, the report, and `usage`,
    that call's), the SDK yielding no message of it."""
    output = parse_json(launch.attributes.get("output.value"))
    output = output if isinstance(output, dict) else {}
    agent = output.get("agentType") or _argument(launch, "subagent_type")
    attributes = dict(run.attributes)
    if isinstance(agent, str) and agent:
        attributes["agent.name"] = agent
    renamed = replace(run, attributes=attributes)
    content = output.get("content")
    texts: list[str] = [b["text"] for b in content if isinstance(b, dict) and isinstance(b.get("text"), str)] \
        if isinstance(content, list) else []
    if not texts:
        return renamed, []
    call: dict[str, Any] = {"openinference.span.kind": "LLM", f"{_OUTPUT}0.message.role": "assistant",
                            f"{_OUTPUT}0.message.content": "\n".join(texts)}
    model = output.get("resolvedModel") or run.attributes.get("llm.model_name")
    if isinstance(model, str):
        call["llm.model_name"] = model
    usage = output.get("usage")
    if isinstance(usage, dict):
        call.update(_usage(usage))
    start = max((t.end_time_unix_nano for t in tool_spans), default=run.start_time_unix_nano)
    return renamed, [replace(
        run, span_id=_span_id(run, 0), parent_span_id=run.span_id, name="ClaudeAgentSDK.call",
        start_time_unix_nano=start, end_time_unix_nano=max(start, run.end_time_unix_nano), status_code=0,
        status_message="", attributes=call, events=(), links=())]


def _argument(span: Span, name: str) -> Any:
    arguments = parse_json(span.attributes.get("input.value"))
    return arguments.get(name) if isinstance(arguments, dict) else None


def _usage(usage: dict[str, Any]) -> dict[str, int]:
    """Anthropic's usage as OpenInference's token counts: the prompt counting the cache reads and writes."""
    counts = {key: usage.get(key) for key in ("input_tokens", "output_tokens", "cache_read_input_tokens",
                                               "cache_creation_input_tokens")}
    if not all(isinstance(v, int) for v in counts.values()):
        return {}
    read, written = counts["cache_read_input_tokens"] or 0, counts["cache_creation_input_tokens"] or 0
    prompt = (counts["input_tokens"] or 0) + read + written
    return {"llm.token_count.prompt": prompt, "llm.token_count.completion": counts["output_tokens"] or 0,
            "llm.token_count.total": prompt + (counts["output_tokens"] or 0),
            "llm.token_count.prompt_details.cache_read": read,
            "llm.token_count.prompt_details.cache_write": written}


def _output_messages(turn: Span) -> list[dict[str, Any]]:
    """The turn's output messages in order, each its keys after `llm.output_messages.<i>.`."""
    messages: dict[int, dict[str, Any]] = {}
    for key, value in turn.attributes.items():
        if key.startswith(_OUTPUT) and (match := _MESSAGE_INDEX.match(key)):
            messages.setdefault(int(match.group(1)), {})[match.group(2)] = value
    return [messages[i] for i in sorted(messages)]


def _tool_ids(message: dict[str, Any]) -> list[str]:
    return [str(value) for key, value in message.items()
            if key.endswith(".tool_call.id") and (key.startswith("message.tool_calls.")
                                                  or key.startswith("message.contents."))]


def answers(messages: list[dict[str, Any]], tools: dict[str, Span]) -> list[list[dict[str, Any]]]:
    """The output messages grouped into the answers they are blocks of."""
    calls: list[list[dict[str, Any]]] = []
    asked: list[str] = []  # the current answer's tool calls so far
    for message in messages:
        ids = _tool_ids(message)
        new_call = not calls
        if calls and asked and not ids:
            new_call = True  # text or thinking after a tool call: the next answer's
        elif calls and asked and ids:
            started = min((tools[i].start_time_unix_nano for i in ids if i in tools), default=None)
            answered = [tools[i].end_time_unix_nano for i in asked if i in tools]
            # Asked once an earlier call's result was back: the model had been answered.
            new_call = started is not None and bool(answered) and started >= max(answered)
        if new_call:
            calls.append([])
            asked = []
        calls[-1].append(message)
        asked.extend(ids)
    return calls


def _merged(blocks: list[dict[str, Any]]) -> dict[str, Any]:
    """One answer's blocks as one OpenInference output message (`llm.output_messages.0.…`)."""
    out: dict[str, Any] = {f"{_OUTPUT}0.message.role": "assistant"}
    texts: list[str] = []
    tool_index = 0
    content_index = 0
    for block in blocks:
        calls: dict[int, dict[str, Any]] = {}
        contents: dict[int, dict[str, Any]] = {}
        for key, value in block.items():
            if match := _TOOL_CALL.match(key):
                calls.setdefault(int(match.group(1)), {})[match.group(2)] = value
            elif match := _CONTENTS.match(key):
                contents.setdefault(int(match.group(1)), {})[match.group(2)] = value
            elif _TEXT.match(key) and isinstance(value, str):
                texts.append(value)
        for i in sorted(calls):
            for rest, value in calls[i].items():
                out[f"{_OUTPUT}0.message.tool_calls.{tool_index}.{rest}"] = value
            tool_index += 1
        for i in sorted(contents):
            for rest, value in contents[i].items():
                out[f"{_OUTPUT}0.message.contents.{content_index}.{rest}"] = value
            content_index += 1
    if texts:
        out[f"{_OUTPUT}0.message.content"] = "".join(texts)
    return out


def _span_id(turn: Span, index: int) -> str:
    return hashlib.blake2b(f"{turn.span_id}/call/{index}".encode(), digest_size=8).hexdigest()


def _call_spans(turn: Span, tool_spans: list[Span]) -> list[Span]:
    tools = {str(span.attributes["tool.id"]): span for span in tool_spans}
    calls = answers(_output_messages(turn), tools)
    spans: list[Span] = []
    start = turn.start_time_unix_nano
    for index, blocks in enumerate(calls):
        asked = [tools[i] for block in blocks for i in _tool_ids(block) if i in tools]
        end = min((t.start_time_unix_nano for t in asked), default=turn.end_time_unix_nano)
        attributes: dict[str, Any] = {"openinference.span.kind": "LLM"}
        attributes.update({key: turn.attributes[key] for key in _CALL_KEYS if key in turn.attributes})
        if index == 0 and isinstance(prompt := turn.attributes.get("input.value"), str):
            attributes["llm.input_messages.0.message.role"] = "user"
            attributes["llm.input_messages.0.message.content"] = prompt
        attributes.update(_merged(blocks))
        if index == len(calls) - 1:
            attributes.update({key: turn.attributes[key] for key in _USAGE if key in turn.attributes})
        spans.append(replace(
            turn, span_id=_span_id(turn, index), parent_span_id=turn.span_id,
            name="ClaudeAgentSDK.call", start_time_unix_nano=start, end_time_unix_nano=max(start, end),
            status_code=0, status_message="", attributes=attributes, events=(), links=()))
        start = max((t.end_time_unix_nano for t in asked), default=end)
    return spans


def consume_turn(reader: SpanReader) -> None:
    """A turn's (or subagent's) record of its calls, read into the calls' derived spans: their answers, model, provider,
    finish reason and summed usage."""
    reader.consume_prefix(_OUTPUT, "llm.token_count.")
    reader.consume(*_CALL_KEYS, "llm.finish_reason")


def tool_execution(execution: ToolExecution) -> ToolExecution:
    """A tool span's result as the model was shown it: an MCP tool's content blocks their text; a failed or denied
    tool's the error the CLI sent it."""
    if execution.error is not None and execution.result in (None, "") and execution.error.status_message:
        execution.result = execution.error.status_message
        return execution
    result = execution.result
    if isinstance(result, str) and result.startswith(("[{", "{")):
        result = parse_json(result)
    if isinstance(result, dict) and execution.name == "Agent" and isinstance(result.get("content"), list):
        result = result["content"]  # the subagent's report, beside the CLI's bookkeeping of its run
    if isinstance(result, list) and result and all(
            isinstance(b, dict) and b.get("type") == "text" and isinstance(b.get("text"), str) for b in result):
        execution.result = "\n".join(b["text"] for b in result)
    return execution

