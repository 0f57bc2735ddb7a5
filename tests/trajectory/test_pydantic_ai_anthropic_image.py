"""pydantic-ai's own instrumentation (message format version 6) on an Anthropic model shown images, read from its
capture (`pydantic-ai_anthropic_image`): a user prompt of a text, a `BinaryContent` PNG and an `ImageUrl`; a
`take_screenshot` tool returning a `BinaryContent` PNG, which the Anthropic adapter sends inside its `tool_result` as
an image block; a parallel `page_status` raising `ModelRetry` once; a second run given the first's messages, streamed.

pydantic-ai records a file as a GenAI media part, in the prompt and in a tool's return alike (`blob` with the
base64 as its `content`, `uri`). Before `pydantic_ai.map_span` read a return holding one as parts
(`ToolExecution.result_parts`), each screenshot's result was the tool span's compact JSON of the part: its base64 as
the result's text, where the model was shown an image. A `blob` is read as the data URL of its base64, so it is shown
as any image sent whole is (trajectory/media.py): these small PNGs inline, a large one referenced at its span.
"""

from __future__ import annotations

import base64
import json
from dataclasses import replace
from typing import Any

import atif

from evalkit.trajectory import media
from evalkit.trajectory.from_spans import trajectory_from_spans
from evalkit.trajectory.mappers import pydantic_ai
from evalkit.trajectory.mappers.reader import SpanReader
from evalkit.trajectory.operations import ToolExecution
from evalkit.trajectory.span import Span
from tests.captures import corpus
from tests.trajectory.span_fixtures import capture_document, capture_spans, capture_truth, results_by_call

CAPTURE = "pydantic-ai_anthropic_image"
SESSION = "pai-anthropic-image-1"
Json = dict[str, Any]


def _log() -> list[Json]:
    return corpus.load(CAPTURE).llm_log


def _sent_images(log: list[Json]) -> dict[str, str]:
    """Every base64 image the model was sent, by where: the prompt's, and each screenshot by its tool call."""
    found: dict[str, str] = {}
    for entry in log:
        for message in entry["request"]["messages"]:
            for block in message["content"] if isinstance(message["content"], list) else ():
                if block["type"] == "image" and block["source"]["type"] == "base64":
                    found["prompt"] = block["source"]["data"]
                for inner in block.get("content") or () if block["type"] == "tool_result" else ():
                    if isinstance(inner, dict) and inner.get("type") == "image":
                        found[block["tool_use_id"]] = inner["source"]["data"]
    return found


def _png(data: str) -> str:
    return f"data:image/png;base64,{data}"


def _text_but_images(document: Json) -> str:
    """The document as JSON, every image part's path left out: where base64 must not be."""
    def strip(value: Any) -> Any:
        if isinstance(value, dict):
            if value.get("type") == "image":
                return {**value, "source": {**value["source"], "path": "<image>"}}
            return {key: strip(item) for key, item in value.items()}
        if isinstance(value, list):
            return [strip(item) for item in value]
        return value
    return json.dumps(strip(document))


def _tool_spans(name: str) -> list[Span]:
    spans = [span for span in capture_spans(CAPTURE) if span.attributes.get("gen_ai.tool.name") == name]
    return sorted(spans, key=lambda span: span.start_time_unix_nano)


def test_each_screenshot_is_its_calls_result_as_an_image_never_its_base64() -> None:
    document = capture_document(CAPTURE, SESSION)
    log = _log()
    sent = _sent_images(log)
    shots = {span.attributes["gen_ai.tool.call.id"]: span for span in _tool_spans("take_screenshot")}
    assert sorted(shots) == sorted(call_id for call_id in sent if call_id != "prompt") == ["toolu_0_0", "toolu_3_0"]
    steps = {call["tool_call_id"]: step for step in corpus.llm_steps(document) for call in step.get("tool_calls") or ()}
    for call_id, span in shots.items():
        result = results_by_call(steps[call_id])[call_id]
        # The image the model was sent in the tool_result, whole: a small data URL is a URL (media.INLINE_LIMIT).
        assert result["content"] == [{"type": "image", "source": {"media_type": "image/png",
                                                                  "path": _png(sent[call_id])}}]
        assert "media" not in result.get("extra", {})
        assert json.loads(span.attributes["gen_ai.tool.call.result"])["content"] == sent[call_id]
    # No image the model was sent is anywhere in the document as its base64 but as an image: not the user's, nor a
    # tool's as text.
    text = _text_but_images(document)
    assert sent and not any(data[:64] in text for data in sent.values())
    assert corpus.compare(document, capture_truth(CAPTURE), call_ids=True) == []
    atif.Trajectory.model_validate(document)


