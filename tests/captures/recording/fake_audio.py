"""OpenAI's audio endpoints for the fake LLM: speech to text and text to speech, as a voice agent calls them.

`POST /v1/audio/transcriptions` (multipart form: `file`, `model`, optional `prompt`, `language`, `temperature`,
`response_format`) answers with the next scripted transcript, the JSON the API returns for a `json` response: the
`text` and its `usage`, `gpt-4o-transcribe` / `gpt-4o-mini-transcribe` / `gpt-transcribe` billed in tokens (`type:
tokens`, the audio's input tokens in `input_token_details.audio_tokens`), `whisper-1` in seconds (`type: duration`).
`POST /v1/audio/speech` (JSON: `model`, `voice`, `input`, `response_format`, `instructions`) answers with the spoken
text as audio: 24 kHz 16-bit mono PCM (a tone as long as the text takes to say), sent chunked as the API streams it.

A transcript is scripted as a reply `{"transcript": …}` among the model's answers (optionally `input_tokens`,
`output_tokens`); `FakeLLM` keeps them apart, in order. Neither endpoint is an LLM call of the log: each request and its
answer goes to `AudioScript.log` (`llm_audio.jsonl`), with `before_seq`, the log's call that came next, the ground
truth of what was heard and said. Standard library only, like the rest of `recording/`.
"""

from __future__ import annotations

import io
import json
import math
import struct
import threading
import wave
from email.parser import BytesParser
from email.policy import HTTP
from typing import Any

TRANSCRIPTIONS = ("/v1/audio/transcriptions", "/audio/transcriptions")
SPEECH = ("/v1/audio/speech", "/audio/speech")
SAMPLE_RATE = 24_000  # the API's PCM: 24 kHz, 16-bit signed little-endian, mono
SECONDS_PER_WORD = 0.3
TOKENS_PER_AUDIO_SECOND = 10  # the audio tokens a transcription model bills a second of speech (gpt-4o's rate)


def is_transcript(reply: Any) -> bool:
    """Whether a scripted reply is a transcription's, not the model's."""
    return isinstance(reply, dict) and "transcript" in reply


def _form_fields(raw: bytes, content_type: str) -> dict[str, bytes]:
    message = BytesParser(policy=HTTP).parsebytes(f"Content-Type: {content_type}\r\n\r\n".encode() + raw)
    return {str(part.get_param("name", header="content-disposition")): part.get_payload(decode=True) or b""
            for part in message.iter_parts()}


def _pcm_seconds(size: int) -> float:
    return size / (SAMPLE_RATE * 2)


def _audio_seconds(audio: bytes) -> float:
    """How long an uploaded clip plays: a WAV file's frames at its rate, else raw 24 kHz PCM."""
    if audio.startswith(b"RIFF"):
        with wave.open(io.BytesIO(audio)) as clip:
            return clip.getnframes() / clip.getframerate()
    return _pcm_seconds(len(audio))


class AudioScript:
    """The transcripts not given yet, and the log of the audio requests answered."""

    def __init__(self, transcripts: list[dict[str, Any]]) -> None:
        self.transcripts = list(transcripts)
        self.log: list[dict[str, Any]] = []
        self.lock = threading.Lock()

    def transcribe(self, raw: bytes, content_type: str, before_seq: int) -> dict[str, Any]:
        """The transcription API's `json` answer to a multipart request; logged."""
        form = _form_fields(raw, content_type)
        audio = form.pop("file", b"")
        request = {name: value.decode() for name, value in form.items()}
        model = request.get("model", "")
        seconds = round(_audio_seconds(audio), 3)
        with self.lock:
            if not self.transcripts:
                raise LookupError("the script has no transcript left for this audio")
            scripted = self.transcripts.pop(0)
            text = str(scripted["transcript"])
            if model == "whisper-1":
                usage: dict[str, Any] = {"type": "duration", "seconds": math.ceil(seconds)}
            else:
                audio_tokens = int(scripted.get("input_tokens") or max(1, round(seconds * TOKENS_PER_AUDIO_SECOND)))
                output_tokens = int(scripted.get("output_tokens") or max(1, len(text) // 4))
                usage = {"type": "tokens", "input_tokens": audio_tokens,
                         "input_token_details": {"text_tokens": 0, "audio_tokens": audio_tokens},
                         "output_tokens": output_tokens, "total_tokens": audio_tokens + output_tokens}
            answer = {"text": text, "usage": usage}
            self.log.append({"before_seq": before_seq, "api": "openai.audio.transcriptions", "model": model,
                             "request": {**request, "audio_bytes": len(audio), "audio_seconds": seconds},
                             "response": answer})
        return answer

    def speak(self, body: dict[str, Any], before_seq: int) -> bytes:
        """The spoken text as PCM: a 440 Hz tone as long as the words take to say; logged."""
        text = str(body.get("input") or "")
        seconds = max(0.2, len(text.split()) * SECONDS_PER_WORD)
        samples = int(seconds * SAMPLE_RATE)
        pcm = struct.pack(f"<{samples}h", *(int(8000 * math.sin(2 * math.pi * 440 * n / SAMPLE_RATE))
                                            for n in range(samples)))
        with self.lock:
            self.log.append({"before_seq": before_seq, "api": "openai.audio.speech", "model": body.get("model"),
                             "request": body, "response": {"format": body.get("response_format") or "mp3",
                                                           "audio_bytes": len(pcm),
                                                           "audio_seconds": round(_pcm_seconds(len(pcm)), 3)}})
        return pcm

    def dumps(self) -> str:
        return "".join(json.dumps(entry) + "\n" for entry in self.log)
