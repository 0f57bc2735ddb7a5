"""Re-record: openai-agents (Responses API) retrying failed model requests itself, traced by OpenInference.

    python3 -m venv /tmp/cap-openai-agents_openinference_model-retry && \
        /tmp/cap-openai-agents_openinference_model-retry/bin/pip install \
        openai-agents==0.25.0 openai==3.63.0 openinference-instrumentation-openai-agents==2.6.0 \
        openinference-instrumentation==0.1.72 openinference-semantic-conventions==0.1.42 opentelemetry-sdk==1.45.2 \
        opentelemetry-exporter-otlp-proto-http==1.45.2
    /tmp/cap-openai-agents_openinference_model-retry/bin/python \
        tests/captures/openai-agents_openinference_model-retry/record.py

The newest releases of each (openai is the version pip resolved). The travel desk of `recording/openai_agents_travel.py`
(one agent holding `book_hotel`, which raises `TimeoutError` the first time, so the SDK sends the model its
failure_error_function's text, and `get_weather`) with the SDK's runner-managed model retries switched on as its docs
show (`ModelSettings(retry=ModelRetrySettings(max_retries=…, backoff=…, policy=retry_policies.any(
provider_suggested(), retry_after(), network_error(), http_status([429, 500, …]))))`: opt-in, off unless set), on a
default OpenAI client with its own retries off (`set_default_openai_client(AsyncOpenAI(max_retries=0))`: else the
OpenAI SDK retries the first attempt's 500 or 429 itself, in one request of the SDK's, and the runner never sees it).
The instrumentor set up as its README shows, the session named by `using_session` around each turn, the history kept
by the SDK's `SQLiteSession` with the RunConfig's `group_id` (`run_turns`):

1. `Runner.run`: both tools called in parallel, `book_hotel` failing; the next request is answered HTTP 500
   (`llm_errors.jsonl`), the runner retries it and the retry calls `book_hotel` again; the answer.
2. `Runner.run_streamed`: the turn's first request is answered HTTP 429 (rate limited), the runner retries it and the
   retry streams a `get_weather` call for Bergen; the answer, streamed.

Seven requests, five answered. Every function call is scripted with the two ids the real Responses API gives it
(`with_api_call_ids`). Why: a request the framework made again after it failed is one step of the conversation, the
answer's, the failed attempt listed on it (not a step, not an LLM call, billed nothing), whether the run was streamed
or not. (The versions the capture was recorded with are in meta.json.)
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

from tests.captures.recording.openai_agents_travel import run_turns, travel_desk, with_api_call_ids
from tests.captures.recording.session import Recording

SESSION = "oa-oi-model-retry-1"
SERVER_ERROR = {"status": 500, "message": "The server had an error while processing your request. Sorry about that!"}
RATE_LIMITED = {"status": 429, "message": "Rate limit reached for gpt-4o on requests per min (RPM): Limit 500.",
                "type": "requests", "code": "rate_limit_exceeded"}
REPLIES = with_api_call_ids([
    {"tool_calls": [{"name": "book_hotel", "arguments": {"city": "Oslo", "nights": 2}},
                    {"name": "get_weather", "arguments": {"city": "Oslo"}}]},
    {"error": SERVER_ERROR},
    {"tool_calls": [{"name": "book_hotel", "arguments": {"city": "Oslo", "nights": 2}}]},
    {"text": "Booked Hotel Nord in Oslo for 2 nights (ref OSL-42). Expect rain, 9°C: pack an umbrella."},
    {"error": RATE_LIMITED},
    {"tool_calls": [{"name": "get_weather", "arguments": {"city": "Bergen"}}]},
    {"text": "No: Bergen is windy at 7°C, colder than Oslo's 9°C."},
], SESSION)
PACKAGES = ["openai-agents", "openai", "openinference-instrumentation-openai-agents", "openinference-instrumentation",
            "openinference-semantic-conventions", "opentelemetry-sdk", "opentelemetry-exporter-otlp-proto-http"]
NOTES = ("ModelSettings(retry=ModelRetrySettings(max_retries=2, backoff 0.1 s, policy retry_policies.any("
         "provider_suggested, retry_after, network_error, http_status 408/409/429/500/502/503/504))), the OpenAI "
         "client's retries off (max_retries=0); two turns of one SQLiteSession under using_session: turn 1 (run) "
         "parallel tool calls, book_hotel raising once, the next request answered HTTP 500 and retried by the runner, "
         "the retry calling book_hotel again, the answer; turn 2 (run_streamed) the first request answered HTTP 429 "
         "and retried, the retry streaming get_weather, the answer; llm_errors.jsonl the two failed requests; "
         "function_call item ids (fc_) distinct from their call_ids (call_)")


def main() -> None:
    with Recording(Path(__file__).parent, REPLIES, framework="openai-agents", instrumentation="openinference",
                   packages=PACKAGES, session_id=SESSION, notes=NOTES) as rec:
        rec.env()
        import openai
        from agents import ModelRetrySettings, ModelSettings, retry_policies, set_default_openai_client
        from openinference.instrumentation import using_session
        from openinference.instrumentation.openai_agents import OpenAIAgentsInstrumentor
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
        from opentelemetry.sdk.resources import Resource
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import BatchSpanProcessor

        provider = TracerProvider(resource=Resource.create({"service.name": "travel-desk"}))
        provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
        OpenAIAgentsInstrumentor().instrument(tracer_provider=provider)  # replaces the SDK's own exporter
        # The runner retries, not the OpenAI client: its own retries would answer the first attempt's failure unseen.
        set_default_openai_client(openai.AsyncOpenAI(max_retries=0), use_for_tracing=False)

        retry = ModelRetrySettings(
            max_retries=2,
            backoff={"initial_delay": 0.1, "max_delay": 1.0, "multiplier": 2.0, "jitter": False},
            policy=retry_policies.any(
                retry_policies.provider_suggested(),
                retry_policies.retry_after(),
                retry_policies.network_error(),
                retry_policies.http_status([408, 409, 429, 500, 502, 503, 504]),
            ),
        )
        desk = travel_desk(handoff=False, model_settings=ModelSettings(retry=retry))
        run_turns(desk, SESSION, lambda: using_session(SESSION))
        rec.flush(provider)


if __name__ == "__main__":
    main()