def test_the_tool_span_reads_the_screenshot_as_a_media_part() -> None:
    span = _tool_spans("take_screenshot")[0]
    execution = pydantic_ai.map_span(SpanReader(span), ())
    assert isinstance(execution, ToolExecution)
    assert execution.result_parts is not None
    sent = _sent_images(_log())[span.attributes["gen_ai.tool.call.id"]]
    assert [(part.kind, part.media_type, part.uri) for part in execution.result_parts] == [
        ("media", "image/png", _png(sent))]
    # A tool returning text is read as before: no parts.
    status = pydantic_ai.map_span(SpanReader(_tool_spans("page_status")[-1]), ())
    assert isinstance(status, ToolExecution) and status.result_parts is None


def test_the_users_images_are_its_question_and_no_screenshot_is_a_user_step() -> None:
    document = capture_document(CAPTURE, SESSION)
    users = [step for step in document["steps"] if step["source"] == "user"]
    mockup = _png(_sent_images(_log())["prompt"])
    assert [step["message"] for step in users] == [
        [{"type": "text", "text": "Here is my mockup of the dashboard and our logo. Does the live dashboard match?"},
         {"type": "image", "source": {"media_type": "image/png", "path": mockup}},
         {"type": "image", "source": {"media_type": "image/png", "path": "https://example.com/brand/logo.png"}}],
        "Now check the settings page the same way."]
    # Turn two re-sends turn one with its images: history, no question asked again, no copied step.
    assert not any(step.get("is_copied_context") for step in document["steps"])


def _with_caption(span: Span, call_id: str) -> Span:
    """`span` as if `take_screenshot` had returned `[caption, BinaryContent]`: a list whose items pydantic-ai records
    as they are, the file as its media part, on the tool span and in the next call's input alike."""
    def captioned(result: Any) -> Any:
        return [f"Screenshot of {call_id}", result]

    attributes = dict(span.attributes)
    if attributes.get("gen_ai.tool.call.id") == call_id:
        attributes["gen_ai.tool.call.result"] = json.dumps(captioned(json.loads(attributes["gen_ai.tool.call.result"])))
    messages = json.loads(attributes.get("gen_ai.input.messages") or "[]")
    for message in messages:
        for part in message["parts"]:
            if part.get("type") == "tool_call_response" and part.get("id") == call_id:
                part["result"] = captioned(part["result"])
    if messages:
        attributes["gen_ai.input.messages"] = json.dumps(messages)
    return replace(span, attributes=attributes)


def test_a_returned_list_holding_an_image_is_its_text_then_the_image() -> None:
    # The Anthropic adapter shows a list one block an item (`_anthropic_list_results` reads what the next call was
    # sent): the caption a text block, the file an image block, never the file's JSON.
    spans = [_with_caption(span, "toolu_0_0") for span in capture_spans(CAPTURE)]
    document = trajectory_from_spans(spans, session_id=SESSION).document()
    step = next(step for step in corpus.llm_steps(document)
                if any(call["tool_call_id"] == "toolu_0_0" for call in step.get("tool_calls") or ()))
    result = results_by_call(step)["toolu_0_0"]
    sent = _sent_images(_log())["toolu_0_0"]
    assert result["content"] == [
        {"type": "text", "text": "Screenshot of toolu_0_0"},
        {"type": "image", "source": {"media_type": "image/png", "path": _png(sent)}}]
    assert "content_from" not in result.get("extra", {})
    assert sent[:64] not in _text_but_images(document)


def test_a_screenshot_over_the_inline_limit_is_referenced_and_read_back_from_its_span(monkeypatch: Any) -> None:
    # These PNGs are small; a real screenshot is not. Over the limit, the result names the tool span's result, and
    # what the reference names read back from that span is the very image the model was sent.
    monkeypatch.setattr(media, "INLINE_LIMIT", 100)
    document = capture_document(CAPTURE, SESSION)
    sent = _sent_images(_log())
    steps = {call["tool_call_id"]: step for step in corpus.llm_steps(document) for call in step.get("tool_calls") or ()}
    for span in _tool_spans("take_screenshot"):
        call_id = span.attributes["gen_ai.tool.call.id"]
        result = results_by_call(steps[call_id])[call_id]
        path = f"evalkit-span://{span.trace_id}/{span.span_id}/result/0"
        assert result["content"] == [{"type": "image", "source": {"media_type": "image/png", "path": path}}]
        assert result["extra"]["media"] == [{"path": path, "media_type": "image/png",
                                             "bytes": len(base64.b64decode(sent[call_id]))}]
        image = media.referenced_image(pydantic_ai.map_span(SpanReader(span), ()), "result", 0)
        assert (image.media_type, image.data) == ("image/png", base64.b64decode(sent[call_id]))
    assert not any(data[:64] in json.dumps(document) for data in sent.values())
