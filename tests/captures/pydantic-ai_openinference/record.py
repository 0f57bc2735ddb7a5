"""Re-record: pydantic-ai's own GenAI spans converted to OpenInference by its span processor.

    python3 -m venv /tmp/cap-pydantic-ai_openinference && /tmp/cap-pydantic-ai_openinference/bin/pip install \
        'pydantic-ai-slim[openai]==2.78.0' openai==3.63.0 openinference-instrumentation-pydantic-ai==0.1.30 \
        openinference-instrumentation==0.1.72 openinference-semantic-conventions==0.1.42 \
        opentelemetry-sdk==1.45.2 opentelemetry-exporter-otlp-proto-http==1.45.2
    /tmp/cap-pydantic-ai_openinference/bin/python tests/captures/pydantic-ai_openinference/record.py

Set up as openinference-instrumentation-pydantic-ai's README shows: a global tracer provider, its
`OpenInferenceSpanProcessor` added before the exporting processor (a `SimpleSpanProcessor`: one export a
span), and pydantic-ai's instrumentation on for every agent (`Agent.instrument_all()`: the default
settings, instrumentation version 5, on the global provider). The processor adds OpenInference
attributes to pydantic-ai's spans as they end (`openinference.span.kind`, `llm.*`, `input/output.value`,
`tool.*`, `session.id` from `gen_ai.conversation.id`), keeping every GenAI attribute: each span carries
both conventions, which is what this capture checks (evalkit must read each call once).

Two runs of one conversation (`conversation_id`, which pydantic-ai writes as `gen_ai.conversation.id`
and the processor copies to `session.id`; OpenInference's `using_session` is not used: the processor
reads no context, so it would add nothing), the second given the first's `all_messages()`. Turn one
(`agent.run`): two parallel `get_weather` calls, the one for a city with no station raising
`ModelRetry` (the model is shown the retry), then the model asks for another city and answers. Turn
two (`agent.run_stream`, every request streamed): a `find_hotels` call returning a list, then the
answer streamed as text. (The versions the capture was recorded with are in meta.json.)
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

from tests.captures.recording.session import Recording

SESSION = "pai-oi-trip-1"
REPLIES = [
    {"tool_calls": [{"name": "get_weather", "arguments": {"city": "Lisbon"}},
                    {"name": "get_weather", "arguments": {"city": "Atlantis"}}],
     "input_tokens": 231, "output_tokens": 38},
    {"tool_calls": [{"name": "get_weather", "arguments": {"city": "Porto"}}], "input_tokens": 302, "output_tokens": 17},
    {"text": "Lisbon is sunny at 24°C; Atlantis has no station, so Porto instead: cloudy, 18°C.",
     "input_tokens": 341, "output_tokens": 25},
    {"tool_calls": [{"name": "find_hotels", "arguments": {"city": "Lisbon", "nights": 2}}],
     "input_tokens": 398, "output_tokens": 21},
    {"text": "Lisbon is warmer: Casa Alfama has a room for two nights at 110 EUR a night.",
     "input_tokens": 466, "output_tokens": 22},
]
WEATHER = {"Lisbon": "sunny, 24°C", "Porto": "cloudy, 18°C"}
HOTELS = {"Lisbon": [{"name": "Casa Alfama", "per_night_eur": 110}]}


async def conversation(rec: Recording) -> None:
    from openinference.instrumentation.pydantic_ai import OpenInferenceSpanProcessor
    from opentelemetry import trace
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from pydantic_ai import Agent, ModelRetry
    from pydantic_ai.models.openai import OpenAIChatModel
    from pydantic_ai.providers.openai import OpenAIProvider

    provider = TracerProvider(resource=Resource.create({"service.name": "pai-oi-trip"}))
    trace.set_tracer_provider(provider)
    provider.add_span_processor(OpenInferenceSpanProcessor())
    provider.add_span_processor(SimpleSpanProcessor(OTLPSpanExporter()))
    Agent.instrument_all()

    model = OpenAIChatModel("gpt-4o-mini", provider=OpenAIProvider(base_url=rec.base_url, api_key="sk-fake"))
    agent = Agent(model, name="travel_desk", instructions="You plan short trips. Check the weather first.")

    @agent.tool_plain
    def get_weather(city: str) -> str:
        """The current weather in a city."""
        if city not in WEATHER:
            raise ModelRetry(f"No weather station in {city}; ask about another city.")
        return WEATHER[city]

    @agent.tool_plain
    def find_hotels(city: str, nights: int) -> list[dict[str, object]]:
        """Hotels with a room free for that many nights."""
        return HOTELS.get(city, [])

    # Turn one: not streamed; parallel calls, one raising ModelRetry, then a retry with another city.
    first = await agent.run("Weather in Lisbon and Atlantis? If Atlantis has none, try Porto.",
                            conversation_id=SESSION)
    print(first.output)

    # Turn two: `run_stream`, the history re-sent; a tool call, then the answer streamed as text.
    async with agent.run_stream("Which is warmer? Find me a hotel there for two nights.",
                                message_history=first.all_messages(), conversation_id=SESSION) as result:
        async for delta in result.stream_text(delta=True):
            print(delta, end="", flush=True)
        print()
    rec.flush(provider)


def main() -> None:
    with Recording(Path(__file__).parent, REPLIES, framework="pydantic-ai", instrumentation="openinference",
                   packages=["pydantic-ai-slim", "openai", "openinference-instrumentation-pydantic-ai",
                             "openinference-instrumentation", "openinference-semantic-conventions",
                             "opentelemetry-sdk"],
                   session_id=SESSION,
                   notes="pydantic-ai's GenAI spans with OpenInference attributes added by OpenInferenceSpanProcessor "
                         "(both conventions on each span); two runs of one conversation_id, the second given the "
                         "first's history: parallel tool calls, one raising ModelRetry, the model asking again; "
                         "then run_stream: a tool returning a list and the streamed answer") as rec:
        rec.env()
        asyncio.run(conversation(rec))


if __name__ == "__main__":
    main()
