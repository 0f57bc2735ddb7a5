"""A LlamaIndex tool's image in the call it was sent to, as OpenInference's llama-index instrumentation records it.

A LlamaIndex tool may return content blocks (`FunctionTool._parse_tool_output`: a `TextBlock`, an `ImageBlock`, or a
list of them): they are its `ToolOutput.blocks`, and a FunctionAgent or AgentWorkflow sends them back as the blocks of
a `tool` ChatMessage (`FunctionAgent.handle_tool_call_results`). The instrumentation records the LLM's messages as
LlamaIndex gave them, before the LLM class converts them for its API (`_process_messages`): such a message's blocks as
`message.contents.<j>.message_content.*`, an image block's URL (a base64 one as a data URL) as its `image.image.url`.
Whether the model saw the image depends on that class, which the call span is named for (`{class}.{method}`):

- `OpenAIResponses` (llama-index-llms-openai) sends a tool message holding an image as a `function_call_output` whose
  `output` is `[input_text, input_image]` (`to_openai_responses_message_dict`): the model was shown the image;
- `OpenAI` (Chat Completions) sends a tool message's text alone (`to_openai_message_dict`: "if the role is … TOOL,
  'content' cannot be a list"): the image was never sent, and the result stays the text.

So on a call of a class that sends it, a tool result holding an image is given its parts (`Part.result_parts`: the
text, then the images, in the blocks' order): its call's result is then content parts, a large image referenced in
that call span's input (the builder's `_fill_empty_result`, `trajectory/media.py`), never base64 as text. The tool
span's own record (`output.value`, the ToolOutput's JSON, each image block's base64 bare) is read as its text alone
(`tool_results.unwrap`), as the model was shown on any class. Other LlamaIndex LLM classes are left as read (their
tool results text): no capture shows what they send.

Seen in a real capture: tests/captures/llamaindex_openinference_image (`city_map` returning a TextBlock and a PNG
ImageBlock, on `OpenAIResponses`).
"""

from __future__ import annotations

from typing import Any

from evalkit.trajectory.mappers import openinference_media
from evalkit.trajectory.mappers.messages import render
from evalkit.trajectory.mappers.reader import dig, indexed, unflatten
from evalkit.trajectory.operations import LlmCall, Part
from evalkit.trajectory.span import Span

# The LLM classes that send a tool message's images to the model, as the call span names them (`{class}.{method}`).
_SENDS_TOOL_IMAGES = ("OpenAIResponses",)
_INPUT = "llm.input_messages."


def sends_tool_images(span: Span) -> bool:
    """A call of an LLM class that sends the model the images of a tool's result."""
    return span.name.split(".", 1)[0] in _SENDS_TOOL_IMAGES


def _tool_message_parts(message: Any) -> list[Part] | None:
    """A recorded tool message's blocks as parts, text and media in order; None where it holds no media."""
    parts: list[Part] = []
    for content in indexed(dig(message, "contents")):
        kind = str(dig(content, "message_content", "type") or "text").lower()
        if kind == "image":
            parts.append(openinference_media.media_part(kind, dig(content, "message_content", "image", "image", "url")))
        elif (text := dig(content, "message_content", "text")) is not None:
            parts.append(Part("text", text=render(text)))
    return parts if any(part.kind == "media" for part in parts) else None


def read_tool_images(call: LlmCall, span: Span) -> None:
    """On a call of a class that sends them (`OpenAIResponses`), each tool result of its input holding an image given
    the parts the model was shown (`Part.result_parts`), found by the tool call id its message records."""
    if not sends_tool_images(span):
        return
    tree = unflatten({key[len(_INPUT):]: value for key, value in span.attributes.items() if key.startswith(_INPUT)})
    shown: dict[str, list[Part]] = {}
    for node in indexed(tree):
        message = dig(node, "message")
        call_id = dig(message, "tool_call_id")
        if str(dig(message, "role") or "").lower() == "tool" and isinstance(call_id, str):
            parts = _tool_message_parts(message)
            if parts is not None:
                shown[call_id] = parts
    if not shown:
        return
    for message in call.input_messages:
        for part in message.parts:
            if part.kind == "tool_result" and part.call_id in shown:
                part.result_parts = shown[part.call_id]
