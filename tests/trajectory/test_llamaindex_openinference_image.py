"""Images in a LlamaIndex FunctionAgent conversation on `OpenAIResponses`, as OpenInference's llama-index
instrumentation records them (the `llamaindex_openinference_image` capture).

Turn 1's question is a ChatMessage of a TextBlock, a PNG ImageBlock given as bytes (over the 4,096-character inline
limit as a data URL) and an https ImageBlock; `city_map` returns a TextBlock and a PNG ImageBlock, which
`OpenAIResponses` sends the model as a `function_call_output` of `input_text` and `input_image`. The instrumentation
records the tool message's blocks in the next call's input (`message.contents.*`); the tool span records the ToolOutput,
read as its text. Before `llamaindex_media` gave such a result its parts (`Part.result_parts`), the call's result was
"Map of Oslo centre" alone, where the model was shown the map.
"""

from __future__ import annotations

import base64
import json
import re
from dataclasses import replace
from typing import Any

import atif
from span_fixtures import capture_document, capture_spans

from evalkit.trajectory import media
from evalkit.trajectory.build import map_one_span
from evalkit.trajectory.mappers import llamaindex_media, openinference
from evalkit.trajectory.mappers.reader import SpanReader
from evalkit.trajectory.operations import LlmCall, Part
from evalkit.trajectory.span import Span
from evalkit.trajectory.validate import errors_only, validate_trajectory
from tests.captures import corpus, questions

CAPTURE = "llamaindex_openinference_image"
SESSION = "li-oi-image-1"
Json = dict[str, Any]
_BASE64_RUN = re.compile(r"[A-Za-z0-9+/]{200,}")


def _log() -> list[Json]:
    return corpus.load(CAPTURE).llm_log


def _sent_tool_images() -> dict[str, str]:
    """Each call id's image as the model was sent it (a `function_call_output`'s `input_image`), from the log."""
    found: dict[str, str] = {}
    for entry in _log():
        for item in entry["request"]["input"]:
            if item.get("type") == "function_call_output" and isinstance(item["output"], list):
                (image,) = [part for part in item["output"] if part["type"] == "input_image"]
                found[item["call_id"]] = image["image_url"]
    return found


def _call_spans() -> list[Span]:
    """The model calls' spans (`OpenAIResponses.achat`, `.astream_chat`: not `_prepare_chat_with_tools`), in order."""
    return sorted((s for s in capture_spans(CAPTURE) if s.name in ("OpenAIResponses.achat",
                                                                     "OpenAIResponses.astream_chat")),
                  key=lambda span: span.start_time_unix_nano)


def _read_back(path: str) -> media.Image:
    """The image a trajectory's reference names, read from its span as the service reads it (`routes._media`)."""
    reference = media.parse_reference(path)
    span = next(s for s in capture_spans(CAPTURE) if s.span_id == reference.span_id)
    return media.referenced_image(map_one_span(span), reference.where, reference.n)


def _results(document: Json, tool: str) -> list[Json]:
    """The observation results of every call of `tool`, in the trajectory's order."""
    found = []
    for step in document["steps"]:
        names = {call["tool_call_id"]: call["function_name"] for call in step.get("tool_calls") or ()}
        found.extend(r for r in (step.get("observation") or {}).get("results") or ()
                     if names.get(r["source_call_id"]) == tool)
    return found


def _text_but_images(document: Json) -> str:
    """The document as JSON, every image part's path left out: where no base64 may be."""
    def strip(value: Any) -> Any:
        if isinstance(value, dict):
            if value.get("type") == "image" and isinstance(value.get("source"), dict):
                return {**value, "source": {**value["source"], "path": "<image>"}}
            return {key: strip(item) for key, item in value.items()}
        if isinstance(value, list):
            return [strip(item) for item in value]
        return value
    return json.dumps(strip(document))


def test_a_tool_image_is_its_result_content_parts_a_large_one_referenced() -> None:
    sent = _sent_tool_images()
    document = capture_document(CAPTURE, SESSION)
    oslo, bergen = _results(document, "city_map")
    oslo_map, bergen_map = sent[oslo["source_call_id"]], sent[bergen["source_call_id"]]
    assert len(oslo_map) > media.INLINE_LIMIT >= len(bergen_map)
    # Oslo's map is referenced in the input of the first call it was sent to (turn 1's second), after the question's
    # two images: read back, it is the PNG the model was sent.
    second = _call_spans()[1]
    path = f"evalkit-span://{second.trace_id}/{second.span_id}/input/2"
    assert oslo["content"] == [{"type": "text", "text": "Map of Oslo centre"},
                               {"type": "image", "source": {"media_type": "image/png", "path": path}}]
    image = _read_back(path)
    assert (image.media_type, image.data) == ("image/png", base64.b64decode(oslo_map.split(",", 1)[1]))
    assert oslo["extra"]["media"] == [{"path": path, "media_type": "image/png", "bytes": len(image.data)}]
    assert oslo["extra"]["content_from"] == "input history"
    # Bergen's map is small: inlined as the data URL the model was sent.
    assert bergen["content"] == [{"type": "text", "text": "Map of Bergen centre"},
                                 {"type": "image", "source": {"media_type": "image/png", "path": bergen_map}}]
    assert "media" not in bergen["extra"]


