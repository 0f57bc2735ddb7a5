"""Re-record: the Anthropic Python SDK with Anthropic's server-side context editing, traced by OpenInference.

    python3 -m venv /tmp/cap-anthropic-sdk_openinference_context-editing && \
        /tmp/cap-anthropic-sdk_openinference_context-editing/bin/pip install \
        anthropic==2.17.0 openinference-instrumentation-anthropic==3.1.0 openinference-instrumentation==0.1.72 \
        openinference-semantic-conventions==0.1.42 opentelemetry-sdk==1.45.2 \
        opentelemetry-exporter-otlp-proto-http==1.45.2
    /tmp/cap-anthropic-sdk_openinference_context-editing/bin/python \
        tests/captures/anthropic-sdk_openinference_context-editing/record.py

Anthropic's context editing as its docs show it: every request goes through the beta messages API with the
`context-management-2025-06-27` beta and `context_management={"edits": [{"type": "clear_tool_uses_20250919",
"trigger": {"type": "input_tokens", "value": TRIGGER}, "keep": {"type": "tool_uses", "value": 1}}]}`. Once a prompt
passes the trigger, the API clears every tool result but the latest from what the model is shown (a placeholder in
its place) and says so in the answer's `context_management.applied_edits` (`cleared_tool_uses`,
`cleared_input_tokens`; streamed, in the final `message_delta`), naming no tool use. The client keeps the whole
history and re-sends it unchanged every time: the API clears again on each later request, which only grows.

Two user turns of one session (`using_session`), each its own trace under an application AGENT span, the tools
`OITracer.tool` TOOL spans. Turn one (`beta.messages.create`, under the trigger): the model calls `get_weather` and
`find_hotel` in parallel; `find_hotel` raises (the booking site times out) and the loop sends an `is_error`
tool_result; the model retries it, which answers; then it answers. Turn two (`beta.messages.stream`, read to the end):
past the trigger, the API clears the weather and the failed search (two tool uses) and the model calls `find_events`;
then it clears the hotel too (three) and the model answers. Five model calls. The fake LLM scripts the applied edits
as the API would apply them to these requests (`applied_edits`), the tokens cleared those of the results cleared.
As in the other OpenInference captures the application's tracer provider is passed to the instrumentor only, so the
SDK's own tracing (on by default) goes to the no-op global provider.
These are the newest releases on PyPI (anthropic 2.17.0, openinference-instrumentation-anthropic 3.1.0); the versions
recorded are in meta.json.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

from tests.captures.recording.session import Recording

MODEL = "claude-sonnet-4-5"
SESSION_ID = "oi-anthropic-context-editing-1"
SYSTEM = "You are a terse travel assistant for Norway. Use the tools for weather, hotels and events."
QUESTIONS = ["I'm going to Bergen for 3 nights from Thursday: what's the weather, and find me a hotel near Bryggen.",
             "Is anything on at Grieghallen on Friday evening?"]
TRIGGER = 530  # input tokens: turn one's prompts stay under it, turn two's pass it
BETA = "context-management-2025-06-27"
CONTEXT_MANAGEMENT = {"edits": [{"type": "clear_tool_uses_20250919",
                                 "trigger": {"type": "input_tokens", "value": TRIGGER},
                                 "keep": {"type": "tool_uses", "value": 1}}]}
WEATHER = {"Bergen": "Thursday rain 9°C, Friday showers 10°C, Saturday dry 12°C, Sunday rain 8°C"}
HOTEL = "Hotel Bryggen Orion, Bryggen 29: 1,450 NOK a night, 3 nights available, 200 m from Bryggen"
HOTEL_ERROR = "TimeoutError: the hotel search did not answer in time"
EVENTS = "Grieghallen, Friday 19:30: Bergen Philharmonic, Grieg's Piano Concerto; tickets from 350 NOK"


def _tokens(*results: str) -> int:
    """The input tokens a tool result takes, as the fake LLM counts a request's (a quarter of its bytes)."""
    return sum(len(json.dumps(result)) // 4 for result in results)


REPLIES = [
    {"text": "Checking the weather and hotels.",
     "tool_calls": [{"name": "get_weather", "arguments": {"city": "Bergen"}},
                    {"name": "find_hotel", "arguments": {"city": "Bergen", "near": "Bryggen", "nights": 3}}]},
    {"text": "The hotel search timed out; trying again.",
     "tool_calls": [{"name": "find_hotel", "arguments": {"city": "Bergen", "near": "Bryggen", "nights": 3}}]},
    {"text": "Bergen: rain Thursday and Sunday, showers Friday, dry Saturday, 8-12°C. Hotel Bryggen Orion, 200 m from "
             "Bryggen, 1,450 NOK a night, free all 3 nights."},
    {"text": "Looking up Grieghallen's programme.",
     "tool_calls": [{"name": "find_events", "arguments": {"venue": "Grieghallen", "day": "Friday"}}],
     "applied_edits": [{"type": "clear_tool_uses_20250919", "cleared_tool_uses": 2,
                        "cleared_input_tokens": _tokens(WEATHER["Bergen"], HOTEL_ERROR)}]},
    {"text": "Yes: Friday at 19:30 the Bergen Philharmonic plays Grieg's Piano Concerto at Grieghallen, tickets from "
             "350 NOK.",
     "applied_edits": [{"type": "clear_tool_uses_20250919", "cleared_tool_uses": 3,
                        "cleared_input_tokens": _tokens(WEATHER["Bergen"], HOTEL_ERROR, HOTEL)}]},
]
TOOLS = [
    {"name": "get_weather", "description": "The forecast for a city",
     "input_schema": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}},
    {"name": "find_hotel", "description": "Find a hotel",
     "input_schema": {"type": "object", "properties": {"city": {"type": "string"}, "near": {"type": "string"},
                                                       "nights": {"type": "integer"}},
                      "required": ["city", "nights"]}},
    {"name": "find_events", "description": "What is on at a venue on a day",
     "input_schema": {"type": "object", "properties": {"venue": {"type": "string"}, "day": {"type": "string"}},
                      "required": ["venue", "day"]}},
]
PACKAGES = ["anthropic", "openinference-instrumentation-anthropic", "openinference-instrumentation",
            "openinference-semantic-conventions", "opentelemetry-sdk", "opentelemetry-exporter-otlp-proto-http"]
