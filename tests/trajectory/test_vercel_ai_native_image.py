"""Images in and out of a Vercel AI SDK tool loop, as @ai-sdk/otel's LegacyOpenTelemetry records them (the
`vercel-ai_native_image` capture: AI SDK 7 on @ai-sdk/openai's Responses API).

Turn 1 asks about a PNG sent whole (a `file` part of bytes, its base64 over evalkit's inline limit) and an `https://`
URL (an `image` part); `get_map` returns a PNG that its `toModelOutput` makes content (text and a `file` part), which
the model is sent as `input_text` and `input_image` items. Each call's `ai.prompt.messages` records them as the AI
SDK's prompt parts (`trajectory/mappers/vercel_ai_media.py`); the `ai.toolCall` span records what `execute` returned,
so the map's image is read from the next call's input (`build._Context._fill_empty_result`). Turn 2 (streamed) re-sends
turn 1 with its images and asks for Berlin, whose map is small enough to be inlined.
"""

from __future__ import annotations

import base64
import json
from dataclasses import replace
from typing import Any

from span_fixtures import capture_document, capture_spans

from evalkit.trajectory import media
from evalkit.trajectory.build import map_one_span
from evalkit.trajectory.mappers import vercel_ai
from evalkit.trajectory.mappers.messages import parse_messages
from evalkit.trajectory.mappers.reader import SpanReader
from evalkit.trajectory.operations import LlmCall
from evalkit.trajectory.span import Span
from tests.captures import corpus

CAPTURE = "vercel-ai_native_image"
SESSION = "vercel-image-1"


def _log() -> list[dict[str, Any]]:
    return corpus.load(CAPTURE).llm_log


def _asked(seq: int) -> list[dict[str, Any]]:
    """The content parts of the first user message the fake LLM was sent on call `seq`: turn 1's question."""
    return next(item for item in _log()[seq]["request"]["input"] if item.get("role") == "user")["content"]


def _map_output(seq: int, call_id: str) -> list[dict[str, Any]]:
    """The `function_call_output` the model was sent on call `seq` for `call_id`: the tool's output items."""
    return next(item["output"] for item in _log()[seq]["request"]["input"]
                if item.get("type") == "function_call_output" and item["call_id"] == call_id)


def _map_call(seq: int) -> dict[str, Any]:
    (call,) = [c for c in _log()[seq]["response"]["tool_calls"] if c["name"] == "get_map"]
    return call


def _call_spans() -> list[Span]:
    """The capture's LLM call spans, in the order they started."""
    return sorted((s for s in capture_spans(CAPTURE) if s.name.endswith((".doGenerate", ".doStream"))),
                  key=lambda span: span.start_time_unix_nano)


def _decoded(data_url: str) -> bytes:
    return base64.b64decode(data_url.split(",", 1)[1])


def _read_back(path: str) -> media.Image:
    """The image a trajectory's reference names, read from its span as the service reads it (`routes._media`)."""
    reference = media.parse_reference(path)
    span = next(s for s in capture_spans(CAPTURE) if s.span_id == reference.span_id)
    return media.referenced_image(map_one_span(span), reference.where, reference.n)


def _result(document: dict[str, Any], call_id: str) -> dict[str, Any]:
    (result,) = [r for s in document["steps"] for r in (s.get("observation") or {}).get("results", ())
                 if r["source_call_id"] == call_id]
    return result


def test_the_questions_images_are_image_parts_the_large_one_referenced_and_read_back() -> None:
    text, photo, url = _asked(0)
    assert photo["type"] == "input_image" and len(photo["image_url"]) > media.INLINE_LIMIT
    assert url == {"type": "input_image", "image_url": "https://images.example.com/photos/atlantis-resort.jpg"}
    first = _call_spans()[0]
    # As recorded: the AI SDK's `file` parts, the bytes' base64 alone (no data URL), the URL with the top-level type.
    recorded = json.loads(first.attributes["ai.prompt.messages"])[1]["content"]
    assert recorded[1:] == [{"type": "file", "mediaType": "image/png", "data": photo["image_url"].split(",", 1)[1]},
                            {"type": "file", "mediaType": "image", "data": url["image_url"]}]

    document = capture_document(CAPTURE, SESSION)
    path = f"evalkit-span://{first.trace_id}/{first.span_id}/input/0"
    question = next(step for step in document["steps"] if step["source"] == "user")
    assert question["message"] == [
        {"type": "text", "text": text["text"]},
        {"type": "image", "source": {"media_type": "image/png", "path": path}},
        {"type": "image", "source": {"media_type": "image/jpeg", "path": url["image_url"]}},
    ]
    assert question["extra"]["media"] == [{"path": path, "media_type": "image/png",
                                           "bytes": len(_decoded(photo["image_url"]))}]
    assert _read_back(path) == media.Image("image/png", _decoded(photo["image_url"]))
    # Every later call re-sends the question with its images: a step once, as turn 2's question is.
    assert [step["source"] for step in document["steps"]] == [
        "system", "user", "agent", "agent", "agent", "user", "agent", "agent"]
    assert not any(step.get("is_copied_context") for step in document["steps"])


