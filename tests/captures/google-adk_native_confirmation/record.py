"""Re-record: a Google ADK agent whose tools need a person's confirmation, on a Gemini thinking model, ADK's own OTel
tracing, one ADK session.

    python3 -m venv /tmp/cap-google-adk_native_confirmation && /tmp/cap-google-adk_native_confirmation/bin/pip install \
        google-adk==2.13.0 google-genai==2.34.0 \
        opentelemetry-sdk==1.44.0 opentelemetry-exporter-otlp-proto-http==1.44.0
    /tmp/cap-google-adk_native_confirmation/bin/python tests/captures/google-adk_native_confirmation/record.py

google-adk 2.13.0 is the newest; it requires google-genai < 3 (2.34.0, the newest such) and OpenTelemetry <= 1.44
(`pip freeze`: opentelemetry-api/-sdk/-exporter-otlp-proto-http 1.44.0, opentelemetry-semantic-conventions
0.65b0; also in meta.json).

An `LlmAgent` on `gemini-2.5-flash` through ADK's own Gemini model (google-genai pointed at the fake with
GOOGLE_GEMINI_BASE_URL), thinking (`BuiltInPlanner(ThinkingConfig(include_thoughts=True))`: thoughts on every call,
distinct, `thoughtsTokenCount` reported). Tool confirmation as ADK's docs show: `FunctionTool(book_hotel,
require_confirmation=True)` and `FunctionTool(rent_car, require_confirmation=True)`. ADK's session id
(`Runner.run_async(session_id=…)` on an `InMemorySessionService` session) is the session.

Turn one: the model calls both tools in parallel; neither runs: each answers "requires confirmation" and ADK ends the
invocation with an `adk_request_confirmation` function call for each (`originalFunctionCall`, `toolConfirmation`
with its hint). The app answers in a second `run_async` of the same session, as the docs show: a user message of
`FunctionResponse(name="adk_request_confirmation", id=<the request's id>, response={"confirmed": …})`, the hotel
confirmed, the car rejected. ADK runs the hotel's tool, answers the car's call "This tool call is rejected.", and the
model answers. Turn two, streamed (`RunConfig(streaming_mode=SSE)`): the weather, whose tool raises once (Oslo's
service times out) and ADK's `ReflectAndRetryToolPlugin` answers with its reflection guidance; the model asks again,
then answers. Five LLM calls. Message content on the spans (`OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=
SPAN_ONLY`; ADK records none by default).
"""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

from tests.captures.recording.session import Recording

SESSION = "adk-confirm-travel-1"
MODEL = "gemini-2.5-flash"
REPLIES = [
    {"reasoning": "Hotel and car are independent: ask for both bookings at once.",
     "tool_calls": [{"name": "book_hotel", "arguments": {"city": "Oslo", "nights": 2}},
                    {"name": "rent_car", "arguments": {"city": "Oslo", "days": 2}}],
     "input_tokens": 260, "output_tokens": 70, "reasoning_tokens": 38},
    {"reasoning": "The hotel went through; the car was turned down, so say so.",
     "text": "Booked Hotel Nord in Oslo for 2 nights (ref OSL-42). The car rental was not approved, so I did not "
             "rent one.",
     "input_tokens": 430, "output_tokens": 61, "reasoning_tokens": 26},
    {"reasoning": "A weather question: look Oslo up.",
     "tool_calls": [{"name": "get_weather", "arguments": {"city": "Oslo"}}],
     "input_tokens": 480, "output_tokens": 35, "reasoning_tokens": 21},
    {"reasoning": "The lookup timed out; try Oslo once more.",
     "tool_calls": [{"name": "get_weather", "arguments": {"city": "Oslo"}}],
     "input_tokens": 560, "output_tokens": 33, "reasoning_tokens": 19},
    {"reasoning": "Got it this time; answer briefly.",
     "text": "Oslo is rainy at 9°C, so pack an umbrella.",
     "input_tokens": 600, "output_tokens": 40, "reasoning_tokens": 17},
]
QUESTIONS = ["Book me a hotel in Oslo for two nights and a rental car there for two days.",
             "What's the weather like in Oslo?"]