def test_a_tool_image_on_chat_completions_stays_text() -> None:
    # LlamaIndex's Chat Completions class (`OpenAI`) sends a tool message's text alone: the model never saw the image,
    # though the instrumentation records the message's blocks alike. The same span, named for that class.
    span = _call_spans()[1]
    for name, shown in (("OpenAIResponses.achat", True), ("OpenAI.achat", False)):
        call = openinference.map_span(SpanReader(replace(span, name=name)), ())
        assert isinstance(call, LlmCall)
        (oslo_map,) = [part for message in call.input_messages for part in message.parts
                       if part.kind == "tool_result" and part.text == "Map of Oslo centre"]
        if shown:
            assert oslo_map.result_parts is not None
            assert [part.kind for part in oslo_map.result_parts] == ["text", "media"]
        else:
            assert oslo_map.result_parts is None
    assert llamaindex_media.sends_tool_images(span)


def test_a_tool_message_of_text_alone_keeps_no_parts() -> None:
    # The raising get_weather's result and its retry's are text: no parts, their result the text the model was shown.
    call = openinference.map_span(SpanReader(_call_spans()[2]), ())
    assert isinstance(call, LlmCall)
    results = [part for message in call.input_messages for part in message.parts if part.kind == "tool_result"]
    assert [(part.text, part.result_parts is None) for part in results] == [
        ("the weather service did not answer in time", True), ("Map of Oslo centre", False), ("rainy, 9°C", True)]
    assert results[1].result_parts is not None
    assert results[1].result_parts[0] == Part("text", text="Map of Oslo centre")


def test_the_question_once_with_its_images_a_large_one_referenced() -> None:
    request = _log()[0]["request"]["input"]
    text, fjord, photo = next(item for item in request if item.get("role") == "user")["content"]
    document = capture_document(CAPTURE, SESSION)
    first, second = [step for step in document["steps"] if step["source"] == "user"]  # history never a new step
    assert second["message"] == _log()[3]["request"]["input"][-1]["content"]
    written, shown_fjord, shown_photo = first["message"]
    assert written == {"type": "text", "text": text["text"]}
    assert shown_photo["source"] == {"media_type": "image/jpeg", "path": photo["image_url"]}
    path = shown_fjord["source"]["path"]
    first_call = _call_spans()[0]
    assert path == f"evalkit-span://{first_call.trace_id}/{first_call.span_id}/input/0"
    assert len(fjord["image_url"]) > media.INLINE_LIMIT
    data = base64.b64decode(fjord["image_url"].split(",", 1)[1])
    assert first["extra"]["media"] == [{"path": path, "media_type": "image/png", "bytes": len(data)}]
    assert (_read_back(path).media_type, _read_back(path).data) == ("image/png", data)


def test_no_base64_as_text_anywhere() -> None:
    document = capture_document(CAPTURE, SESSION)
    # The message attributes and the tool spans' ToolOutputs hold the images' base64: none of it is text of the
    # document (an image part's path holds a small one, as a URL).
    assert _BASE64_RUN.findall(_text_but_images(document)) == []
    assert not errors_only(validate_trajectory(document, schema=True))
    atif.Trajectory.model_validate(document)


def test_the_conversation_that_happened_but_the_streamed_calls_tokens() -> None:
    """Everything but turn 2's tokens, which OpenInference does not record for a streamed OpenAIResponses call (the
    capture's KNOWN_GAPS entry): every step, tool call, result and question as the log has them."""
    document = capture_document(CAPTURE, SESSION)
    streamed = {entry["seq"] for entry in _log() if entry["stream"]}
    assert streamed == {3, 4}
    for span in _call_spans():
        recorded = any(key.startswith("llm.token_count.") for key in span.attributes)
        assert recorded == span.name.endswith(".achat")  # the two `astream_chat` spans: no count at all
    truth = corpus.GroundTruth.of(_log())
    unrecorded = corpus.GroundTruth([replace(call, input_tokens=0, output_tokens=0) if call.seq in streamed else call
                                     for call in truth.calls], truth.tool_results)
    assert corpus.compare(document, unrecorded, call_ids=True) == []
    assert questions.missing_questions(document, _log()) == []
    weather, retried = _results(document, "get_weather")
    assert weather["extra"]["is_error"] and weather["content"] == truth.tool_results[weather["source_call_id"]]
    assert not retried["extra"].get("is_error")
    assert document["agent"]["name"] == "photo_agent"
