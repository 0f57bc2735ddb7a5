"""Re-record: the Anthropic Python SDK in a hand-written tool loop, traced by OpenLIT (`openlit.init()`).

    python3 -m venv /tmp/cap-anthropic-sdk_openlit && /tmp/cap-anthropic-sdk_openlit/bin/pip install \
        openlit==1.45.0 anthropic==0.125.0 opentelemetry-sdk==1.45.1 opentelemetry-exporter-otlp-proto-http==1.45.1
    /tmp/cap-anthropic-sdk_openlit/bin/python tests/captures/anthropic-sdk_openlit/record.py

(openlit 1.45 requires `anthropic>=0.42,<1`, so 0.125.0 is the newest Anthropic SDK that installs beside it; it
brings httpx 0.29.0 and opentelemetry-instrumentation-httpx 0.66b1.) Set up the way OpenLIT's quickstart shows:
`openlit.init(otlp_endpoint=…, capture_message_content=True)` builds the tracer, logger and meter providers, all
to the endpoint (the recorder), and instruments what it finds: its Anthropic instrumentation (one `chat <model>`
span per `messages.create` / `messages.stream`, the latest GenAI attributes, `gen_ai.usage.cache_*` beside
Anthropic's `input_tokens`, and a `gen_ai.client.inference.operation.details` event per call as a log record) and
httpx (a `POST` span under each call). As in `openai-sdk_openlit`, each turn runs inside
`openlit.using_attributes({"session.id": SESSION})` and `agent_context("travel_assistant")` (OpenLIT has no
session API of its own), and the turn and the tools are `@openlit.trace` functions.

The system prompt is a text block marked `cache_control: {"type": "ephemeral"}` (the way Anthropic's docs cache a
long prompt): the first call writes its 1024 tokens to the cache, every later call reads them. Anthropic reports
`input_tokens` without the cached ones; by the last calls the uncached part of the prompt is the larger one.

Turn 1 (`messages.create`): the model says it is checking and asks for the weather in Lisbon and Porto in
parallel; Porto's service times out (the tool raises: the loop sends a `tool_result` with `is_error: true` and the
error text), the model says it is trying again with a new Porto call, then answers. Turn 2, same session, streamed:
`messages.stream` (text and a conversion call), then `messages.create(stream=True)` for the answer, so both of
OpenLIT's streamed wrappers are recorded. Five LLM calls. Recorded offline: OpenLIT's pricing table (fetched from
GitHub at init) is unreachable, so every call's `gen_ai.usage.cost` is 0. (The versions are in meta.json.)
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

from tests.captures.recording.session import Recording

SESSION = "openlit-anthropic-trip-1"
MODEL = "claude-sonnet-4-5"
# A real cached prefix is at least 1024 tokens; the token counts are scripted, so the text need not be.
SYSTEM = [{"type": "text", "cache_control": {"type": "ephemeral"},
           "text": "You are a terse travel assistant for trips in Portugal. Use the tools; never guess a number."}]
CACHED = 1024
REPLIES = [
    {"text": "Checking both cities.",
     "tool_calls": [{"name": "get_weather", "arguments": {"city": "Lisbon"}},
                    {"name": "get_weather", "arguments": {"city": "Porto"}}],
     "input_tokens": 1400, "cache_write_tokens": CACHED, "output_tokens": 61},
    {"text": "Porto's weather service timed out; trying it again.",
     "tool_calls": [{"name": "get_weather", "arguments": {"city": "Porto"}}],
     "input_tokens": 1650, "cache_read_tokens": CACHED, "output_tokens": 48},
    {"text": "Lisbon is sunny at 24°C; Porto is cloudy at 18°C.",
     "input_tokens": 1900, "cache_read_tokens": CACHED, "output_tokens": 22},
    {"text": "Converting 100 EUR.",
     "tool_calls": [{"name": "convert_currency", "arguments": {"amount": 100, "source": "EUR", "target": "USD"}}],
     "when": "dollars", "input_tokens": 2150, "cache_read_tokens": CACHED, "output_tokens": 57},
    {"text": "100 EUR is 108.00 USD today.", "input_tokens": 2400, "cache_read_tokens": CACHED, "output_tokens": 14},
]
QUESTIONS = [("What is the weather in Lisbon and in Porto?", False),
             ("And how many US dollars is 100 EUR today?", True)]
WEATHER = {"Lisbon": "sunny, 24°C", "Porto": "cloudy, 18°C"}
RATES = {("EUR", "USD"): 1.08}
TOOLS = [
    {"name": "get_weather", "description": "The weather in a city",
     "input_schema": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}},
    {"name": "convert_currency", "description": "Convert an amount between currencies",
     "input_schema": {"type": "object", "properties": {"amount": {"type": "number"}, "source": {"type": "string"},
                                                       "target": {"type": "string"}},
                      "required": ["amount", "source", "target"]}},
]
PACKAGES = ["openlit", "anthropic", "opentelemetry-sdk", "opentelemetry-exporter-otlp-proto-http", "httpx",
            "opentelemetry-instrumentation-httpx"]


def main() -> None:
    notes = ("openlit.init(otlp_endpoint=recorder, capture_message_content=True): its Anthropic instrumentation's "
             "chat spans (+ httpx POST spans, + an inference event log record per call, + metrics); each turn an "
             "@openlit.trace function under openlit.using_attributes({'session.id': …}) and agent_context; tools "
             "@openlit.trace functions. System prompt a cache_control block (1024 tokens written by call 1, read by "
             "the others). Turn 1 messages.create: text and parallel get_weather Lisbon + Porto, Porto raising (an "
             "is_error tool_result), text and a retry, the answer; turn 2 streamed: messages.stream (text and "
             "convert_currency), then messages.create(stream=True) (the answer). Recorded offline: OpenLIT's "
             "pricing table unreachable, so gen_ai.usage.cost is 0 on every call")
    with Recording(Path(__file__).parent, REPLIES, framework="anthropic-sdk", instrumentation="openlit",
                   packages=PACKAGES, session_id=SESSION, notes=notes) as rec:
        rec.env()
        import anthropic
        import openlit
        from opentelemetry import metrics, trace
        from opentelemetry._logs import get_logger_provider

        openlit.init(application_name="trip-bot", environment="dev", otlp_endpoint=rec.otlp_endpoint,
                     capture_message_content=True)
        client = anthropic.Anthropic()
        failures = {"Porto": 1}

        @openlit.trace
        def get_weather(city: str) -> str:
            if failures.get(city):
                failures[city] -= 1
                raise TimeoutError(f"weather service timed out for {city}")
            return WEATHER[city]

        @openlit.trace
        def convert_currency(amount: float, source: str, target: str) -> str:
            return f"{amount * RATES[(source, target)]:.2f} {target}"

        functions: dict[str, Any] = {"get_weather": get_weather, "convert_currency": convert_currency}

        def ask(messages: list[dict[str, Any]], streamed: bool) -> tuple[list[dict[str, Any]], str]:
            """One call's content blocks and stop reason: `messages.create`, or streamed as the turn goes (its
            first call `messages.stream`, its next ones `messages.create(stream=True)`)."""
            request: dict[str, Any] = {"model": MODEL, "max_tokens": 512, "system": SYSTEM, "messages": messages,
                                       "tools": TOOLS}
            if not streamed:
                answer = client.messages.create(**request)
                return [b.model_dump(exclude_none=True) for b in answer.content], str(answer.stop_reason)
            if messages[-1]["role"] == "user" and isinstance(messages[-1]["content"], str):
                with client.messages.stream(**request) as stream:
                    for _ in stream.text_stream:
                        pass
                    final = stream.get_final_message()
                return [b.model_dump(exclude_none=True) for b in final.content], str(final.stop_reason)
            blocks: dict[int, dict[str, Any]] = {}
            partial: dict[int, str] = {}
            stop = ""
            for event in client.messages.create(**request, stream=True):
                if event.type == "content_block_start":
                    blocks[event.index] = event.content_block.model_dump(exclude_none=True)
                elif event.type == "content_block_delta" and event.delta.type == "text_delta":
                    blocks[event.index]["text"] += event.delta.text
                elif event.type == "content_block_delta" and event.delta.type == "input_json_delta":
                    partial[event.index] = partial.get(event.index, "") + event.delta.partial_json
                elif event.type == "message_delta":
                    stop = str(event.delta.stop_reason)
            for index, text in partial.items():
                blocks[index]["input"] = json.loads(text)
            return [blocks[k] for k in sorted(blocks)], stop

        def run_tool(block: dict[str, Any]) -> dict[str, Any]:
            try:
                return {"type": "tool_result", "tool_use_id": block["id"],
                        "content": functions[block["name"]](**block["input"])}
            except Exception as exc:  # the model is told, as a real loop would
                return {"type": "tool_result", "tool_use_id": block["id"], "is_error": True,
                        "content": f"{type(exc).__name__}: {exc}"}

        @openlit.trace
        def chat_turn(messages: list[dict[str, Any]], question: str, streamed: bool) -> str:
            messages.append({"role": "user", "content": question})
            while True:
                content, stop = ask(messages, streamed)
                messages.append({"role": "assistant", "content": content})
                uses = [b for b in content if b["type"] == "tool_use"]
                if stop != "tool_use" or not uses:
                    return "".join(b["text"] for b in content if b["type"] == "text")
                messages.append({"role": "user", "content": [run_tool(b) for b in uses]})

        history: list[dict[str, Any]] = []
        for question, streamed in QUESTIONS:
            with openlit.using_attributes({"session.id": SESSION}), openlit.agent_context("travel_assistant"):
                print(chat_turn(history, question, streamed))
        rec.flush(trace.get_tracer_provider(), get_logger_provider(), metrics.get_meter_provider())


if __name__ == "__main__":
    main()