def test_a_tools_image_is_its_result_as_the_model_was_shown_it_never_its_base64() -> None:
    paris, berlin = _map_call(0), _map_call(3)
    (shown_text, shown_image) = _map_output(1, paris["id"])
    assert shown_text == {"type": "input_text", "text": "Map of Paris:"}
    assert len(shown_image["image_url"]) > media.INLINE_LIMIT
    # The tool span records what `execute` returned (the app's object, base64 within), not what the model was shown.
    (tool_span,) = [s for s in capture_spans(CAPTURE) if s.attributes.get("ai.toolCall.id") == paris["id"]]
    returned = json.loads(tool_span.attributes["ai.toolCall.result"])
    assert returned == {"city": "Paris", "mediaType": "image/png", "base64": shown_image["image_url"].split(",", 1)[1]}

    document = capture_document(CAPTURE, SESSION)
    # Read from the input of the first call that showed it (call 1): the question's two images come first there.
    shown_in = _call_spans()[1]
    path = f"evalkit-span://{shown_in.trace_id}/{shown_in.span_id}/input/2"
    result = _result(document, paris["id"])
    assert result["content"] == [{"type": "text", "text": "Map of Paris:"},
                                 {"type": "image", "source": {"media_type": "image/png", "path": path}}]
    assert result["extra"]["media"] == [{"path": path, "media_type": "image/png",
                                         "bytes": len(_decoded(shown_image["image_url"]))}]
    assert result["extra"]["content_from"] == "input history"
    assert _read_back(path) == media.Image("image/png", _decoded(shown_image["image_url"]))
    # Berlin's map is under the inline limit: its data URL, as the model was sent it, is the image's path.
    (berlin_text, berlin_image) = _map_output(4, berlin["id"])
    assert len(berlin_image["image_url"]) <= media.INLINE_LIMIT
    assert _result(document, berlin["id"])["content"] == [
        {"type": "text", "text": berlin_text["text"]},
        {"type": "image", "source": {"media_type": "image/png", "path": berlin_image["image_url"]}}]
    # No large image's base64 anywhere in the document.
    written = json.dumps(document)
    for large in (shown_image["image_url"], _asked(0)[1]["image_url"]):
        assert large.split(",", 1)[1][:200] not in written


def test_the_ai_sdk_5_and_6_shapes_of_a_tools_image_read_alike() -> None:
    """AI SDK 5-6 wrote a tool's content image as `media` (5), `image-data` or `file-data` (6), `{data, mediaType}`,
    or by URL (`image-url`, `file-url`); AI SDK 7 migrates them to its `file` part before the prompt is recorded."""
    span = _call_spans()[1]
    recorded = span.attributes["ai.prompt.messages"]
    (shown_image,) = [item for item in _map_output(1, _map_call(0)["id"]) if item["type"] == "input_image"]
    data = shown_image["image_url"].split(",", 1)[1]
    file_part = json.dumps({"type": "file", "mediaType": "image/png", "data": {"type": "data", "data": data}},
                           separators=(",", ":"))
    assert file_part in recorded

    def media_of(part: str) -> list[tuple[str | None, str | None]]:
        call = vercel_ai.map_span(SpanReader(replace(span, attributes={
            **span.attributes, "ai.prompt.messages": recorded.replace(file_part, part)})), ())
        assert isinstance(call, LlmCall)
        (result,) = [p for m in call.input_messages for p in m.parts if p.kind == "tool_result" and p.result_parts]
        return [(p.media_type, p.uri) for p in result.result_parts or () if p.kind == "media"]

    as_sent = [("image/png", shown_image["image_url"])]
    assert media_of(file_part) == as_sent
    for legacy in ("media", "image-data", "file-data"):
        assert media_of(json.dumps({"type": legacy, "data": data, "mediaType": "image/png"})) == as_sent
    url = "https://maps.example.com/paris.png"
    assert media_of(json.dumps({"type": "image-url", "url": url})) == [("image", url)]
    assert media_of(json.dumps({"type": "file-url", "url": url, "mediaType": "image/png"})) == [("image/png", url)]


def test_only_the_messages_holding_media_read_otherwise_than_every_emitters_do() -> None:
    # Turn 2's first call re-sends turn 1: of its messages, the question (its images) and the tool message holding the
    # map's result are read here; the others as the generic reader reads them (through the session's memo).
    span = _call_spans()[3]
    call = vercel_ai.map_span(SpanReader(span), ())
    assert isinstance(call, LlmCall)
    generic = parse_messages(span.attributes["ai.prompt.messages"])
    assert [m.role for m in call.input_messages] == [m.role for m in generic] == [
        "system", "user", "assistant", "tool", "assistant", "tool", "assistant", "user"]
    assert [i for i, (mine, theirs) in enumerate(zip(call.input_messages, generic, strict=True))
            if mine != theirs] == [1, 3]
