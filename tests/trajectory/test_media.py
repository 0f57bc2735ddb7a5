"""Images in a user's message become ATIF image content parts; a large data URL is referenced, not inlined."""

from __future__ import annotations

import base64
import json

import atif

from evalkit.trajectory.build import build_trajectory
from evalkit.trajectory.validate import errors_only, validate_trajectory
from tests.trajectory.span_fixtures import span_from_dict

PNG = "data:image/png;base64," + base64.b64encode(b"\x89PNG" + bytes(30_000)).decode()


def test_images_are_content_parts_and_a_big_payload_is_referenced() -> None:
    messages = [{"role": "user", "content": [
        {"type": "text", "text": "What is in these?"},
        {"type": "image_url", "image_url": {"url": PNG}},
        {"type": "image_url", "image_url": {"url": "https://example.com/cat.jpg"}}]}]
    span = span_from_dict({"span_id": "01", "name": "chat", "attributes": {
        "gen_ai.operation.name": "chat", "gen_ai.request.model": "gpt-4o",
        "gen_ai.usage.input_tokens": 10, "gen_ai.usage.output_tokens": 2,
        "gen_ai.input.messages": json.dumps(messages),
        "gen_ai.output.messages": json.dumps([{"role": "assistant", "content": "A file and a cat."}])}})
    document = build_trajectory([span]).document
    user = next(s for s in document["steps"] if s["source"] == "user")
    text, png, cat = user["message"]
    assert text == {"type": "text", "text": "What is in these?"}
    assert png["type"] == "image" and png["source"]["media_type"] == "image/png"
    assert png["source"]["path"].startswith(f"evalkit-span://{span.trace_id}/{span.span_id}/")
    assert cat == {"type": "image", "source": {"media_type": "image/jpeg", "path": "https://example.com/cat.jpg"}}
    (reference,) = user["extra"]["media"]
    assert reference["bytes"] == 30_004 and reference["path"] == png["source"]["path"]
    assert "base64" not in json.dumps(document)
    assert not errors_only(validate_trajectory(document, schema=True))
    atif.Trajectory.model_validate(document)