NOTES = ("Anthropic's server-side context editing (beta context-management-2025-06-27, context_management edits "
         f"clear_tool_uses_20250919, trigger {TRIGGER} input tokens, keep 1 tool use) through the beta messages API: "
         "the API clears every tool result but the latest from what the model is shown and answers with "
         "context_management.applied_edits (cleared_tool_uses, cleared_input_tokens; streamed in the final "
         "message_delta), naming no tool use; the client re-sends its whole history unchanged. Two turns of one "
         "session (two traces, an application AGENT span each, OITracer.tool spans): turn one beta.messages.create "
         "under the trigger, get_weather and find_hotel in parallel, find_hotel raising (sent back as an is_error "
         "tool_result), retried with text, then the answer; turn two beta.messages.stream past the trigger, two tool "
         "uses cleared and find_events called, then three cleared and the answer. The SDK's own tracing uses the "
         "global tracer provider, which this app does not set: none of its spans are exported")


def main() -> None:
    with Recording(Path(__file__).parent, REPLIES, framework="anthropic-sdk", instrumentation="openinference",
                   packages=PACKAGES, session_id=SESSION_ID, notes=NOTES) as rec:
        rec.env()
        import anthropic
        from openinference.instrumentation import OITracer, TraceConfig, using_session
        from openinference.instrumentation.anthropic import AnthropicInstrumentor
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
        from opentelemetry.sdk.resources import Resource
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import BatchSpanProcessor

        provider = TracerProvider(resource=Resource.create({"service.name": "norway-travel-bot"}))
        provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
        AnthropicInstrumentor().instrument(tracer_provider=provider)
        tracer = OITracer(provider.get_tracer("norway-travel-bot"), config=TraceConfig())
        failures = {"find_hotel": 1}

        @tracer.tool(name="get_weather")
        def get_weather(city: str) -> str:
            return WEATHER[city]

        @tracer.tool(name="find_hotel")
        def find_hotel(city: str, nights: int, near: str = "") -> str:
            if failures["find_hotel"]:
                failures["find_hotel"] -= 1
                raise TimeoutError("the hotel search did not answer in time")
            return HOTEL

        @tracer.tool(name="find_events")
        def find_events(venue: str, day: str) -> str:
            return EVENTS

        functions: dict[str, Any] = {"get_weather": get_weather, "find_hotel": find_hotel, "find_events": find_events}
        client = anthropic.Anthropic()

        def ask(streamed: bool, **request: Any) -> Any:
            request |= {"betas": [BETA], "context_management": CONTEXT_MANAGEMENT}
            if not streamed:
                return client.beta.messages.create(**request)
            with client.beta.messages.stream(**request) as stream:
                for _event in stream:  # text_delta, input_json_delta; the edits come in the final message_delta
                    pass
                answer = stream.get_final_message()
            print("applied edits:", answer.context_management)
            return answer

        def run_tool(block: Any) -> dict[str, Any]:
            try:
                return {"type": "tool_result", "tool_use_id": block.id,
                        "content": functions[block.name](**block.input)}
            except Exception as exc:  # the model is told, as a real loop would
                return {"type": "tool_result", "tool_use_id": block.id, "is_error": True,
                        "content": f"{type(exc).__name__}: {exc}"}

        messages: list[dict[str, Any]] = []
        for turn, question in enumerate(QUESTIONS):
            messages.append({"role": "user", "content": question})
            with using_session(SESSION_ID), tracer.start_as_current_span(
                    "norway-travel-bot", openinference_span_kind="agent") as agent:
                agent.set_input(question)
                while True:
                    answer = ask(turn == 1, model=MODEL, max_tokens=1024, system=SYSTEM, messages=messages,
                                 tools=TOOLS)
                    # The whole history back every time: the API, not the client, clears what the model is shown.
                    messages.append({"role": "assistant",
                                     "content": [b.model_dump(exclude_none=True) for b in answer.content]})
                    uses = [b for b in answer.content if b.type == "tool_use"]
                    if not uses:
                        break
                    messages.append({"role": "user", "content": [run_tool(b) for b in uses]})
                agent.set_output("".join(b.text for b in answer.content if b.type == "text"))
        rec.flush(provider)


if __name__ == "__main__":
    main()
