"""Re-record: a CrewAI crew of two agents, traced by OpenLLMetry (Traceloop SDK: its crewai + openai instrumentations).

    python3 -m venv /tmp/cap-crew-ollm && /tmp/cap-crew-ollm/bin/pip install -U pip && \
        /tmp/cap-crew-ollm/bin/pip install crewai==1.15.30 traceloop-sdk==0.62.4 \
        opentelemetry-instrumentation-crewai==0.62.4 opentelemetry-instrumentation-openai==0.62.4 \
        opentelemetry-sdk==1.45.1 opentelemetry-exporter-otlp-proto-http==1.45.1
    /tmp/cap-crew-ollm/bin/python tests/captures/crewai_openllmetry/record.py

Built the way OpenLLMetry's docs show for CrewAI: `Traceloop.init(…)` with the recorder as
`api_endpoint` (OTLP/HTTP protobuf, batched), limited to the two instrumentations that see this run
(`instruments={CREW, OPENAI}`), and `Traceloop.set_association_properties({"session_id": …})`
before the kickoff: Traceloop's span processor writes `traceloop.association.properties.session_id`
on every span started after it (the instrumentations themselves record no session). CrewAI's own
usage telemetry and tracing to its servers are off (`CREWAI_DISABLE_TELEMETRY`,
`CREWAI_TRACING_ENABLED=false`; not `OTEL_SDK_DISABLED`, which would turn the recorder's provider off too).

CrewAI 1.x calls OpenAI through the OpenAI SDK (its native provider, `OpenAICompletion`, not
`crewai.llm.LLM`), so the crewai instrumentation's `<model>.llm` span (a wrapper of `LLM.call`, the
LiteLLM path) never starts: each LLM call is opentelemetry-instrumentation-openai's `openai.chat`,
under the crewai instrumentation's `crewai.workflow`, `<task>.task` and `<role>.agent` spans. The
crewai instrumentation wraps no tool: a tool run is only the tool message of the next call.

A sequential crew, kicked off with inputs: the weather researcher's task asks for two cities'
weather in one answer (two parallel tool calls, which CrewAI runs in a thread pool), then answers;
the hotel booker's task books a hotel, the booking service fails once (CrewAI sends the model
"Error executing tool: …" as the tool message), the retry succeeds, then the answer.
(The versions the capture was recorded with are in meta.json.)
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

from tests.captures.recording.session import Recording

SESSION = "crew-ollm-trip-1"
REPLIES = [
    {"tool_calls": [{"name": "get_weather", "arguments": {"city": "Lisbon"}},
                    {"name": "get_weather", "arguments": {"city": "Porto"}}],
     "input_tokens": 412, "output_tokens": 46},
    {"text": "Thought: I now know the final answer\nFinal Answer: Lisbon is sunny at 24°C; Porto is cloudy at 18°C.",
     "input_tokens": 498, "output_tokens": 31},
    {"tool_calls": [{"name": "book_hotel", "arguments": {"city": "Lisbon", "nights": 2}}],
     "input_tokens": 455, "output_tokens": 24},
    {"tool_calls": [{"name": "book_hotel", "arguments": {"city": "Lisbon", "nights": 2}}],
     "input_tokens": 521, "output_tokens": 24},
    {"text": "Thought: I now know the final answer\nFinal Answer: Booked Hotel Sol in Lisbon for 2 nights "
             "(ref LIS-7).",
     "input_tokens": 566, "output_tokens": 29},
]
WEATHER = {"Lisbon": "sunny, 24°C", "Porto": "cloudy, 18°C"}
PACKAGES = ["crewai", "openai", "traceloop-sdk", "opentelemetry-instrumentation-crewai",
            "opentelemetry-instrumentation-openai", "opentelemetry-semantic-conventions-ai", "opentelemetry-sdk",
            "opentelemetry-exporter-otlp-proto-http"]


def main() -> None:
    with Recording(Path(__file__).parent, REPLIES, framework="crewai", instrumentation="openllmetry",
                   packages=PACKAGES, session_id=SESSION,
                   notes="Traceloop.init (crewai + openai instrumentations) with the recorder as api_endpoint; "
                         "the session an association property set before kickoff; sequential crew of two agents; "
                         "two parallel tool calls; a tool failing once and its retry") as rec:
        rec.env()
        os.environ["CREWAI_DISABLE_TELEMETRY"] = "true"  # CrewAI's own usage telemetry (to its servers)
        os.environ["CREWAI_TRACING_ENABLED"] = "false"
        os.environ["TRACELOOP_METRICS_ENABLED"] = "false"  # read by init: no metrics exporter
        from opentelemetry import trace
        from traceloop.sdk import Traceloop
        from traceloop.sdk.instruments import Instruments

        Traceloop.init(app_name="trip-crew", api_endpoint=rec.otlp_endpoint, disable_batch=False,
                       telemetry_enabled=False, instruments={Instruments.CREW, Instruments.OPENAI})

        from crewai import LLM, Agent, Crew, Process, Task
        from crewai.tools import tool

        @tool("get_weather")
        def get_weather(city: str) -> str:
            """The current weather in a city."""
            return WEATHER[city]

        attempts: list[str] = []

        @tool("book_hotel")
        def book_hotel(city: str, nights: int) -> str:
            """Book a hotel room in a city for a number of nights."""
            attempts.append(city)
            if len(attempts) == 1:
                raise TimeoutError("booking service timed out")
            return f"Booked Hotel Sol in {city}, {nights} nights, ref LIS-7"

        llm = LLM(model="gpt-4o-mini")
        researcher = Agent(role="Weather researcher", goal="Find the current weather in cities",
                           backstory="A meteorologist who checks before answering.", tools=[get_weather], llm=llm)
        booker = Agent(role="Hotel booker", goal="Book hotels for travellers",
                       backstory="A travel agent who books the sunniest option.", tools=[book_hotel], llm=llm)
        research = Task(description="Find the current weather in {cities}.",
                        expected_output="The weather in each city.", agent=researcher)
        booking = Task(description="Book a hotel for {nights} nights in the sunnier of the cities.",
                       expected_output="The booking reference.", agent=booker)
        crew = Crew(agents=[researcher, booker], tasks=[research, booking], process=Process.sequential)

        Traceloop.set_association_properties({"session_id": SESSION})
        print(crew.kickoff(inputs={"cities": "Lisbon and Porto", "nights": 2}))
        rec.flush(trace.get_tracer_provider())


if __name__ == "__main__":
    main()
