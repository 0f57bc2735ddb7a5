"""The Anthropic SDK's own tracing and OpenLLMetry's anthropic instrumentation, the user sending a PDF and images and a
tool an image, read from their capture (`anthropic-sdk_openllmetry_document`).

Each call is reported twice, with one response id: by the SDK's `anthropic.messages.create` span, the one kept for the
step (trajectory/same_call.py: its streamed output tokens are right), and by OpenLLMetry's `anthropic.chat` span. The
SDK's content mode keeps no image or document data: a message's `image` and `document` blocks are written as their type
alone (`{"type": "anthropic_image"}`), an image in a `tool_result` as `{"type": "image"}`. OpenLLMetry keeps them: the
PNG as a GenAI `blob` part (its base64), the `url` image as a `uri` part, the PDF as the Anthropic `document` block
itself (`source.data` its base64, `title`), and a `tool_result`'s content as the block list the app sent (the
screenshot's `image` block with its base64). The app's `execute_tool` span of the screenshot records no result (an
image is no attribute value): the next call's input is the only record of what the model was shown.

Before: the question's PDF and two images were in no step (the SDK's placeholders read as unknown parts, dropped),
and each screenshot's result was the SDK's `[{"type": "text", …}, {"type": "image"}]` as text.
"""

from __future__ import annotations

import base64
import json
from typing import Any

import atif

from evalkit.trajectory import media
from evalkit.trajectory.build import map_one_span
from evalkit.trajectory.from_spans import trajectory_from_spans
from evalkit.trajectory.mappers import anthropic_sdk_tracing
from evalkit.trajectory.span import Span
from tests.captures import corpus
from tests.trajectory.span_fixtures import capture_document, capture_spans, capture_truth, results_by_call

CAPTURE = "anthropic-sdk_openllmetry_document"
SESSION = "anthropic-expenses-document-1"
OPENLLMETRY_SCOPE = "opentelemetry.instrumentation.anthropic"
Json = dict[str, Any]


def _sent_blocks() -> dict[str, Json]:
    """The base64 blocks the model was sent (the fake LLM's log), by where: the question's `document` and `image`, each
    screenshot by its tool call id."""
    found: dict[str, Json] = {}
    for entry in corpus.load(CAPTURE).llm_log:
        for message in entry["request"]["messages"]:
            for block in message["content"] if isinstance(message["content"], list) else ():
                if block["type"] in ("document", "image") and block["source"]["type"] == "base64":
                    found[block["type"]] = block
                for inner in block.get("content") or () if block["type"] == "tool_result" else ():
                    if isinstance(inner, dict) and inner.get("type") == "image":
                        found[block["tool_use_id"]] = inner
    return found


def _read_back(document: Json, path: str) -> bytes:
    """The bytes a reference names, read back from its span alone (as the media endpoint does)."""
    ref = media.parse_reference(path)
    (span,) = [s for s in capture_spans(CAPTURE) if (s.trace_id, s.span_id) == (ref.trace_id, ref.span_id)]
    assert span.scope_name == OPENLLMETRY_SCOPE  # the report that holds it, not the SDK's kept for the step
    return media.referenced_image(map_one_span(span), ref.where, ref.n).data


def _steps(document: Json, source: str) -> list[Json]:
    return [step for step in document["steps"] if step["source"] == source]


