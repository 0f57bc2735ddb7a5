"""Images in and out of an openai-agents (Responses API) tool loop, as OpenTelemetry's own openai-agents
instrumentation (`opentelemetry-instrumentation-openai-agents-v2` 0.1.0) records them (the
`openai-agents_otel-genai_image` capture: `openai-agents_openinference_image`'s run).

A user message's `input_image` parts are written as text parts holding each part's dict repr, base64 and all; the
`get_map` tool's `ToolOutputImage` as its pydantic `str()` (`trajectory/mappers/otel_openai_agents.py`).
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
from evalkit.trajectory.mappers import otel_openai_agents
from evalkit.trajectory.mappers.reader import SpanReader
from evalkit.trajectory.operations import LlmCall, ToolExecution
from evalkit.trajectory.span import Span
from evalkit.trajectory.validate import errors_only, validate_trajectory
from tests.captures import corpus, questions

CAPTURE = "openai-agents_otel-genai_image"
SESSION = "oa-otel-genai-image-trip-1"


def _log() -> list[dict[str, Any]]:
    return corpus.load(CAPTURE).llm_log


def _asked(seq: int) -> list[dict[str, Any]]:
    """The content parts of the last user message the fake LLM was sent on call `seq`: the question as asked."""
    return next(item for item in reversed(_log()[seq]["request"]["input"]) if item.get("role") == "user")["content"]


def _spans(prefix: str) -> list[Span]:
    """The capture's spans whose name starts so, in the order they started."""
    return sorted((s for s in capture_spans(CAPTURE) if s.name.startswith(prefix)),
                  key=lambda span: span.start_time_unix_nano)


def _decoded(data_url: str) -> bytes:
    return base64.b64decode(data_url.split(",", 1)[1])


def _read_back(path: str) -> media.Image:
    """The image a trajectory's reference names, read from its span as the service reads it (`routes._media`)."""
    reference = media.parse_reference(path)
    span = next(s for s in capture_spans(CAPTURE) if s.span_id == reference.span_id)
    return media.referenced_image(map_one_span(span), reference.where, reference.n)


def _with_result(span: Span, result: str) -> Span:
    return replace(span, attributes={**span.attributes, "gen_ai.tool.call.result": result})


def _user_steps() -> list[dict[str, Any]]:
    return [step for step in capture_document(CAPTURE, SESSION)["steps"] if step["source"] == "user"]


def test_the_questions_images_are_image_parts_never_their_repr() -> None:
    text, png, photo = _asked(0)
    assert len(png["image_url"]) > media.INLINE_LIMIT and photo["detail"] == "low"
    span = _spans("chat ")[0]
    # As recorded: each content part a text part holding the part's dict repr, the PNG's base64 within.
    recorded = json.loads(span.attributes["gen_ai.input.messages"])[0]["parts"]
    assert recorded[1] == {"type": "text", "content": repr(png)}
    call = otel_openai_agents.map_span(SpanReader(span), ())
    assert isinstance(call, LlmCall)
    (question,) = call.input_messages
    assert [(p.kind, p.text, p.uri) for p in question.parts] == [
        ("text", text["text"], None), ("media", None, png["image_url"]), ("media", None, photo["image_url"])]

    first, _ = _user_steps()  # the history every later call re-sends: no step again
    path = f"evalkit-span://{span.trace_id}/{span.span_id}/input/0"
    assert first["message"] == [
        {"type": "text", "text": text["text"]},
        {"type": "image", "source": {"media_type": "image/png", "path": path}},  # over the inline limit: referenced
        {"type": "image", "source": {"media_type": "image/jpeg", "path": photo["image_url"]}},
    ]
    assert first["extra"]["media"] == [{"path": path, "media_type": "image/png",
                                        "bytes": len(_decoded(png["image_url"]))}]
    assert _read_back(path) == media.Image("image/png", _decoded(png["image_url"]))


