"""Re-record: Logfire 5 `instrument_openai()`, streamed chat completions, exported over OTLP (no Logfire backend).

    python3 -m venv /tmp/cap-logfire && /tmp/cap-logfire/bin/pip install \
        logfire==5.4.0 openai==3.57.0 opentelemetry-sdk==1.45.2 opentelemetry-exporter-otlp-proto-http==1.45.2
    /tmp/cap-logfire/bin/python tests/captures/logfire_openai_streaming/record.py

Two turns of one session (a `session.id` on each turn's span; scrubbing off, or Logfire would
replace the value: see the `_scrubbed-session` capture). Every call streams: Logfire reports each
as a request span that ends when the stream starts and a separate "streaming response" span with
the answer. Turn one: a streamed tool call, the tool run, a streamed answer; turn two: a streamed
answer. (The versions the capture was recorded with are in meta.json.)
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

from tests.captures.recording.session import Recording

SESSION = "logfire-weather-1"
REPLIES = [
    {"tool_calls": [{"name": "get_weather", "arguments": {"city": "Rome"}}]},
    {"text": "Rome is sunny at 26°C."},
    {"text": "Bring sunglasses, not an umbrella."},
]
WEATHER = {"Rome": "sunny, 26°C"}
TOOLS = [{"type": "function", "function": {
    "name": "get_weather", "description": "The weather in a city",
    "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}}]


def streamed(client, messages: list[dict]) -> dict:
    """One streamed call, read to the end; the assistant message it amounts to."""
    text, calls = "", {}
    for chunk in client.chat.completions.create(model="gpt-4o", messages=messages, tools=TOOLS, stream=True,
                                                stream_options={"include_usage": True}):
        for choice in chunk.choices:
            text += choice.delta.content or ""
            for delta in choice.delta.tool_calls or ():
                call = calls.setdefault(delta.index, {"id": "", "name": "", "arguments": ""})
                call["id"] = delta.id or call["id"]
                call["name"] = (delta.function.name or "") if delta.function else call["name"]
                call["arguments"] += (delta.function.arguments or "") if delta.function else ""
    message: dict = {"role": "assistant", "content": text or None}
    if calls:
        message["tool_calls"] = [{"id": c["id"], "type": "function",
                                  "function": {"name": c["name"], "arguments": c["arguments"]}}
                                 for c in calls.values()]
    return message


def run(scrubbing: bool, capture_dir: Path, session_id: str | None, turns: int, notes: str) -> None:
    replies = REPLIES if turns == 2 else REPLIES[:2]
    with Recording(capture_dir, replies, framework="logfire", instrumentation="logfire",
                   packages=["logfire", "openai", "opentelemetry-sdk"], session_id=session_id, notes=notes) as rec:
        rec.env()
        import logfire
        import openai

        # Logfire exports to OTEL_EXPORTER_OTLP_ENDPOINT itself (rec.env() points it at the recorder).
        logfire.configure(send_to_logfire=False, service_name="weather-bot", console=False,
                          scrubbing=None if scrubbing else False)
        client = openai.OpenAI()
        logfire.instrument_openai(client)
        messages: list[dict] = [{"role": "system", "content": "You are a terse weather assistant."},
                                {"role": "user", "content": "Weather in Rome?"}]
        with logfire.span("weather turn", **{"session.id": SESSION}):
            while True:
                message = streamed(client, messages)
                messages.append(message)
                if not message.get("tool_calls"):
                    break
                for call in message["tool_calls"]:
                    city = json.loads(call["function"]["arguments"])["city"]
                    with logfire.span("tool {name}", name=call["function"]["name"]):
                        messages.append({"role": "tool", "tool_call_id": call["id"], "content": WEATHER[city]})
        if turns == 2:
            messages.append({"role": "user", "content": "Umbrella or sunglasses?"})
            with logfire.span("weather turn", **{"session.id": SESSION}):
                messages.append(streamed(client, messages))
        logfire.force_flush()
        logfire.shutdown()


def main() -> None:
    run(False, Path(__file__).parent, SESSION, 2,
        "two turns, every call streamed (request span + 'streaming response' span); a streamed tool call")


if __name__ == "__main__":
    main()
