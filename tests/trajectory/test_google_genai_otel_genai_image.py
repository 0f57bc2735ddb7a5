"""Images sent to Gemini through a Google Gen AI SDK chat, as OpenTelemetry's own google-genai instrumentation records
them (the `google-genai_otel-genai_image` capture).

Turn one's question is a text part, a small PNG and a larger one (`Part.from_bytes`: the instrumentation writes each a
GenAI `blob` part, its bytes base64 on the spans and raw OTLP bytes in the `gen_ai.client.inference.operation.details`
log records) and a `gs://` JPEG (`Part.from_uri`: a `uri` part). A hand-written tool loop: two parallel `get_weather`
calls, Porto's answered with `{"error": …}`, asked again; turn two streamed, `render_map`'s function response carrying
the map in its own `parts`, which the instrumentation does not write. The fake reports the prompt's tokens by modality
(Gemini's `promptTokensDetails`), which the instrumentation writes as `gen_ai.usage.{text,image}.input_tokens`.
"""

from __future__ import annotations

import base64
import json
import re
from dataclasses import replace
from typing import Any

import atif
from span_fixtures import capture_logs, capture_spans, capture_truth

from evalkit.trajectory import media
from evalkit.trajectory.build import map_one_span
from evalkit.trajectory.from_spans import trajectory_from_spans
from evalkit.trajectory.mappers import otel_genai
from evalkit.trajectory.span import LogRecord, Span
from evalkit.trajectory.validate import errors_only, validate_trajectory
from tests.captures import corpus, questions

CAPTURE = "google-genai_otel-genai_image"
SESSION = "otel-genai-photo-trip-1"
Json = dict[str, Any]
# What the spans hold of the conversation with content on them (SPAN_ONLY / SPAN_AND_EVENT); with EVENT_ONLY it is
# only in the log records.
_CONTENT_KEYS = ("gen_ai.input.messages", "gen_ai.output.messages", "gen_ai.system_instructions")
# A run of base64 long enough to be image bytes, not a word.
_BASE64_RUN = re.compile(r"[A-Za-z0-9+/_-]{200,}={0,2}")


def _log() -> list[Json]:
    return corpus.load(CAPTURE).llm_log


def _question_parts() -> list[Json]:
    """Turn one's question as the SDK sent it: a text part, two inline PNGs, a file URI."""
    return _log()[0]["request"]["contents"][0]["parts"]


def _sent_bytes(part: Json) -> bytes:
    """An inline part's bytes as the model was sent them (the SDK writes them in the URL-safe base64 alphabet)."""
    return base64.urlsafe_b64decode(part["inlineData"]["data"])


def _event_only(spans: list[Span]) -> list[Span]:
    """The spans as OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=EVENT_ONLY leaves them: no content on them."""
    return [replace(span, attributes={k: v for k, v in span.attributes.items() if k not in _CONTENT_KEYS})
            for span in spans]


def _document(spans: list[Span] | None = None) -> Json:
    result = trajectory_from_spans(capture_spans(CAPTURE) if spans is None else spans, capture_logs(CAPTURE),
                                   session_id=SESSION)
    assert result.valid, [str(issue) for issue in result.issues]
    return result.document()


def _read_back(path: str, spans: list[Span], logs: list[LogRecord]) -> media.Image:
    """The image a trajectory's reference names, read from its span (and its log records) as the service reads it."""
    reference = media.parse_reference(path)
    span = next(s for s in spans if s.span_id == reference.span_id)
    return media.referenced_image(map_one_span(span, logs), reference.where, reference.n)


def _png_url(data: bytes) -> str:
    return "data:image/png;base64," + base64.b64encode(data).decode()


def _question_step(document: Json) -> Json:
    (step, second) = [s for s in document["steps"] if s["source"] == "user"]
    assert second["message"] == "Show me a map of Porto's riverside so I can find that harbour."
    return step


def _assert_the_question_as_sent(document: Json, spans: list[Span], logs: list[LogRecord]) -> None:
    text, ticket, street, harbour = _question_parts()
    step = _question_step(document)
    written, shown_ticket, shown_street, shown_harbour = step["message"]
    assert written == {"type": "text", "text": text["text"]}
    # The ticket, a data URL under the 4,096-character inline limit, inlined; the street photo over it referenced in
    # the first call's input (its second media part), never inlined; the Cloud Storage photo by its URI.
    assert shown_ticket == {"type": "image", "source": {"media_type": "image/png", "path": _png_url(
        _sent_bytes(ticket))}}
    first_call = next(s for s in document["steps"] if s.get("llm_call_count"))["extra"]["span_id"]
    path = shown_street["source"]["path"]
    assert shown_street["source"]["media_type"] == "image/png"
    assert path.startswith("evalkit-span://") and path.endswith(f"/{first_call}/input/1")
    assert shown_harbour == {"type": "image", "source": {"media_type": "image/jpeg",
                                                          "path": harbour["fileData"]["file_uri"]}}
    assert step["extra"]["media"] == [{"path": path, "media_type": "image/png", "bytes": len(_sent_bytes(street))}]
    # What the reference names reads back as the very bytes the model was sent.
    image = _read_back(path, spans, logs)
    assert (image.media_type, image.data) == ("image/png", _sent_bytes(street))