def test_the_streamed_turns_photo_is_referenced_in_its_call_after_the_re_sent_images() -> None:
    text, image = _asked(3)
    assert len(image["image_url"]) > 32_000
    span = _spans("chat ")[3]
    _, second = _user_steps()
    # Turn 1's two images come first in the span's input (re-sent): this is its third.
    path = f"evalkit-span://{span.trace_id}/{span.span_id}/input/2"
    assert second["message"] == [{"type": "text", "text": text["text"]},
                                 {"type": "image", "source": {"media_type": "image/png", "path": path}}]
    assert _read_back(path) == media.Image("image/png", _decoded(image["image_url"]))


def test_a_tool_returning_an_image_has_the_image_as_its_result_never_its_base64() -> None:
    (map_call,) = [call for call in _log()[1]["response"]["tool_calls"] if call["name"] == "get_map"]
    (sent,) = next(item["output"] for item in _log()[2]["request"]["input"]
                   if item.get("type") == "function_call_output" and item["call_id"] == map_call["id"])
    assert sent["type"] == "input_image" and len(sent["image_url"]) > media.INLINE_LIMIT
    (span,) = _spans("execute_tool get_map")
    # As recorded: `str()` of the ToolOutputImage the tool returned, its base64 within.
    assert span.attributes["gen_ai.tool.call.result"] == \
        f"type='image' image_url='{sent['image_url']}' file_id=None detail='low'"
    execution = otel_openai_agents.map_span(SpanReader(span), ())
    assert isinstance(execution, ToolExecution)
    assert [(p.kind, p.uri) for p in execution.result_parts or ()] == [("media", sent["image_url"])]

    document = capture_document(CAPTURE, SESSION)
    (result,) = [r for s in document["steps"] for r in (s.get("observation") or {}).get("results", ())
                 if r["source_call_id"] == map_call["id"]]
    path = f"evalkit-span://{span.trace_id}/{span.span_id}/result/0"
    assert result["content"] == [{"type": "image", "source": {"media_type": "image/png", "path": path}}]
    assert _read_back(path) == media.Image("image/png", _decoded(sent["image_url"]))
    assert "base64," not in json.dumps(document)


def test_a_list_of_tool_outputs_reads_as_its_text_and_image() -> None:
    """A tool returning `[ToolOutputText, ToolOutputImage]`: 0.1.0's JSON dump of the list fails on the pydantic
    models and falls back to `str()` of the list (the models' reprs, not their `str()`s); the recorded span with its
    result so written."""
    (span,) = _spans("execute_tool get_map")
    url = span.attributes["gen_ai.tool.call.result"].split("'")[3]
    listed = (f"[ToolOutputText(type='text', text='Oslo centre'), "
              f"ToolOutputImage(type='image', image_url='{url}', file_id=None, detail='low')]")
    execution = otel_openai_agents.map_span(SpanReader(_with_result(span, listed)), ())
    assert isinstance(execution, ToolExecution)
    assert [(p.kind, p.text, p.uri) for p in execution.result_parts or ()] == [("text", "Oslo centre", None),
                                                                             ("media", None, url)]
    # A list of texts alone holds no image: its result stays as recorded.
    texts = otel_openai_agents.map_span(SpanReader(_with_result(span, listed.split(", ToolOutputImage")[0] + "]")), ())
    assert isinstance(texts, ToolExecution) and texts.result_parts is None


def test_the_loop_as_it_happened() -> None:
    document = capture_document(CAPTURE, SESSION)
    assert questions.missing_questions(document, _log()) == []
    assert corpus.compare(document, corpus.GroundTruth.of(_log()), call_ids=True) == []
    # The parallel Oslo call that raised is flagged with the text the model was shown, then asked again.
    oslo = document["steps"][1]["observation"]["results"][1]
    assert oslo["extra"]["is_error"] and oslo["content"] == "An error occurred while running the tool."
    assert document["steps"][2]["tool_calls"][0]["arguments"] == {"city": "Oslo"}
    assert not errors_only(validate_trajectory(document, schema=True))
    atif.Trajectory.model_validate(document)
