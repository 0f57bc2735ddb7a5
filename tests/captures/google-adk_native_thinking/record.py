"""Re-record: a Google ADK agent on a Gemini thinking model, two turns of one ADK session, ADK's own OTel tracing.

    python3 -m venv /tmp/cap-google-adk_native_thinking && /tmp/cap-google-adk_native_thinking/bin/pip install \
        google-adk==2.13.0 google-genai==2.34.0 \
        opentelemetry-sdk==1.44.0 opentelemetry-exporter-otlp-proto-http==1.44.0
    /tmp/cap-google-adk_native_thinking/bin/python tests/captures/google-adk_native_thinking/record.py

google-adk 2.13.0 is the newest; it requires google-genai < 3 (2.34.0, the newest such) and OpenTelemetry <= 1.44
(`pip freeze`: opentelemetry-api/-sdk/-exporter-otlp-proto-http 1.44.0, opentelemetry-semantic-conventions
0.65b0; also in meta.json).

An `LlmAgent` on `gemini-2.5-flash` through ADK's own Gemini model (google-genai pointed at the fake with
GOOGLE_GEMINI_BASE_URL), thinking as ADK's docs show: `planner=BuiltInPlanner(thinking_config=
ThinkingConfig(include_thoughts=True, thinking_budget=1024))`. Every answer starts with its thoughts (a
`{"text": …, "thought": true}` part, distinct on each call), the thoughts' tokens reported as Gemini does
(`thoughtsTokenCount`, beside `candidatesTokenCount`), the first function call signed (`thoughtSignature`).
ADK's session id (`Runner.run_async(session_id=…)` on an `InMemorySessionService` session) is the session.

Turn one: the agent asks the weather of two cities in parallel; the weather tool raises once (Oslo's service
times out) and ADK's `ReflectAndRetryToolPlugin` (an `App` plugin, as its docs show) answers that call with its
reflection guidance; the model asks again for Oslo, then answers. Turn two, streamed (`RunConfig(streaming_mode=
SSE)`): the model says it books, calls `book_hotel`, then answers. Five LLM calls. Message content on the
spans (`OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=SPAN_ONLY`; ADK records none by default).
"""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

from tests.captures.recording.session import Recording

SESSION = "adk-thinking-travel-1"
MODEL = "gemini-2.5-flash"
REPLIES = [
    {"reasoning": "Two cities: I can ask for both forecasts at once.",
     "tool_calls": [{"name": "get_weather", "arguments": {"city": "Paris"}},
                    {"name": "get_weather", "arguments": {"city": "Oslo"}}],
     "input_tokens": 240, "output_tokens": 64, "reasoning_tokens": 40},
    {"reasoning": "Oslo's lookup timed out; one retry should do.",
     "tool_calls": [{"name": "get_weather", "arguments": {"city": "Oslo"}}],
     "input_tokens": 372, "output_tokens": 41, "reasoning_tokens": 29},
    {"reasoning": "Both forecasts are in; summarise them briefly.",
     "text": "Paris is sunny at 21°C; Oslo is rainy at 9°C.",
     "input_tokens": 410, "output_tokens": 52, "reasoning_tokens": 33},
    {"reasoning": "A booking request: Oslo, two nights, so call book_hotel.",
     "text": "Booking Oslo for two nights.",
     "tool_calls": [{"name": "book_hotel", "arguments": {"city": "Oslo", "nights": 2}}],
     "input_tokens": 455, "output_tokens": 70, "reasoning_tokens": 45},
    {"reasoning": "The booking succeeded; give the reference.",
     "text": "Booked Hotel Nord in Oslo for 2 nights (ref OSL-42).",
     "input_tokens": 503, "output_tokens": 48, "reasoning_tokens": 27},
]
WEATHER = {"Paris": "sunny, 21°C", "Oslo": "rainy, 9°C"}
QUESTIONS = ["Weather in Paris and Oslo?", "Book me a hotel in Oslo for two nights."]
PACKAGES = ["google-adk", "google-genai", "opentelemetry-api", "opentelemetry-sdk",
            "opentelemetry-exporter-otlp-proto-http", "opentelemetry-semantic-conventions"]


