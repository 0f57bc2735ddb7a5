"""Re-record: Strands Agents with its OpenAIModel provider, its own OpenTelemetry spans rewritten in place by
OpenInference's Strands span processor.

    python3 -m venv /tmp/cap-strands_openinference && /tmp/cap-strands_openinference/bin/pip install \
        'strands-agents[openai]==1.62.0' openai==2.54.0 openinference-instrumentation-strands-agents==0.1.12 \
        openinference-instrumentation==0.1.72 opentelemetry-sdk==1.45.1 opentelemetry-exporter-otlp-proto-http==1.45.1
    /tmp/cap-strands_openinference/bin/python tests/captures/strands_openinference/record.py

`StrandsAgentsToOpenInferenceProcessor` is no instrumentation of its own: it is a span processor that, as each
of Strands' spans ends, adds OpenInference attributes (`openinference.span.kind`, `llm.input_messages.*`,
`llm.output_messages.*`, `llm.token_count.*`, `tool.*`, `input.value` / `output.value`, a `metadata` JSON of the
rest) beside Strands' own and strips Strands' `gen_ai.*` span events (where Strands' default conventions keep the
messages). It mutates the spans, so it goes on the tracer provider before the exporter, as its README's
"Processor Ordering" says (here: before `StrandsTelemetry.setup_otlp_exporter`, which adds the batch exporter).

One Agent (Strands keeps the conversation in memory), `trace_attributes={"session.id": …}` as Strands' docs
show, asked twice: each call is a trace of its own, only the session id ties them. Strands streams every
OpenAIModel call and runs a turn's tools concurrently. Turn one: two parallel `get_weather` calls, then the
answer. Turn two: a text with a `lookup_flight` call that raises (Strands sends the model the error's text as an
error tool result), a second `lookup_flight` for the nearest airport that works, then the answer.
(The versions the capture was recorded with are in meta.json.)
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

from tests.captures.recording.session import Recording

SESSION = "strands-oi-trip-1"
REPLIES = [
    {"tool_calls": [{"name": "get_weather", "arguments": {"city": "Paris"}},
                    {"name": "get_weather", "arguments": {"city": "Oslo"}}]},
    {"text": "Paris: sunny, 21°C. Oslo: rainy, 9°C."},
    {"text": "Let me look for flights to Atlantis.",
     "tool_calls": [{"name": "lookup_flight", "arguments": {"city": "Atlantis"}}]},
    {"text": "Atlantis has no airport; trying the nearest one.",
     "tool_calls": [{"name": "lookup_flight", "arguments": {"city": "Santorini"}}]},
    {"text": "Atlantis has no airport; the nearest, Santorini, has flight AB123 at 09:40."},
]
WEATHER = {"Paris": "sunny, 21°C", "Oslo": "rainy, 9°C"}
FLIGHTS = {"Santorini": "AB123 at 09:40"}


def main() -> None:
    with Recording(Path(__file__).parent, REPLIES, framework="strands-agents",
                   instrumentation="openinference (StrandsAgentsToOpenInferenceProcessor over Strands' own spans)",
                   packages=["strands-agents", "openai", "openinference-instrumentation-strands-agents",
                             "openinference-instrumentation", "opentelemetry-sdk",
                             "opentelemetry-exporter-otlp-proto-http"],
                   session_id=SESSION,
                   notes="two turns of one Strands agent (trace_attributes session.id, history in memory), every "
                         "call streamed: parallel tool calls; then text with a tool call that raises, a second call "
                         "that works, the answer") as rec:
        rec.env()
        from openinference.instrumentation.strands_agents import StrandsAgentsToOpenInferenceProcessor
        from strands import Agent, tool
        from strands.models.openai import OpenAIModel
        from strands.telemetry import StrandsTelemetry

        telemetry = StrandsTelemetry()
        # Before the exporter: the processor rewrites each span in place as it ends.
        telemetry.tracer_provider.add_span_processor(StrandsAgentsToOpenInferenceProcessor())
        telemetry.setup_otlp_exporter()

        @tool
        def get_weather(city: str) -> str:
            """The weather in a city."""
            return WEATHER[city]

        @tool
        def lookup_flight(city: str) -> str:
            """Flights to a city."""
            if city not in FLIGHTS:
                raise ValueError(f"no airport in {city}")
            return FLIGHTS[city]

        model = OpenAIModel(client_args={"base_url": rec.base_url, "api_key": "sk-fake"}, model_id="gpt-4o")
        agent = Agent(model=model, tools=[get_weather, lookup_flight], name="trip-planner",
                      system_prompt="You are a terse trip planner.",
                      trace_attributes={"session.id": SESSION}, callback_handler=None)
        print(agent("Weather in Paris and Oslo?"))
        print(agent("And a flight to Atlantis?"))
        rec.flush(telemetry.tracer_provider)


if __name__ == "__main__":
    main()
