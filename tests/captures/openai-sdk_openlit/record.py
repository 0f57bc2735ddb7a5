"""Re-record: the OpenAI Python SDK in a hand-written tool loop, traced by OpenLIT (`openlit.init()`).

    python3 -m venv /tmp/cap-openlit && /tmp/cap-openlit/bin/pip install -U pip && \
        /tmp/cap-openlit/bin/pip install openlit==1.45.0 openai==2.54.0 httpx==0.29.0 \
        opentelemetry-sdk==1.45.1 opentelemetry-exporter-otlp-proto-http==1.45.1
    /tmp/cap-openlit/bin/python tests/captures/openai-sdk_openlit/record.py

(openlit 1.45 requires `openai<3`.) Set up the way OpenLIT's quickstart shows: `openlit.init(otlp_endpoint=…)`
builds the tracer provider (OTLP/HTTP protobuf, batched), a logger provider for its events and a meter provider,
all to the endpoint (the recorder), and instruments every library it finds: its own OpenAI instrumentation (one
`chat <model>` span per call, GenAI attributes: `gen_ai.input.messages` / `gen_ai.output.messages` JSON,
`gen_ai.usage.*`, `gen_ai.usage.cost`; and a `gen_ai.client.inference.operation.details` event per call as a log
record) and the OpenTelemetry HTTP client instrumentations it bundles (httpx: a `POST` span under each call).

OpenLIT has no session API of its own: its docs (sdk/features/custom-attributes) attach request context to every
auto-instrumented span with `openlit.using_attributes(...)` (in 1.45 it takes a dict: `using_attributes({"user.id":
"u1"})`, the docs' keyword form `using_attributes(session_id=…)` raises TypeError), so each turn runs inside
`using_attributes({"session.id": SESSION})` and `agent_context("travel_assistant")` (gen_ai.agent.name). The tools
and each turn are `@openlit.trace` functions (its documented manual tracing: a span named for the function, the
return value as `gen_ai.output.messages`, an exception recorded and the span failed).

The capture is recorded offline: OpenLIT's pricing table is fetched from raw.githubusercontent.com at init and is
unreachable here, so every call's `gen_ai.usage.cost` is 0 (`get_chat_model_cost`: no pricing entry → 0), as for
any model OpenLIT's table does not list.

Turn 1: the model asks for the weather and a currency conversion in parallel; the conversion times out (the tool
raises, the loop sends the model the error text as the tool message), the model retries it, then answers. Turn 2,
same session, streamed (`stream=True`, `stream_options={"include_usage": True}`): one tool call, then the answer.
Five LLM calls. (The versions the capture was recorded with are in meta.json.)
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

from tests.captures.recording.session import Recording

SESSION = "openlit-trip-1"
MODEL = "gpt-4o-mini"
REPLIES = [
    {"tool_calls": [{"name": "get_weather", "arguments": {"city": "Tokyo"}},
                    {"name": "convert_currency", "arguments": {"amount": 200, "from_currency": "EUR",
                                                               "to_currency": "JPY"}}],
     "input_tokens": 196, "output_tokens": 52},
    {"tool_calls": [{"name": "convert_currency", "arguments": {"amount": 200, "from_currency": "EUR",
                                                               "to_currency": "JPY"}}],
     "input_tokens": 287, "output_tokens": 24},
    {"text": "Tokyo has light rain at 18°C, so take an umbrella; 200 EUR is about 32,480 JPY.",
     "input_tokens": 331, "output_tokens": 27},
    {"tool_calls": [{"name": "get_weather", "arguments": {"city": "Kyoto"}}], "when": "Kyoto",
     "input_tokens": 378, "output_tokens": 15},
    {"text": "Kyoto will be sunny at 21°C tomorrow: no umbrella needed.", "input_tokens": 412, "output_tokens": 16},
]
WEATHER = {"Tokyo": "light rain, 18°C", "Kyoto": "sunny, 21°C"}
QUESTIONS = [("I'm in Tokyo with 200 EUR. What's the weather, and how much is that in yen?", False),
             ("And tomorrow in Kyoto, will I need an umbrella?", True)]
TOOLS = [
    {"type": "function", "function": {
        "name": "get_weather", "description": "The weather in a city.",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}},
    {"type": "function", "function": {
        "name": "convert_currency", "description": "Convert an amount of money between currencies.",
        "parameters": {"type": "object", "properties": {
            "amount": {"type": "number"}, "from_currency": {"type": "string"}, "to_currency": {"type": "string"}},
            "required": ["amount", "from_currency", "to_currency"]}}},
]
PACKAGES = ["openlit", "openai", "opentelemetry-sdk", "opentelemetry-exporter-otlp-proto-http", "httpx"]


def main() -> None:
    notes = ("openlit.init(otlp_endpoint=recorder): its OpenAI instrumentation's chat spans (+ httpx POST spans, "
             "+ an inference event log record per call, + metrics); each turn an @openlit.trace function under "
             "openlit.using_attributes({'session.id': …}) and agent_context; tools @openlit.trace functions. Turn 1: "
             "get_weather and convert_currency in parallel, the conversion raising once (its error text sent as the "
             "tool message), retried, then the answer; turn 2 streamed with include_usage: one tool call, then the "
             "answer. Recorded offline: OpenLIT's pricing table (fetched from GitHub at init) unreachable, so "
             "gen_ai.usage.cost is 0 on every call")
    with Recording(Path(__file__).parent, REPLIES, framework="openai-sdk", instrumentation="openlit",
                   packages=PACKAGES, session_id=SESSION, notes=notes) as rec:
        rec.env()
        import openai
        import openlit
        from opentelemetry import metrics, trace
        from opentelemetry._logs import get_logger_provider

        openlit.init(application_name="travel-assistant", environment="dev", otlp_endpoint=rec.otlp_endpoint)
        client = openai.OpenAI()
        failures = {"convert_currency": 1}

        @openlit.trace
        def get_weather(city: str) -> str:
            return WEATHER[city]

        @openlit.trace
        def convert_currency(amount: float, from_currency: str, to_currency: str) -> str:
            if failures["convert_currency"]:
                failures["convert_currency"] -= 1
                raise TimeoutError("exchange-rate service timed out")
            return f"{amount} {from_currency} = {round(amount * 162.4):,} {to_currency}"

        functions = {"get_weather": get_weather, "convert_currency": convert_currency}

        def call_model(messages: list[dict[str, Any]], stream: bool) -> dict[str, Any]:
            """One chat completion as an assistant message dict, streamed or not."""
            if not stream:
                answer = client.chat.completions.create(model=MODEL, messages=messages, tools=TOOLS)
                return answer.choices[0].message.model_dump(exclude_none=True)
            text, calls = "", {}
            chunks = client.chat.completions.create(model=MODEL, messages=messages, tools=TOOLS, stream=True,
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

        @openlit.trace
        def chat_turn(messages: list[dict[str, Any]], question: str, stream: bool) -> str:
            messages.append({"role": "user", "content": question})
            while True:
                message = call_model(messages, stream)
                messages.append(message)
                if not message.get("tool_calls"):
                    return message.get("content") or ""
                for call in message["tool_calls"]:
                    arguments = json.loads(call["function"]["arguments"])
                    try:
                        result = functions[call["function"]["name"]](**arguments)
                    except Exception as exc:  # the model is told, and tries again or something else
                        result = f"Error: {exc}"
                    messages.append({"role": "tool", "tool_call_id": call["id"], "content": result})

        history: list[dict[str, Any]] = [{"role": "system", "content": "You are a terse travel assistant."}]
        for question, stream in QUESTIONS:
            with openlit.using_attributes({"session.id": SESSION}), openlit.agent_context("travel_assistant"):
                print(chat_turn(history, question, stream))
        rec.flush(trace.get_tracer_provider(), get_logger_provider(), metrics.get_meter_provider())


if __name__ == "__main__":
    main()
