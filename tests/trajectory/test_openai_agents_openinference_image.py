"""Images in and out of an openai-agents (Responses API) tool loop, as OpenInference's openai-agents instrumentation
records them (the `openai-agents_openinference_image` capture).

Turn 1 asks about a small PNG data URL (kept by OpenInference, over evalkit's inline limit) and an `https://` URL;
`get_map` returns a `ToolOutputImage`, which the tool span records as the model's pydantic `str()`; turn 2 asks about a
PNG data URL over OpenInference's `OPENINFERENCE_BASE64_IMAGE_MAX_LENGTH`, `__REDACTED__` in the message attributes
and whole in `input.value` (`trajectory/mappers/openai_agents_images.py`).
"""

from __future__ import annotations

import base64
import json
from typing import Any

import atif
from span_fixtures import capture_document, capture_spans

from evalkit.trajectory import media
from evalkit.trajectory.build import map_one_span
from evalkit.trajectory.mappers import openai_agents_images, openinference
from evalkit.trajectory.mappers.reader import SpanReader
from evalkit.trajectory.operations import LlmCall, ToolExecution
from evalkit.trajectory.span import Span
from evalkit.trajectory.validate import errors_only, validate_trajectory
from tests.captures import corpus, questions

CAPTURE = "openai-agents_openinference_image"
SESSION = "oa-oi-image-trip-1"


def _log() -> list[dict[str, Any]]:
    return corpus.load(CAPTURE).llm_log


def _asked(seq: int) -> list[dict[str, Any]]:
    """The content parts of the last user message the fake LLM was sent on call `seq`: the question as asked."""
    return next(item for item in reversed(_log()[seq]["request"]["input"]) if item.get("role") == "user")["content"]


def _map_output(seq: int, call_id: str) -> list[dict[str, Any]]:
    """The `function_call_output` the model was sent on call `seq` for `call_id`: the tool's output parts."""
    return next(item["output"] for item in _log()[seq]["request"]["input"]
                if item.get("type") == "function_call_output" and item["call_id"] == call_id)


def _spans(name: str) -> list[Span]:
    """The capture's spans of that name, in the order they started."""
    return sorted((s for s in capture_spans(CAPTURE) if s.name == name), key=lambda span: span.start_time_unix_nano)


def _decoded(data_url: str) -> bytes:
    return base64.b64decode(data_url.split(",", 1)[1])


def _read_back(path: str) -> media.Image:
    """The image a trajectory's reference names, read from its span as the service reads it (`routes._media`)."""
    reference = media.parse_reference(path)
    span = next(s for s in capture_spans(CAPTURE) if s.span_id == reference.span_id)
    return media.referenced_image(map_one_span(span), reference.where, reference.n)


def test_a_tool_returning_an_image_has_the_image_as_its_result_never_its_base64() -> None:
    (map_call,) = [call for call in _log()[1]["response"]["tool_calls"] if call["name"] == "get_map"]
    (sent,) = _map_output(2, map_call["id"])  # the model was sent the image alone, as an input_image
    assert sent["type"] == "input_image" and len(sent["image_url"]) > media.INLINE_LIMIT
    (span,) = _spans("get_map")
    # As recorded: `str()` of the ToolOutputImage the tool returned, its base64 within.
    assert span.attributes["output.value"] == f"type='image' image_url='{sent['image_url']}' file_id=None detail='low'"
    execution = openinference.map_span(SpanReader(span), ())
    assert isinstance(execution, ToolExecution) and execution.result_parts is not None
    assert [(p.kind, p.media_type, p.uri) for p in execution.result_parts] == [("media", "image", sent["image_url"])]

    document = capture_document(CAPTURE, SESSION)
    (result,) = [r for s in document["steps"] for r in (s.get("observation") or {}).get("results", ())
                 if r["source_call_id"] == map_call["id"]]
    path = f"evalkit-span://{span.trace_id}/{span.span_id}/result/0"
    assert result["content"] == [{"type": "image", "source": {"media_type": "image/png", "path": path}}]
    assert result["extra"]["media"] == [{"path": path, "media_type": "image/png",
                                         "bytes": len(_decoded(sent["image_url"]))}]
    assert _read_back(path) == media.Image("image/png", _decoded(sent["image_url"]))
    assert "base64," not in json.dumps(document)


