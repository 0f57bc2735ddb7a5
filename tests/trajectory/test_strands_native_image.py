"""Images in and out of a Strands Agents tool loop, as Strands' own tracer records them (the `strands_native_image`
capture: default conventions, OpenAIModel).

Strands' tracer serializes the agent's messages (Bedrock content blocks) with a JSON encoder that writes any value
JSON cannot hold as "<replaced>" (telemetry/tracer.py `JSONEncoder`): an image block's `source.bytes` among them. So
no span holds the user's PNGs or the screenshot tool's: each is a marker saying it was not recorded and why, never the
blocks' JSON, never an image part whose reference reads nothing back. What OpenAIModel adds to a tool message holding
an image (its note that the image follows in a user message) is in no span either: a known gap of the corpus.
"""

from __future__ import annotations

import json
import re
from typing import Any

import atif
from span_fixtures import capture_document, capture_spans

from evalkit.trajectory import media
from evalkit.trajectory.mappers import strands
from evalkit.trajectory.mappers.messages import UNRECORDED_BYTES, parse_part
from evalkit.trajectory.mappers.reader import SpanReader
from evalkit.trajectory.operations import LlmCall, Message, Part, ToolExecution
from evalkit.trajectory.span import Span
from evalkit.trajectory.validate import errors_only, validate_trajectory
from tests.captures import corpus, questions

CAPTURE = "strands_native_image"
SESSION = "strands-image-review-1"
MARKER = f"[image/png: {UNRECORDED_BYTES}]"
# What OpenAIModel appends to a tool message holding an image (models/openai.py `_split_tool_message_images`).
OPENAI_MODEL_NOTE = "Tool successfully returned an image. The image is being provided in the following user message."


def _log() -> list[dict[str, Any]]:
    return corpus.load(CAPTURE).llm_log


def _spans(name: str) -> list[Span]:
    """The capture's spans of that name, in the order they started."""
    return sorted((s for s in capture_spans(CAPTURE) if s.name == name), key=lambda span: span.start_time_unix_nano)


