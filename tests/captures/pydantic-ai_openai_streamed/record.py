"""Re-record: a streamed pydantic-ai conversation on an OpenAI chat model, instrumented by pydantic-ai itself.

    python3 -m venv /tmp/cap-pai-stream && /tmp/cap-pai-stream/bin/pip install \
        'pydantic-ai-slim[openai]==2.78.0' openai==3.63.0 \
        opentelemetry-sdk==1.45.2 opentelemetry-exporter-otlp-proto-http==1.45.2
    /tmp/cap-pai-stream/bin/python tests/captures/pydantic-ai_openai_streamed/record.py

Three runs of one conversation (`conversation_id`), each its own trace, each given the previous
run's `all_messages()`, every model request streamed (pydantic-ai asks the chat API for
`stream_options: {include_usage: true}`, so each stream ends with its usage). Instrumented for
every agent with `Agent.instrument_all(InstrumentationSettings(...))`. Turn one is
`agent.run_stream`: a tool call, then the answer streamed as text. Turn two is `agent.iter` with
`node.stream(...)` on every model-request and tool-call node and a pydantic model as `output_type`:
two parallel tool calls, a tool returning a list (sent to the model as compact JSON), then the
structured answer given through pydantic-ai's `final_result` output tool (which no tool span
records: the model is shown its "Final result processed." only in turn three's history). Turn
three is `agent.run_stream_events`, answered from the history. No tool fails: a pydantic-ai tool's
recoverable failure (`ModelRetry`) reaches the OpenAI model wrapped as `{"error": …}`, which
pydantic-ai_openai_history-retry-parallel shows (the wrapper is rebuilt from the tool span's retry
cause: trajectory/mappers/pydantic_ai_tool_errors.py). (The versions the capture was recorded with are
in meta.json.)
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

from tests.captures.recording.session import Recording

SESSION = "pai-stream-trip-1"
PLAN = {"city": "Madrid", "days": 2, "hotel": "Hotel Sol",
        "reason": "Madrid is warmer (27°C, sunny) than Porto (18°C, cloudy)."}
REPLIES = [
    {"tool_calls": [{"name": "get_weather", "arguments": {"city": "Lisbon"}}],
     "input_tokens": 212, "output_tokens": 17},
    {"text": "Lisbon is sunny and 24°C right now: a good day for a walk along the river.",
     "input_tokens": 251, "output_tokens": 21},
    {"tool_calls": [{"name": "get_weather", "arguments": {"city": "Porto"}},
                    {"name": "get_weather", "arguments": {"city": "Madrid"}}],
     "input_tokens": 398, "output_tokens": 34},
    {"tool_calls": [{"name": "find_hotels", "arguments": {"city": "Madrid", "nights": 2}}],
     "input_tokens": 472, "output_tokens": 22},
    {"tool_calls": [{"name": "final_result", "arguments": PLAN}],
     "input_tokens": 515, "output_tokens": 46},
    {"text": "Pack light clothes and sunscreen for Madrid; a light jacket for the evenings.",
     "input_tokens": 560, "output_tokens": 19},
]
WEATHER = {"Lisbon": "sunny, 24°C", "Porto": "cloudy, 18°C", "Madrid": "sunny, 27°C"}
HOTELS = {"Madrid": [{"name": "Hotel Sol", "per_night_eur": 95}, {"name": "Casa Prado", "per_night_eur": 120}]}


async def conversation(rec: Recording) -> None:
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor
    from pydantic import BaseModel
    from pydantic_ai import Agent
    from pydantic_ai.models.instrumented import InstrumentationSettings
    from pydantic_ai.models.openai import OpenAIChatModel
    from pydantic_ai.providers.openai import OpenAIProvider

    provider = TracerProvider(resource=Resource.create({"service.name": "pai-trip-planner"}))
    provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
    Agent.instrument_all(InstrumentationSettings(tracer_provider=provider))
    model = OpenAIChatModel("gpt-4o-mini", provider=OpenAIProvider(base_url=rec.base_url, api_key="sk-fake"))
    agent = Agent(model, name="trip_planner", instructions="You plan short trips. Check the weather first.")

    class TripPlan(BaseModel):
        city: str
        days: int
        hotel: str
        reason: str

    @agent.tool_plain
    def get_weather(city: str) -> str:
        """The current weather in a city."""
        return WEATHER[city]

    @agent.tool_plain
    def find_hotels(city: str, nights: int) -> list[dict[str, object]]:
        """Hotels with a room free for that many nights."""
        return HOTELS.get(city, [])

    # Turn one: `run_stream`, the answer's text streamed after the tool call.
    async with agent.run_stream("What's the weather in Lisbon right now?", conversation_id=SESSION) as result:
        async for delta in result.stream_text(delta=True):
            print(delta, end="", flush=True)
        print()
    history = result.all_messages()

    # Turn two: `iter`, every node streamed, a structured output.
    async with agent.iter("Plan a weekend: Porto or Madrid, whichever is warmer.", output_type=TripPlan,
                          message_history=history, conversation_id=SESSION) as run:
        async for node in run:
            if Agent.is_model_request_node(node):
                async with node.stream(run.ctx) as request_stream:
                    async for event in request_stream:
                        print("model:", type(event).__name__)
            elif Agent.is_call_tools_node(node):
                async with node.stream(run.ctx) as tools_stream:
                    async for event in tools_stream:
                        print("tools:", type(event).__name__)
    assert run.result is not None
    print(run.result.output)
    history = run.result.all_messages()

    # Turn three: `run_stream_events`, answered from the history.
    async with agent.run_stream_events("What should I pack?", message_history=history,
                                       conversation_id=SESSION) as events:
        async for event in events:
            print("event:", type(event).__name__)
    rec.flush(provider)


def main() -> None:
    with Recording(Path(__file__).parent, REPLIES, framework="pydantic-ai", instrumentation="pydantic-ai",
                   packages=["pydantic-ai-slim", "openai", "opentelemetry-sdk"], session_id=SESSION,
                   notes="three streamed runs continued with message_history: run_stream (a tool call, then "
                         "streamed text); iter with node.stream (parallel tool calls, a tool returning a list, a "
                         "structured output through the final_result tool); run_stream_events answered from "
                         "history") as rec:
        rec.env()
        asyncio.run(conversation(rec))


if __name__ == "__main__":
    main()
