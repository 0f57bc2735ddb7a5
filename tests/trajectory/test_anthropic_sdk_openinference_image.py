"""The Anthropic Python SDK traced by OpenInference's anthropic instrumentation, the user sending images and a tool
returning one, read from their capture (`anthropic-sdk_openinference_image`).

What OpenInference records: a message's `image` block as `message_content.image.image.url`, a base64 source as its
data URL (the receipt photo, ~7.8k characters, under OpenInference's 32,000-character limit: whole), a `url` source as
its URL. A `tool_result` is a `tool` message whose `message.content` is its content blocks' JSON, every base64 source's
data written `__REDACTED__`, so the screenshot's image is in no attribute of the call's messages; the request's
`input.value` (nothing redacted) has the blocks as sent, and `is_error`, which the flattened messages drop. The
application's `OITracer.tool` span records what the tool returned as `output.value`: the blocks, base64 and all.

Before: the question was already right (its images image parts, the large one referenced); each screenshot's result
was the tool span's `output.value` as text, its ~4.9k characters of base64 in the trajectory; built from the call spans
alone, each screenshot was its redacted JSON as text and the failed lookup not flagged.
"""

from __future__ import annotations

import base64
import json
from dataclasses import replace
from typing import Any

import atif

from evalkit.trajectory import media
from evalkit.trajectory.build import map_one_span
from evalkit.trajectory.from_spans import trajectory_from_spans
from evalkit.trajectory.mappers import anthropic_openinference
from evalkit.trajectory.span import Span
from tests.captures import corpus, questions
from tests.trajectory.span_fixtures import capture_document, capture_spans, capture_truth, results_by_call

CAPTURE = "anthropic-sdk_openinference_image"
SESSION = "oi-anthropic-expenses-image-1"
Json = dict[str, Any]


def _sent_images() -> dict[str, Json]:
    """The base64 image blocks the model was sent (the fake LLM's log): the question's under "question", each
    screenshot under its tool call id."""
    found: dict[str, Json] = {}
    for entry in corpus.load(CAPTURE).llm_log:
        for message in entry["request"]["messages"]:
            for block in message["content"] if isinstance(message["content"], list) else ():
                if block["type"] == "image" and block["source"]["type"] == "base64":
                    found["question"] = block
                for inner in block.get("content") or () if block["type"] == "tool_result" else ():
                    if isinstance(inner, dict) and inner.get("type") == "image":
                        found[block["tool_use_id"]] = inner
    return found


def _read_back(spans: list[Span], path: str) -> bytes:
    """The bytes a reference names, read back from its span alone (as the media endpoint does)."""
    ref = media.parse_reference(path)
    (span,) = [s for s in spans if (s.trace_id, s.span_id) == (ref.trace_id, ref.span_id)]
    return media.referenced_image(map_one_span(span), ref.where, ref.n).data


def _decoded(block: Json) -> bytes:
    return base64.b64decode(block["source"]["data"])


def _results(document: Json) -> dict[str, Json]:
    return {call_id: result for step in document["steps"] if step["source"] == "agent"
            for call_id, result in results_by_call(step).items()}


def test_the_questions_images_are_image_parts_the_large_one_referenced() -> None:
    spans = capture_spans(CAPTURE)
    document = capture_document(CAPTURE, SESSION)
    question, follow_up = [step for step in document["steps"] if step["source"] == "user"]
    text, receipt, product = question["message"]
    assert text["text"].startswith("Here is a photo of my receipt")
    assert receipt["type"] == "image" and receipt["source"]["path"].endswith("/input/0")
    assert _read_back(spans, receipt["source"]["path"]) == _decoded(_sent_images()["question"])
    assert product == {"type": "image", "source": {"media_type": "image/jpeg",
                                                   "path": "https://example.com/shop/products/espresso-cups.jpg"}}
    assert follow_up["message"] == "Does the refund form show the same amount?"
    assert questions.missing_questions(document, corpus.load(CAPTURE).llm_log) == []


