"""Re-record: Strands Agents' "agents as tools" (an orchestrator whose tools each run a specialist agent), traced by
Strands' own OpenTelemetry.

    python3 -m venv /tmp/cap-strands_native_agents-as-tools && /tmp/cap-strands_native_agents-as-tools/bin/pip \
        install 'strands-agents[openai]==1.62.0' openai==2.54.0 opentelemetry-sdk==1.45.1 \
        opentelemetry-exporter-otlp-proto-http==1.45.1
    /tmp/cap-strands_native_agents-as-tools/bin/python tests/captures/strands_native_agents-as-tools/record.py

strands-agents 1.62.0 is the newest release; its `openai` extra asks for `openai<3`, so openai 2.54.0 (the newest
2.x). opentelemetry-sdk 1.45.2 is out, but no opentelemetry-instrumentation-threading (which strands-agents
requires) accepts its opentelemetry-api yet: pip finds no resolution, so 1.45.1.

The pattern is the one Strands' docs call "agents as tools": a `@tool` function that makes a specialist
`Agent(...)`, asks it the orchestrator's query and returns its answer's text (`str(result)`), given to an
orchestrator `Agent` among its tools. Each specialist has its own tool and system prompt. Strands runs a sync tool in
a worker thread with the caller's context (`asyncio.to_thread`), and `Agent.__call__` runs the specialist's loop in
another (`_async.run_async`, the context copied too): so the specialist's `invoke_agent` span is a child of the
orchestrator's `execute_tool` span. The session is the orchestrator's `trace_attributes={"session.id": …}` (as
`strands_native_swarm` sets it on its Swarm); the specialists set none, their spans being in the orchestrator's trace.
Every OpenAIModel call is streamed; a turn's tools run concurrently (Strands' default ConcurrentToolExecutor).

Turn one (seven calls, `orchestrator(question)`): the orchestrator calls `weather_assistant` and `sights_assistant`
in parallel; the weather specialist calls `get_forecast`, the forecast service times out once (the tool raises;
Strands sends the model the error's text as an error tool result), calls it again, then answers; the sights
specialist calls `find_sights`, then answers; the orchestrator answers from both. Turn two (one call, the same
orchestrator and session, run with `orchestrator.stream_async`, its events streamed as they come): the orchestrator
answers from turn one.
(The versions the capture was recorded with are in meta.json.)
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

from tests.captures.recording.session import Recording

SESSION = "strands-agents-as-tools-trip-1"
QUESTIONS = ["I'm in Lyon tomorrow. What's the forecast, and what should I see?",
             "Which of those is best if it pours?"]
WEATHER_QUERY = "Tomorrow's forecast for Lyon"
SIGHTS_QUERY = "Top sights to visit in Lyon"
FORECAST = {"Lyon": "showers, 11°C"}
SIGHTS = {"Lyon": "Basilica of Notre-Dame de Fourviere; Vieux Lyon and its covered traboules"}
# Each reply names what the request's last message holds, so the two specialists' concurrent calls are answered
# whatever their order; the orchestrator's last (its tool results, "Lyon" in both) is listed after theirs.
REPLIES: list[dict[str, Any]] = [
    {"when": QUESTIONS[0], "tool_calls": [{"name": "weather_assistant", "arguments": {"query": WEATHER_QUERY}},
                                          {"name": "sights_assistant", "arguments": {"query": SIGHTS_QUERY}}]},
    {"when": WEATHER_QUERY, "tool_calls": [{"name": "get_forecast", "arguments": {"city": "Lyon", "days": 1}}]},
    {"when": "timed out", "tool_calls": [{"name": "get_forecast", "arguments": {"city": "Lyon", "days": 1}}]},
    {"when": "showers", "text": "Tomorrow in Lyon: showers, 11°C."},
    {"when": SIGHTS_QUERY, "tool_calls": [{"name": "find_sights", "arguments": {"city": "Lyon"}}]},
    {"when": "traboules", "text": "Climb to the Fourviere basilica, then walk Vieux Lyon's traboules."},
    {"when": "Lyon", "text": "Showers tomorrow (11°C): see the Fourviere basilica, then Vieux Lyon's traboules."},
    {"when": QUESTIONS[1], "text": "The traboules: they are covered passageways, so you stay dry."},
]
# What was installed that the spans depend on (pip resolved the last three): the framework and its tracer, the
# client it calls, the exporter, and the threading instrumentation Strands uses to carry the span context into the
# threads its tools run in.
PACKAGES = ["strands-agents", "openai", "opentelemetry-sdk", "opentelemetry-exporter-otlp-proto-http",
            "opentelemetry-api", "opentelemetry-instrumentation-threading", "opentelemetry-semantic-conventions"]


def main() -> None:
    with Recording(Path(__file__).parent, REPLIES, framework="strands-agents", instrumentation="strands (native)",
                   packages=PACKAGES, session_id=SESSION,
                   notes="agents as tools (Strands' docs: @tool functions each asking a specialist Agent and "
                         "returning its text), trace_attributes session.id on the orchestrator, every call "
                         "streamed: turn one the orchestrator calls weather_assistant and sights_assistant in "
                         "parallel; the weather specialist's get_forecast raises once (timed out), is called again, "
                         "it answers; the sights specialist calls find_sights and answers; the orchestrator answers; "
                         "turn two (stream_async) the orchestrator answers from turn one") as rec:
        rec.env()
        from strands import Agent, tool
        from strands.models.openai import OpenAIModel
        from strands.telemetry import StrandsTelemetry

        telemetry = StrandsTelemetry()
        telemetry.setup_otlp_exporter()
        timeouts = {"left": 1}  # the forecast service times out once

        def model() -> OpenAIModel:
            return OpenAIModel(client_args={"base_url": rec.base_url, "api_key": "sk-fake"}, model_id="gpt-4o")

        @tool
        def get_forecast(city: str, days: int) -> str:
            """The forecast for a city, `days` ahead."""
            if timeouts["left"]:
                timeouts["left"] -= 1
                raise TimeoutError("forecast service timed out")
            return FORECAST[city]

        @tool
        def find_sights(city: str) -> str:
            """The sights worth seeing in a city."""
            return SIGHTS[city]

        @tool
        def weather_assistant(query: str) -> str:
            """Answer a weather question: a weather specialist with the forecast service."""
            specialist = Agent(name="weather_specialist", model=model(), tools=[get_forecast], callback_handler=None,
                               system_prompt="You answer weather questions with the forecast tool.")
            return str(specialist(query))

        @tool
        def sights_assistant(query: str) -> str:
            """Suggest what to see: a sightseeing specialist with a guide to each city's sights."""
            specialist = Agent(name="sights_specialist", model=model(), tools=[find_sights], callback_handler=None,
                               system_prompt="You suggest sights with the guide tool.")
            return str(specialist(query))

        orchestrator = Agent(name="trip_planner", model=model(), tools=[weather_assistant, sights_assistant],
                             callback_handler=None, trace_attributes={"session.id": SESSION},
                             system_prompt="You plan trips: ask weather_assistant about the weather and "
                                           "sights_assistant what to see, then answer.")
        print(orchestrator(QUESTIONS[0]))

        async def streamed() -> None:
            async for event in orchestrator.stream_async(QUESTIONS[1]):
                if "result" in event:
                    print(event["result"])

        asyncio.run(streamed())
        rec.flush(telemetry.tracer_provider)


if __name__ == "__main__":
    main()
