"""Re-record: a pydantic-ai agent giving structured output, by its output tool then natively (pydantic-ai's tracing).

    python3 -m venv /tmp/cap-pydantic-ai_openai_structured-output && \
        /tmp/cap-pydantic-ai_openai_structured-output/bin/pip install \
        'pydantic-ai-slim[openai]==2.78.0' openai==3.63.0 genai-prices==0.2.5 \
        opentelemetry-sdk==1.45.2 opentelemetry-exporter-otlp-proto-http==1.45.2
    /tmp/cap-pydantic-ai_openai_structured-output/bin/python \
        tests/captures/pydantic-ai_openai_structured-output/record.py

Structured output both ways pydantic-ai gives it, on an OpenAI chat model (`OpenAIChatModel` on the fake LLM).
Instrumented for every agent with `Agent.instrument_all(InstrumentationSettings(...))`, as
pydantic-ai_openai_streamed. Two runs of one conversation (`conversation_id`), each its own trace.

Turn one (`agent.run`): the `trip_planner` agent's `output_type` is a pydantic model (`TripPlan`) in pydantic-ai's
default tool output mode, so the model ends the run by calling the `final_result` output tool, whose arguments are the
output. It first calls `get_weather` for Porto and Madrid in parallel, Madrid's raising `ModelRetry` once (the
weather service "timed out"), and asks for Madrid again. Its first `final_result` is refused by the agent's output
validator (`@agent.output_validator` raising `ModelRetry`: the reason must give both cities' temperatures), which
answers that output tool call as a retried tool return; the model calls `final_result` again and the run ends with
that plan (pydantic-ai answers the call "Final result processed.", which the model is shown only in turn two's
history).

Turn two (`run_stream`, given turn one's `all_messages()`, `stream_output()`): `NativeOutput(PackingList)`, the
provider's JSON schema response format, so the answer is the message's text, a JSON document. pydantic-ai refuses a
run's own `output_type` on an agent that has output validators ("Cannot set a custom run `output_type` when the agent
has output validators"), so turn two runs an agent of the same name, instructions and tools whose `output_type` is
the `NativeOutput`: the planner as the application configures it for that question. It calls `get_forecast`, then
streams the packing list.

Six LLM calls, four in turn one. Installed then (pip freeze, the packages that matter; also in meta.json):
pydantic-ai-slim 2.78.0 (the newest), pydantic-graph 2.78.0, pydantic 2.14.4, genai-prices 0.2.5 (pydantic-ai's
`operation.cost`), openai 3.63.0 (the newest), httpx2 2.17.0, opentelemetry-api / -sdk / -exporter-otlp-proto-http
1.45.2.
"""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

from tests.captures.recording.session import Recording

SESSION = "pai-structured-trip-1"
FIRST_PLAN = {"city": "Madrid", "days": 2, "reason": "Madrid is warmer than Porto."}
PLAN = {"city": "Madrid", "days": 2,
        "reason": "Madrid is sunny and 27°C, Porto cloudy and 18°C: Madrid is 9 degrees warmer."}
PACKING = {"items": ["light clothes", "sunscreen", "sunglasses", "a light jacket"],
           "note": "Evenings cool to 16°C in Madrid: bring a layer."}
REPLIES = [
    # Turn one: both cities' weather at once; Madrid's call raises ModelRetry.
    {"tool_calls": [{"name": "get_weather", "arguments": {"city": "Porto"}},
                    {"name": "get_weather", "arguments": {"city": "Madrid"}}],
     "input_tokens": 236, "output_tokens": 38},
    {"tool_calls": [{"name": "get_weather", "arguments": {"city": "Madrid"}}],
     "input_tokens": 318, "output_tokens": 17},
    # The first plan: the output validator refuses it.
    {"tool_calls": [{"name": "final_result", "arguments": FIRST_PLAN}],
     "input_tokens": 352, "output_tokens": 31},
    {"tool_calls": [{"name": "final_result", "arguments": PLAN}],
     "input_tokens": 421, "output_tokens": 44},
    # Turn two, streamed, native structured output: a tool call, then the JSON document as the message's text.
    {"tool_calls": [{"name": "get_forecast", "arguments": {"city": "Madrid"}}],
     "input_tokens": 533, "output_tokens": 16},
    {"text": json.dumps(PACKING, ensure_ascii=False), "input_tokens": 578, "output_tokens": 41},
]
WEATHER = {"Porto": "cloudy, 18°C", "Madrid": "sunny, 27°C"}
FORECAST = {"Madrid": "tomorrow sunny, 29°C by day, 16°C in the evening"}


