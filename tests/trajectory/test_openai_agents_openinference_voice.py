"""openai-agents' voice pipeline (`VoicePipeline`, `SingleAgentVoiceWorkflow`, two `AudioInput` turns), traced by
OpenInference (the `openai-agents_openinference_voice` capture).

Each turn is a trace of its own: the clip transcribed (a `transcription` span), the agent run on the transcript
(streamed), the answer spoken sentence by sentence (a `speech_group` span of `speech` spans). OpenInference's processor
writes the voice spans bare, named after their type, without their data (models, voice, texts, audio). The trajectory
must be the conversation all the same, each question a user step marked spoken (transcribed) and each spoken answer
its step marked said, the speech no step of its own (`trajectory/mappers/openai_agents_voice.py`); the ground truth of
what was heard and said is the fake LLM's `llm_audio.jsonl`.
"""

from __future__ import annotations

import json
from typing import Any

from span_fixtures import capture_document, capture_spans, results_by_call

from evalkit.trajectory.mappers import openai_agents_voice
from evalkit.trajectory.operations import LlmCall, Message, Part
from evalkit.trajectory.span import Span
from tests.captures import corpus

CAPTURE = "openai-agents_openinference_voice"
SESSION = "oa-oi-voice-1"


def _log() -> list[dict[str, Any]]:
    return corpus.load(CAPTURE).llm_log


def _audio_log() -> list[dict[str, Any]]:
    path = corpus.load(CAPTURE).path / "llm_audio.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()]


def _document() -> dict[str, Any]:
    return capture_document(CAPTURE, SESSION)


def test_the_trajectory_is_the_conversation_that_happened() -> None:
    """One step per call with its text and tool calls, every tool result on its call (the failing one flagged), each
    question once before its answer, the tokens; the speech no step."""
    document = _document()
    assert corpus.compare(document, corpus.GroundTruth.of(_log()), call_ids=True) == []
    steps = document["steps"]
    assert [step["source"] for step in steps] == ["system", "user", "agent", "agent", "agent", "user", "agent",
                                                  "agent"]
    heard = [entry["response"]["text"] for entry in _audio_log() if entry["api"] == "openai.audio.transcriptions"]
    assert [step["message"] for step in steps if step["source"] == "user"] == heard
    failed = results_by_call(steps[2])
    log = _log()
    booking = log[0]["response"]["tool_calls"][0]["id"]
    assert failed[booking]["extra"]["is_error"] is True
    assert document["final_metrics"]["total_prompt_tokens"] == sum(e["response"]["usage"]["input_tokens"] for e in log)


def test_each_question_is_marked_heard_and_each_spoken_answer_said() -> None:
    """The transcribed questions' steps say so (the transcription's span; what OpenInference dropped); the steps of
    the answers the pipeline spoke say so, with how many pieces the speech came in; the tool-calling steps do not."""
    steps = _document()["steps"]
    spans = {span.name: span for span in capture_spans(CAPTURE)}
    assert spans["transcription"].attributes.get("input.value") is None  # the instrumentation keeps no data of it
    questions = [step for step in steps if step["source"] == "user"]
    assert [q["extra"]["spoken"]["transcribed"] for q in questions] == [True, True]
    assert all(q["extra"]["spoken"]["not_recorded"] == openai_agents_voice.NOT_RECORDED_HEARD for q in questions)
    said = [step for step in steps if (step.get("extra") or {}).get("spoken_answer")]
    spoken_texts = [entry["request"]["input"] for entry in _audio_log() if entry["api"] == "openai.audio.speech"]
    assert [step["message"] for step in said] == [e["response"]["text"] for e in _log() if e["response"]["text"]]
    assert [step["extra"]["spoken_answer"]["pieces"] for step in said] == [2, 1]
    assert " ".join(spoken_texts) == " ".join(step["message"] for step in said)
    assert not any((step.get("extra") or {}).get("spoken_answer") for step in steps if step.get("tool_calls"))


