"""Audio in and out of OpenAI's Chat Completions as OpenInference's openai instrumentation records it.

A request asking `modalities=["text", "audio"]` of an audio model (`gpt-audio`) may send the model audio, an
`input_audio` content part of a user message (`{"data": <base64>, "format": "wav" | "mp3"}`), and is answered in
speech: the answer's content is null and its `message.audio` the clip (`id`, base64 `data` in the request's
`audio.format`, `transcript`, `expires_at`). A later request re-sends that answer as `{"role": "assistant", "audio":
{"id": …}}` (OpenAI's audio guide), naming the clip the API keeps until it expires, with no text.

`openinference-instrumentation-openai` (0.1.66) flattens a message's text and `image_url` parts and nothing else: an
`input_audio` part is no attribute (`_get_attributes_from_message_content`), a spoken answer's output message is its
role alone (it reads `content`), and so is a re-sent one. `input.value` is the request as sent, though (only images
are masked there), and `output.value` the answer as the SDK parsed it, so:

- each `input_audio` part is given back to its message, at its place among the message's parts, as a media part of
  its data URL (`read_call`): a user step's ATIF audio part, a large clip referenced in the span's input and read back
  through the media route (trajectory/media.py);
- a spoken answer's transcript is the text of its message (what the model said), the clip noted beside it as the
  step's `extra.audio_answer` (its id, format, size, length in seconds and expiry; its base64 is in no step);
- a re-sent spoken answer is given the transcript of the answer whose clip it names (`complete_calls`, across the
  session's calls), so that it is known as that answer re-sent, not an empty answer of a call never received.

A streamed spoken answer's `delta.audio` pieces (its id, then the transcript and the data in pieces, its expiry alone
last) are joined by the instrumentation's accumulator, which joins `content` and `tool_calls` pieces but keeps each
other string a delta holds as the last one given (`_ValuesAccumulator`, a replacement): its `output.value` holds the
transcript's last piece and the data's. That is no transcript: the answer's text is left empty and its
`extra.audio_answer` says the transcript and data were not recorded (no span holds them).

Audio tokens (`prompt_tokens_details.audio_tokens`, `completion_tokens_details.audio_tokens`, of the prompt and
completion tokens) are read with the other counts (`openinference.llm_call`).

Seen in a real capture: tests/captures/openai-sdk_openinference_audio.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Iterable, Sequence
from typing import Any

from evalkit.trajectory.mappers.reader import parse_json
from evalkit.trajectory.media import wav_seconds
from evalkit.trajectory.operations import LlmCall, Message, Part
from evalkit.trajectory.span import Span

SCOPE = "openinference.instrumentation.openai"
_CHAT_SPAN = "ChatCompletion"  # openai.types.chat.ChatCompletion, the answer's type the span is named after
# The formats an `input_audio` part and an answer's `audio.format` name, as media types. pcm16 is raw samples (24 kHz
# 16-bit mono little-endian, as OpenAI documents it): no media type names it, so its clip is described, never shown.
_MEDIA_TYPES = {"wav": "audio/wav", "mp3": "audio/mpeg", "flac": "audio/flac", "aac": "audio/aac",
                "opus": "audio/ogg"}
_PCM16_BYTES_PER_SECOND = 24_000 * 2
# What a streamed spoken answer's `extra.audio_answer.not_recorded` says.
NOT_RECORDED = "the transcript and the clip: OpenInference keeps only the last delta.audio piece of each"


def is_chat_completion(span: Span) -> bool:
    """A Chat Completions call's span under OpenInference's openai instrumentation."""
    return span.scope_name == SCOPE and span.name == _CHAT_SPAN


def read_call(call: LlmCall, input_value: object, output_value: object) -> None:
    """The call's audio as sent and answered: each `input_audio` part of its request a media part of its message, a
    spoken answer's transcript its text and its clip `extra.audio_answer`. Nothing is parsed for a call without."""
    if isinstance(input_value, str) and '"input_audio"' in input_value:
        _read_input_audio(call, parse_json(input_value))
    if isinstance(output_value, str) and '"audio"' in output_value:
        _read_audio_answer(call, parse_json(output_value))


