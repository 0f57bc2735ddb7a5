"""Re-record: a Strands Agents Swarm (a triage agent handing off to a weather specialist), traced by Strands' own
OpenTelemetry.

    python3 -m venv /tmp/cap-strands_native_swarm && /tmp/cap-strands_native_swarm/bin/pip install \
        'strands-agents[openai]==1.62.0' openai==2.54.0 opentelemetry-sdk==1.45.1 \
        opentelemetry-exporter-otlp-proto-http==1.45.1
    /tmp/cap-strands_native_swarm/bin/python tests/captures/strands_native_swarm/record.py

`strands.multiagent.Swarm` gives every agent its `handoff_to_agent` tool; an agent that calls it goes on with its
own loop (the tool only records the handoff), and when it finishes the swarm runs the agent handed to, on a
"Context:" message the swarm writes (the handoff message, the user's request, who worked on it before). The
session is the swarm's `trace_attributes={"session.id": …}` (as Strands' docs set it on an Agent: here on the swarm,
whose `invoke_swarm` span is each run's root); every OpenAIModel call is streamed, a turn's tools run concurrently.

Turn one (five calls): the triage agent hands off to the specialist, then says so; the specialist calls
`get_weather` and `get_forecast` in parallel, the forecast service times out once (the tool raises; Strands sends
the model the error's text as an error tool result), the specialist calls it again, then answers. Turn two (one
call; the same swarm and session, Swarm resets each agent's messages per run): the triage agent answers itself.
(The versions the capture was recorded with are in meta.json.)
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

from tests.captures.recording.session import Recording

SESSION = "strands-swarm-trip-1"
HANDOFF = "The user wants the weather and tomorrow's forecast for Lyon."
# Each reply names what the request's last message holds, so the agents' calls are answered whatever their order.
REPLIES = [
    {"when": "Should I pack an umbrella", "tool_calls": [{"name": "handoff_to_agent", "arguments": {
        "agent_name": "weather_specialist", "message": HANDOFF}}]},
    {"when": "Handing off to weather_specialist", "text": "The weather specialist will take it from here."},
    {"when": "Handoff Message", "text": "Checking today's weather and tomorrow's forecast.",
     "tool_calls": [{"name": "get_weather", "arguments": {"city": "Lyon"}},
                    {"name": "get_forecast", "arguments": {"city": "Lyon", "days": 1}}]},
    {"when": "timed out", "tool_calls": [{"name": "get_forecast", "arguments": {"city": "Lyon", "days": 1}}]},
    {"when": "showers", "text": "Lyon is cloudy at 14°C today, with showers tomorrow: pack an umbrella."},
    {"when": "What should I wear", "text": "Layers and a light waterproof jacket."},
]
WEATHER = {"Lyon": "cloudy, 14°C"}
FORECAST = {"Lyon": "showers, 11°C"}


def main() -> None:
    with Recording(Path(__file__).parent, REPLIES, framework="strands-agents", instrumentation="strands (native)",
                   packages=["strands-agents", "openai", "opentelemetry-sdk", "opentelemetry-exporter-otlp-proto-http"],
                   session_id=SESSION,
                   notes="a Swarm of two agents (trace_attributes session.id on the swarm), every call streamed: "
                         "turn one the triage agent hands off to the specialist (handoff_to_agent), who calls two "
                         "tools in parallel, one raising once (timed out), calls it again, answers; turn two the "
                         "triage agent answers itself") as rec:
        rec.env()
        from strands import Agent, tool
        from strands.models.openai import OpenAIModel
        from strands.multiagent import Swarm
        from strands.telemetry import StrandsTelemetry

        telemetry = StrandsTelemetry()
        telemetry.setup_otlp_exporter()
        timeouts = {"left": 1}  # the forecast service times out once

        @tool
        def get_weather(city: str) -> str:
            """Today's weather in a city."""
            return WEATHER[city]

        @tool
        def get_forecast(city: str, days: int) -> str:
            """The forecast for a city, `days` ahead."""
            if timeouts["left"]:
                timeouts["left"] -= 1
                raise TimeoutError("forecast service timed out")
            return FORECAST[city]

        def model() -> OpenAIModel:
            return OpenAIModel(client_args={"base_url": rec.base_url, "api_key": "sk-fake"}, model_id="gpt-4o")

        triage = Agent(name="triage", model=model(), callback_handler=None,
                       description="Routes the traveller's question to the right specialist.",
                       system_prompt="You route travel questions; hand weather questions to weather_specialist.")
        specialist = Agent(name="weather_specialist", model=model(), tools=[get_weather, get_forecast],
                           callback_handler=None, description="Knows today's weather and the forecast.",
                           system_prompt="You answer weather questions with the tools.")
        swarm = Swarm([triage, specialist], entry_point=triage, trace_attributes={"session.id": SESSION})
        swarm("I'm in Lyon tomorrow. Should I pack an umbrella?")
        swarm("What should I wear there?")
        rec.flush(telemetry.tracer_provider)


if __name__ == "__main__":
    main()
