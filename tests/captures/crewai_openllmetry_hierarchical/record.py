"""Re-record: a hierarchical CrewAI crew (a manager delegating to two workers), traced by OpenLLMetry, one session.

    python3 -m venv /tmp/cap-crewai_openllmetry_hierarchical && \
        /tmp/cap-crewai_openllmetry_hierarchical/bin/pip install crewai==1.15.30 traceloop-sdk==0.62.4 \
        opentelemetry-instrumentation-crewai==0.62.4 opentelemetry-instrumentation-openai==0.62.4 \
        opentelemetry-sdk==1.45.1 opentelemetry-exporter-otlp-proto-http==1.45.1
    /tmp/cap-crewai_openllmetry_hierarchical/bin/python tests/captures/crewai_openllmetry_hierarchical/record.py

(The versions the capture was recorded with are in meta.json. opentelemetry-sdk 1.45.1, not the newest 1.45.2:
traceloop-sdk 0.62.4's instrumentations need an opentelemetry-instrumentation whose semantic conventions 1.45.2's
do not match.) The scenario of `crewai_openinference_hierarchical`, traced as `crewai_openllmetry` is, the way
OpenLLMetry's docs show for CrewAI: `Traceloop.init(…)` with the recorder as `api_endpoint` (OTLP/HTTP protobuf,
batched), limited to the two instrumentations that see this run (`instruments={CREW, OPENAI}`), and
`Traceloop.set_association_properties({"session_id": …})` before the kickoffs: Traceloop's span processor writes
`traceloop.association.properties.session_id` on every span started after it (the instrumentations record no
session). CrewAI's own usage telemetry and tracing to its servers are off.

The crewai instrumentation wraps `Crew.kickoff` (`crewai.workflow`), `Task.execute_sync` (`<description>.task`),
`Agent.execute_task` (`<role>.agent`) and `LLM.call` (never reached: CrewAI 1.x calls OpenAI through the OpenAI SDK,
whose calls are opentelemetry-instrumentation-openai's `openai.chat` spans). It wraps no tool. `process=
Process.hierarchical`: the crew's task names no agent; CrewAI makes a "Crew Manager" agent from `manager_llm` whose
only tools are its own `Delegate work to coworker` and `Ask question to coworker` (`AgentTools`), which call the
coworker's `Agent.execute_task` inside the tool: the coworker's `<role>.agent` span is under the manager's, with no
task span and no tool span between them. What this capture is for: whether those spans let the manager's trajectory
show each coworker's work as the subagent its delegation call started.

The same crew is kicked off twice in the session, each kickoff a turn with its own request (`inputs`, interpolated
into the task's description). Turn 1: the manager delegates to the weather researcher, who asks for Paris's weather
and a currency conversion in one answer (two parallel native tool calls, which CrewAI runs in a thread pool); the
conversion raises once (CrewAI catches it and sends the model "Error executing tool: …" as the tool message), the
researcher asks again, then answers; the manager answers from that. Turn 2: the manager asks the travel writer a
question (the writer's LLM `stream=True`, CrewAI asking for the usage with `include_usage`), then answers. Eight LLM
calls.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

from tests.captures.recording.session import Recording

MODEL = "gpt-4o-mini"
SESSION = "crew-ollm-hierarchical-1"
RESEARCHER, WRITER = "Weather researcher", "Travel writer"
REPLIES = [
    # turn 1: the manager delegates
    {"tool_calls": [{"name": "delegate_work_to_coworker",
                     "arguments": {"task": "Find the weather in Paris and what 200 EUR is in JPY.",
                                   "context": "A traveller plans a day in Paris and pays in yen.",
                                   "coworker": RESEARCHER}}],
     "input_tokens": 612, "output_tokens": 48},
    # the researcher: two tools in one answer, then the failed one again, then its answer
    {"tool_calls": [{"name": "get_weather", "arguments": {"city": "Paris"}},
                    {"name": "convert_currency", "arguments": {"amount": 200, "source": "EUR", "target": "JPY"}}],
     "input_tokens": 455, "output_tokens": 41},
    {"tool_calls": [{"name": "convert_currency", "arguments": {"amount": 200, "source": "EUR", "target": "JPY"}}],
     "input_tokens": 538, "output_tokens": 22},
    {"text": "Thought: I now know the final answer\nFinal Answer: Paris is sunny, 21°C; 200 EUR is 32,480 JPY.",
     "input_tokens": 571, "output_tokens": 27},
    {"text": "Thought: I now know the final answer\nFinal Answer: A sunny day in Paris (21°C) on a budget of "
             "32,480 JPY (200 EUR).",
     "input_tokens": 690, "output_tokens": 31},
    # turn 2: the manager asks the writer a question, the writer's answer streamed
    {"tool_calls": [{"name": "ask_question_to_coworker",
                     "arguments": {"question": "What one item should a traveller pack for a sunny 21°C day in "
                                               "Paris?",
                                   "context": "The traveller has a day in Paris, sunny, 21°C.",
                                   "coworker": WRITER}}],
     "input_tokens": 604, "output_tokens": 45},
    {"text": "Thought: I now know the final answer\nFinal Answer: Sunglasses: the Paris sun at 21°C calls for them.",
     "input_tokens": 402, "output_tokens": 24},
    {"text": "Thought: I now know the final answer\nFinal Answer: Pack sunglasses.",
     "input_tokens": 671, "output_tokens": 14},
]
WEATHER = {"Paris": "sunny, 21°C"}
RATES = {("EUR", "JPY"): 162.4}
PACKAGES = ["crewai", "openai", "traceloop-sdk", "opentelemetry-instrumentation-crewai",
            "opentelemetry-instrumentation-openai", "opentelemetry-semantic-conventions-ai", "opentelemetry-sdk",
            "opentelemetry-exporter-otlp-proto-http"]
REQUESTS = ["Plan a day in Paris: check the weather and what 200 EUR is in JPY.",
            "What one item should I pack for that day?"]


def main() -> None:
    notes = ("hierarchical crew (manager_llm): the manager delegates with CrewAI's 'Delegate work to coworker' and "
             "'Ask question to coworker' tools, which run the coworker's Agent.execute_task (its <role>.agent span "
             "under the manager's; the instrumentation wraps no tool); the researcher's two parallel native tool "
             "calls, convert_currency raising once and asked again; the writer's LLM streamed; two kickoffs of the "
             "same crew, the session an association property set before them")
    with Recording(Path(__file__).parent, REPLIES, framework="crewai", instrumentation="openllmetry",
                   packages=PACKAGES, session_id=SESSION, notes=notes) as rec:
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

        failures = {"convert_currency": 1}

        @tool("convert_currency")
        def convert_currency(amount: float, source: str, target: str) -> str:
            """Convert an amount of money from one currency (ISO code) to another."""
            if failures["convert_currency"]:
                failures["convert_currency"] -= 1
                raise TimeoutError("exchange-rate service timed out")
            return f"{amount:g} {source} = {amount * RATES[(source, target)]:,.0f} {target}"

        researcher = Agent(role=RESEARCHER, goal="Find the weather and exchange rates travellers need",
                           backstory="A meteorologist who also tracks currencies.",
                           tools=[get_weather, convert_currency], llm=LLM(model=MODEL))
        writer = Agent(role=WRITER, goal="Give short travel tips", backstory="A travel writer who keeps it short.",
                       llm=LLM(model=MODEL, stream=True))
        plan = Task(description="{request}", expected_output="A short answer for the traveller.")
        crew = Crew(agents=[researcher, writer], tasks=[plan], process=Process.hierarchical,
                    manager_llm=LLM(model=MODEL))
        Traceloop.set_association_properties({"session_id": SESSION})
        for request in REQUESTS:
            print(crew.kickoff(inputs={"request": request}))
        rec.flush(trace.get_tracer_provider())


if __name__ == "__main__":
    main()