async def conversation(rec: Recording) -> None:
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor
    from pydantic import BaseModel
    from pydantic_ai import Agent, ModelRetry, NativeOutput
    from pydantic_ai.models.instrumented import InstrumentationSettings
    from pydantic_ai.models.openai import OpenAIChatModel
    from pydantic_ai.providers.openai import OpenAIProvider

    provider = TracerProvider(resource=Resource.create({"service.name": "pai-structured-trip"}))
    provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
    Agent.instrument_all(InstrumentationSettings(tracer_provider=provider))
    model = OpenAIChatModel("gpt-4o-mini", provider=OpenAIProvider(base_url=rec.base_url, api_key="sk-fake"))
    instructions = "You plan short trips. Check the weather first."

    class TripPlan(BaseModel):
        """A weekend trip."""

        city: str
        days: int
        reason: str

    class PackingList(BaseModel):
        """What to pack for the trip."""

        items: list[str]
        note: str

    timed_out: set[str] = set()

    def get_weather(city: str) -> str:
        """The current weather in a city."""
        if city == "Madrid" and city not in timed_out:
            timed_out.add(city)
            raise ModelRetry("The weather service timed out for Madrid; try again.")
        return WEATHER[city]

    def get_forecast(city: str) -> str:
        """Tomorrow's forecast for a city."""
        return FORECAST[city]

    planner = Agent(model, name="trip_planner", instructions=instructions, output_type=TripPlan,
                    tools=[get_weather, get_forecast])
    refused: list[TripPlan] = []

    @planner.output_validator
    def reason_gives_both_temperatures(plan: TripPlan) -> TripPlan:
        if not refused:
            refused.append(plan)
            raise ModelRetry("The reason must give both cities' temperatures.")
        return plan

    # Turn one: the tool loop, then the plan through the final_result output tool, refused once by the validator.
    result = await planner.run("Plan a weekend: Porto or Madrid, whichever is warmer.", conversation_id=SESSION)
    print(result.output)
    history = result.all_messages()

    # Turn two: the same planner answering with the provider's native structured output, streamed.
    packer = Agent(model, name="trip_planner", instructions=instructions, output_type=NativeOutput(PackingList),
                   tools=[get_weather, get_forecast])
    async with packer.run_stream("What should I pack? Check tomorrow's forecast.", message_history=history,
                                 conversation_id=SESSION) as streamed:
        async for partial in streamed.stream_output():
            print("partial:", partial)
    print(await streamed.get_output())
    rec.flush(provider)


def main() -> None:
    with Recording(Path(__file__).parent, REPLIES, framework="pydantic-ai", instrumentation="pydantic-ai",
                   packages=["pydantic-ai-slim", "pydantic-graph", "pydantic", "genai-prices", "openai", "httpx2",
                             "opentelemetry-api", "opentelemetry-sdk", "opentelemetry-exporter-otlp-proto-http"],
                   session_id=SESSION,
                   notes="structured output: turn one (agent.run) output_type=TripPlan in tool output mode, after "
                         "parallel get_weather calls (one raising ModelRetry once, asked again), the first "
                         "final_result refused by an output validator raising ModelRetry, then accepted; turn two "
                         "(run_stream, message_history) NativeOutput(PackingList): a tool call, then the JSON "
                         "answer streamed") as rec:
        rec.env()
        asyncio.run(conversation(rec))


if __name__ == "__main__":
    main()