def test_each_screenshot_is_its_tool_spans_result_as_content_parts_never_base64_text() -> None:
    spans = capture_spans(CAPTURE)
    document = capture_document(CAPTURE, SESSION)
    sent = _sent_images()
    results = _results(document)
    # The order page (~4.9k characters of base64): referenced in its tool span's result, the bytes the model was sent.
    caption, page = results["toolu_0_1"]["content"]
    assert caption == {"type": "text", "text": "Screenshot of orders/A-1001"}
    assert page["type"] == "image" and page["source"]["media_type"] == "image/png"
    ref = media.parse_reference(page["source"]["path"])
    assert (ref.span_id, ref.where, ref.n) == (results["toolu_0_1"]["extra"]["span_id"], "result", 0)
    assert _read_back(spans, page["source"]["path"]) == _decoded(sent["toolu_0_1"])
    assert results["toolu_0_1"]["extra"]["media"] == [{"path": page["source"]["path"], "media_type": "image/png",
                                                        "bytes": len(_decoded(sent["toolu_0_1"]))}]
    # The refund form's small PNG inline, as a small image sent whole is.
    caption, form = results["toolu_3_0"]["content"]
    assert caption == {"type": "text", "text": "Screenshot of refunds/A-1001"}
    assert form["source"]["path"] == f"data:image/png;base64,{sent['toolu_3_0']['source']['data']}"
    shown = json.dumps(document)
    assert sent["toolu_0_1"]["source"]["data"] not in shown and sent["question"]["source"]["data"] not in shown
    assert results["toolu_0_0"]["extra"]["is_error"] is True
    assert corpus.compare(document, capture_truth(CAPTURE), call_ids=True) == []
    assert not any(step.get("is_copied_context") for step in document["steps"])
    atif.Trajectory.model_validate(document)


def _call_spans() -> list[Span]:
    """The instrumentation's spans alone: an application that traces no tool."""
    return [span for span in capture_spans(CAPTURE) if span.scope_name == anthropic_openinference.SCOPE]


def test_without_tool_spans_the_next_requests_blocks_show_each_screenshot_and_the_failure() -> None:
    spans = _call_spans()
    document = trajectory_from_spans(spans, session_id=SESSION).document()
    sent = _sent_images()
    results = _results(document)
    # The order page, redacted in the flattened tool message, read from call 1's `input.value`: media part 2 of its
    # input (after the question's two).
    caption, page = results["toolu_0_1"]["content"]
    assert caption == {"type": "text", "text": "Screenshot of orders/A-1001"}
    assert page["source"]["path"].endswith("/input/2")
    assert _read_back(spans, page["source"]["path"]) == _decoded(sent["toolu_0_1"])
    assert "__REDACTED__" not in json.dumps(document)
    # The lookup the request sent back `is_error`: flagged, though no span of the tool says so.
    assert results["toolu_0_0"]["content"] == "Error: the order service is unavailable (503)"
    assert results["toolu_0_0"]["extra"]["is_error"] is True
    assert corpus.compare(document, capture_truth(CAPTURE), call_ids=True) == []


def test_with_no_request_recorded_a_redacted_screenshot_says_it_was_not_recorded() -> None:
    """A call span whose request (`input.value`) is not recorded: the flattened blocks alone, the redacted image a
    marker saying why, never an image at `__REDACTED__` nor the blocks' JSON."""
    spans = [replace(span, attributes={k: v for k, v in span.attributes.items() if k != "input.value"})
             for span in _call_spans()]
    document = trajectory_from_spans(spans, session_id=SESSION).document()
    screenshot = _results(document)["toolu_0_1"]
    assert screenshot["content"] == ("Screenshot of orders/A-1001\n"
                                     f"[image/png: {anthropic_openinference.REDACTED_SOURCE}]")
    assert "__REDACTED__" not in json.dumps(document)
