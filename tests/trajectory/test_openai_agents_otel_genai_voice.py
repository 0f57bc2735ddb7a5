"""openai-agents' voice pipeline (`VoicePipeline`, `SingleAgentVoiceWorkflow`, two `AudioInput` turns), traced by
OpenTelemetry's GenAI instrumentation of openai-agents (the `openai-agents_otel-genai_voice` capture).

The instrumentation writes each turn's transcription and each spoken sentence as a GenAI operation of its own
(`gen_ai.operation.name` `transcription` / `speech_generation`, the model) without their texts. They must be no steps;
each question a user step marked spoken with the transcription's model, each spoken answer its step marked said with
the speech model (`trajectory/mappers/openai_agents_voice.py`); the ground truth of what was heard and said is the fake
LLM's `llm_audio.jsonl`.
"""

from __future__ import annotations

import json
from typing import Any

from span_fixtures import capture_document, capture_spans, results_by_call

from evalkit.trajectory.mappers import openai_agents_voice
from tests.captures import corpus

CAPTURE = "openai-agents_otel-genai_voice"
SESSION = "oa-otel-voice-1"


def _log() -> list[dict[str, Any]]:
    return corpus.load(CAPTURE).llm_log


def _audio_log() -> list[dict[str, Any]]:
    path = corpus.load(CAPTURE).path / "llm_audio.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_the_trajectory_is_the_conversation_that_happened() -> None:
    """One step per call with its text and tool calls, every tool result on its call (the failing one flagged), each
    question once before its answer, the tokens; neither the transcriptions nor the speech a step."""
    document = capture_document(CAPTURE, SESSION)
    log = _log()
    assert corpus.compare(document, corpus.GroundTruth.of(log), call_ids=True) == []
    steps = document["steps"]
    assert [step["source"] for step in steps] == ["user", "agent", "agent", "agent", "user", "agent", "agent"]
    heard = [e["response"]["text"] for e in _audio_log() if e["api"] == "openai.audio.transcriptions"]
    assert [step["message"] for step in steps if step["source"] == "user"] == heard
    assert results_by_call(steps[1])[log[0]["response"]["tool_calls"][0]["id"]]["extra"]["is_error"] is True
    assert document["final_metrics"]["total_prompt_tokens"] == sum(e["response"]["usage"]["input_tokens"] for e in log)


def test_each_question_is_marked_heard_by_its_model_and_each_spoken_answer_said() -> None:
    """The questions' steps name the transcription model the fake LLM was asked; the spoken answers' steps the speech
    model and how many pieces they were spoken in (one speech request each); the tool-calling steps are not said."""
    steps = capture_document(CAPTURE, SESSION)["steps"]
    audio = _audio_log()
    transcriptions = [e for e in audio if e["api"] == "openai.audio.transcriptions"]
    speech = [e for e in audio if e["api"] == "openai.audio.speech"]
    assert not any("gen_ai.transcription.text" in s.attributes for s in capture_spans(CAPTURE))  # never recorded
    questions = [step["extra"]["spoken"] for step in steps if step["source"] == "user"]
    assert [(q["transcribed"], q["model"]) for q in questions] == [(True, e["model"]) for e in transcriptions]
    assert all(q["not_recorded"] == openai_agents_voice.OTEL_NOT_RECORDED_HEARD for q in questions)
    said = [step for step in steps if (step.get("extra") or {}).get("spoken_answer")]
    assert [step["message"] for step in said] == [e["response"]["text"] for e in _log() if e["response"]["text"]]
    assert sum(step["extra"]["spoken_answer"]["pieces"] for step in said) == len(speech)
    assert {step["extra"]["spoken_answer"]["model"] for step in said} == {e["model"] for e in speech}
    assert not any((step.get("extra") or {}).get("spoken_answer") for step in steps if step.get("tool_calls"))
