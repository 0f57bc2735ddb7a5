"""openai-agents' voice pipeline: each spoken question marked as heard, each answer as said (OpenInference's and
OpenTelemetry's GenAI instrumentations of the SDK).

A `VoicePipeline` turn (`openai-agents[voice]`, `AudioInput`: one SDK trace a turn, the pipeline's `Voice Agent`)
transcribes the clip (the SDK's `TranscriptionSpanData`: model, audio, transcript), runs the workflow's agent on the
transcript (`SingleAgentVoiceWorkflow`: `Runner.run_streamed`, the transcript the run's last user message), and speaks
what the agent answers as it streams (a speech group of speech spans, one a sentence: `SpeechSpanData`, the TTS model,
voice, text and audio). Read as they come, the transcript is a typed question and the spoken answer a written one.
What each instrumentation keeps of the voice spans:
- OpenInference's processor (2.6.0) writes them as bare CHAIN spans named after the span data's type
  (`transcription`, `speech_group`, `speech`), none of their data: no model, voice, text or audio.
- `opentelemetry-instrumentation-openai-agents-v2` (0.1.0) writes the transcription and each speech as a GenAI
  operation (`gen_ai.operation.name` `transcription` / `speech_generation`, `gen_ai.request.model`,
  `gen_ai.speech.voice` where set) under an `unknown` group span; not their texts (it reads `transcript` and
  `input_text`, which the SDK's span data do not have: they are `output` and `input`) nor the audio.

So the pipeline's span holding a transcription is a voice turn: the question of the turn's first call (its last user
message) is marked spoken (`extra.spoken`: transcribed, the transcription's span, its duration, its model where
recorded, what was not recorded); each call of the turn that answered with text, which the pipeline spoke, is marked
so (`extra.spoken_answer`: the speech group's span, how many pieces it was spoken in, the model and voice where
recorded, what was not). Transcription and speech are no steps (no LLM calls). Nothing is done for spans of no
transcription.

Seen in real captures: tests/captures/openai-agents_openinference_voice and openai-agents_otel-genai_voice
(openai-agents 0.25 `[voice]`; two `AudioInput` turns of a `SingleAgentVoiceWorkflow`).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from evalkit.trajectory.mappers.openai_agents_failed_calls import SCOPE
from evalkit.trajectory.operations import LlmCall
from evalkit.trajectory.span import Span

# OpenInference names these spans after the SDK's span data types (they have no `name`).
_TRANSCRIPTION = "transcription"
_SPEECH_GROUP = "speech_group"
_SPEECH = "speech"
# OpenTelemetry's GenAI instrumentation of openai-agents: its scope, and the operations it names them.
_OTEL_SCOPE = "opentelemetry.instrumentation.openai_agents"
_OTEL_SPEECH = "speech_generation"
_OPERATION = "gen_ai.operation.name"
NOT_RECORDED_HEARD = ("the transcription model and the audio: OpenInference's openai-agents processor writes the "
                      "transcription span without its data")
NOT_RECORDED_SAID = ("the speech model, the voice, the text of each piece and the audio: OpenInference's openai-agents "
                     "processor writes the speech spans without their data")
OTEL_NOT_RECORDED_HEARD = ("the audio and the transcript as heard: opentelemetry-instrumentation-openai-agents-v2 "
                           "reads the span data's `transcript`, which the SDK names `output`")
OTEL_NOT_RECORDED_SAID = ("the text of each piece and the audio: opentelemetry-instrumentation-openai-agents-v2 reads "
                          "the span data's `input_text`, which the SDK names `input`")


def complete_calls(spans: Sequence[Span], calls: Iterable[LlmCall]) -> None:
    """Each voice turn's question marked heard (on its first call's last user message) and its answers said."""
    turns = _voice_turns(spans)
    if not turns:
        return
    parents = {span.span_id: span.parent_span_id for span in spans}
    by_turn: dict[str, list[LlmCall]] = {}
    for call in calls:
        if call.span.scope_name not in (SCOPE, _OTEL_SCOPE):
            continue
        ancestor = call.span.parent_span_id
        while ancestor and ancestor not in turns:
            ancestor = parents.get(ancestor, "")
        if ancestor:
            by_turn.setdefault(ancestor, []).append(call)
    for pipeline, turn_calls in by_turn.items():
        turn = turns[pipeline]
        turn_calls.sort(key=lambda call: call.span.start_time_unix_nano)
        question = next((message for message in reversed(turn_calls[0].input_messages) if message.role == "user"),
                        None)
        if question is not None:
            question.extra = {**(question.extra or {}), "spoken": turn.heard()}
        if turn.group is None:
            continue
        said = turn.said()
        for call in turn_calls:
            if any(message.text for message in call.output_messages):
                call.extra["spoken_answer"] = dict(said)


class _Turn:
    """A voice turn's transcription span and its speech: the group span and the pieces spoken."""

    def __init__(self, transcription: Span) -> None:
        self.transcription = transcription
        self.group: Span | None = None
        self.pieces: list[Span] = []

    def heard(self) -> dict[str, Any]:
        span = self.transcription
        model = span.attributes.get("gen_ai.request.model")
        return {"transcribed": True, "span_id": span.span_id, "duration_ms": round(span.duration_ns / 1e6, 3),
                **({"model": model} if isinstance(model, str) else {}),
                "not_recorded": OTEL_NOT_RECORDED_HEARD if span.scope_name == _OTEL_SCOPE else NOT_RECORDED_HEARD}

    def said(self) -> dict[str, Any]:
        assert self.group is not None
        models = sorted({m for piece in self.pieces if isinstance(m := piece.attributes.get("gen_ai.request.model"),
                                                                  str)})
        voices = sorted({v for piece in self.pieces if isinstance(v := piece.attributes.get("gen_ai.speech.voice"),
                                                                  str)})
        otel = self.group.scope_name == _OTEL_SCOPE
        return {"span_id": self.group.span_id, "pieces": len(self.pieces),
                **({"model": models[0]} if len(models) == 1 else {"models": models} if models else {}),
                **({"voice": voices[0]} if len(voices) == 1 else {}),
                "not_recorded": OTEL_NOT_RECORDED_SAID if otel else NOT_RECORDED_SAID}


