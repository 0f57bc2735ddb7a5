"""Images sent to the OpenAI Python SDK's Chat Completions, as OpenLIT's OpenAI instrumentation records them (the
`openai-sdk_openlit_image` capture).

Turn 1 asks about a small PNG data URL and an `https://` URL, turn 2 adds a ~50 KB PNG data URL. OpenLIT's
`build_input_messages` writes an `image_url` part as a GenAI `uri` part (`modality: image`) but skips a `data:` URL
("Skip data URIs"): only the https image is in any call span or inference event, and the trajectory shows it alone.
Also read here: the request parameters OpenLIT writes for a Chat Completions call that set none (`seed` 0, `user`
""), which are no parameters of the step (`trajectory/mappers/openlit.py`).
"""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

from span_fixtures import capture_document, capture_logs, capture_spans

from evalkit.trajectory.mappers import openlit
from evalkit.trajectory.mappers.reader import SpanReader
from evalkit.trajectory.operations import LlmCall
from evalkit.trajectory.span import Span
from tests.captures import corpus, questions

CAPTURE = "openai-sdk_openlit_image"
SESSION = "openlit-image-trip-1"


def _asked(seq: int) -> list[dict[str, Any]]:
    """The content parts of the last user message the fake LLM was sent on call `seq`: the question as asked."""
    request = corpus.load(CAPTURE).llm_log[seq]["request"]
    return next(m for m in reversed(request["messages"]) if m["role"] == "user")["content"]


def _call_spans() -> list[Span]:
    """The OpenAI instrumentation's chat spans, in the order of the calls."""
    return sorted((s for s in capture_spans(CAPTURE) if s.scope_name == "openlit.instrumentation.openai"),
                  key=lambda span: span.start_time_unix_nano)


def _user_steps(document: dict[str, Any]) -> list[dict[str, Any]]:
    return [step for step in document["steps"] if step["source"] == "user"]


def test_the_https_image_is_an_image_part_and_no_call_span_holds_a_data_url() -> None:
    text, png, photo = _asked(0)
    _, large = _asked(3)
    assert png["image_url"]["url"].startswith("data:image/png;base64,")
    assert large["image_url"]["url"].startswith("data:image/png;base64,")
    # As recorded: each call's question its text and the https image; neither PNG in any call span or inference event.
    first = json.loads(_call_spans()[0].attributes["gen_ai.input.messages"])
    photo_part = {"type": "uri", "modality": "image", "uri": photo["image_url"]["url"]}
    assert first[1] == {"role": "user", "parts": [{"type": "text", "content": text["text"]}, photo_part]}
    recorded = [json.dumps(span.attributes) for span in _call_spans()]
    recorded += [json.dumps(log.attributes) for log in capture_logs(CAPTURE)]
    assert not [attributes for attributes in recorded if "data:image" in attributes]

    document = capture_document(CAPTURE, SESSION)
    first_question, second_question = _user_steps(document)  # turn 2's calls re-send turn 1's question: no step again
    # The photo an image part at its URL (a JPEG by its name), nothing referenced; of the PNGs nothing, as recorded.
    assert first_question["message"] == [
        {"type": "text", "text": text["text"]},
        {"type": "image", "source": {"media_type": "image/jpeg", "path": photo["image_url"]["url"]}}]
    assert "media" not in first_question.get("extra", {})
    assert second_question["message"] == _asked(3)[0]["text"]
    assert questions.missing_questions(document, corpus.load(CAPTURE).llm_log) == []


def test_the_turn_function_holding_the_images_as_text_is_no_step() -> None:
    """`@openlit.trace` on the turn function records its arguments, the whole message list with both data URLs, as a
    Python repr (`function.args`): an application function no call asked for, not what a call was sent."""
    (_, png, _), (_, large) = _asked(0), _asked(3)
    turns = [span for span in capture_spans(CAPTURE) if span.scope_name == openlit.MANUAL_SCOPE
             and span.name == "chat_turn"]
    assert len(turns) == 2 and large["image_url"]["url"] in turns[1].attributes["function.args"]
    document = capture_document(CAPTURE, SESSION)
    shown = json.dumps(document)
    for image in (png, large):
        assert image["image_url"]["url"].split(",", 1)[1][:64] not in shown
    assert not [step for step in document["steps"] if step.get("llm_call_count") == 0]


def test_the_tool_loop_is_the_conversation_that_happened() -> None:
    document = capture_document(CAPTURE, SESSION)
    truth = corpus.GroundTruth.of(corpus.load(CAPTURE).llm_log)
    assert corpus.compare(document, truth, call_ids=True) == []
    # Each call re-sends the history: one user step per question, one agent step per call.
    assert [s["source"] for s in document["steps"]] == ["system", "user", "agent", "agent", "agent", "user", "agent",
                                                         "agent"]
    # The parallel call that raised: its error text as the model was shown it, flagged from its span; then asked again.
    first = document["steps"][2]
    oslo = first["observation"]["results"][1]
    assert oslo["extra"]["is_error"] and oslo["content"] == truth.tool_results[first["tool_calls"][1]["tool_call_id"]]
    assert document["steps"][3]["tool_calls"][0]["arguments"] == {"city": "Oslo"}


def test_a_chat_call_s_seed_and_user_placeholders_are_no_request_parameters() -> None:
    """OpenLIT writes `gen_ai.request.seed` 0 and `gen_ai.request.user` "" for a Chat Completions request that set
    neither (the capture's requests set neither): no request parameters of the step."""
    log = corpus.load(CAPTURE).llm_log
    assert not [entry for entry in log if {"seed", "user"} & set(entry["request"])]
    for span in _call_spans():
        assert (span.attributes["gen_ai.request.seed"], span.attributes["gen_ai.request.user"]) == (0, "")
    document = capture_document(CAPTURE, SESSION)
    requests = [s["extra"]["request"] for s in document["steps"] if s.get("llm_call_count") == 1]
    assert len(requests) == 5
    assert not [request for request in requests if {"seed", "user"} & set(request)]
    assert requests[3] == {"stream": True, "frequency_penalty": 0.0, "presence_penalty": 0.0, "temperature": 1.0,
                           "top_p": 1.0}
    # A seed or user the request did set is kept.
    span = _call_spans()[0]
    given = replace(span, attributes={**span.attributes, "gen_ai.request.seed": 42, "gen_ai.request.user": "u-7"})
    call = openlit.map_span(SpanReader(given), ())
    assert isinstance(call, LlmCall) and (call.extra["request"]["seed"], call.extra["request"]["user"]) == (42, "u-7")