def complete_calls(spans: Sequence[Span], calls: Iterable[LlmCall]) -> None:
    """Each re-sent spoken answer (`{"role": "assistant", "audio": {"id": …}}`) given the transcript of the answer of
    the session whose clip it names, where that answer's transcript was recorded."""
    chat = [call for call in calls if is_chat_completion(call.span)]
    said = {answer["id"]: call.output_messages[0].text for call in chat
            if isinstance(answer := call.extra.get("audio_answer"), dict) and "not_recorded" not in answer
            and call.output_messages and call.output_messages[0].text}
    if not said:
        return
    for call in chat:
        raw = call.span.attributes.get("input.value")
        if not (isinstance(raw, str) and '"audio"' in raw):
            continue
        for sent, message in _paired(parse_json(raw), call.input_messages):
            audio = sent.get("audio") if sent.get("role") == "assistant" else None
            spoken = said.get(audio.get("id")) if isinstance(audio, dict) else None
            if spoken and not message.text:
                message.parts.insert(0, Part("text", text=spoken))


def _paired(request: Any, messages: list[Message]) -> list[tuple[dict[str, Any], Message]]:
    """The request's messages and the call's, one to one: the instrumentation writes request message i as input
    message i. Where they are not as many (a message it could not read), none (nothing is changed)."""
    sent = request.get("messages") if isinstance(request, dict) else None
    if not isinstance(sent, list) or len(sent) != len(messages):
        return []
    return [(given, message) for given, message in zip(sent, messages, strict=True) if isinstance(given, dict)]


def _read_input_audio(call: LlmCall, request: Any) -> None:
    for sent, message in _paired(request, call.input_messages):
        content = sent.get("content")
        if not isinstance(content, list) or not any(_is_input_audio(part) for part in content):
            continue
        # The message's parts are its other content parts in order (text, image_url: one each), then its tool calls:
        # each audio part goes back to its place among them.
        flattened = iter(part for part in message.parts if part.kind in ("text", "media"))
        rest = [part for part in message.parts if part.kind not in ("text", "media")]
        parts: list[Part] = []
        for given in content:
            if _is_input_audio(given):
                parts.append(_audio_part(given["input_audio"]))
            elif isinstance(given, dict) and given.get("type") in ("text", "image_url"):
                shown = next(flattened, None)
                if shown is not None:
                    parts.append(shown)
        message.parts = [*parts, *flattened, *rest]


def _is_input_audio(part: object) -> bool:
    return isinstance(part, dict) and part.get("type") == "input_audio" and isinstance(part.get("input_audio"), dict)


def _audio_part(audio: dict[str, Any]) -> Part:
    """An `input_audio` part as a media part: its data as a data URL of its format's media type."""
    audio_format = str(audio.get("format") or "")
    media_type = _MEDIA_TYPES.get(audio_format, f"audio/{audio_format}" if audio_format else "audio")
    data = audio.get("data")
    return Part("media", media_type=media_type,
                uri=f"data:{media_type};base64,{data}" if isinstance(data, str) and data else None)


def _read_audio_answer(call: LlmCall, response: Any) -> None:
    choices = response.get("choices") if isinstance(response, dict) else None
    first = choices[0] if isinstance(choices, list) and choices and isinstance(choices[0], dict) else {}
    audio = (first.get("message") or {}).get("audio")
    if not isinstance(audio, dict) or not call.output_messages:
        return
    request = call.extra.get("request")
    options = request.get("audio") if isinstance(request, dict) else None
    audio_format = str(options.get("format")) if isinstance(options, dict) and options.get("format") else None
    note: dict[str, Any] = {"id": audio.get("id")}
    if audio_format:
        note["format"] = audio_format
    if isinstance(request, dict) and request.get("stream"):
        note["not_recorded"] = NOT_RECORDED
    else:
        clip = _decoded(audio.get("data"))
        if clip is not None:
            note["bytes"] = len(clip)
            seconds = _seconds(clip, audio_format)
            if seconds is not None:
                note["duration_sec"] = seconds
        transcript = audio.get("transcript")
        answer = call.output_messages[0]
        if isinstance(transcript, str) and transcript and not answer.text:
            answer.parts.insert(0, Part("text", text=transcript))
    if audio.get("expires_at") is not None:
        note["expires_at"] = audio["expires_at"]
    call.extra["audio_answer"] = note


def _decoded(data: object) -> bytes | None:
    if not isinstance(data, str):
        return None
    try:
        return base64.b64decode(data, validate=False)
    except (binascii.Error, ValueError):
        return None


def _seconds(clip: bytes, audio_format: str | None) -> float | None:
    """How long a clip plays, where its format says: a WAV file's data over its byte rate, pcm16's at 24 kHz."""
    if audio_format == "pcm16":
        return round(len(clip) / _PCM16_BYTES_PER_SECOND, 3)
    if audio_format == "wav":
        return wav_seconds(clip)
    return None

