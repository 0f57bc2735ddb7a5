"""Re-record: a smolagents ToolCallingAgent managing a weather agent, two runs of one memory, traced by OpenInference.

    python3 -m venv /tmp/cap-smolagents_openinference_managed-agent && \
        /tmp/cap-smolagents_openinference_managed-agent/bin/pip install smolagents==1.26.0 openai==3.63.0 \
        openinference-instrumentation-smolagents==0.1.43 openinference-instrumentation==0.1.72 \
        opentelemetry-sdk==1.45.2 opentelemetry-exporter-otlp-proto-http==1.45.2
    /tmp/cap-smolagents_openinference_managed-agent/bin/python \
        tests/captures/smolagents_openinference_managed-agent/record.py

The newest releases of each (Python 3.11.7); `pip freeze` of what matters after that install: smolagents==1.26.0,
openai==3.63.0, openinference-instrumentation-smolagents==0.1.43, openinference-instrumentation==0.1.72,
openinference-semantic-conventions==0.1.42, opentelemetry-api==1.45.2, opentelemetry-sdk==1.45.2,
opentelemetry-exporter-otlp-proto-http==1.45.2, opentelemetry-instrumentation==0.66b2 (meta.json has the versions
the capture was recorded with).

Traced as OpenInference's smolagents page shows and as `smolagents_openinference` is: one tracer provider exporting
OTLP/HTTP (protobuf, batched) to the recorder, `SmolagentsInstrumentor().instrument(tracer_provider=…)`: an AGENT
span `<name>.run` per `MultiStepAgent.run` (a managed agent's run too: smolagents calls it through
`MultiStepAgent.__call__`, no `Tool`, so there is no tool span between the manager's step and it), a CHAIN `Step
<n>` per step, an LLM span per `generate` / `generate_stream`, a TOOL span per `Tool.__call__`. smolagents has no
session id: both runs are inside OpenInference's `using_session`, which puts `session.id` on every span started in
it.

The manager (unnamed, `OpenAIServerModel` against the fake LLM, `stream_outputs=True`: its calls streamed with
`include_usage`) has a tool of its own, `convert_currency`, and a managed ToolCallingAgent `weather_agent` (name and
description given; its calls not streamed) with `get_weather` and `get_air_quality`. Run one (`run`): the manager
converts 200 EUR and answers with `final_answer`. Run two continues the same memory (`run(…, reset=False,
stream=True)`: the steps come as a generator, iterated to the end): the manager says it will ask the weather desk and
calls `weather_agent` with a task, which smolagents wraps in its managed-agent prompt and runs as a fresh run of the
weather agent; that agent calls both its tools in one answer, which smolagents runs in a thread pool; get_air_quality
times out once (after get_weather has returned), and smolagents, its step failed, sends the model only the error
(`Error:\n…`: no restated calls, no get_weather observation), so the model asks for both again, then answers with
`final_answer`; the manager gets smolagents' report of that answer and answers. Seven LLM calls.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

from tests.captures.recording.session import Recording

MODEL = "gpt-4o-mini"
SESSION = "smol-oi-managed-1"
WEATHER_TASK = "Get the current weather and the air quality in Paris, for an afternoon run."
QUESTIONS = ["I'm in Paris with 200 EUR. How much is that in yen?",
             "Is this afternoon good for a run in Paris? Ask about the weather and the air."]
REPLIES = [
    # Run one: the manager alone.
    {"tool_calls": [{"name": "convert_currency", "arguments": {"amount": 200, "from_currency": "EUR",
                                                               "to_currency": "JPY"}}]},
    {"tool_calls": [{"name": "final_answer", "arguments": {"answer": "200 EUR is about 32,480 JPY."}}],
     "when": "32,480"},
    # Run two: the manager asks its weather agent.
    {"text": "I'll ask the weather desk about Paris this afternoon.",
     "tool_calls": [{"name": "weather_agent", "arguments": {"task": WEATHER_TASK}}], "when": "for a run"},
    # The weather agent: both tools at once, the air-quality one timing out; both again; its answer.
    {"tool_calls": [{"name": "get_weather", "arguments": {"city": "Paris"}},
                    {"name": "get_air_quality", "arguments": {"city": "Paris"}}], "when": WEATHER_TASK[:40]},
    {"tool_calls": [{"name": "get_weather", "arguments": {"city": "Paris"}},
                    {"name": "get_air_quality", "arguments": {"city": "Paris"}}], "when": "timed out"},
    {"tool_calls": [{"name": "final_answer", "arguments": {
        "answer": "Paris: sunny, 21°C; air quality good (AQI 42)."}}], "when": "AQI 42"},
    # The manager, shown the weather agent's report.
    {"tool_calls": [{"name": "final_answer", "arguments": {
        "answer": "Yes: Paris is sunny at 21°C with good air (AQI 42), a fine afternoon for a run."}}],
     "when": "weather_agent"},
]
WEATHER = {"Paris": "sunny, 21°C"}
AIR = {"Paris": "good (AQI 42)"}
PACKAGES = ["smolagents", "openai", "openinference-instrumentation-smolagents", "openinference-instrumentation",
            "openinference-semantic-conventions", "opentelemetry-sdk", "opentelemetry-exporter-otlp-proto-http"]


def main() -> None:
    notes = ("SmolagentsInstrumentor on an app tracer provider; both runs in OpenInference's using_session. An "
             "unnamed ToolCallingAgent (stream_outputs=True) with convert_currency and a managed ToolCallingAgent "
             "weather_agent (get_weather, get_air_quality). Run one: convert_currency, final_answer. Run two "
             "(reset=False, stream=True): text and a weather_agent call; the weather agent's two parallel calls, "
             "get_air_quality timing out once (smolagents' step error: the model is sent only 'Error:\\n…'), both "
             "again, its final_answer; the manager's final_answer")
    with Recording(Path(__file__).parent, REPLIES, framework="smolagents", instrumentation="openinference",
                   packages=PACKAGES, session_id=SESSION, notes=notes) as rec:
        rec.env()
        from openinference.instrumentation import using_session
        from openinference.instrumentation.smolagents import SmolagentsInstrumentor
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
        from opentelemetry.sdk.resources import Resource
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import BatchSpanProcessor

        provider = TracerProvider(resource=Resource.create({"service.name": "run-planner"}))
        provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
        SmolagentsInstrumentor().instrument(tracer_provider=provider)

        from smolagents import OpenAIServerModel, ToolCallingAgent, tool

        failures = {"get_air_quality": 1}

        @tool
        def convert_currency(amount: float, from_currency: str, to_currency: str) -> str:
            """Convert an amount of money between currencies.

            Args:
                amount: how much money
                from_currency: the currency it is in (ISO code)
                to_currency: the currency wanted (ISO code)
            """
            return f"{amount:g} {from_currency} = {round(amount * 162.4):,} {to_currency}"

        @tool
        def get_weather(city: str) -> str:
            """The weather in a city now.

            Args:
                city: the city
            """
            return WEATHER[city]

        @tool
        def get_air_quality(city: str) -> str:
            """The air quality in a city now.

            Args:
                city: the city
            """
            time.sleep(0.3)  # a slow service: get_weather, called beside it, has returned when it fails
            if failures["get_air_quality"]:
                failures["get_air_quality"] -= 1
                raise TimeoutError("air-quality service timed out")
            return AIR[city]

        model = OpenAIServerModel(model_id=MODEL, api_base=rec.base_url, api_key="sk-fake")
        weather_agent = ToolCallingAgent(tools=[get_weather, get_air_quality], model=model, name="weather_agent",
                                         description="Finds the current weather and air quality in a city.",
                                         max_steps=4)
        manager = ToolCallingAgent(tools=[convert_currency], model=model, managed_agents=[weather_agent],
                                   stream_outputs=True, max_steps=4)

        with using_session(SESSION):
            print(manager.run(QUESTIONS[0]))
            for event in manager.run(QUESTIONS[1], reset=False, stream=True):
                if type(event).__name__ == "FinalAnswerStep":
                    print(event.output)
        rec.flush(provider)


if __name__ == "__main__":
    main()