def _voice_turns(spans: Sequence[Span]) -> dict[str, _Turn]:
    """By the pipeline's span (the transcription's parent): the turn. Only the spans named or operated as the
    instrumentations write the voice spans are looked at further."""
    transcriptions: list[Span] = []
    pieces: list[Span] = []
    groups: list[Span] = []
    for span in spans:
        name = span.name
        if span.scope_name == SCOPE:
            if name == _TRANSCRIPTION:
                transcriptions.append(span)
            elif name == _SPEECH:
                pieces.append(span)
            elif name == _SPEECH_GROUP:
                groups.append(span)
        elif span.scope_name == _OTEL_SCOPE and (name.startswith(_TRANSCRIPTION) or name.startswith(_OTEL_SPEECH)):
            operation = span.attributes.get(_OPERATION)
            if operation == _TRANSCRIPTION:
                transcriptions.append(span)
            elif operation == _OTEL_SPEECH:
                pieces.append(span)
    if not transcriptions:
        return {}
    turns = {span.parent_span_id: _Turn(span) for span in transcriptions if span.parent_span_id}
    by_id = {span.span_id: span for span in spans} if pieces else {}
    for piece in pieces:
        group = by_id.get(piece.parent_span_id)
        turn = turns.get(group.parent_span_id) if group is not None else None
        if group is not None and turn is not None:
            turn.group = group
            turn.pieces.append(piece)
    for group in groups:  # a speech group whose pieces all failed to start still says the answer was to be spoken
        turn = turns.get(group.parent_span_id)
        if turn is not None and turn.group is None:
            turn.group = group
    return turns
