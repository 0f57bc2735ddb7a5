"""Re-record: a Strands Agents Graph (a research node, then a weather node fed its answer), traced by Strands' own
OpenTelemetry.

    python3 -m venv /tmp/cap-strands_native_graph && /tmp/cap-strands_native_graph/bin/pip install \
        'strands-agents[openai]==1.62.0' openai==2.54.0 opentelemetry-sdk==1.45.1 \
        opentelemetry-exporter-otlp-proto-http==1.45.1
    /tmp/cap-strands_native_graph/bin/python tests/captures/strands_native_graph/record.py

strands-agents 1.62.0 is the newest release; its `openai` extra asks for `openai<3`, so openai 2.54.0 (the newest 2.x).

`strands.multiagent.GraphBuilder` makes a graph of two nodes, `research` → `weather`: the graph runs the research
node's agent on the task, then the weather node's on a message the graph writes ("Original Task: …", then "Inputs
from previous nodes:" and the research node's answer). The session is the graph's `trace_attributes={"session.id":
…}` (as `strands_native_swarm` sets it on its Swarm, whose `invoke_*` span is each run's root): `Graph.__init__`
takes `trace_attributes`, `GraphBuilder` 1.62 has no setter for it, so it is set on the built graph, which reads it
at each invocation. Every OpenAIModel call is streamed; a turn's tools run concurrently. A graph keeps its node
agents' messages from one invocation to the next (it resets them only on a revisit within one run,
`reset_on_revisit`), so turn two's calls re-send turn one.

Turn one (five calls, `graph(task)`): the researcher calls `lookup_city`, then answers; the weather specialist calls
`get_weather` and `get_forecast` in parallel, the forecast service times out once (the tool raises; Strands sends
the model the error's text as an error tool result), calls it again, then answers. Turn two (two calls; the same
graph and session, run with `graph.stream_async`, its node events streamed as they come): each node answers from
what it was told in turn one.
(The versions the capture was recorded with are in meta.json.)
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

from tests.captures.recording.session import Recording

SESSION = "strands-graph-trip-1"
TASKS = ["I'm in Lyon tomorrow. Should I pack an umbrella?", "What should I wear there?"]
CITY = {"Lyon": "Lyon, France: in the Rhône valley, 170 m above sea level"}
WEATHER = {"Lyon": "cloudy, 14°C"}
FORECAST = {"Lyon": "showers, 11°C"}
RESEARCH = "Lyon is in France's Rhône valley; the traveller is there tomorrow."
# Each reply names what the request's last message holds. The nodes run one after the other, so a reply whose text
# also occurs in a later node's message (the weather node's repeats the task) has been taken by then.
REPLIES: list[dict[str, Any]] = [
    {"when": TASKS[0], "tool_calls": [{"name": "lookup_city", "arguments": {"city": "Lyon"}}]},
    {"when": "170 m above sea level", "text": RESEARCH},
    {"when": "Inputs from previous nodes", "text": "Checking today's weather and tomorrow's forecast.",
     "tool_calls": [{"name": "get_weather", "arguments": {"city": "Lyon"}},
                    {"name": "get_forecast", "arguments": {"city": "Lyon", "days": 1}}]},
    {"when": "timed out", "tool_calls": [{"name": "get_forecast", "arguments": {"city": "Lyon", "days": 1}}]},
    {"when": "showers", "text": "Lyon is cloudy at 14°C today, with showers tomorrow: pack an umbrella."},
    {"when": TASKS[1], "text": "Lyon in spring: mild afternoons, cool evenings."},
    {"when": f"Original Task: {TASKS[1]}", "text": "Layers and a light waterproof jacket."},
]
# What was installed that the spans depend on (pip resolved the last three): the framework and its tracer, the
# client it calls, the exporter, and the threading instrumentation Strands uses to carry the span context into the
# threads its tools run in.
PACKAGES = ["strands-agents", "openai", "opentelemetry-sdk", "opentelemetry-exporter-otlp-proto-http",
            "opentelemetry-api", "opentelemetry-instrumentation-threading", "opentelemetry-semantic-conventions"]


def main() -> None:
    with Recording(Path(__file__).parent, REPLIES, framework="strands-agents", instrumentation="strands (native)",
                   packages=PACKAGES, session_id=SESSION,
                   notes="a Graph of two nodes, research -> weather (trace_attributes session.id set on the built "
                         "graph), every call streamed: turn one the researcher calls lookup_city and answers, the "
                         "weather specialist calls two tools in parallel, one raising once (timed out), calls it "
                         "again, answers; turn two (graph.stream_async) each node answers from its history") as rec:
        rec.env()
        from strands import Agent, tool
        from strands.models.openai import OpenAIModel
        from strands.multiagent import GraphBuilder
        from strands.telemetry import StrandsTelemetry

        telemetry = StrandsTelemetry()
        telemetry.setup_otlp_exporter()
        timeouts = {"left": 1}  # the forecast service times out once

        @tool
        def lookup_city(city: str) -> str:
            """Where a city is."""
            return CITY[city]

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

        researcher = Agent(name="researcher", model=model(), tools=[lookup_city], callback_handler=None,
                           system_prompt="You find out where the traveller is going.")
        specialist = Agent(name="weather_specialist", model=model(), tools=[get_weather, get_forecast],
                           callback_handler=None, system_prompt="You answer weather questions with the tools.")
        builder = GraphBuilder()
        builder.add_node(researcher, "research")
        builder.add_node(specialist, "weather")
        builder.add_edge("research", "weather")
        builder.set_entry_point("research")
        graph = builder.build()
        graph.trace_attributes = {"session.id": SESSION}

        result = graph(TASKS[0])
        print(result.status, [node.node_id for node in result.execution_order])

        async def streamed() -> None:
            async for event in graph.stream_async(TASKS[1]):
                if event.get("type") in ("multiagent_node_start", "multiagent_node_stop"):
                    print(event["type"], event.get("node_id"))

        asyncio.run(streamed())
        rec.flush(telemetry.tracer_provider)


if __name__ == "__main__":
    main()