def test_the_questions_images_are_image_parts_the_large_one_referenced_and_read_back() -> None:
    spans, logs = capture_spans(CAPTURE), capture_logs(CAPTURE)
    document = _document(spans)
    _assert_the_question_as_sent(document, spans, logs)
    # No image is text anywhere: the street photo's base64 is in no step, the ticket's only as its image's path.
    assert not _BASE64_RUN.search(json.dumps(document))
    assert questions.missing_questions(document, _log()) == []
    assert not errors_only(validate_trajectory(document, schema=True))
    atif.Trajectory.model_validate(document)


def test_the_log_records_alone_show_the_same_images() -> None:
    # With content EVENT_ONLY each call's messages are only in its log record, whose body keeps a blob part's content
    # as the image's raw bytes (OTLP bytes, not base64): they are the same images, inlined or referenced, read back.
    logs = capture_logs(CAPTURE)
    first = next(log for log in logs if log.event_name == "gen_ai.client.inference.operation.details")
    blobs = [part for part in first.attributes["gen_ai.input.messages"][0]["parts"] if part["type"] == "blob"]
    assert [type(part["content"]) for part in blobs] == [bytes, bytes]
    spans = _event_only(capture_spans(CAPTURE))
    document = _document(spans)
    _assert_the_question_as_sent(document, spans, logs)
    assert [step.get("message") for step in document["steps"]] == [step.get("message") for step in _document()["steps"]]


def test_re_sent_history_shows_no_image_again() -> None:
    document = _document()
    # Every later call re-sends turn one's question and its three images: one user step of them, no copied steps.
    assert [step["source"] for step in document["steps"]] == [
        "system", "user", "agent", "agent", "agent", "user", "agent", "agent"]
    assert not [step for step in document["steps"] if step.get("is_copied_context")]
    shown = [part for step in document["steps"] if isinstance(step.get("message"), list)
             for part in step["message"] if part["type"] == "image"]
    assert len(shown) == 3


def test_the_tool_loop_is_the_conversation_that_happened() -> None:
    document = _document()
    truth = capture_truth(CAPTURE)
    assert corpus.compare(document, truth) == []
    first, retry, _, streamed, _ = corpus.llm_steps(document)
    # Porto's weather service timed out: its {"error": …} response flagged, then asked again.
    lisbon, porto = first["observation"]["results"]
    assert lisbon["content"] == '{"result": "sunny, 24°C"}' and "is_error" not in lisbon["extra"]
    assert json.loads(porto["content"]) == {"error": "the weather service did not answer for Porto within 5 s"}
    assert porto["extra"]["is_error"] is True
    assert retry["tool_calls"][0]["arguments"] == {"city": "Porto"}
    # The streamed answer, re-sent by the chat one content per chunk, is its call's step, its call answered.
    assert streamed["message"] == "Drawing the Ribeira for you."
    assert [r["content"] for r in streamed["observation"]["results"]] == [
        '{"result": "a 1 km map of Ribeira, Porto"}']


def test_the_map_a_function_response_carried_is_in_no_span() -> None:
    """What the capture's UNRECORDED_IMAGES entry says: the model was sent the map in the function response's parts;
    the instrumentation writes the response alone, on the span and in the log record."""
    sent = _log()[4]["request"]["contents"][-1]["parts"][0]["functionResponse"]
    (image,) = sent["parts"]
    assert image["inline_data"]["mime_type"] == "image/png"
    span = max((s for s in capture_spans(CAPTURE) if s.scope_name == otel_genai.GOOGLE_GENAI_SCOPE),
               key=lambda s: s.start_time_unix_nano)
    recorded = json.loads(span.attributes["gen_ai.input.messages"])[-1]["parts"]
    assert recorded == [{"response": sent["response"], "id": "render_map_0", "type": "tool_call_response"}]
    assert image["inline_data"]["data"][:64] not in json.dumps([s.attributes for s in capture_spans(CAPTURE)])


def test_each_steps_prompt_tokens_say_how_many_were_the_images() -> None:
    # Gemini counts a prompt's images within its tokens and says how many apart (`promptTokensDetails`), which the
    # instrumentation writes as gen_ai.usage.{text,image}.input_tokens: each step shows the split beside its total.
    document = _document()
    shown = [step["metrics"] for step in corpus.llm_steps(document)]
    reported = [entry["response"]["usage"] for entry in _log()]
    assert [(m["prompt_tokens"], m["extra"]["prompt_tokens_by_modality"]) for m in shown] == [
        (usage["input_tokens"], {"text": usage["input_tokens"] - usage["image_tokens"], "image": usage["image_tokens"]})
        for usage in reported]
    # Call 4's count holds the map too, the fourth image: sent inside the function response, in no span.
    assert [m["extra"]["prompt_tokens_by_modality"]["image"] for m in shown] == [774] * 4 + [1032]
    assert "completion_tokens_by_modality" not in shown[0]["extra"]  # the fake breaks no answer down
    assert not {"gen_ai.usage.image.input_tokens", "gen_ai.usage.text.input_tokens"} & set(
        document["extra"].get("unmapped_attributes", ()))
