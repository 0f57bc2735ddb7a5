"""Re-record: openai-agents (Responses API) with the hosted `WebSearchTool` beside a function tool, traced by
OpenInference.

    python3 -m venv /tmp/cap-openai-agents_openinference_hosted-tools && \
        /tmp/cap-openai-agents_openinference_hosted-tools/bin/pip install \
        openai-agents==0.25.0 openai==3.63.0 openinference-instrumentation-openai-agents==2.6.0 \
        openinference-instrumentation==0.1.72 opentelemetry-sdk==1.45.2 opentelemetry-exporter-otlp-proto-http==1.45.2
    /tmp/cap-openai-agents_openinference_hosted-tools/bin/python \
        tests/captures/openai-agents_openinference_hosted-tools/record.py

A trip planner with two tools: `WebSearchTool()`, which the API runs itself (the model's answer holds a
`web_search_call` item, `action: {"type": "search", "query": …}` and its `status`, and no result of it is ever sent
back), and the function tool `book_hotel`, which raises `TimeoutError` the first time (the SDK sends the model its
failure_error_function's text). Two turns of one conversation, kept by an `SQLiteSession` (the SDK re-sends the
stored items, the web search's among them), grouped by the RunConfig's `group_id` and under OpenInference's
`using_session` (both the session id): turn 1 `Runner.run`, the model searching the web and calling `book_hotel` in
parallel in one answer, calling it again after its failure, then answering with a `url_citation` annotation on its
text; turn 2 `Runner.run_streamed`, another search and the answer citing it in the same response. Four calls.
Every function call is scripted with the two ids the real Responses API gives it (`with_api_call_ids`). Why:
what the API ran itself must be a tool call of the step that made it (never a step of its own, never a result the
model was not sent), and the citations must stay with the answer. (The versions the capture was recorded with are
in meta.json.)
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

from tests.captures.recording.openai_agents_travel import with_api_call_ids
from tests.captures.recording.session import Recording

SESSION = "oa-oi-hosted-tools-1"
JAZZ = "https://www.visitoslo.com/en/whats-on/oslo-jazz-festival/"
BERGEN = "https://www.yr.no/en/forecast/daily-table/1-92416/Norway/Vestland/Bergen/Bergen"
REPLIES = with_api_call_ids([
    {"web_search": [{"query": "concerts in Oslo this weekend"}],
     "tool_calls": [{"name": "book_hotel", "arguments": {"city": "Oslo", "nights": 2}}]},
    {"tool_calls": [{"name": "book_hotel", "arguments": {"city": "Oslo", "nights": 2}}]},
    {"text": "Booked Hotel Nord in Oslo for 2 nights (ref OSL-42). On Saturday the Oslo Jazz Festival plays "
             "Rockefeller.",
     "citations": [{"cited": "the Oslo Jazz Festival plays Rockefeller", "url": JAZZ,
                    "title": "Oslo Jazz Festival | VisitOslo"}]},
    {"web_search": [{"query": "Bergen weather forecast Saturday"}],
     "text": "Bergen on Saturday: rain, 8°C, so Oslo is the drier pick.",
     "citations": [{"cited": "rain, 8°C", "url": BERGEN, "title": "Bergen weather forecast | Yr"}]},
], SESSION)
QUESTIONS = ["Find me a concert in Oslo this weekend and book a hotel there for 2 nights.",
             "Would Bergen be drier on Saturday?"]


def main() -> None:
    with Recording(Path(__file__).parent, REPLIES, framework="openai-agents", instrumentation="openinference",
                   packages=["openai-agents", "openai", "openinference-instrumentation-openai-agents",
                             "openinference-instrumentation", "opentelemetry-sdk",
                             "opentelemetry-exporter-otlp-proto-http"],
                   session_id=SESSION,
                   notes="Responses API; hosted WebSearchTool beside a function tool: turn 1 (run) a web search and "
                         "book_hotel in parallel, book_hotel raising once and called again, an answer with a "
                         "url_citation; turn 2 (run_streamed) a web search and the answer citing it in one response; "
                         "SQLiteSession memory, RunConfig group_id, OpenInference using_session; function_call item "
                         "ids (fc_) distinct from their call_ids (call_)") as rec:
        rec.env()
        from agents import Agent, RunConfig, Runner, SQLiteSession, WebSearchTool, function_tool
        from openinference.instrumentation import using_session
        from openinference.instrumentation.openai_agents import OpenAIAgentsInstrumentor
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
        from opentelemetry.sdk.resources import Resource
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import BatchSpanProcessor

        provider = TracerProvider(resource=Resource.create({"service.name": "trip-planner"}))
        provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
        OpenAIAgentsInstrumentor().instrument(tracer_provider=provider)  # replaces the SDK's own exporter

        failures = {"book_hotel": 1}

        @function_tool
        def book_hotel(city: str, nights: int) -> str:
            """Book a hotel room."""
            if failures["book_hotel"]:
                failures["book_hotel"] -= 1
                raise TimeoutError("the booking service did not answer in time")
            return f"Booked Hotel Nord in {city}, {nights} nights, ref OSL-42"

        planner = Agent(name="Trip planner", model="gpt-4o",
                        instructions="You plan trips: search the web for what is on, and book hotels.",
                        tools=[WebSearchTool(), book_hotel])
        memory = SQLiteSession(SESSION)
        config = RunConfig(group_id=SESSION)

        async def run() -> None:
            with using_session(SESSION):
                first = await Runner.run(planner, QUESTIONS[0], session=memory, run_config=config)
                second = Runner.run_streamed(planner, QUESTIONS[1], session=memory, run_config=config)
                async for _event in second.stream_events():
                    pass
            print(first.final_output, second.final_output, sep="\n")

        asyncio.run(run())
        rec.flush(provider)


if __name__ == "__main__":
    main()
