"""Re-record: the OpenAI SDK's Responses API on a reasoning model, traced by OpenLLMetry's openai instrumentation.

    python3 -m venv /tmp/cap-openai-sdk_openllmetry_reasoning && \
        /tmp/cap-openai-sdk_openllmetry_reasoning/bin/pip install \
        openai==3.63.0 opentelemetry-instrumentation-openai==0.62.4 \
        opentelemetry-sdk==1.45.2 opentelemetry-exporter-otlp-proto-http==1.45.2
    /tmp/cap-openai-sdk_openllmetry_reasoning/bin/python tests/captures/openai-sdk_openllmetry_reasoning/record.py

(pip brought opentelemetry-semantic-conventions-ai 0.5.1, opentelemetry-instrumentation 0.66b2 and
opentelemetry-semantic-conventions 0.66b2 with them.)

A hand-written tool loop over `client.responses.create(model="o4-mini", reasoning={"effort": "medium",
"summary": "auto"}, tools=…, input=…)`, as OpenAI's reasoning guide shows it with function calling: every
response's output items (its `reasoning` item first, with its summary) are appended to the input as they came
(`context += response.output`), then a `function_call_output` for each `function_call`, and the whole list is
re-sent (a reasoning model needs its reasoning items back beside the calls they led to). OpenLLMetry is set up
as its README shows (`OpenAIInstrumentor().instrument()`, the app's tracer provider, batched OTLP/HTTP to the
recorder): one `openai.response` span a call, the messages as `gen_ai.input.messages` / `gen_ai.output.messages`.
The instrumentation has no session of its own: each turn is an application span carrying `session.id`, and each
tool run an application `execute_tool` span of the GenAI conventions (name, call id, arguments, result; a raising
run failed with its exception and `error.type`). Two turns of one session:

1. non-streamed: the model reasons, then asks for the weather in Lisbon and Porto at once (two parallel
   `function_call` items); Porto's lookup raises once (its error text sent as the output), so it reasons again and
   asks for Porto alone, then reasons and answers in text;
2. streamed (`stream=True`: `response.reasoning_summary_text.delta` events before the text's and the call's): a
   follow-up, answered by reasoning, a sentence and a forecast call, then by reasoning and text.

Every call reasons (its own summary text) and reports its reasoning tokens within the output tokens
(`output_tokens_details.reasoning_tokens`). The function calls are scripted with the ids the real API gives, an
item id (`fc_…`) beside the `call_id` (`call_…`) the output names. (The versions the capture was recorded with are
in meta.json.)
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

from tests.captures.recording.session import Recording

SESSION = "openai-reasoning-weather-1"
MODEL = "o4-mini"
REASONING = {"effort": "medium", "summary": "auto"}
REPLIES = [
    {"reasoning": "Two cities, two independent lookups: I can ask for Lisbon and Porto in parallel.",
     "tool_calls": [{"name": "get_weather", "arguments": {"city": "Lisbon"},
                     "id": "call_Wq3lisbon01", "item_id": "fc_68a1lisbon01"},
                    {"name": "get_weather", "arguments": {"city": "Porto"},
                     "id": "call_Wq3porto001", "item_id": "fc_68a1porto001"}],
     "output_tokens": 120, "reasoning_tokens": 64},
    {"reasoning": "Lisbon is in; Porto's lookup timed out, so I will ask for Porto once more.",
     "tool_calls": [{"name": "get_weather", "arguments": {"city": "Porto"},
                     "id": "call_Wq3porto002", "item_id": "fc_68a1porto002"}],
     "output_tokens": 80, "reasoning_tokens": 48},
    {"reasoning": "Both readings are here: Lisbon is the warmer and sunnier city today.",
     "text": "Lisbon is sunny at 24°C; Porto is cloudy at 19°C.",
     "output_tokens": 70, "reasoning_tokens": 40},
    {"reasoning": "Rain tomorrow is a forecast question, so get_forecast for Porto, not get_weather.",
     "text": "Let me check tomorrow's forecast for Porto.",
     "tool_calls": [{"name": "get_forecast", "arguments": {"city": "Porto", "day": "tomorrow"},
                     "id": "call_Wq3forecast1", "item_id": "fc_68a1forecast1"}],
     "output_tokens": 96, "reasoning_tokens": 52},
    {"reasoning": "The forecast has afternoon showers: the answer is yes, with an umbrella.",
     "text": "Yes: showers are forecast in Porto tomorrow afternoon, so take an umbrella.",
     "output_tokens": 75, "reasoning_tokens": 36},
]
WEATHER = {"Lisbon": "sunny, 24°C", "Porto": "cloudy, 19°C"}
FORECAST = {("Porto", "tomorrow"): "afternoon showers, 17°C"}
TOOLS = [
    {"type": "function", "name": "get_weather", "description": "The weather in a city now",
     "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"],
                    "additionalProperties": False}, "strict": True},
    {"type": "function", "name": "get_forecast", "description": "A city's weather forecast for a day",
     "parameters": {"type": "object", "properties": {"city": {"type": "string"}, "day": {"type": "string"}},
                    "required": ["city", "day"], "additionalProperties": False}, "strict": True},
]
INSTRUCTIONS = "You are a weather assistant. Look the weather up with the tools before you answer."
PACKAGES = ["openai", "opentelemetry-instrumentation-openai", "opentelemetry-semantic-conventions-ai",
            "opentelemetry-sdk", "opentelemetry-exporter-otlp-proto-http", "opentelemetry-instrumentation"]


class WeatherServiceTimeout(Exception):
    pass


class WeatherService:
    """The tools; Porto's first lookup times out."""

    def __init__(self) -> None:
        self.porto_lookups = 0

    def get_weather(self, city: str) -> str:
        if city == "Porto":
            self.porto_lookups += 1
            if self.porto_lookups == 1:
                raise WeatherServiceTimeout("the weather service timed out for Porto")
        return WEATHER[city]

    def get_forecast(self, city: str, day: str) -> str:
        return FORECAST[(city, day)]