def _results(document: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {r["source_call_id"]: r for s in document["steps"] for r in (s.get("observation") or {}).get("results", ())}


def _screenshot_calls() -> list[dict[str, Any]]:
    return [call for entry in _log() for call in entry["response"]["tool_calls"] if call["name"] == "take_screenshot"]


def _tool_message(call_id: str) -> list[dict[str, Any]]:
    """The content of the tool message the model was sent for `call_id` (its first sending)."""
    return next(message["content"] for entry in _log() for message in entry["request"]["messages"]
                if message.get("role") == "tool" and message.get("tool_call_id") == call_id)


def test_the_users_images_are_markers_saying_strands_did_not_record_them() -> None:
    asked = next(m for m in _log()[0]["request"]["messages"] if m["role"] == "user")["content"]
    text, *images = asked
    urls = [image["image_url"]["url"] for image in images]
    # The model was sent both PNGs whole: one over evalkit's inline limit, one under it.
    assert [len(url) > media.INLINE_LIMIT for url in urls] == [True, False]
    # As recorded: the image blocks with "<replaced>" for their bytes, and no span holds any PNG's base64.
    chat = _spans("chat")[0]
    (user,) = [e for e in chat.events if e.name == "gen_ai.user.message"]
    assert [block.get("image") for block in json.loads(user.attributes["content"])][1:] == [
        {"format": "png", "source": {"bytes": "<replaced>"}}] * 2
    assert not any(url.split(",", 1)[1][:64] in json.dumps(span.attributes) + json.dumps(
        [e.attributes for e in span.events]) for span in capture_spans(CAPTURE) for url in urls)

    document = capture_document(CAPTURE, SESSION)
    first, second = [step for step in document["steps"] if step["source"] == "user"]
    assert first["message"] == "\n".join([text["text"], MARKER, MARKER])
    assert "extra" not in first or "media" not in first["extra"]
    assert second["message"] == "Now check the pricing page the same way."
    # Nothing a reference could not read back, no block's JSON in place of an image.
    assert "evalkit-span://" not in json.dumps(document)
    assert '"bytes"' not in json.dumps([step.get("message") for step in document["steps"]])


def test_a_screenshot_result_is_its_text_and_a_marker_never_the_blocks_json() -> None:
    calls = _screenshot_calls()
    assert [call["id"] for call in calls] == ["call_0_0", "call_3_0"]
    tool_spans = {span.attributes["gen_ai.tool.call.id"]: span for span in _spans("execute_tool take_screenshot")}
    results = _results(capture_document(CAPTURE, SESSION))
    for call in calls:
        text, note = _tool_message(call["id"])  # the tool's text, then OpenAIModel's note (the image sent apart)
        assert note == {"type": "text", "text": OPENAI_MODEL_NOTE}
        execution = strands.map_span(SpanReader(tool_spans[call["id"]]), ())
        assert isinstance(execution, ToolExecution)
        assert execution.result_parts == [Part("text", text=text["text"]),
                                          Part("media", media_type="image/png", text=UNRECORDED_BYTES)]
        result = results[call["id"]]
        assert result["content"] == f"{text['text']}\n{MARKER}"
        assert "media" not in result["extra"]


def test_a_screenshot_result_a_call_was_sent_is_its_text_and_the_image() -> None:
    """The toolResult re-sent in the next call's input: the tool's text, its image a media part, not their JSON."""
    call = strands.map_span(SpanReader(_spans("chat")[1]), ())
    assert isinstance(call, LlmCall)
    (shown,) = [part for message in call.input_messages for part in message.parts
                if part.kind == "tool_result" and part.call_id == "call_0_0"]
    assert shown.text == _tool_message("call_0_0")[0]["text"]
    assert shown.result_parts == [Part("text", text=shown.text),
                                  Part("media", media_type="image/png", text=UNRECORDED_BYTES)]
    assert media.input_media(call.input_messages) == [Part("media", media_type="image/png", text=UNRECORDED_BYTES)] * 3


def test_an_image_part_under_the_latest_conventions_reads_as_its_block() -> None:
    """Under `gen_ai_latest_experimental` Strands writes an image block as a part of its own, `{"type": "image",
    "content": <the block's body>}` (as it wrote this capture's run with that opt-in)."""
    written = {"type": "image", "content": {"format": "png", "source": {"bytes": "<replaced>"}}}
    assert parse_part(written) == Part("media", media_type="image/png", text=UNRECORDED_BYTES)
    # A tool's result there: the toolResult's blocks as they are.
    (result,) = strands._bedrock_parts([Message("user", [Part(
        "tool_result", call_id="call_0_0", text=json.dumps([{"text": "Screenshot of the home page, 1280x800."},
                                                            {"image": written["content"]}]))])], True)[0].parts
    assert result.text == "Screenshot of the home page, 1280x800."
    assert result.result_parts == [Part("text", text=result.text),
                                   Part("media", media_type="image/png", text=UNRECORDED_BYTES)]


def test_the_loop_as_it_happened_but_the_note_no_span_records() -> None:
    document = capture_document(CAPTURE, SESSION)
    truth = corpus.GroundTruth.of(_log())
    # The one difference from what the model was shown: OpenAIModel's note on each screenshot's tool message (the
    # KNOWN_GAPS entry), the tool's own text there.
    problems = corpus.compare(document, truth, call_ids=True)
    assert [re.findall(r"^call (\d): tool (\w+) result ", problem) for problem in problems] == [
        [("0", "take_screenshot")], [("3", "take_screenshot")]]
    assert questions.missing_questions(document, _log()) == []
    # The status check that timed out is flagged with the text the model was shown, then asked again.
    failed = _results(document)["call_0_1"]
    assert failed["extra"]["is_error"] and failed["content"] == _tool_message("call_0_1")
    assert _results(document)["call_1_0"]["content"] == _tool_message("call_1_0")
    assert not any(step.get("is_copied_context") for step in document["steps"])
    assert not errors_only(validate_trajectory(document, schema=True))
    atif.Trajectory.model_validate(document)