def main() -> None:
    notes = ("LlmAgent on gemini-2.5-flash (ADK's Gemini model) with BuiltInPlanner(ThinkingConfig(include_thoughts="
             "True, thinking_budget=1024)): thoughts on every call, thoughtsTokenCount reported. Two turns of one ADK "
             "session: parallel get_weather calls, one raising once (ReflectAndRetryToolPlugin answers with its "
             "reflection), retried, then the answer; then, streamed (SSE), text and a book_hotel call, then the answer")
    with Recording(Path(__file__).parent, REPLIES, framework="google-adk", instrumentation="native",
                   packages=PACKAGES, session_id=SESSION, notes=notes) as rec:
        rec.env()
        # ADK's Gemini model builds a google-genai client, which reads the API key and base URL from the
        # environment (the server's root: the SDK adds `v1beta/models/…`).
        os.environ.update({"GOOGLE_API_KEY": "fake", "GOOGLE_GENAI_USE_VERTEXAI": "false",
                           "GOOGLE_GEMINI_BASE_URL": rec.base_url.removesuffix("/v1") + "/"})
        # ADK 2.x follows the GenAI semantic conventions and records no message content unless told
        # to; on the spans is what a user pointing it at an OTLP endpoint would choose.
        os.environ["OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"] = "SPAN_ONLY"
        from opentelemetry import trace
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
        from opentelemetry.sdk.resources import Resource
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import BatchSpanProcessor

        provider = TracerProvider(resource=Resource.create({"service.name": "adk-thinking-travel"}))
        provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
        trace.set_tracer_provider(provider)

        from google.adk.agents import LlmAgent, RunConfig
        from google.adk.agents.run_config import StreamingMode
        from google.adk.apps import App
        from google.adk.planners import BuiltInPlanner
        from google.adk.plugins.reflect_retry_tool_plugin import ReflectAndRetryToolPlugin
        from google.adk.runners import Runner
        from google.adk.sessions import InMemorySessionService
        from google.genai import types

        failures = {"Oslo": 1}

        def get_weather(city: str) -> str:
            """The weather in a city."""
            if failures.get(city):
                failures[city] -= 1
                raise TimeoutError(f"weather service timed out for {city}")
            return WEATHER[city]

        def book_hotel(city: str, nights: int) -> dict[str, str]:
            """Book a hotel room."""
            return {"status": "success", "booking": f"Hotel Nord in {city}, {nights} nights, ref OSL-42"}

        planner = BuiltInPlanner(thinking_config=types.ThinkingConfig(include_thoughts=True, thinking_budget=1024))
        agent = LlmAgent(name="travel_desk", model=MODEL, instruction="You answer travel questions and book hotels.",
                         tools=[get_weather, book_hotel], planner=planner)

        async def run() -> None:
            sessions = InMemorySessionService()
            await sessions.create_session(app_name="travel", user_id="u1", session_id=SESSION)
            app = App(name="travel", root_agent=agent, plugins=[ReflectAndRetryToolPlugin(max_retries=2)])
            runner = Runner(app=app, session_service=sessions)
            configs = [RunConfig(), RunConfig(streaming_mode=StreamingMode.SSE)]
            for question, config in zip(QUESTIONS, configs, strict=True):
                message = types.Content(role="user", parts=[types.Part(text=question)])
                async for event in runner.run_async(user_id="u1", session_id=SESSION, new_message=message,
                                                    run_config=config):
                    if event.is_final_response() and event.content and event.content.parts:
                        print(" | ".join(f"{'thought: ' if part.thought else ''}{part.text}"
                                         for part in event.content.parts if part.text))

        asyncio.run(run())
        rec.flush(provider)


if __name__ == "__main__":
    main()
