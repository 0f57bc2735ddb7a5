"""Google ADK shown images, by the user and by a tool, under ADK's own tracing (the `google-adk_native_image`
capture): a user `types.Content` of a text, two `Part.from_bytes` PNGs (one a 7,454-character data URL, one a small
logo) and a `Part.from_uri` image; `take_screenshot` returning a dict holding a `Part.from_bytes` PNG beside text,
in parallel with `page_status` raising once (`ReflectAndRetryToolPlugin`), retried; a second turn streamed.

ADK's GenAI-conventions converter writes a message's inline data as a `blob` part whose `data` is the bytes, which
the JSON of the attribute cannot hold: `"<not serializable>"` in their stead. So no span holds the user's two PNGs;
each is media saying so, not an image a reference cannot read back (`google_adk._unrecorded_inline_data`). Its
`file_data` part keeps the URI: the third image is an image part at its address (`messages._MEDIA_TYPES`). The
screenshot is in no span at all (ADK records the `FunctionResponse`'s `response`, not the `parts` it moved the image
to; LiteLlm sent it in a user message of its own after the tool messages): each screenshot's result is the text the
model was sent for it.
"""

from __future__ import annotations

import json
import re
from typing import Any

import atif
from span_fixtures import capture_document, capture_spans, capture_truth, results_by_call

from evalkit.trajectory.mappers import messages
from evalkit.trajectory.operations import Part
from tests.captures import corpus, questions

CAPTURE = "google-adk_native_image"
SESSION = "adk-image-pages-1"
Json = dict[str, Any]
# A run of base64 long enough to be image bytes, not a word.
_BASE64_RUN = re.compile(r"[A-Za-z0-9+/]{200,}={0,2}")


def _log() -> list[Json]:
    return corpus.load(CAPTURE).llm_log


def _sent_images() -> list[str]:
    """The image URLs of the first question as LiteLlm sent it (data URLs for the inline PNGs, the https one)."""
    user = next(message for message in _log()[0]["request"]["messages"] if message["role"] == "user")
    return [part["image_url"]["url"] for part in user["content"] if part["type"] == "image_url"]


def test_the_users_inline_images_say_they_were_not_recorded_and_the_linked_one_is_shown() -> None:
    sent = _sent_images()
    inline = [url for url in sent if url.startswith("data:image/png;base64,")]
    linked = [url for url in sent if url.startswith("https://")]
    assert len(inline) == 2 and len(linked) == 1 and max(map(len, inline)) > 4096
    document = capture_document(CAPTURE, SESSION)
    question = next(step for step in document["steps"] if step["source"] == "user")
    assert question["message"] == [
        {"type": "text", "text": "Here is my mockup of the dashboard, our logo and the style guide's header. Does the "
                                 "live dashboard match?"},
        {"type": "image", "source": {"media_type": "image/png", "path": linked[0]}},
        # One marker for each PNG sent inline: what it was and why no span holds it, never a reference to nothing.
        {"type": "text", "text": "\n".join(["[image/png: not recorded (ADK's tracing writes inline bytes as "
                                            "<not serializable>)]"] * len(inline))},
    ]
    assert "media" not in question.get("extra", {})
    assert "evalkit-span://" not in json.dumps(document)


def test_adk_writes_no_bytes_of_an_image_in_any_span() -> None:
    """What the mapping is read from: every inline image of every call's input is ADK's placeholder; none of the bytes
    the model was sent (the user's PNGs, the screenshots LiteLlm sent after the tool messages) is in any attribute."""
    spans = capture_spans(CAPTURE)
    calls = [span for span in spans if span.name.startswith("generate_content ")]
    assert len(calls) == 5
    for span in calls:
        parts = [part for message in json.loads(span.attributes["gen_ai.input.messages"]) for part in message["parts"]]
        blobs = [part for part in parts if part["type"] == "blob"]
        assert blobs == [{"mime_type": "image/png", "data": "<not serializable>", "type": "blob"}] * 2
        assert [part["uri"] for part in parts if part["type"] == "file_data"] == [_sent_images()[2]]
    payloads = {url.split(",", 1)[1] for entry in _log() for message in entry["request"]["messages"]
                if isinstance(message.get("content"), list)
                for part in message["content"] if part["type"] == "image_url"
                for url in [part["image_url"]["url"]] if url.startswith("data:")}
    assert len(payloads) == 4  # the mockup, the logo, two screenshots
    recorded = json.dumps([span.attributes for span in spans], default=str)
    assert not any(payload[:64] in recorded for payload in payloads)


def test_each_screenshot_result_is_what_the_tool_message_said() -> None:
    document = capture_document(CAPTURE, SESSION)
    results = {call_id: result for step in corpus.llm_steps(document) for call_id, result in
               results_by_call(step).items()}
    sent = {message["tool_call_id"]: message["content"] for entry in _log() for message in entry["request"]["messages"]
            if message["role"] == "tool"}
    assert sorted(results) == sorted(sent) == ["call_0_0", "call_0_1", "call_1_0", "call_3_0"]
    assert results["call_0_0"]["content"] == sent["call_0_0"] == '{"page": "/dashboard", "size": "160x100"}'
    assert results["call_3_0"]["content"] == sent["call_3_0"] == '{"page": "/settings", "size": "160x100"}'
    # The failed status check is ReflectAndRetryToolPlugin's answer, flagged with the exception it caught.
    assert results["call_0_1"]["extra"]["error"] == {"status": "error", "type": "ValueError",
                                                     "message": "paths start with '/': did you mean '/dashboard'?"}
    assert [call_id for call_id, result in results.items() if result.get("extra", {}).get("is_error")] == ["call_0_1"]


def test_the_conversation_is_the_one_that_happened_and_holds_no_base64() -> None:
    document = capture_document(CAPTURE, SESSION)
    log = _log()
    assert [step["source"] for step in document["steps"]] == [
        "system", "user", "agent", "agent", "agent", "user", "agent", "agent"]
    assert corpus.compare(document, capture_truth(CAPTURE), call_ids=True) == []
    # LiteLlm's user messages holding a screenshot alone are no questions, nor is the history re-sent.
    assert questions.missing_questions(document, log) == []
    assert not any(step.get("is_copied_context") for step in document["steps"])
    assert not _BASE64_RUN.search(json.dumps(document))
    atif.Trajectory.model_validate(document)


def test_a_file_data_part_is_media_at_its_uri() -> None:
    # ADK's converter's part for a `types.FileData` (`_experimental_semconv._to_part`), as the span holds it.
    part = messages.parse_part({"mime_type": "image/png", "uri": "gs://bucket/header.png", "type": "file_data"})
    assert part == Part("media", media_type="image/png", uri="gs://bucket/header.png")