def test_the_questions_images_are_image_parts_and_its_pdf_a_marker_never_their_base64() -> None:
    document = capture_document(CAPTURE, SESSION)
    sent = _sent_blocks()
    question, follow_up = _steps(document, "user")
    text, receipt, product, pdf = question["message"]
    assert text["text"].startswith("Here is my invoice")
    # The receipt photo (~7.8k characters of base64) referenced in OpenLLMetry's span of call 0, as media part 1 of its
    # input (the PDF is part 0); its bytes read back from that span alone are the ones sent.
    assert receipt["type"] == "image" and receipt["source"]["media_type"] == "image/png"
    assert receipt["source"]["path"].endswith("/input/1")
    assert _read_back(document, receipt["source"]["path"]) == base64.b64decode(sent["image"]["source"]["data"])
    assert question["extra"]["media"] == [{"path": receipt["source"]["path"], "media_type": "image/png",
                                           "bytes": len(base64.b64decode(sent["image"]["source"]["data"]))}]
    # The `url` image source as its URL.
    assert product == {"type": "image", "source": {"media_type": "image/jpeg",
                                                   "path": "https://example.com/shop/products/espresso-cups.jpg"}}
    # ATIF has no document part: the PDF is named, with its size.
    pdf_bytes = len(base64.b64decode(sent["document"]["source"]["data"]))
    assert pdf == {"type": "text", "text": f'[application/pdf "invoice-2025-118.pdf": {pdf_bytes} bytes, omitted]'}
    assert follow_up["message"] == "Does the refund form show the same amount?"
    # The step is still the SDK's report of the call (its tokens), its question OpenLLMetry's.
    first = _steps(document, "agent")[0]
    assert first["extra"]["emitter"] == "otel-genai" and first["metrics"]["prompt_tokens"] == 3120
    text_of_document = json.dumps(document)
    assert sent["document"]["source"]["data"] not in text_of_document
    assert sent["image"]["source"]["data"] not in text_of_document


def test_each_screenshot_is_its_calls_result_as_an_image_read_from_the_next_calls_input() -> None:
    document = capture_document(CAPTURE, SESSION)
    sent = _sent_blocks()
    results = {call_id: result for step in _steps(document, "agent")
               for call_id, result in results_by_call(step).items()}
    # The order page (~4.9k characters of base64): referenced in the input of OpenLLMetry's span of call 1, media part 3
    # (after the question's three), never its base64.
    caption, page = results["toolu_0_1"]["content"]
    assert caption == {"type": "text", "text": "Screenshot of orders/A-1001"}
    assert page["type"] == "image" and page["source"]["path"].endswith("/input/3")
    assert _read_back(document, page["source"]["path"]) == base64.b64decode(sent["toolu_0_1"]["source"]["data"])
    assert results["toolu_0_1"]["extra"]["media"][0]["path"] == page["source"]["path"]
    assert sent["toolu_0_1"]["source"]["data"] not in json.dumps(document)
    # The refund form's small PNG inline, as any small image sent whole is.
    caption, form = results["toolu_3_0"]["content"]
    assert caption == {"type": "text", "text": "Screenshot of refunds/A-1001"}
    assert form["source"] == {"media_type": "image/png",
                              "path": f"data:image/png;base64,{sent['toolu_3_0']['source']['data']}"}
    # The raising lookup's error text, flagged from its span; nothing of the history a step again.
    assert results["toolu_0_0"]["content"] == "Error: the order service is unavailable (503)"
    assert results["toolu_0_0"]["extra"]["is_error"] is True
    assert len(_steps(document, "user")) == 2 and not any(s.get("is_copied_context") for s in document["steps"])
    assert corpus.compare(document, capture_truth(CAPTURE), call_ids=True) == []
    atif.Trajectory.model_validate(document)


def _sdk_spans() -> list[Span]:
    return [span for span in capture_spans(CAPTURE) if span.scope_name != OPENLLMETRY_SCOPE]


def test_the_sdks_own_spans_alone_say_each_image_and_document_was_not_recorded() -> None:
    document = trajectory_from_spans(_sdk_spans(), session_id=SESSION).document()
    question = _steps(document, "user")[0]["message"]
    note = anthropic_sdk_tracing.NOT_RECORDED
    assert question.splitlines()[1:] == [f"[document: {note}]", f"[image: {note}]", f"[image: {note}]"]
    screenshot = results_by_call(_steps(document, "agent")[0])["toolu_0_1"]
    assert screenshot["content"] == f"Screenshot of orders/A-1001\n[image: {note}]"
    assert "anthropic_image" not in json.dumps(document)
