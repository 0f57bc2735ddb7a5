"""The openai-agents voice desk: the scenario of the `openai-agents_*_voice` captures.

A `VoicePipeline` (`openai-agents[voice]`) around a `SingleAgentVoiceWorkflow` of the travel desk of
`openai_agents_travel.py` (`book_hotel` raising once, `get_weather`), `stt_model="gpt-4o-transcribe"`,
`tts_model="gpt-4o-mini-tts"`, the pipeline's `group_id` the session id, spoken two questions as `AudioInput` clips of
synthetic 24 kHz PCM (a tone as long as the question takes to say: the fake transcription decides its words):

    with Recording(capture_dir, voice_replies(SESSION), …) as rec:
        ... instrument openai-agents, exporting to the recorder ...
        run_voice_turns(SESSION, turn)   # turn(): a context each turn runs in
        rec.flush(provider)

Standard library only at import, like the rest of `recording/` (openai-agents and numpy are imported inside the
functions). Call them after the instrumentation is set up.
"""

from __future__ import annotations

import asyncio
import contextlib
import math
from typing import Any

from .openai_agents_travel import QUESTIONS, Turn, travel_desk, with_api_call_ids

SAMPLE_RATE = 24_000


def voice_replies(session_id: str) -> list[dict[str, Any]]:
    """The two questions' transcripts, then the model's answers: turn 1 both tools in parallel, `book_hotel` again
    after its failure, the answer (two sentences, spoken apart); turn 2 `get_weather` for Bergen, the answer."""
    return [
        {"transcript": QUESTIONS[0]},
        {"transcript": QUESTIONS[1]},
        *with_api_call_ids([
            {"tool_calls": [{"name": "book_hotel", "arguments": {"city": "Oslo", "nights": 2}},
                            {"name": "get_weather", "arguments": {"city": "Oslo"}}]},
            {"tool_calls": [{"name": "book_hotel", "arguments": {"city": "Oslo", "nights": 2}}]},
            {"text": "I booked Hotel Nord in Oslo for two nights, reference OSL-42. Expect rain and 9 degrees, so "
                     "pack an umbrella."},
            {"tool_calls": [{"name": "get_weather", "arguments": {"city": "Bergen"}}]},
            {"text": "No. Bergen is windy at 7 degrees, colder than Oslo."},
        ], session_id),
    ]


def spoken_clip(text: str) -> Any:
    """A clip as long as `text` takes to say (0.3 s a word): a 220 Hz tone, 16-bit PCM."""
    import numpy as np

    samples = int(len(text.split()) * 0.3 * SAMPLE_RATE)
    tone = 0.25 * np.sin(2 * math.pi * 220 * np.arange(samples) / SAMPLE_RATE)
    return (tone * 32767).astype(np.int16)


def run_voice_turns(session_id: str, turn: Turn = contextlib.nullcontext) -> None:
    """Speak `QUESTIONS` to one pipeline, each turn inside `turn()`, playing its answer's audio to the end."""
    from agents.voice import AudioInput, SingleAgentVoiceWorkflow, VoicePipeline, VoicePipelineConfig

    pipeline = VoicePipeline(workflow=SingleAgentVoiceWorkflow(travel_desk(handoff=False)),
                             stt_model="gpt-4o-transcribe", tts_model="gpt-4o-mini-tts",
                             config=VoicePipelineConfig(group_id=session_id))

    async def run() -> None:
        for question in QUESTIONS:
            with turn():
                result = await pipeline.run(AudioInput(buffer=spoken_clip(question), frame_rate=SAMPLE_RATE))
                played = 0
                async for event in result.stream():
                    if event.type == "voice_stream_event_audio" and event.data is not None:
                        played += len(event.data)
            print(f"{question!r}: {played / SAMPLE_RATE:.1f} s spoken back")

    asyncio.run(run())
