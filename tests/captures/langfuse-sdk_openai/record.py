"""Re-record: a hand-written tool loop traced by the Langfuse Python SDK (OpenTelemetry based).

    python3 -m venv /tmp/cap-langfuse && /tmp/cap-langfuse/bin/pip install 'langfuse==5.2.0' 'openai==3.63.0'
    /tmp/cap-langfuse/bin/python tests/captures/langfuse-sdk_openai/record.py

Built the way Langfuse's docs show: the `langfuse.openai` drop-in OpenAI client (each call a
`generation` observation), `@observe(as_type="agent")` on the agent turn, `@observe(as_type="tool")`
on the tool, and `propagate_attributes(session_id=…)` (the v3+ successor of
`update_current_trace(session_id=…)`) so that both turns' traces share one session. The SDK's own
exporter posts OTLP/HTTP protobuf, gzip-compressed, to `{LANGFUSE_BASE_URL}/api/public/otel/v1/traces`
with basic auth; the base URL is the recorder.

Turn 1: two tool calls in one answer, the second failing (an unknown city: the loop sends the model
the error text), then the answer. Turn 2, same session, the history resent: a plain answer.
(The versions the capture was recorded with are in meta.json.)
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

from tests.captures.recording.session import Recording

SESSION = "langfuse-weather-1"
REPLIES = [
    {"tool_calls": [{"name": "get_weather", "arguments": {"city": "Paris"}},
                    {"name": "get_weather", "arguments": {"city": "Atlantis"}}]},
    {"text": "Paris is sunny at 21°C; I could not find Atlantis."},
    {"text": "A light jacket is enough for Paris."},
]
WEATHER = {"Paris": "sunny, 21°C"}
TOOLS = [{"type": "function", "function": {
    "name": "get_weather", "description": "The weather in a city.",
    "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}}]


def main() -> None:
    capture_dir = Path(__file__).parent
    notes = ("langfuse.openai client + @observe(agent/tool) + propagate_attributes(session_id); turn 1: two tool "
             "calls in one answer, one failing (an unknown city), then the answer; turn 2 in the same session: "
             "a plain answer over the resent history; exports are gzip-compressed as the SDK sends them")
    with Recording(capture_dir, REPLIES, framework="langfuse-sdk", instrumentation="langfuse (native, OTel)",
                   packages=["langfuse", "openai", "opentelemetry-sdk"], session_id=SESSION, notes=notes) as rec:
        rec.env()
        os.environ.update({"LANGFUSE_BASE_URL": rec.otlp_endpoint, "LANGFUSE_HOST": rec.otlp_endpoint,
                           "LANGFUSE_PUBLIC_KEY": "pk-lf-fake", "LANGFUSE_SECRET_KEY": "sk-lf-fake"})
        from langfuse import get_client, observe, propagate_attributes
        from langfuse.openai import OpenAI

        client = OpenAI()

        @observe(as_type="tool")
        def get_weather(city: str) -> str:
            if city not in WEATHER:
                raise ValueError(f"unknown city: {city}")
            return WEATHER[city]

        @observe(as_type="agent", name="weather-agent")
        def turn(messages: list[dict[str, Any]], question: str) -> str:
            with propagate_attributes(session_id=SESSION, user_id="user-1"):
                messages.append({"role": "user", "content": question})
                while True:
                    response = client.chat.completions.create(model="gpt-4o", messages=messages, tools=TOOLS)
                    message = response.choices[0].message
                    messages.append(message.model_dump(exclude_none=True))
                    if not message.tool_calls:
                        return message.content or ""
                    for call in message.tool_calls:
                        try:
                            result = get_weather(**json.loads(call.function.arguments))
                        except ValueError as exc:
                            result = f"Error: {exc}"
                        messages.append({"role": "tool", "tool_call_id": call.id, "content": result})

        history: list[dict[str, Any]] = [{"role": "system", "content": "You are a terse weather assistant."}]
        turn(history, "Weather in Paris and Atlantis?")
        turn(history, "What should I wear in Paris?")
        get_client().shutdown()


if __name__ == "__main__":
    main()
