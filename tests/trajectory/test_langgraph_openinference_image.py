"""Images in a LangChain 1.x `create_agent` conversation on ChatOpenAI (the Responses API), as OpenInference's
LangChain tracer records them (the `langgraph_openinference_image` capture).

Turn 1's question is LangChain v1 standard content blocks: text, a small and a large base64 PNG, an `https://` image.
`city_map` returns a text block and a base64 PNG block, which langchain-openai sends the model as a
`function_call_output` of `input_text` and `input_image`. The tracer records the ToolMessage whole as the tool span's
`output.value`; before `langchain_media` read a ToolMessage holding an image as parts (`ToolExecution.result_parts`),
the call's result was that content's JSON: the image's base64 as the result's text, where the model was shown an image.
"""

from __future__ import annotations

import base64
import json
import re
from typing import Any

import atif
from span_fixtures import capture_document, capture_spans

from evalkit.trajectory import media
from evalkit.trajectory.mappers import langchain_media, openinference
from evalkit.trajectory.mappers.reader import SpanReader
from evalkit.trajectory.operations import Part, ToolExecution
from evalkit.trajectory.span import Span
from evalkit.trajectory.validate import errors_only, validate_trajectory
from tests.captures import corpus, questions

CAPTURE = "langgraph_openinference_image"
SESSION = "lg-oi-image-1"
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


def _tool_span(name: str, nth: int) -> Span:
    spans = sorted((s for s in capture_spans(CAPTURE) if s.name == name
                    and s.attributes.get("openinference.span.kind") == "TOOL"), key=lambda s: s.start_time_unix_nano)
    return spans[nth]


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
    span = _tool_span("city_map", 0)
    # As recorded: the ToolMessage whole, its image a LangChain standard block of base64.
    recorded = json.loads(span.attributes["output.value"])["data"]
    assert [block["type"] for block in recorded["content"]] == ["text", "image"]
    execution = openinference.map_span(SpanReader(span), ())
    assert isinstance(execution, ToolExecution)
    oslo_map = sent[recorded["tool_call_id"]]
    assert len(oslo_map) > media.INLINE_LIMIT
    assert execution.result_parts == [Part("text", text="Map of Oslo centre"),
                                      Part("media", media_type="image/png", uri=oslo_map)]
    # The reference names the image the model was sent, read back from the tool span.
    image = media.referenced_image(execution, "result", 0)
    assert (image.media_type, image.data) == ("image/png", base64.b64decode(oslo_map.split(",", 1)[1]))

    document = capture_document(CAPTURE, SESSION)
    oslo, bergen = _results(document, "city_map")
    path = f"evalkit-span://{span.trace_id}/{span.span_id}/result/0"
    assert oslo["content"] == [{"type": "text", "text": "Map of Oslo centre"},
                               {"type": "image", "source": {"media_type": "image/png", "path": path}}]
    assert oslo["extra"]["media"] == [{"path": path, "media_type": "image/png", "bytes": len(image.data)}]
    # Bergen's map is small: inlined as the data URL the model was sent.
    bergen_map = sent[bergen["source_call_id"]]
    assert len(bergen_map) <= media.INLINE_LIMIT
    assert bergen["content"] == [{"type": "text", "text": "Map of Bergen centre"},
                                 {"type": "image", "source": {"media_type": "image/png", "path": bergen_map}}]
    assert "media" not in bergen["extra"]


def test_no_base64_as_text_anywhere() -> None:
    document = capture_document(CAPTURE, SESSION)
    # The tracer's input.value, message attributes and tool outputs all hold the images' base64: none of it is text
    # of the document (an image part's path holds a small one, as a URL).
    assert _BASE64_RUN.findall(_text_but_images(document)) == []
    assert not errors_only(validate_trajectory(document, schema=True))
    atif.Trajectory.model_validate(document)


def test_the_question_once_with_its_images_a_large_one_referenced() -> None:
    request = _log()[0]["request"]["input"]
    text, small, large, photo = next(item for item in request if item.get("role") == "user")["content"]
    document = capture_document(CAPTURE, SESSION)
    first, second = [step for step in document["steps"] if step["source"] == "user"]  # history never a new step
    assert second["message"] == _log()[3]["request"]["input"][-1]["content"]
    written, shown_small, shown_large, shown_photo = first["message"]
    assert written == {"type": "text", "text": text["text"]}
    assert shown_small["source"] == {"media_type": "image/png", "path": small["image_url"]}
    assert shown_photo["source"] == {"media_type": "image/jpeg", "path": photo["image_url"]}
    path = shown_large["source"]["path"]
    assert path.startswith("evalkit-span://") and len(large["image_url"]) > media.INLINE_LIMIT
    data = base64.b64decode(large["image_url"].split(",", 1)[1])
    assert first["extra"]["media"] == [{"path": path, "media_type": "image/png", "bytes": len(data)}]
    # The reference names the large PNG in the first call's input, read back from its span.
    reference = media.parse_reference(path)
    (call_span,) = [s for s in capture_spans(CAPTURE) if s.span_id == reference.span_id]
    image = media.referenced_image(openinference.map_span(SpanReader(call_span), ()), reference.where, reference.n)
    assert (image.media_type, image.data) == ("image/png", data)


def test_the_tool_loop_is_the_conversation_that_happened() -> None:
    document = capture_document(CAPTURE, SESSION)
    truth = corpus.GroundTruth.of(_log())
    assert corpus.compare(document, truth, call_ids=True) == []
    assert questions.missing_questions(document, _log()) == []
    (weather, retried) = _results(document, "get_weather")
    assert weather["extra"]["is_error"] and weather["content"] == truth.tool_results[weather["source_call_id"]]
    assert not retried["extra"].get("is_error")


def test_a_tool_message_of_text_alone_stays_text() -> None:
    message = {"type": "tool", "data": {"content": [{"type": "text", "text": "Map of Oslo centre"}],
                                        "tool_call_id": "call_1", "status": "success"}}
    assert langchain_media.tool_result_parts(message) is None
    assert langchain_media.tool_result_parts("Map of Oslo centre") is None
