"""Re-record: openai-agents (Responses API) whose session compacts its history with `responses.compact`, traced by
OpenInference.

    python3 -m venv /tmp/cap-oa-compaction && /tmp/cap-oa-compaction/bin/pip install \
        openai-agents==0.25.0 openai==3.63.0 openinference-instrumentation-openai-agents==2.6.0 \
        openinference-instrumentation==0.1.72 opentelemetry-sdk==1.45.2 opentelemetry-exporter-otlp-proto-http==1.45.2
    /tmp/cap-oa-compaction/bin/python tests/captures/openai-agents_openinference_compaction/record.py

The travel desk of `recording/openai_agents_travel.py` (one agent holding `get_weather` and `book_hotel`, which
raises `TimeoutError` the first time, so the SDK sends the model its failure_error_function's text), its history kept
by the SDK's `OpenAIResponsesCompactionSession` around an `SQLiteSession`, as the SDK's sessions docs show it, with its
defaults: after a turn is stored, once the history holds 10 items other than user messages and compactions, the
session calls `client.responses.compact` (the `auto` mode: the `previous_response_id` of the turn's last response) and
replaces the stored history by what it returns, the conversation's user messages and one `compaction` item whose
content is encrypted (the fake LLM answers so, `llm_compactions.jsonl`). Three turns of one session, grouped by the
RunConfig's `group_id` and under OpenInference's `using_session` (both the session id), the instrumentor set up as
its README shows:
1. `Runner.run`: both tools called in parallel, `book_hotel` again after its failure, the answer (7 items);
2. `Runner.run_streamed`: "Is Bergen warmer?", `get_weather` for Bergen, the answer (10 items): the session compacts;
3. `Runner.run`: a booking in Bergen, sent the two questions, the compaction item and the question, then the answer.
Seven calls on `/v1/responses`, one on `/v1/responses/compact`; every function call scripted with the two ids the real
Responses API gives it (`with_api_call_ids`). Why: the most common form of the SDK's context compaction (the session
class its docs show, on its defaults), which the SDK makes with the OpenAI client outside any tracing span; a
trajectory must show the compaction where it happened and keep everything before it. (The versions the capture was
recorded with are in meta.json.)
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

from tests.captures.recording.openai_agents_travel import QUESTIONS, travel_desk, with_api_call_ids
from tests.captures.recording.session import Recording

SESSION = "oa-oi-compaction-1"
THIRD_QUESTION = "Book me Bergen for 1 night as well."
REPLIES = with_api_call_ids([
    {"tool_calls": [{"name": "book_hotel", "arguments": {"city": "Oslo", "nights": 2}},
                    {"name": "get_weather", "arguments": {"city": "Oslo"}}]},
    {"tool_calls": [{"name": "book_hotel", "arguments": {"city": "Oslo", "nights": 2}}]},
    {"text": "Booked Hotel Nord in Oslo for 2 nights (ref OSL-42). Expect rain, 9°C: pack an umbrella."},
    {"tool_calls": [{"name": "get_weather", "arguments": {"city": "Bergen"}}]},
    {"text": "No: Bergen is windy at 7°C, colder than Oslo's 9°C."},
    {"tool_calls": [{"name": "book_hotel", "arguments": {"city": "Bergen", "nights": 1}}]},
    {"text": "Booked Hotel Nord in Bergen for 1 night too. Bring a windproof jacket."},
], SESSION)


def main() -> None:
    with Recording(Path(__file__).parent, REPLIES, framework="openai-agents", instrumentation="openinference",
                   packages=["openai-agents", "openai", "openinference-instrumentation-openai-agents",
                             "openinference-instrumentation", "opentelemetry-sdk",
                             "opentelemetry-exporter-otlp-proto-http"],
                   session_id=SESSION,
                   notes="Responses API; OpenAIResponsesCompactionSession(SQLiteSession) on its defaults (compacts "
                         "past 10 items other than user messages, mode auto): turn 1 (run) parallel tool calls, "
                         "book_hotel raising once and called again; turn 2 (run_streamed) get_weather, the answer, "
                         "then responses.compact with previous_response_id (llm_compactions.jsonl, in no span); turn "
                         "3 (run) sent the user messages and the compaction item, book_hotel, the answer; RunConfig "
                         "group_id, OpenInference using_session; function_call item ids (fc_) distinct from their "
                         "call_ids (call_)") as rec:
        rec.env()
        from agents import RunConfig, Runner, SQLiteSession
        from agents.memory import OpenAIResponsesCompactionSession
        from openinference.instrumentation import using_session
        from openinference.instrumentation.openai_agents import OpenAIAgentsInstrumentor
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
        from opentelemetry.sdk.resources import Resource
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import BatchSpanProcessor

        provider = TracerProvider(resource=Resource.create({"service.name": "travel-desk"}))
        provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
        OpenAIAgentsInstrumentor().instrument(tracer_provider=provider)  # replaces the SDK's own exporter

        desk = travel_desk(handoff=False)
        memory = OpenAIResponsesCompactionSession(session_id=SESSION, underlying_session=SQLiteSession(SESSION))
        config = RunConfig(group_id=SESSION)

        async def run() -> None:
            with using_session(SESSION):
                first = await Runner.run(desk, QUESTIONS[0], session=memory, run_config=config)
                second = Runner.run_streamed(desk, QUESTIONS[1], session=memory, run_config=config)
                async for _event in second.stream_events():
                    pass
                stored = await memory.get_items()
                print("stored after turn 2:", [item.get("type", item.get("role")) for item in stored])
                third = await Runner.run(desk, THIRD_QUESTION, session=memory, run_config=config)
            print(first.final_output, second.final_output, third.final_output, sep="\n")

        asyncio.run(run())
        rec.flush(provider)


if __name__ == "__main__":
    main()
