"""The Anthropic Python SDK's calls as OpenInference's anthropic instrumentation records them.

`openinference-instrumentation-anthropic` records a call's request parameters, all but the model, system prompt,
messages, tools, output format and extra headers, as `llm.invocation_parameters` (read by the OpenInference mapper
into the call's `extra["request"]`). A reasoning request sets two of them:

- `thinking`: extended thinking, `{"type": "enabled", "budget_tokens": …}` (or `"adaptive"`): that the model thinks
  and how many tokens it may spend so, no effort level; kept in the request as recorded;
- `output_config`: `{"effort": "low" | "medium" | "high" | …}`, how much effort the model puts into its answer,
  thinking included (the SDK's model capabilities call it "Effort (reasoning_effort)"): the call's
  `reasoning_effort`, as OpenAI's `reasoning_effort` is.

The thinking itself needs nothing here: each `thinking` block is a `reasoning` content of its message (its
`signature` beside it), and its token count `llm.token_count.completion_details.reasoning`
(`usage.output_tokens_details.thinking_tokens`), part of the completion tokens.

Seen in a real capture: tests/captures/anthropic-sdk_openinference_thinking.

Images. A message's `image` block is a `message_content.image.image.url` (a base64 source as its data URL, a `url`
source its URL: read by the OpenInference mapper as any instrumentation's image). A `tool_result` is a `tool` message
whose `message.content` is the result's content, and when that content is blocks, their JSON with every base64
`source`'s data (and any other key of it but `type` and `media_type`) written `__REDACTED__` (`_content.py`
`_redact_sources`): a screenshot tool's image is in no attribute of the call's messages. The request's `input.value`
(its parameters as JSON, nothing redacted) holds the blocks as sent, base64 and all, and a failed tool's `is_error`,
which the flattened messages drop. So a `tool_result` of blocks holding an image or a document is read from there into
its parts (`Part.result_parts`: its text, the image a media part the trajectory shows as an image, a large one
referenced in the call span's input), and one the request marks `is_error` failed (`Part.error`).

A tool span of the application (`OITracer.tool`) records what the tool returned as `output.value`, unredacted: the
same content blocks, the screenshot's base64 among them; `tool_result_parts` reads those blocks as the result's parts
(the OpenInference mapper's TOOL spans), never their JSON as text.

Seen in a real capture: tests/captures/anthropic-sdk_openinference_image.
"""

from __future__ import annotations

from typing import Any

from evalkit.trajectory.mappers.messages import parse_part
from evalkit.trajectory.mappers.openinference_media import REDACTED
from evalkit.trajectory.mappers.reader import parse_json
from evalkit.trajectory.operations import LlmCall, Part

SCOPE = "openinference.instrumentation.anthropic"
_SOURCE_BLOCKS = ("image", "document")  # the blocks whose payload is a `source`
REDACTED_SOURCE = "not recorded (OpenInference's anthropic instrumentation redacts a base64 source in its messages)"


def read_request(call: LlmCall) -> None:
    """What the call's recorded request parameters say that ATIF has a field of its own for: the effort."""
    effort = reasoning_effort(call.extra.get("request"))
    if effort is not None and call.reasoning_effort is None:
        call.reasoning_effort = effort


def reasoning_effort(parameters: object) -> str | None:
    """The effort a Messages request's parameters set (`output_config.effort`), None where they set none."""
    config = parameters.get("output_config") if isinstance(parameters, dict) else None
    effort = config.get("effort") if isinstance(config, dict) else None
    return effort if isinstance(effort, str) and effort else None


def tool_result_parts(content: object) -> list[Part] | None:
    """A `tool_result`'s content blocks holding an image or a document (a screenshot tool's `image` block) as its
    parts: each text block a text part, the image a media part at its data URL; one whose source was redacted a media
    part saying so (no image at `__REDACTED__`). None for any other content (a string, text blocks alone)."""
    if not isinstance(content, list) or not any(_source(block) is not None for block in content):
        return None
    parts = []
    for block in content:
        source = _source(block)
        if source is not None and source.get("data") == REDACTED:
            media_type = source.get("media_type")
            parts.append(Part("media", media_type=media_type if isinstance(media_type, str) else block["type"],
                              text=REDACTED_SOURCE))
        elif (part := parse_part(block)) is not None:
            parts.append(part)
    return parts


def _source(block: object) -> dict[str, Any] | None:
    if not isinstance(block, dict) or block.get("type") not in _SOURCE_BLOCKS:
        return None
    source = block.get("source")
    return source if isinstance(source, dict) else None


def read_tool_results(call: LlmCall, input_value: object) -> None:
    """The call's `tool_result`s as the request sent them (`input.value`): the parts of one holding media, whose
    flattened message is its blocks' JSON, redacted; `is_error`, which the flattened message drops."""
    results = [part for message in call.input_messages for part in message.parts if part.kind == "tool_result"]
    if not results:
        return
    sent = _sent_tool_results(input_value)
    for part in results:
        block = sent.get(part.call_id or "")
        if block is not None and block.get("is_error") is True:
            part.error = True
        recorded = parse_json(part.text) if (part.text or "").startswith("[") else None
        parts = tool_result_parts(block.get("content") if block is not None else recorded)
        if parts is None:
            parts = tool_result_parts(recorded)  # no request recorded (hidden inputs): the redacted blocks
        if parts is not None:
            part.result_parts = parts
            part.text = "\n".join(shown.text for shown in parts if shown.kind == "text" and shown.text)


def _sent_tool_results(input_value: object) -> dict[str, dict[str, Any]]:
    """Each `tool_result` block of the request's messages, by its `tool_use_id`."""
    request = parse_json(input_value) if isinstance(input_value, str) and "tool_result" in input_value else None
    messages = request.get("messages") if isinstance(request, dict) else None
    found: dict[str, dict[str, Any]] = {}
    for message in messages if isinstance(messages, list) else ():
        content = message.get("content") if isinstance(message, dict) else None
        for block in content if isinstance(content, list) else ():
            if isinstance(block, dict) and block.get("type") == "tool_result" and isinstance(
                    block.get("tool_use_id"), str):
                found[block["tool_use_id"]] = block
    return found
