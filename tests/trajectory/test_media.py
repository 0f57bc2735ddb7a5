"""Images in a user's message become ATIF image content parts; a large data URL is referenced, not inlined."""

from __future__ import annotations

import base64
import json

import atif

from evalkit.trajectory import media
from evalkit.trajectory.build import build_trajectory, map_one_span
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


def test_a_reference_names_its_image_among_all_the_media_of_the_span_and_reads_back_as_it() -> None:
    # Turn two's call re-sends turn one's question (an image) before its own (another): its image is the second
    # media part of that span's input, and the reference says so, so that reading it back gives that image.
    second_png = "data:image/png;base64," + base64.b64encode(b"\x89PNG" + bytes([7]) * 20_000).decode()
    first_turn = {"role": "user", "content": [{"type": "text", "text": "This one?"},
                                              {"type": "image_url", "image_url": {"url": PNG}}]}
    answer = {"role": "assistant", "content": "A file."}
    second_turn = {"role": "user", "content": [{"type": "text", "text": "And this?"},
                                               {"type": "image_url", "image_url": {"url": second_png}}]}

    def call(span_id: str, messages: list[dict[str, object]], start: int) -> object:
        return span_from_dict({"span_id": span_id, "name": "chat", "start_time_unix_nano": start, "attributes": {
            "gen_ai.operation.name": "chat", "gen_ai.request.model": "gpt-4o",
            "gen_ai.usage.input_tokens": 10, "gen_ai.usage.output_tokens": 2,
            "gen_ai.input.messages": json.dumps(messages),
            "gen_ai.output.messages": json.dumps([{"role": "assistant", "content": "A file."}])}})

    spans = [call("01", [first_turn], 1_000), call("02", [first_turn, answer, second_turn], 2_000)]
    document = build_trajectory(spans).document
    first, second = (s for s in document["steps"] if s["source"] == "user")
    assert first["message"][1]["source"]["path"].endswith("/01/input/0")
    assert second["message"][1]["source"]["path"].endswith("/02/input/1")
    for span, step, url in ((spans[0], first, PNG), (spans[1], second, second_png)):
        ref = media.parse_reference(step["message"][1]["source"]["path"])
        assert (ref.trace_id, ref.span_id) == (span.trace_id, span.span_id)
        image = media.referenced_image(map_one_span(span), ref.where, ref.n)
        assert (image.media_type, image.data) == ("image/png", base64.b64decode(url.split(",", 1)[1]))
