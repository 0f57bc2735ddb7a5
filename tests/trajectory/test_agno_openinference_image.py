"""Images given to an Agno Agent on OpenAIChat and returned by its tool, as OpenInference's Agno instrumentation
records them (the `agno_openinference_image` capture).

The instrumentation writes each message's text alone (`get_content_string()`); the images are only in the call span's
`input.value`, Agno's own messages (`Message.to_dict()`: an image's bare base64 `content`, or its `url`). A tool's
`ToolResult` images are sent in a user message Agno adds after the batch's tool messages, which the tool span does not
record (`trajectory/mappers/agno_media.py`). Turn 1 asks about a PNG given as bytes and an https URL, `get_map` runs
beside `get_weather`; turn 2 (streamed) asks about a 37 KB PNG, `get_map` runs alone.
"""

from __future__ import annotations

import base64
import json
from dataclasses import replace
from typing import Any

import atif
from span_fixtures import capture_document, capture_spans

from evalkit.trajectory import media
from evalkit.trajectory.build import map_one_span
from evalkit.trajectory.mappers import agno_media, openinference
from evalkit.trajectory.mappers.reader import SpanReader
from evalkit.trajectory.operations import LlmCall
from evalkit.trajectory.span import Span
from evalkit.trajectory.validate import errors_only, validate_trajectory
from tests.captures import corpus, questions

CAPTURE = "agno_openinference_image"
SESSION = "agno-oi-image-trip-1"


def _log() -> list[dict[str, Any]]:
    return corpus.load(CAPTURE).llm_log


def _sent(seq: int, text: str) -> list[dict[str, Any]]:
    """The content parts of the last user message of call `seq`'s request whose text is `text`: as the model got it."""
    return next(message["content"] for message in reversed(_log()[seq]["request"]["messages"])
                if message["role"] == "user" and isinstance(message["content"], list)
                and message["content"][0].get("text") == text)


def _call_spans() -> list[Span]:
    """The model calls' spans (`OpenAIChat.invoke`, `.invoke_stream`), in the order they started."""
    return sorted((s for s in capture_spans(CAPTURE) if s.name.startswith("OpenAIChat.")),
                  key=lambda span: span.start_time_unix_nano)


def _decoded(data_url: str) -> bytes:
    return base64.b64decode(data_url.split(",", 1)[1])


def _read_back(path: str) -> media.Image:
    """The image a trajectory's reference names, read from its span as the service reads it (`routes._media`)."""
    reference = media.parse_reference(path)
    span = next(s for s in capture_spans(CAPTURE) if s.span_id == reference.span_id)
    return media.referenced_image(map_one_span(span), reference.where, reference.n)


def _result(document: dict[str, Any], call_id: str) -> dict[str, Any]:
    (found,) = [r for s in document["steps"] for r in (s.get("observation") or {}).get("results", ())
                if r.get("source_call_id") == call_id]
    return found


def _call_id(seq: int, tool: str) -> str:
    (found,) = [c["id"] for c in _log()[seq]["response"]["tool_calls"] if c["name"] == tool]
    return found


def test_the_users_images_are_parts_of_their_questions_read_from_input_value() -> None:
    first_text, png, photo = _sent(0, "Where were these two photos taken, and what's the weather there today?")
    second_text, large = _sent(3, "And this one? Is it warmer there than in Paris?")
    assert photo["image_url"]["url"].startswith("https://") and len(png["image_url"]["url"]) > media.INLINE_LIMIT
    first_span, fourth_span = _call_spans()[0], _call_spans()[3]
    # As recorded: no image in any message attribute, the question's text alone; Agno's messages in `input.value`.
    assert not [key for key in first_span.attributes if "image" in key]
    assert first_span.attributes["llm.input_messages.1.message.content"] == first_text["text"]
    assert png["image_url"]["url"].split(",", 1)[1] in first_span.attributes["input.value"]
    call = openinference.map_span(SpanReader(first_span), ())
    assert isinstance(call, LlmCall)
    assert [(p.kind, p.uri) for p in call.input_messages[1].parts] == [
        ("text", None), ("media", png["image_url"]["url"]), ("media", photo["image_url"]["url"])]

    document = capture_document(CAPTURE, SESSION)
    asked = [s for s in document["steps"] if s["source"] == "user" and s["message"][0]["text"] in (
        first_text["text"], second_text["text"])]
    assert len(asked) == 2  # history re-sent (images and all) is no step again
    first_path = f"evalkit-span://{first_span.trace_id}/{first_span.span_id}/input/0"
    assert asked[0]["message"] == [
        first_text,
        {"type": "image", "source": {"media_type": "image/png", "path": first_path}},  # over the inline limit
        {"type": "image", "source": {"media_type": "image/jpeg", "path": photo["image_url"]["url"]}},
    ]
    assert _read_back(first_path) == media.Image("image/png", _decoded(png["image_url"]["url"]))
    # Turn 2's PNG comes after turn 1's two and the Oslo map Agno re-sends in the span's input.
    second_path = f"evalkit-span://{fourth_span.trace_id}/{fourth_span.span_id}/input/3"
    assert asked[1]["message"] == [second_text,
                                   {"type": "image", "source": {"media_type": "image/png", "path": second_path}}]
    assert asked[1]["extra"]["media"] == [{"path": second_path, "media_type": "image/png",
                                           "bytes": len(_decoded(large["image_url"]["url"]))}]
    assert _read_back(second_path) == media.Image("image/png", _decoded(large["image_url"]["url"]))