DECISIONS = {"book_hotel": True, "rent_car": False}  # what the person answers each confirmation request
CONFIRMATION = "adk_request_confirmation"
PACKAGES = ["google-adk", "google-genai", "opentelemetry-api", "opentelemetry-sdk",
            "opentelemetry-exporter-otlp-proto-http", "opentelemetry-semantic-conventions"]


def main() -> None:
    notes = ("LlmAgent on gemini-2.5-flash (ADK's Gemini model), thinking on every call; book_hotel and rent_car are "
             "FunctionTool(require_confirmation=True). Turn one: both called in parallel, ADK asks with two "
             "adk_request_confirmation calls; the app answers (a second run_async) hotel confirmed, car rejected; "
             "the hotel's tool runs, the car's call answered 'This tool call is rejected.', then the answer. Turn two, "
             "streamed (SSE): get_weather raises once (ReflectAndRetryToolPlugin answers), retried, then the answer")
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

        provider = TracerProvider(resource=Resource.create({"service.name": "adk-confirm-travel"}))
        provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
        trace.set_tracer_provider(provider)

        from google.adk.agents import LlmAgent, RunConfig
        from google.adk.agents.run_config import StreamingMode
        from google.adk.apps import App
        from google.adk.planners import BuiltInPlanner
        from google.adk.plugins.reflect_retry_tool_plugin import ReflectAndRetryToolPlugin
        from google.adk.runners import Runner
        from google.adk.sessions import InMemorySessionService
        from google.adk.tools import FunctionTool
        from google.genai import types

        failures = {"Oslo": 1}

        def get_weather(city: str) -> str:
            """The weather in a city."""
            if failures.get(city):
                failures[city] -= 1
                raise TimeoutError(f"weather service timed out for {city}")
            return "rainy, 9°C"

        def book_hotel(city: str, nights: int) -> dict[str, str]:
            """Book a hotel room."""
            return {"status": "success", "booking": f"Hotel Nord in {city}, {nights} nights, ref OSL-42"}

        def rent_car(city: str, days: int) -> dict[str, str]:
            """Rent a car."""
            return {"status": "success", "rental": f"compact car in {city}, {days} days, ref CAR-7"}

        planner = BuiltInPlanner(thinking_config=types.ThinkingConfig(include_thoughts=True, thinking_budget=1024))
        agent = LlmAgent(name="travel_desk", model=MODEL, instruction="You answer travel questions and book trips.",
                         tools=[get_weather, FunctionTool(book_hotel, require_confirmation=True),
                                FunctionTool(rent_car, require_confirmation=True)],
                         planner=planner)

        async def run() -> None:
            sessions = InMemorySessionService()
            await sessions.create_session(app_name="travel", user_id="u1", session_id=SESSION)
            app = App(name="travel", root_agent=agent, plugins=[ReflectAndRetryToolPlugin(max_retries=2)])
            runner = Runner(app=app, session_service=sessions)

            async def turn(message: types.Content, config: RunConfig) -> list[types.FunctionCall]:
                """One run of the session; the confirmations it asked for."""
                asked: list[types.FunctionCall] = []
                async for event in runner.run_async(user_id="u1", session_id=SESSION, new_message=message,
                                                    run_config=config):
                    for call in event.get_function_calls():
                        if call.name == CONFIRMATION:
                            asked.append(call)
                    if event.is_final_response() and event.content and event.content.parts:
                        print(" | ".join(f"{'thought: ' if part.thought else ''}{part.text}"
                                         for part in event.content.parts if part.text))
                return asked

            asked = await turn(types.Content(role="user", parts=[types.Part(text=QUESTIONS[0])]), RunConfig())
            assert len(asked) == 2, asked
            answers = []
            for request in asked:
                tool = (request.args or {})["originalFunctionCall"]["name"]
                print(f"confirm {tool}: {DECISIONS[tool]}")
                answers.append(types.Part(function_response=types.FunctionResponse(
                    id=request.id, name=CONFIRMATION, response={"confirmed": DECISIONS[tool]})))
            assert not await turn(types.Content(role="user", parts=answers), RunConfig())
            await turn(types.Content(role="user", parts=[types.Part(text=QUESTIONS[1])]),
                       RunConfig(streaming_mode=StreamingMode.SSE))

        asyncio.run(run())
        rec.flush(provider)


if __name__ == "__main__":
    main()
