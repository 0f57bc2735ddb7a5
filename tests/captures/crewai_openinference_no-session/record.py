"""Re-record: a CrewAI crew of two agents, traced by OpenInference (crewai + openai), no session id.

    python3 -m venv /tmp/cap-crew && /tmp/cap-crew/bin/pip install \
        crewai==1.15.30 openinference-instrumentation-crewai==1.1.21 openinference-instrumentation-openai==0.1.66 \
        opentelemetry-sdk==1.45.2 opentelemetry-exporter-otlp-proto-http==1.45.2
    /tmp/cap-crew/bin/python tests/captures/crewai_openinference_no-session/record.py

A sequential crew: the researcher's task uses a tool, the writer's task builds on its answer.
CrewAI 1.x calls OpenAI through the OpenAI SDK (its native provider), so the LLM calls are
OpenInference's openai instrumentation's spans, under the crewai instrumentation's crew, task and
agent spans. CrewAI has no session id: the trace is the session. (Versions in meta.json.)
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

from tests.captures.recording.session import Recording

REPLIES = [
    {"tool_calls": [{"name": "get_weather", "arguments": {"city": "Paris"}}]},
    {"text": "Thought: I now know the final answer\nFinal Answer: Paris is sunny, 21°C."},
    {"text": "Thought: I now know the final answer\nFinal Answer: Pack sunglasses for sunny Paris."},
]


def main() -> None:
    with Recording(Path(__file__).parent, REPLIES, framework="crewai", instrumentation="openinference",
                   packages=["crewai", "openai", "openinference-instrumentation-crewai",
                             "openinference-instrumentation-openai", "opentelemetry-sdk"],
                   session_id=None, notes="sequential crew of two agents; the first task uses a tool; "
                                          "no session id") as rec:
        rec.env()
        os.environ["CREWAI_DISABLE_TELEMETRY"] = "true"  # CrewAI's own usage telemetry (to its servers)
        os.environ["CREWAI_TRACING_ENABLED"] = "false"
        from openinference.instrumentation.crewai import CrewAIInstrumentor
        from openinference.instrumentation.openai import OpenAIInstrumentor
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
        from opentelemetry.sdk.resources import Resource
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import BatchSpanProcessor

        provider = TracerProvider(resource=Resource.create({"service.name": "trip-crew"}))
        provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
        CrewAIInstrumentor().instrument(tracer_provider=provider)
        OpenAIInstrumentor().instrument(tracer_provider=provider)

        from crewai import LLM, Agent, Crew, Process, Task
        from crewai.tools import tool

        @tool("get_weather")
        def get_weather(city: str) -> str:
            """The weather in a city."""
            return {"Paris": "sunny, 21°C"}[city]

        llm = LLM(model="gpt-4o", base_url=rec.base_url, api_key="sk-fake")
        researcher = Agent(role="Weather researcher", goal="Find the weather", backstory="A meteorologist.",
                           tools=[get_weather], llm=llm, verbose=False)
        writer = Agent(role="Travel writer", goal="Write travel tips", backstory="A travel writer.", llm=llm,
                       verbose=False)
        research = Task(description="Find the weather in Paris.", expected_output="The weather.",
                        agent=researcher)
        tip = Task(description="Write a one-line packing tip for Paris.", expected_output="One line.",
                   agent=writer)
        crew = Crew(agents=[researcher, writer], tasks=[research, tip], process=Process.sequential)
        print(crew.kickoff())
        rec.flush(provider)


if __name__ == "__main__":
    main()