def test_a_tool_image_alone_in_its_batch_is_its_results_parts_not_a_user_step() -> None:
    rome = _call_id(3, "get_map")
    note, image = _sent(4, agno_media.TOOL_MEDIA_NOTE)  # the user message Agno added after get_map's tool message
    (tool_span,) = [s for s in capture_spans(CAPTURE) if s.name == "get_map" and "Rome" in s.attributes["input.value"]]
    assert tool_span.attributes["output.value"] == "Map of central Rome."  # the ToolResult's content alone
    document = capture_document(CAPTURE, SESSION)
    result = _result(document, rome)
    assert result["content"] == [{"type": "text", "text": "Map of central Rome."},
                                 {"type": "image", "source": {"media_type": "image/png",
                                                              "path": image["image_url"]["url"]}}]  # small: inline
    assert result["extra"]["content_from"] == "input history"
    # Agno's message is no question: the only user step saying it is turn 1's, whose batch had two results.
    notes = [s for s in document["steps"] if s["source"] == "user" and s["message"][0]["text"] == note["text"]]
    assert len(notes) == 1 and notes[0]["step_id"] < _step_of(document, rome)


def test_a_tool_image_beside_another_result_stays_agnos_message_with_the_image() -> None:
    """Which of the batch's tools returned the image no span records: nothing is attributed to get_map."""
    note, image = _sent(2, agno_media.TOOL_MEDIA_NOTE)
    document = capture_document(CAPTURE, SESSION)
    assert _result(document, _call_id(1, "get_map"))["content"] == "Map of central Oslo."
    assert _result(document, _call_id(1, "get_weather"))["content"] == "rainy, 9°C"
    (step,) = [s for s in document["steps"] if s["source"] == "user" and s["message"][0]["text"] == note["text"]]
    third = _call_spans()[2]
    path = f"evalkit-span://{third.trace_id}/{third.span_id}/input/2"
    assert step["message"] == [note, {"type": "image", "source": {"media_type": "image/png", "path": path}}]
    assert _read_back(path) == media.Image("image/png", _decoded(image["image_url"]["url"]))


def test_the_loop_as_it_happened_and_no_base64_as_text() -> None:
    document = capture_document(CAPTURE, SESSION)
    assert questions.missing_questions(document, _log()) == []
    assert corpus.compare(document, corpus.GroundTruth.of(_log()), call_ids=True) == []
    assert [s["source"] for s in document["steps"]] == [
        "system", "user", "agent", "agent", "user", "agent", "user", "agent", "agent", "agent"]
    assert not any(s.get("is_copied_context") for s in document["steps"])
    oslo = _result(document, "call_0_1")  # the parallel Oslo call that raised, asked again on the next call
    assert oslo["extra"]["is_error"] and oslo["content"] == "the weather service did not answer in time"
    # Base64 only as an inlined image's data URL (under the inline limit), never as text.
    inline = [p["source"]["path"] for s in document["steps"] for p in _parts(s)
              if p["type"] == "image" and p["source"]["path"].startswith("data:")]
    assert all(len(path) <= media.INLINE_LIMIT for path in inline)
    assert json.dumps(document).count("base64,") == len(inline) == 1
    assert not errors_only(validate_trajectory(document, schema=True))
    atif.Trajectory.model_validate(document)


def test_an_images_type_is_the_one_agno_sends() -> None:
    """`mime_type`, else `format`, else the bytes' magic (a JPEG here), else JPEG, as `resolve_image_mime_type`; a file
    path as given. Where the recorded messages do not pair with the attributes' nothing is read."""
    span = _call_spans()[0]
    recorded = json.loads(span.attributes["input.value"])
    jpeg = base64.b64encode(b"\xff\xd8\xff\xe0" + bytes(40)).decode()
    recorded["messages"][1]["images"] = [{"content": jpeg}, {"content": jpeg, "format": "WEBP"},
                                         {"content": jpeg, "mime_type": "image/gif"}, {"filepath": "/srv/photo.png"}]
    call = openinference.map_span(SpanReader(replace(span, attributes={
        **span.attributes, "input.value": json.dumps(recorded)})), ())
    assert isinstance(call, LlmCall)
    assert [(p.media_type, p.uri) for p in call.input_messages[1].parts if p.kind == "media"] == [
        ("image", f"data:image/jpeg;base64,{jpeg}"), ("image", f"data:image/webp;base64,{jpeg}"),
        ("image", f"data:image/gif;base64,{jpeg}"), ("image", "/srv/photo.png")]
    recorded["messages"].append({"role": "user", "content": "not in the attributes"})
    unpaired = openinference.map_span(SpanReader(replace(span, attributes={
        **span.attributes, "input.value": json.dumps(recorded)})), ())
    assert isinstance(unpaired, LlmCall)
    assert not [p for m in unpaired.input_messages for p in m.parts if p.kind == "media"]


def _parts(step: dict[str, Any]) -> list[dict[str, Any]]:
    """A step's content parts: its message's and its results'."""
    found = list(step["message"]) if isinstance(step.get("message"), list) else []
    for result in (step.get("observation") or {}).get("results", ()):
        if isinstance(result.get("content"), list):
            found += result["content"]
    return found


def _step_of(document: dict[str, Any], call_id: str) -> int:
    return next(s["step_id"] for s in document["steps"]
                if any(c["tool_call_id"] == call_id for c in s.get("tool_calls") or ()))
