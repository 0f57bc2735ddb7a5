"""Re-record: a CrewAI Flow (a direct LLM call, a router, a crew), traced by OpenInference, two kickoffs in one session.

    python3 -m venv /tmp/cap-crewai_openinference_flow && \
        /tmp/cap-crewai_openinference_flow/bin/pip install crewai==1.15.30 \
        openinference-instrumentation-crewai==1.1.21 openinference-instrumentation-openai==0.1.66 \
        opentelemetry-sdk==1.45.2 opentelemetry-exporter-otlp-proto-http==1.45.2
    /tmp/cap-crewai_openinference_flow/bin/python tests/captures/crewai_openinference_flow/record.py

Recorded with (pip freeze, the packages that matter; also in meta.json): crewai 1.15.30 (crewai-core 1.15.30),
openai 2.54.0, openinference-instrumentation-crewai 1.1.21, openinference-instrumentation-openai 0.1.66,
openinference-instrumentation 0.1.72, openinference-semantic-conventions 0.1.42, opentelemetry-sdk 1.45.2,
opentelemetry-exporter-otlp-proto-http 1.45.2, pydantic 2.12.5; Python 3.11.7. Each is the newest on PyPI.

Traced as OpenInference's CrewAI page shows, as `crewai_openinference_no-session` is: one tracer provider exporting
OTLP/HTTP (protobuf, batched) to the recorder, the crewai instrumentor (CHAIN `<flow>.kickoff` per flow kickoff and
`<flow>.<method>` per flow method it runs, `Flow_<state id>` for a flow with no name; CHAIN `<crew>.kickoff`; AGENT
`<role>.<task>._execute_core` per task; TOOL `<tool>.run`) and the openai one (an LLM span per call: CrewAI 1.x calls
OpenAI through the OpenAI SDK, its native provider, `LLM.call` too). CrewAI's own usage telemetry and tracing to its
servers are off.

`TripFlow(Flow[TripState])`: `@start` `triage` asks the model directly (`LLM.call`) which city the request is about
and whether it needs live data, keeping its JSON answer in the flow's state; `@router(triage)` `route` sends the run
to `"needs_research"` or `"needs_advice"`; `@listen("needs_research")` `research` kicks off a one-agent crew written
as CrewAI's flow template writes one (`@CrewBase class ResearchCrew`, which names the crew for its class: the weather
researcher with two tools, its task the request); `@listen("needs_advice")` `advise` answers from what the state
already holds with a second `LLM.call`, its LLM `stream=True` (CrewAI asking for the usage with `include_usage`).

CrewAI puts no session id on its spans (a Flow's state id, kept across kickoffs of one instance, is only its kickoff
span's `flow_id`): the session is OpenInference's `using_session` around each kickoff (it puts `session.id` on every
span started inside), and the same flow instance is kicked off twice in it (a Flow may be: each kickoff runs its
methods afresh, its state kept), each a turn with its own request (`inputs`, set on the state).

Turn 1 (research): the triage call, then the crew: the researcher asks for Paris's weather and a currency conversion
in one answer (two parallel native tool calls, which CrewAI runs in a thread pool); the conversion raises once
(CrewAI catches it and sends the model "Error executing tool: …" as the tool message), the researcher asks again, then
answers. Turn 2 (advice): the triage call, then the streamed advice. Six LLM calls.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

from tests.captures.recording.session import Recording

MODEL = "gpt-4o-mini"
SESSION = "crew-flow-1"
RESEARCHER = "Weather researcher"
TRIAGE_PROMPT = ("You triage a traveller's request. Answer only with JSON: {\"city\": <the city>, \"needs\": "
                 "\"research\" if it needs live weather or exchange rates, else \"advice\"}.")
ADVICE_PROMPT = "You are a travel adviser. Answer in one short sentence from what is known about the trip."
REPLIES = [
    # turn 1: triage (LLM.call), then the crew's researcher
    {"text": '{"city": "Paris", "needs": "research"}', "input_tokens": 78, "output_tokens": 12},
    {"tool_calls": [{"name": "get_weather", "arguments": {"city": "Paris"}},
                    {"name": "convert_currency", "arguments": {"amount": 200, "source": "EUR", "target": "JPY"}}],
     "input_tokens": 455, "output_tokens": 41},
    {"tool_calls": [{"name": "convert_currency", "arguments": {"amount": 200, "source": "EUR", "target": "JPY"}}],
     "input_tokens": 538, "output_tokens": 22},
    {"text": "Thought: I now know the final answer\nFinal Answer: Paris is sunny, 21°C; 200 EUR is 32,480 JPY.",
     "input_tokens": 571, "output_tokens": 27},
    # turn 2: triage, then the streamed advice (LLM.call on a stream=True LLM)
    {"text": '{"city": "Paris", "needs": "advice"}', "input_tokens": 74, "output_tokens": 11},
    {"text": "Pack sunglasses: Paris is sunny and 21°C.", "input_tokens": 96, "output_tokens": 13},
]
WEATHER = {"Paris": "sunny, 21°C"}
RATES = {("EUR", "JPY"): 162.4}
PACKAGES = ["crewai", "openai", "openinference-instrumentation-crewai", "openinference-instrumentation-openai",
            "openinference-instrumentation", "openinference-semantic-conventions", "opentelemetry-sdk",
            "opentelemetry-exporter-otlp-proto-http"]
REQUESTS = ["Plan a day in Paris: check the weather and what 200 EUR is in JPY.",
            "What one item should I pack for that day?"]


def main() -> None:
    notes = ("a CrewAI Flow kicked off twice in one OpenInference using_session: @start triage is a direct LLM.call, "
             "@router picks 'research' (a one-agent crew: two parallel native tool calls, convert_currency raising "
             "once and asked again) or 'advise' (a second LLM.call, its LLM streamed); turn 1 researches, turn 2 "
             "advises")
    with Recording(Path(__file__).parent, REPLIES, framework="crewai", instrumentation="openinference",
                   packages=PACKAGES, session_id=SESSION, notes=notes) as rec:
        rec.env()
        os.environ["CREWAI_DISABLE_TELEMETRY"] = "true"  # CrewAI's own usage telemetry (to its servers)
        os.environ["CREWAI_TRACING_ENABLED"] = "false"
        from openinference.instrumentation import using_session
        from openinference.instrumentation.crewai import CrewAIInstrumentor
        from openinference.instrumentation.openai import OpenAIInstrumentor
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
        from opentelemetry.sdk.resources import Resource
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import BatchSpanProcessor

        provider = TracerProvider(resource=Resource.create({"service.name": "trip-flow"}))
        provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
        CrewAIInstrumentor().instrument(tracer_provider=provider)
        OpenAIInstrumentor().instrument(tracer_provider=provider)

        from crewai import LLM, Agent, Crew, Process, Task, project
        from crewai.agents.agent_builder.base_agent import BaseAgent
        from crewai.flow.flow import Flow, listen, router, start
        from crewai.tools import tool
        from pydantic import BaseModel

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

        # A crew as CrewAI's flow template writes one (`crewai create flow`): a @CrewBase class, named for it (the
        # agents and task in code, not YAML: CrewBase finds no config files and says so). `project.crew`, not `crew`:
        # the method's own name would hide a bare decorator in the class body.
        @project.CrewBase
        class ResearchCrew:
            agents: list[BaseAgent]
            tasks: list[Task]

            @project.agent
            def researcher(self) -> Agent:
                return Agent(role=RESEARCHER, goal="Find the weather and exchange rates travellers need",
                             backstory="A meteorologist who also tracks currencies.",
                             tools=[get_weather, convert_currency], llm=LLM(model=MODEL))

            @project.task
            def research_task(self) -> Task:
                return Task(description="{request}", expected_output="A short answer for the traveller.",
                            agent=self.researcher())

            @project.crew
            def crew(self) -> Crew:
                return Crew(agents=self.agents, tasks=self.tasks, process=Process.sequential)

        triage_llm = LLM(model=MODEL)
        advice_llm = LLM(model=MODEL, stream=True)

        class TripState(BaseModel):
            request: str = ""
            city: str = ""
            needs: str = ""
            findings: str = ""
            answer: str = ""

        class TripFlow(Flow[TripState]):
            @start()
            def triage(self) -> str:
                verdict = json.loads(triage_llm.call([{"role": "system", "content": TRIAGE_PROMPT},
                                                      {"role": "user", "content": self.state.request}]))
                self.state.city, self.state.needs = verdict["city"], verdict["needs"]
                return self.state.needs

            @router(triage)
            def route(self) -> str:
                return "needs_research" if self.state.needs == "research" else "needs_advice"

            @listen("needs_research")
            def research(self) -> str:
                self.state.findings = ResearchCrew().crew().kickoff(inputs={"request": self.state.request}).raw
                self.state.answer = self.state.findings
                return self.state.answer

            @listen("needs_advice")
            def advise(self) -> str:
                known = f"Known about the trip to {self.state.city}: {self.state.findings}"
                self.state.answer = advice_llm.call([{"role": "system", "content": ADVICE_PROMPT},
                                                     {"role": "user", "content": f"{known}\n\n{self.state.request}"}])
                return self.state.answer

        flow = TripFlow()
        for request in REQUESTS:
            with using_session(SESSION):
                print(flow.kickoff(inputs={"request": request}))
        rec.flush(provider)


if __name__ == "__main__":
    main()
