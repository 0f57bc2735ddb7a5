"""Re-record: the OpenAI Python SDK in a hand-written tool loop, traced by the Traceloop SDK (OpenLLMetry).

    python3 -m venv /tmp/cap-traceloop && /tmp/cap-traceloop/bin/pip install -U pip && \
        /tmp/cap-traceloop/bin/pip install traceloop-sdk==0.62.4 openai==3.63.0 httpx==0.29.0 \
        opentelemetry-sdk==1.45.1 opentelemetry-exporter-otlp-proto-http==1.45.1
    /tmp/cap-traceloop/bin/python tests/captures/openai-sdk_traceloop-sdk/record.py

(The pip bundled with Python 3.11's venv gives up resolving traceloop-sdk's open-ended
`opentelemetry-instrumentation-*>=0.59b0` requirements: upgrade it first. traceloop-sdk imports
httpx, which openai 3.x no longer brings.)

Built the way Traceloop's docs show: `Traceloop.init(app_name=…, api_endpoint=…)` sets up every
OpenLLMetry instrumentation it bundles and a BatchSpanProcessor whose exporter it picks from the
endpoint's scheme (`http://` → OTLP/HTTP protobuf to `{api_endpoint}/v1/traces`); the endpoint is
the recorder. Its metrics are turned off (`TRACELOOP_METRICS_ENABLED=false`; logging is off by
default), so nothing else is exported. Each user turn is a `@workflow` that calls
`Traceloop.set_association_properties({"session_id": …})` (every span after it carries
`traceloop.association.properties.session_id`) and runs an `@agent`: a hand-written chat-completions
tool loop over `@tool` functions, each OpenAI call an `openai.chat` span of
opentelemetry-instrumentation-openai.

Turn 1: two parallel tool calls in one answer, then the answer. Turn 2, same session, the history
resent, every call streamed (`stream=True`, `stream_options={"include_usage": True}`): a tool call
whose tool raises (the loop catches it and sends the model the error text as the tool message), then
the answer. (The versions the capture was recorded with are in meta.json.)
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

from tests.captures.recording.session import Recording

SESSION = "traceloop-trip-1"
REPLIES = [
    {"tool_calls": [{"name": "get_weather", "arguments": {"city": "Lisbon"}},
                    {"name": "get_weather", "arguments": {"city": "Porto"}}]},
    {"text": "Lisbon is sunny at 24°C and Porto is cloudy at 18°C."},
    {"tool_calls": [{"name": "book_hotel", "arguments": {"city": "Porto", "nights": 2}}], "when": "hotel"},
    {"text": "Sorry, I could not book Porto: no rooms are free for 2 nights."},
]
WEATHER = {"Lisbon": "sunny, 24°C", "Porto": "cloudy, 18°C"}
QUESTIONS = [("What is the weather in Lisbon and Porto?", False),
             ("Book me a hotel in Porto for 2 nights.", True)]
TOOLS = [
    {"type": "function", "function": {
        "name": "get_weather", "description": "The weather in a city.",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}},
    {"type": "function", "function": {
        "name": "book_hotel", "description": "Book a hotel room in a city.",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}, "nights": {"type": "integer"}},
                       "required": ["city", "nights"]}}},
]
PACKAGES = ["traceloop-sdk", "openai", "opentelemetry-instrumentation-openai", "opentelemetry-sdk",
            "opentelemetry-exporter-otlp-proto-http", "httpx"]


def main() -> None:
    with Recording(Path(__file__).parent, REPLIES, framework="openai-sdk", instrumentation="traceloop-sdk",
                   packages=PACKAGES, session_id=SESSION,
                   notes="Traceloop.init with the recorder as api_endpoint (OTLP/HTTP protobuf, batched); "
                         "each turn a @workflow setting the session association property and running an "
                         "@agent tool loop over @tool functions; turn 1 two parallel tool calls, turn 2 "
                         "streamed with include_usage, its tool raising (the error text sent as the tool "
                         "message)") as rec:
        rec.env()
        # Read by init: no metrics exporter (logs are off by default; 0.62 accepts `telemetry_enabled`
        # but sends no telemetry of its own either way).
        os.environ["TRACELOOP_METRICS_ENABLED"] = "false"
        import openai
        from opentelemetry import trace
        from traceloop.sdk import Traceloop
        from traceloop.sdk.decorators import agent, tool, workflow

        Traceloop.init(app_name="trip-assistant", api_endpoint=rec.otlp_endpoint, disable_batch=False,
                       telemetry_enabled=False)
        client = openai.OpenAI()

        @tool(name="get_weather")
        def get_weather(city: str) -> str:
            return WEATHER[city]

        @tool(name="book_hotel")
        def book_hotel(city: str, nights: int) -> str:
            raise RuntimeError(f"no rooms free in {city} for {nights} nights")

        functions = {"get_weather": get_weather, "book_hotel": book_hotel}

        def call_model(messages: list[dict[str, Any]], stream: bool) -> dict[str, Any]:
            """One chat completion as an assistant message dict, streamed or not."""
            if not stream:
                answer = client.chat.completions.create(model="gpt-4o", messages=messages, tools=TOOLS)
                return answer.choices[0].message.model_dump(exclude_none=True)
            text, calls = "", {}
            chunks = client.chat.completions.create(model="gpt-4o", messages=messages, tools=TOOLS, stream=True,
                                                    stream_options={"include_usage": True})
            for chunk in chunks:
                for choice in chunk.choices:
                    text += choice.delta.content or ""
                    for delta in choice.delta.tool_calls or ():
                        call = calls.setdefault(delta.index, {"id": "", "type": "function",
                                                              "function": {"name": "", "arguments": ""}})
                        call["id"] = delta.id or call["id"]
                        call["function"]["name"] += delta.function.name or ""
                        call["function"]["arguments"] += delta.function.arguments or ""
            message: dict[str, Any] = {"role": "assistant", "content": text or None}
            if calls:
                message["tool_calls"] = [calls[k] for k in sorted(calls)]
            return message

        @agent(name="trip_assistant")
        def assistant(messages: list[dict[str, Any]], stream: bool) -> str:
            while True:
                message = call_model(messages, stream)
                messages.append(message)
                if not message.get("tool_calls"):
                    return message.get("content") or ""
                for call in message["tool_calls"]:
                    arguments = json.loads(call["function"]["arguments"])
                    try:
                        result = functions[call["function"]["name"]](**arguments)
                    except Exception as exc:  # the model is told, and tries something else
                        result = f"Error: {exc}"
                    messages.append({"role": "tool", "tool_call_id": call["id"], "content": result})

        @workflow(name="chat_turn")
        def chat_turn(session_id: str, messages: list[dict[str, Any]], question: str, stream: bool) -> str:
            Traceloop.set_association_properties({"session_id": session_id})
            messages.append({"role": "user", "content": question})
            return assistant(messages, stream)

        history: list[dict[str, Any]] = [{"role": "system", "content": "You are a terse travel assistant."}]
        for question, stream in QUESTIONS:
            print(chat_turn(SESSION, history, question, stream))
        rec.flush(trace.get_tracer_provider())


if __name__ == "__main__":
    main()
