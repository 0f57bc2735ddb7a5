"""pydantic-ai's own instrumentation (message format version 6) on OpenAI's Chat Completions, a tool returning an
image, read from its capture (`pydantic-ai_openai_image-tool`): a user prompt of a text, a `BinaryContent` PNG and an
`ImageUrl`; a `take_screenshot` tool returning a `BinaryContent` PNG beside a parallel `page_status` raising
`ModelRetry` once; a second run given the first's messages, streamed.

Chat Completions' tool messages are text only: pydantic-ai's adapter sends the screenshot's tool message as
"See file <id>." and the PNG in a user message it adds after the tool messages, framed by `<pyai:tool_result …>` tags.
The spans record the return itself (the `blob`), neither that text nor that user message. Before
`pydantic_ai_tool_files` each screenshot's result was the image alone, without the text the model was sent for it.
"""

from __future__ import annotations

import json
from dataclasses import replace
from itertools import pairwise
from typing import Any

import atif

from evalkit.trajectory.from_spans import trajectory_from_spans
from evalkit.trajectory.mappers import pydantic_ai_tool_files
from evalkit.trajectory.span import Span
from tests.captures import corpus, questions
from tests.trajectory.span_fixtures import capture_document, capture_spans, capture_truth, results_by_call

CAPTURE = "pydantic-ai_openai_image-tool"
SESSION = "pai-openai-image-tool-1"
Json = dict[str, Any]


def _log() -> list[Json]:
    return corpus.load(CAPTURE).llm_log


def _sent_for_screenshots(log: list[Json]) -> dict[str, tuple[str, str]]:
    """What the model was sent for each tool call returning a file: its tool message's text, and the base64 of the
    image in the user message pydantic-ai framed as that call's (`<pyai:tool_result … tool_call_id="…">`)."""
    texts: dict[str, str] = {}
    images: dict[str, str] = {}
    for entry in log:
        for message in entry["request"]["messages"]:
            if message["role"] == "tool":
                texts[message["tool_call_id"]] = message["content"]
            content = message["content"]
            if message["role"] != "user" or not isinstance(content, list):
                continue
            for opening, image in pairwise(content):
                if opening["type"] == "text" and opening["text"].startswith("<pyai:tool_result ") \
                        and image["type"] == "image_url":
                    call_id = opening["text"].split('tool_call_id="', 1)[1].split('"', 1)[0]
                    images[call_id] = image["image_url"]["url"].split(",", 1)[1]
    return {call_id: (texts[call_id], data) for call_id, data in images.items()}


def _tool_span(call_id: str) -> Span:
    return next(span for span in capture_spans(CAPTURE) if span.attributes.get("gen_ai.tool.call.id") == call_id)


def _result(document: Json, call_id: str) -> Json:
    step = next(step for step in corpus.llm_steps(document)
                if any(call["tool_call_id"] == call_id for call in step.get("tool_calls") or ()))
    return results_by_call(step)[call_id]


def _image_data(part: Json, call_id: str) -> str:
    """The base64 an image part of a result shows: its data URL's, or the tool span's result it references."""
    path = part["source"]["path"]
    if path.startswith("data:"):
        return str(path.split(",", 1)[1])
    span = _tool_span(call_id)
    assert path == f"evalkit-span://{span.trace_id}/{span.span_id}/result/0"
    return str(json.loads(span.attributes["gen_ai.tool.call.result"])["content"])


def test_each_screenshot_result_is_the_text_the_model_got_then_the_image() -> None:
    document = capture_document(CAPTURE, SESSION)
    sent = _sent_for_screenshots(_log())
    assert sorted(sent) == ["call_0_0", "call_3_0"]
    for call_id, (text, data) in sent.items():
        assert text.startswith("See file ")  # the Chat Completions adapter's tool message for a returned file
        result = _result(document, call_id)
        shown, image = result["content"]
        assert shown == {"type": "text", "text": text}
        assert image["type"] == "image" and image["source"]["media_type"] == "image/png"
        assert _image_data(image, call_id) == data
    assert corpus.compare(document, capture_truth(CAPTURE), call_ids=True) == []
    atif.Trajectory.model_validate(document)


def test_the_files_user_message_is_no_user_step() -> None:
    document = capture_document(CAPTURE, SESSION)
    log = _log()
    assert _sent_for_screenshots(log)  # the model was sent the screenshots in user messages of pydantic-ai's making
    users = [step for step in document["steps"] if step["source"] == "user"]
    assert [corpus.message_text(step["message"]) for step in users] == [
        "Here is my mockup of the dashboard and our logo. Does the live dashboard match?",
        "Now check the settings page the same way."]
    # The user's own images are parts of their question.
    assert [part["source"]["path"] for part in users[0]["message"] if part["type"] == "image"][1:] == [
        "https://example.com/brand/logo.png"]
    assert "pyai:tool_result" not in json.dumps(document)
    assert not any(step.get("is_copied_context") for step in document["steps"])
    assert questions.missing_questions(document, log) == []


def _as_responses(span: Span) -> Span:
    """`span` as pydantic-ai records an OpenAI Responses answer: finished `stop` (the response's status, `completed`),
    never `tool_call`, in its output and wherever its input re-sends it."""
    attributes = dict(span.attributes)
    for key in ("gen_ai.input.messages", "gen_ai.output.messages", "pydantic_ai.all_messages"):
        if isinstance(attributes.get(key), str):
            attributes[key] = attributes[key].replace('"finish_reason":"tool_call"', '"finish_reason":"stop"')
    if "gen_ai.response.finish_reasons" in attributes:
        attributes["gen_ai.response.finish_reasons"] = '["stop"]'
    return replace(span, attributes=attributes)


def test_an_answer_of_the_responses_api_shows_the_image_alone() -> None:
    # The Responses adapter sends a tool's files in its `function_call_output`: no "See file" text was sent.
    spans = [_as_responses(span) for span in capture_spans(CAPTURE)]
    document = trajectory_from_spans(spans, session_id=SESSION).document()
    for call_id, (_, data) in _sent_for_screenshots(_log()).items():
        [image] = _result(document, call_id)["content"]
        assert image["type"] == "image" and _image_data(image, call_id) == data


def test_a_returned_list_is_its_items_json_each_file_a_reference() -> None:
    # What pydantic-ai 2.78 records for a tool returning `["Screenshot of /dashboard", BinaryContent(b"\x89PNG fake"),
    # {"w": 160, "note": "café"}, ImageUrl("https://example.com/a.png")]` (`tool_result_otel_value`), and the tool
    # message its Chat Completions adapter sends for it (`model_response_str_and_user_content()[0]`).
    recorded = ["Screenshot of /dashboard",
                {"type": "blob", "mime_type": "image/png", "modality": "image", "content": "iVBORyBmYWtl"},
                {"w": 160, "note": "café"},
                {"type": "uri", "modality": "image", "mime_type": "image/png", "uri": "https://example.com/a.png"}]
    assert pydantic_ai_tool_files.tool_message_text(recorded) == (
        '["Screenshot of /dashboard","See file 71dd83.",{"w":160,"note":"café"},"See file b86daf."]')
    assert pydantic_ai_tool_files.tool_message_text(recorded[3]) == "See file b86daf."
    # No file, no such text; a file recorded without its bytes has no identifier to give, so none is made up.
    assert pydantic_ai_tool_files.tool_message_text(recorded[:1]) is None
    unrecorded = {key: value for key, value in recorded[1].items() if key != "content"}  # include_binary_content=False
    assert pydantic_ai_tool_files.tool_message_text(unrecorded) is None
