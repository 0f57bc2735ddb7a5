"""Re-record: openai-agents (Responses API) whose model endpoint fails once with HTTP 500, traced by OpenInference.

    python3 -m venv /tmp/cap-openai-agents_openinference_model-error && \
        /tmp/cap-openai-agents_openinference_model-error/bin/pip install \
        openai-agents==0.25.0 openai==3.63.0 openinference-instrumentation-openai-agents==2.6.0 \
        openinference-instrumentation==0.1.72 opentelemetry-sdk==1.45.2 opentelemetry-exporter-otlp-proto-http==1.45.2
    /tmp/cap-openai-agents_openinference_model-error/bin/python \
        tests/captures/openai-agents_openinference_model-error/record.py

The travel desk of `recording/openai_agents_travel.py` (one agent holding `get_weather` and `book_hotel`, which
raises `TimeoutError` the first time, so the SDK sends the model its failure_error_function's text), on a default
OpenAI client with its retries off (`set_default_openai_client(AsyncOpenAI(max_retries=0))`; the SDK's own
runner-managed retries are opt-in and left off), so a failed request raises out of the run. Two turns of one
conversation, kept by the app as the SDK's docs show (`result.to_input_list()` plus the next question), grouped by
the RunConfig's `group_id` and under OpenInference's `using_session` (both the session id):
turn 1 `Runner.run`: both tools called in parallel, `book_hotel` again after its failure, the answer;
turn 2 `Runner.run`: `get_weather` for Bergen, then the second call of the turn answered with HTTP 500
(`llm_errors.jsonl`), so `Runner.run` raises `openai.InternalServerError`; the app catches it and runs the turn again
from the conversation it keeps (turn 1's items and the question: the failed run returned nothing to keep), as
`Runner.run_streamed`, which asks the weather again and streams the answer. Six answered calls, one failed request.
Every function call is scripted with the two ids the real Responses API gives it (`with_api_call_ids`). Why: a
failed model call must show as failed where it happened, billed nothing, and the turn run again must read as what
happened (the app re-sent the question in a run of its own), not as a conversation with a hole in it. (The versions
the capture was recorded with are in meta.json.)
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

from tests.captures.recording.openai_agents_travel import QUESTIONS, travel_desk, with_api_call_ids
from tests.captures.recording.session import Recording

SESSION = "oa-oi-model-error-1"
SERVER_ERROR = {"status": 500, "message": "The server had an error while processing your request. Sorry about that!"}
REPLIES = with_api_call_ids([
    {"tool_calls": [{"name": "book_hotel", "arguments": {"city": "Oslo", "nights": 2}},
                    {"name": "get_weather", "arguments": {"city": "Oslo"}}]},
    {"tool_calls": [{"name": "book_hotel", "arguments": {"city": "Oslo", "nights": 2}}]},
    {"text": "Booked Hotel Nord in Oslo for 2 nights (ref OSL-42). Expect rain, 9°C: pack an umbrella."},
    {"tool_calls": [{"name": "get_weather", "arguments": {"city": "Bergen"}}]},
    {"error": SERVER_ERROR},
    {"tool_calls": [{"name": "get_weather", "arguments": {"city": "Bergen"}}]},
    {"text": "No: Bergen is windy at 7°C, colder than Oslo's 9°C."},
], SESSION)


def main() -> None:
    with Recording(Path(__file__).parent, REPLIES, framework="openai-agents", instrumentation="openinference",
                   packages=["openai-agents", "openai", "openinference-instrumentation-openai-agents",
                             "openinference-instrumentation", "opentelemetry-sdk",
                             "opentelemetry-exporter-otlp-proto-http"],
                   session_id=SESSION,
                   notes="Responses API, the client's retries off (max_retries=0): turn 1 (run) parallel tool calls, "
                         "book_hotel raising once and called again; turn 2 (run) get_weather, then the turn's second "
                         "call answered HTTP 500 (llm_errors.jsonl), the run raising InternalServerError; the app "
                         "runs the turn again (run_streamed) from its to_input_list() history plus the question; "
                         "RunConfig group_id, OpenInference using_session; function_call item ids (fc_) distinct "
                         "from their call_ids (call_)") as rec:
        rec.env()
        import openai
        from agents import RunConfig, Runner, set_default_openai_client
        from openinference.instrumentation import using_session
        from openinference.instrumentation.openai_agents import OpenAIAgentsInstrumentor
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
        from opentelemetry.sdk.resources import Resource
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import BatchSpanProcessor

        provider = TracerProvider(resource=Resource.create({"service.name": "travel-desk"}))
        provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
        OpenAIAgentsInstrumentor().instrument(tracer_provider=provider)  # replaces the SDK's own exporter
        # The OpenAI client retries a 500 twice by default: off, so the failure reaches the run.
        set_default_openai_client(openai.AsyncOpenAI(max_retries=0), use_for_tracing=False)

        desk = travel_desk(handoff=False)
        config = RunConfig(group_id=SESSION)

        async def run() -> None:
            with using_session(SESSION):
                first = await Runner.run(desk, QUESTIONS[0], run_config=config)
                history: list[Any] = first.to_input_list()
                turn = [*history, {"role": "user", "content": QUESTIONS[1]}]
                try:
                    await Runner.run(desk, turn, run_config=config)
                    raise RuntimeError("the scripted HTTP 500 did not reach the run")
                except openai.InternalServerError as failure:
                    print(f"turn 2 failed ({failure.status_code}): running it again")
                second = Runner.run_streamed(desk, turn, run_config=config)
                async for _event in second.stream_events():
                    pass
            print(first.final_output, second.final_output, sep="\n")

        asyncio.run(run())
        rec.flush(provider)


if __name__ == "__main__":
    main()