def _span(span_id: str, name: str, parent: str = "", trace: str = "ab" * 16, start: int = 0) -> Span:
    return Span(trace_id=trace, span_id=span_id, parent_span_id=parent, name=name, kind=1,
                start_time_unix_nano=start, end_time_unix_nano=start + 1_000_000, status_code=1,
                attributes={"openinference.span.kind": "CHAIN"}, scope_name=openai_agents_voice.SCOPE)


def test_a_trace_without_a_transcription_is_left_alone() -> None:
    """A typed turn (no transcription span beside its calls under the pipeline's span) is no voice turn, even with a
    span named alike elsewhere in its trace; a voice turn's question is its first call's last user message."""
    root = _span("r1", "Agent workflow")
    nested = _span("t1", "transcription", parent="x1")
    call = LlmCall(span=_span("c1", "response", parent="r1", start=5), emitter="openinference",
                   input_messages=[Message("user", [Part("text", text="typed")])])
    openai_agents_voice.complete_calls([root, nested, call.span], [call])
    assert call.input_messages[0].extra is None
    voice_root = _span("r2", "Voice Agent", trace="cd" * 16)
    heard = _span("t2", "transcription", parent="r2", trace="cd" * 16)
    spoken = LlmCall(span=_span("c2", "response", parent="r2", trace="cd" * 16, start=5), emitter="openinference",
                     input_messages=[Message("user", [Part("text", text="earlier")]),
                                     Message("user", [Part("text", text="heard")])])
    openai_agents_voice.complete_calls([voice_root, heard, spoken.span], [spoken])
    assert spoken.input_messages[0].extra is None
    assert spoken.input_messages[1].extra is not None and spoken.input_messages[1].extra["spoken"]["span_id"] == "t2"


def test_the_fake_llm_transcribes_and_speaks_as_the_audio_api_does() -> None:
    """`/v1/audio/transcriptions` answers a multipart upload with the scripted transcript and token usage;
    `/v1/audio/speech` streams PCM as long as the text takes to say; both logged apart from the LLM calls, and the
    transcripts never answer a model's call."""
    import io
    import urllib.request
    import wave

    from tests.captures.recording.fake_llm import FakeLLM

    clip = io.BytesIO()
    with wave.open(clip, "wb") as out:
        out.setnchannels(1)
        out.setsampwidth(2)
        out.setframerate(24_000)
        out.writeframes(b"\0\0" * 48_000)
    boundary = "voice-boundary"
    body = (f"--{boundary}\r\nContent-Disposition: form-data; name=\"model\"\r\n\r\ngpt-4o-transcribe\r\n"
            f"--{boundary}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"audio.wav\"\r\n"
            "Content-Type: audio/wav\r\n\r\n").encode() + clip.getvalue() + f"\r\n--{boundary}--\r\n".encode()
    with FakeLLM([{"transcript": "Is Bergen warmer?"}, {"text": "No."}]) as llm:
        heard = urllib.request.Request(f"{llm.base_url}/audio/transcriptions", data=body, method="POST",
                                       headers={"Content-Type": f"multipart/form-data; boundary={boundary}"})
        with urllib.request.urlopen(heard) as answer:
            assert json.loads(answer.read()) == {"text": "Is Bergen warmer?", "usage": {
                "type": "tokens", "input_tokens": 20, "input_token_details": {"text_tokens": 0, "audio_tokens": 20},
                "output_tokens": 4, "total_tokens": 24}}
        said = urllib.request.Request(f"{llm.base_url}/audio/speech", method="POST", data=json.dumps(
            {"model": "gpt-4o-mini-tts", "voice": "ash", "input": "No, colder.", "response_format": "pcm"}).encode(),
            headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(said) as answer:
            assert len(answer.read()) == 2 * int(0.6 * 24_000)
        assert llm.unused == 1 and llm.log == []
        assert [(e["api"], e["before_seq"]) for e in llm.audio.log] == [("openai.audio.transcriptions", 0),
                                                                        ("openai.audio.speech", 0)]
        assert llm.audio.log[0]["request"] == {"model": "gpt-4o-transcribe", "audio_bytes": len(clip.getvalue()),
                                               "audio_seconds": 2.0}
