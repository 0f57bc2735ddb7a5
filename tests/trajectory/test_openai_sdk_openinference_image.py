"""Images sent to the OpenAI Python SDK's Chat Completions, as OpenInference's openai instrumentation records them (the
`openai-sdk_openinference_image` capture).

Turn 1 asks about a small PNG data URL (kept by OpenInference, over evalkit's inline limit) and an `https://` URL;
turn 2 adds a PNG data URL over OpenInference's `OPENINFERENCE_BASE64_IMAGE_MAX_LENGTH`, which it records as
`__REDACTED__` (`trajectory/mappers/openinference_media.py`).
"""

from __future__ import annotations

import base64
import json
from typing import Any

import atif
from span_fixtures import capture_document, capture_spans

from evalkit.trajectory.mappers import openinference, openinference_media
from evalkit.trajectory.mappers.reader import SpanReader
from evalkit.trajectory.operations import LlmCall
from evalkit.trajectory.span import Span
from evalkit.trajectory.validate import errors_only, validate_trajectory
from tests.captures import corpus, questions

CAPTURE = "openai-sdk_openinference_image"
SESSION = "oi-openai-image-trip-1"


def _asked(seq: int) -> list[dict[str, Any]]:
    """The content parts of the last user message the fake LLM was sent on call `seq`: the question as asked."""
    request = corpus.load(CAPTURE).llm_log[seq]["request"]
    return next(m for m in reversed(request["messages"]) if m["role"] == "user")["content"]


def _call_spans() -> list[Span]:
    """The instrumentation's ChatCompletion spans, in the order of the calls."""
    return sorted((s for s in capture_spans(CAPTURE) if s.scope_name == "openinference.instrumentation.openai"),
                  key=lambda span: span.start_time_unix_nano)


def _user_steps(document: dict[str, Any]) -> list[dict[str, Any]]:
    return [step for step in document["steps"] if step["source"] == "user"]


def test_an_image_openinference_redacted_is_said_so_not_shown_as_an_image() -> None:
    text, image = _asked(3)
    assert len(image["image_url"]["url"]) > 32_000  # over OpenInference's default limit
    span = _call_spans()[3]
    # As recorded: the image's URL is OpenInference's placeholder, the payload in no attribute.
    assert span.attributes["llm.input_messages.8.message.contents.1.message_content.image.image.url"] == "__REDACTED__"
    call = openinference.map_span(SpanReader(span), ())
    assert isinstance(call, LlmCall)
    (media,) = [part for part in call.input_messages[-1].parts if part.kind == "media"]
    assert (media.media_type, media.uri, media.text) == ("image", None, openinference_media.REDACTED_IMAGE)

    document = capture_document(CAPTURE, SESSION)
    # The question's text, then what became of its image: said, not an image at `__REDACTED__`.
    assert _user_steps(document)[1]["message"] == f"{text['text']}\n[image: {openinference_media.REDACTED_IMAGE}]"
    assert "__REDACTED__" not in json.dumps(document)
    # ... and it is the question as asked: its words, the marker none (tests/captures/questions.py).
    assert questions.missing_questions(document, corpus.load(CAPTURE).llm_log) == []


def test_each_question_once_with_its_images_a_large_data_url_referenced() -> None:
    text, png, photo = _asked(0)
    document = capture_document(CAPTURE, SESSION)
    first, _ = _user_steps(document)  # turn 2's calls re-send turn 1's question and images: no step again
    written, shown_png, shown_photo = first["message"]
    assert written == {"type": "text", "text": text["text"]}
    # The photo by its URL (a JPEG by its name); the PNG, over evalkit's 4,096-character inline limit but kept by
    # OpenInference, referenced at the first call's span that holds it, never inlined.
    assert shown_photo == {"type": "image", "source": {"media_type": "image/jpeg", "path": photo["image_url"]["url"]}}
    call_span = document["steps"][2]["extra"]["span_id"]
    assert shown_png["source"]["media_type"] == "image/png"
    assert shown_png["source"]["path"].startswith("evalkit-span://") and f"/{call_span}/input/" in \
        shown_png["source"]["path"]
    payload = png["image_url"]["url"].split(",", 1)[1]
    assert first["extra"]["media"] == [{"path": shown_png["source"]["path"], "media_type": "image/png",
                                        "bytes": len(base64.b64decode(payload))}]
    assert payload[:64] not in json.dumps(document)
    assert all(isinstance(s["message"], str) for s in document["steps"] if s["source"] != "user")
    assert not errors_only(validate_trajectory(document, schema=True))
    atif.Trajectory.model_validate(document)


def test_the_tool_loop_is_the_conversation_that_happened() -> None:
    document = capture_document(CAPTURE, SESSION)
    truth = corpus.GroundTruth.of(corpus.load(CAPTURE).llm_log)
    assert corpus.compare(document, truth, call_ids=True) == []
    # The parallel call that raised is flagged with the error text the model was shown, then asked again.
    first = document["steps"][2]
    oslo = first["observation"]["results"][1]
    assert oslo["extra"]["is_error"] and oslo["content"] == truth.tool_results[first["tool_calls"][1]["tool_call_id"]]
    assert document["steps"][3]["tool_calls"][0]["arguments"] == {"city": "Oslo"}
