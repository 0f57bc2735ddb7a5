"""Re-record: a CrewAI crew of two agents (researcher → writer), traced by OpenLIT (`openlit.init()`), no session id.

    python3 -m venv /tmp/cap-crewai_openlit && /tmp/cap-crewai_openlit/bin/pip install -U pip && \
        /tmp/cap-crewai_openlit/bin/pip install crewai==1.15.30 openlit==1.45.0 openai==2.54.0 httpx==0.28.1 \
        opentelemetry-sdk==1.45.1 opentelemetry-exporter-otlp-proto-http==1.45.1
    /tmp/cap-crewai_openlit/bin/python tests/captures/crewai_openlit_no-session/record.py

(The versions the capture was recorded with are in meta.json.) Set up the way CrewAI's observability page for OpenLIT
shows: `openlit.init(...)` before the crew is built, here with the recorder as `otlp_endpoint` (OTLP/HTTP protobuf,
batched) and message content captured (its default). OpenLIT instruments every library it finds: its crewai
instrumentation (`create_agent <role>` spans at `Crew.__init__`, `invoke_workflow <crew>` for the kickoff,
`invoke_agent <role>` for each task's execution, `execute_tool <name>` for `BaseTool.run`), its OpenAI one (one
`chat <model>` span per call: CrewAI 1.x calls OpenAI through the OpenAI SDK, its native provider, not LiteLLM, so
OpenLIT's litellm instrumentation sees nothing), and the HTTP clients' (httpx `POST` spans under each call). CrewAI's
own usage telemetry and tracing to its servers are off (`CREWAI_DISABLE_TELEMETRY`, `CREWAI_TRACING_ENABLED=false`;
not `OTEL_SDK_DISABLED`, which would turn OpenLIT's provider off too). CrewAI 1.x runs each agent's loop as a Flow of
its own (`AgentExecutor`), which OpenLIT's Flow wrappers trace too: an `invoke_workflow AgentExecutor` span under each
task's and an `invoke_agent <method>` span per flow method (`generate_plan`, `call_llm_native_tools`, `finalize`, …).
Recorded offline: OpenLIT's pricing table (fetched from GitHub at init) is unreachable, so every call's
`gen_ai.usage.cost` is 0.

The tools subclass `BaseTool` (CrewAI's documented custom tool): OpenLIT wraps `BaseTool.run`, which a `@tool`
function's `Tool` overrides, so `@tool` functions would run with no span. CrewAI has no session id, and this run sets
none (OpenLIT's `using_attributes` is an application's, not CrewAI's): the kickoff's trace is the session.

A sequential crew, kicked off with inputs. The researcher (not streamed) asks for Lisbon's weather and air quality in
one answer (two parallel tool calls, which CrewAI runs in a thread pool); the air-quality service times out once
(CrewAI catches the exception and sends the model "Error executing tool: …" as the tool message), the researcher asks
again, then answers. The writer (its LLM `stream=True`, CrewAI asking for the usage with `include_usage`) writes a
one-line tip from the researcher's answer. Four LLM calls.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

from tests.captures.recording.session import Recording

MODEL = "gpt-4o-mini"
REPLIES = [
    {"tool_calls": [{"name": "get_weather", "arguments": {"city": "Lisbon"}},
                    {"name": "get_air_quality", "arguments": {"city": "Lisbon"}}],
     "input_tokens": 431, "output_tokens": 41},
    {"tool_calls": [{"name": "get_air_quality", "arguments": {"city": "Lisbon"}}],
     "input_tokens": 512, "output_tokens": 19},
    {"text": "Thought: I now know the final answer\nFinal Answer: Lisbon is sunny at 24°C with good air quality "
             "(AQI 32).",
     "input_tokens": 547, "output_tokens": 30},
    {"text": "Thought: I now know the final answer\nFinal Answer: Pack sunscreen and walk the miradouros: Lisbon is "
             "sunny, 24°C, and the air is clean.",
     "input_tokens": 388, "output_tokens": 35},
]
WEATHER = {"Lisbon": "sunny, 24°C"}
AIR_QUALITY = {"Lisbon": "good (AQI 32)"}
PACKAGES = ["crewai", "openlit", "openai", "opentelemetry-sdk", "opentelemetry-exporter-otlp-proto-http"]


def main() -> None:
    notes = ("openlit.init(otlp_endpoint=recorder, application_name='trip-crew'): its crewai instrumentation "
             "(create_agent spans at Crew.__init__, invoke_workflow, invoke_agent per task, execute_tool per "
             "BaseTool.run) and its OpenAI one (chat spans, + httpx POST spans, + an inference event log record per "
             "call, + metrics); no session id; sequential crew of two agents; the researcher's two parallel tool "
             "calls, the air-quality tool raising once and asked again; the writer's LLM streamed. Recorded offline: "
             "OpenLIT's pricing table (fetched from GitHub at init) unreachable, so gen_ai.usage.cost is 0")
    with Recording(Path(__file__).parent, REPLIES, framework="crewai", instrumentation="openlit",
                   packages=PACKAGES, session_id=None, notes=notes) as rec:
        rec.env()
        os.environ["CREWAI_DISABLE_TELEMETRY"] = "true"  # CrewAI's own usage telemetry (to its servers)
        os.environ["CREWAI_TRACING_ENABLED"] = "false"
        import openlit
        from opentelemetry import metrics, trace
        from opentelemetry._logs import get_logger_provider

        openlit.init(application_name="trip-crew", environment="dev", otlp_endpoint=rec.otlp_endpoint)

        from crewai import LLM, Agent, Crew, Process, Task
        from crewai.tools import BaseTool
        from pydantic import BaseModel, Field

        class CityInput(BaseModel):
            city: str = Field(description="The city's name.")

        class WeatherTool(BaseTool):
            name: str = "get_weather"
            description: str = "The current weather in a city."
            args_schema: type[BaseModel] = CityInput

            def _run(self, city: str) -> str:
                return WEATHER[city]

        failures = {"get_air_quality": 1}

        class AirQualityTool(BaseTool):
            name: str = "get_air_quality"
            description: str = "The current air quality in a city."
            args_schema: type[BaseModel] = CityInput

            def _run(self, city: str) -> str:
                if failures["get_air_quality"]:
                    failures["get_air_quality"] -= 1
                    raise TimeoutError("air-quality service timed out")
                return AIR_QUALITY[city]

        researcher = Agent(role="Weather researcher", goal="Find the current weather and air quality in cities",
                           backstory="A meteorologist who checks before answering.",
                           tools=[WeatherTool(), AirQualityTool()], llm=LLM(model=MODEL))
        writer = Agent(role="Travel writer", goal="Write short travel tips",
                       backstory="A travel writer who keeps it to one line.", llm=LLM(model=MODEL, stream=True))
        research = Task(description="Find the current weather and air quality in {city}.",
                        expected_output="The weather and air quality.", agent=researcher)
        tip = Task(description="Write a one-line packing tip for {city} from the research.",
                   expected_output="One line.", agent=writer)
        crew = Crew(agents=[researcher, writer], tasks=[research, tip], process=Process.sequential)
        print(crew.kickoff(inputs={"city": "Lisbon"}))
        rec.flush(trace.get_tracer_provider(), get_logger_provider(), metrics.get_meter_provider())


if __name__ == "__main__":
    main()