def main() -> None:
    with Recording(Path(__file__).parent, REPLIES, framework="openai-sdk", instrumentation="openllmetry",
                   packages=PACKAGES, session_id=SESSION,
                   notes="Responses API on o4-mini (reasoning effort medium, summary auto) in a hand-written tool "
                         "loop re-sending every output item, reasoning items included; OpenAIInstrumentor on the "
                         "app's provider (openai.response spans, gen_ai.input/output.messages); each turn an app "
                         "span with session.id, each tool an app execute_tool span; parallel calls, Porto's raising "
                         "once (its error text sent as the output) and asked again; turn 2 streamed (reasoning "
                         "summary deltas); function_call item ids (fc_) distinct from their call_ids (call_)",
                   ) as rec:
        rec.env()
        import openai
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
        from opentelemetry.instrumentation.openai import OpenAIInstrumentor
        from opentelemetry.sdk.resources import Resource
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import BatchSpanProcessor
        from opentelemetry.trace import Status, StatusCode

        provider = TracerProvider(resource=Resource.create({"service.name": "weather-bot"}))
        provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
        OpenAIInstrumentor().instrument(tracer_provider=provider)
        tracer = provider.get_tracer("weather-bot")
        client = openai.OpenAI()
        service = WeatherService()

        def run_tools(output: list[Any]) -> list[dict[str, Any]]:
            # Each run in an `execute_tool` span of the GenAI conventions (a hand-written loop has no tool runner to
            # trace them): the call_id ties the run to the model's call and to the output the model is sent.
            results = []
            for item in output:
                if item.type != "function_call":
                    continue
                arguments = json.loads(item.arguments)
                with tracer.start_as_current_span(f"execute_tool {item.name}", attributes={
                        "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": item.name,
                        "gen_ai.tool.type": "function", "gen_ai.tool.call.id": item.call_id,
                        "gen_ai.tool.call.arguments": item.arguments}) as span:
                    try:
                        result = getattr(service, item.name)(**arguments)
                    except WeatherServiceTimeout as exc:
                        span.record_exception(exc)
                        span.set_status(Status(StatusCode.ERROR, str(exc)))
                        span.set_attribute("error.type", type(exc).__qualname__)
                        result = f"Error: {exc}"
                    else:
                        span.set_attribute("gen_ai.tool.call.result", result)
                results.append({"type": "function_call_output", "call_id": item.call_id, "output": result})
            return results

        def respond(context: list[Any], stream: bool) -> Any:
            """One call; the Response, its output items to re-send."""
            if not stream:
                return client.responses.create(model=MODEL, instructions=INSTRUCTIONS, input=context, tools=TOOLS,
                                               reasoning=REASONING)
            final = None
            events = client.responses.create(model=MODEL, instructions=INSTRUCTIONS, input=context, tools=TOOLS,
                                             reasoning=REASONING, stream=True)
            for event in events:
                if event.type == "response.reasoning_summary_text.delta":
                    print(f"[thinking] {event.delta}")
                elif event.type == "response.output_text.delta":
                    print(event.delta, end="")
                elif event.type == "response.completed":
                    final = event.response
            print()
            assert final is not None, "the stream ended with no response.completed event"
            return final

        def turn(context: list[Any], question: str, stream: bool) -> None:
            context.append({"role": "user", "content": question})
            with tracer.start_as_current_span("weather-bot turn", attributes={"session.id": SESSION}):
                while True:
                    response = respond(context, stream)
                    context += response.output  # the reasoning item, text and calls, as they came
                    calls = [item for item in response.output if item.type == "function_call"]
                    if not calls:
                        print(response.output_text)
                        return
                    context += run_tools(response.output)

        context: list[Any] = []
        turn(context, "What is the weather in Lisbon and Porto?", stream=False)
        turn(context, "Will it rain in Porto tomorrow?", stream=True)
        rec.flush(provider)


if __name__ == "__main__":
    main()