def test_the_other_shapes_of_an_image_output_read_alike() -> None:
    """A tool returning a list (`[ToolOutputText, ToolOutputImage]`: a JSON list of their `str()`s) or the TypedDict
    (JSON), as `_convert_to_primitive` records them; an output holding no image stays as recorded."""
    (span,) = _spans("get_map")
    recorded = span.attributes["output.value"]
    url = recorded.split("'")[3]
    text = "type='text' text='Oslo centre'"  # str(ToolOutputText(text="Oslo centre"))
    listed = openai_agents_images.tool_result_parts([text, recorded])  # the JSON list, decoded
    assert [(p.kind, p.text, p.uri) for p in listed or ()] == [("text", "Oslo centre", None), ("media", None, url)]
    typed = openai_agents_images.tool_result_parts({"type": "image", "image_url": url, "detail": "low"})
    assert [(p.kind, p.uri) for p in typed or ()] == [("media", url)]
    assert openai_agents_images.tool_result_parts("rainy, 9°C") is None
    assert openai_agents_images.tool_result_parts([text]) is None


def test_an_image_openinference_redacts_is_read_from_input_value() -> None:
    text, image = _asked(3)
    assert len(image["image_url"]) > 32_000  # over OpenInference's default limit
    span = _spans("response")[3]
    # As recorded: the message attribute OpenInference's placeholder, the SDK's input items whole in `input.value`.
    assert span.attributes["llm.input_messages.11.message.contents.1.message_content.image.image.url"] == "__REDACTED__"
    assert image["image_url"] in span.attributes["input.value"]
    call = openinference.map_span(SpanReader(span), ())
    assert isinstance(call, LlmCall)
    (shown,) = [part for part in call.input_messages[-1].parts if part.kind == "media"]
    assert (shown.uri, shown.text) == (image["image_url"], None)

    document = capture_document(CAPTURE, SESSION)
    second = [step for step in document["steps"] if step["source"] == "user"][1]
    # Turn 1's two images come first in the span's input: this is its third.
    path = f"evalkit-span://{span.trace_id}/{span.span_id}/input/2"
    assert second["message"] == [{"type": "text", "text": text["text"]},
                                 {"type": "image", "source": {"media_type": "image/png", "path": path}}]
    assert second["extra"]["media"] == [{"path": path, "media_type": "image/png",
                                         "bytes": len(_decoded(image["image_url"]))}]
    assert _read_back(path) == media.Image("image/png", _decoded(image["image_url"]))


def test_each_question_once_with_its_images_and_the_loop_as_it_happened() -> None:
    text, png, photo = _asked(0)
    assert photo["detail"] == "low"
    document = capture_document(CAPTURE, SESSION)
    first, _ = [step for step in document["steps"] if step["source"] == "user"]  # history re-sent: no step again
    span = _spans("response")[0]
    path = f"evalkit-span://{span.trace_id}/{span.span_id}/input/0"
    assert first["message"] == [
        {"type": "text", "text": text["text"]},
        {"type": "image", "source": {"media_type": "image/png", "path": path}},  # over the inline limit: referenced
        {"type": "image", "source": {"media_type": "image/jpeg", "path": photo["image_url"]}},
    ]
    assert _read_back(path) == media.Image("image/png", _decoded(png["image_url"]))
    assert questions.missing_questions(document, _log()) == []
    truth = corpus.GroundTruth.of(_log())
    assert corpus.compare(document, truth, call_ids=True) == []
    # The parallel Oslo call that raised is flagged with the text the model was shown, then asked again.
    oslo = document["steps"][2]["observation"]["results"][1]
    assert oslo["extra"]["is_error"] and oslo["content"] == "An error occurred while running the tool."
    assert document["steps"][3]["tool_calls"][0]["arguments"] == {"city": "Oslo"}
    assert not errors_only(validate_trajectory(document, schema=True))
    atif.Trajectory.model_validate(document)
