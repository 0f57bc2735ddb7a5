"""A spoken question and spoken answers over OpenAI's Chat Completions, as OpenInference's openai instrumentation
records them (the `openai-sdk_openinference_audio` capture, `trajectory/mappers/openai_chat_audio.py`).

Turn 1 asks in text and a WAV voice note (`input_audio`), which the instrumentation's flattened messages drop; its
last call answers in speech (`message.audio`: no content, a transcript), re-sent in turn 2 as `{"role": "assistant",
"audio": {"id": …}}`. Turn 2 is streamed: its spoken answer's transcript is in no span (a known gap of the capture).
"""

from __future__ import annotations

import base64
import json
from typing import Any

from span_fixtures import capture_document, capture_spans

from evalkit.trajectory import build, media
from evalkit.trajectory.atif import AUDIO_VERSION
from evalkit.trajectory.mappers import openai_chat_audio
from evalkit.trajectory.span import Span
from evalkit.trajectory.validate import errors_only, validate_trajectory
from tests.captures import corpus, questions

CAPTURE = "openai-sdk_openinference_audio"
SESSION = "oi-openai-audio-trip-1"


def _log() -> list[dict[str, Any]]:
    return corpus.load(CAPTURE).llm_log


def _call_spans() -> list[Span]:
    """The instrumentation's ChatCompletion spans, in the order of the calls."""
    return sorted((s for s in capture_spans(CAPTURE) if openai_chat_audio.is_chat_completion(s)),
                  key=lambda span: span.start_time_unix_nano)


def _call_steps(document: dict[str, Any]) -> list[dict[str, Any]]:
    """The agent steps of the calls, in the order of the calls (each names its span)."""
    by_span = {step["extra"]["span_id"]: step for step in document["steps"] if step["source"] == "agent"}
    return [by_span[span.span_id] for span in _call_spans()]


def test_the_voice_note_is_an_audio_part_read_back_as_it_was_sent() -> None:
    text, voice_note = _log()[0]["request"]["messages"][1]["content"]
    sent = base64.b64decode(voice_note["input_audio"]["data"])
    document = capture_document(CAPTURE, SESSION)
    (question, again) = [step for step in document["steps"] if step["source"] == "user"]
    # The question's words, then its voice note: an ATIF audio part (v1.8's), referenced at the first call's span
    # (10,728 base64 characters, over the inline limit), half a second long as its WAV header says.
    written, spoken = question["message"]
    assert written == {"type": "text", "text": text["text"]}
    path = f"evalkit-span://{_call_spans()[0].trace_id}/{_call_spans()[0].span_id}/input/0"
    assert spoken == {"type": "audio", "source": {"media_type": "audio/wav", "path": path, "duration_sec": 0.5}}
    assert question["extra"]["media"] == [{"path": path, "media_type": "audio/wav", "bytes": len(sent)}]
    assert again["message"] == _log()[3]["request"]["messages"][-1]["content"]  # turn 2 asks in text alone
    assert document["schema_version"] == AUDIO_VERSION
    assert errors_only(validate_trajectory(document)) == []
    # The reference reads back the bytes the model was sent, as the media route reads them; no base64 as text.
    clip = media.referenced_image(build.map_one_span(_call_spans()[0]), "input", 0)
    assert (clip.media_type, clip.data) == ("audio/wav", sent)
    assert voice_note["input_audio"]["data"][:64] not in json.dumps(document)
    # Each question once, as asked: its words (tests/captures/questions.py).
    assert questions.missing_questions(document, _log()) == []


def test_a_spoken_answer_is_its_transcript_with_its_clip_noted() -> None:
    answered = _log()[2]["response"]["audio"]
    step = _call_steps(capture_document(CAPTURE, SESSION))[2]
    assert step["message"] == answered["transcript"]
    # The clip the model spoke, noted (a quarter second of WAV), its base64 in no step.
    assert step["extra"]["audio_answer"] == {"id": answered["id"], "format": "wav", "bytes": answered["bytes"],
                                             "duration_sec": 0.25, "expires_at": answered["expires_at"]}


def test_a_re_sent_spoken_answer_is_that_answer_not_a_step_of_its_own() -> None:
    # Turn 2's calls re-send call 2's answer by its clip's id alone, as OpenAI's audio guide does.
    resent = [m for m in _log()[3]["request"]["messages"] if m["role"] == "assistant" and "audio" in m]
    assert resent == [{"role": "assistant", "audio": {"id": _log()[2]["response"]["audio"]["id"]}}]
    document = capture_document(CAPTURE, SESSION)
    agent_steps = [step for step in document["steps"] if step["source"] == "agent"]
    # One step a call, none copied from the history: the re-sent answer is known as call 2's.
    assert [step["extra"]["span_id"] for step in agent_steps] == [span.span_id for span in _call_spans()]
    assert not any(step.get("is_copied_context") for step in document["steps"])
    assert agent_steps[2]["message"] == _log()[2]["response"]["audio"]["transcript"]


def test_each_step_counts_its_audio_tokens() -> None:
    steps = _call_steps(capture_document(CAPTURE, SESSION))
    shown = [((step["metrics"].get("extra") or {}).get("input_audio_tokens"),
              (step["metrics"].get("extra") or {}).get("output_audio_tokens")) for step in steps]
    assert shown == [(entry["response"]["usage"]["input_audio_tokens"] or None,
                      entry["response"]["usage"]["output_audio_tokens"] or None) for entry in _log()]
    assert shown[4] == (89, 42)  # the voice note and the re-sent answer heard; the streamed answer's audio


def test_a_streamed_spoken_answer_shows_no_piece_of_it_as_its_words() -> None:
    span = _call_spans()[4]
    answered = _log()[4]["response"]["audio"]
    # As recorded: OpenInference's accumulator kept the last transcript piece, not the answer's.
    kept = json.loads(span.attributes["output.value"])["choices"][0]["message"]["audio"]["transcript"]
    assert kept != answered["transcript"] and answered["transcript"].endswith(kept)
    step = _call_steps(capture_document(CAPTURE, SESSION))[4]
    assert step["message"] == ""
    assert step["extra"]["audio_answer"] == {"id": answered["id"], "format": "pcm16",
                                             "not_recorded": openai_chat_audio.NOT_RECORDED,
                                             "expires_at": answered["expires_at"]}
