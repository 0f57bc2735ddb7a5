"""Re-record: Google ADK's workflow agents (LiteLlm against the fake LLM), ADK's own OTel tracing.

    python3 -m venv /tmp/cap-adk && /tmp/cap-adk/bin/pip install \
        google-adk==2.13.0 litellm==1.110.2 \
        opentelemetry-sdk==1.44.0 opentelemetry-exporter-otlp-proto-http==1.44.0
    /tmp/cap-adk/bin/python tests/captures/google-adk_native_workflow-agents/record.py

The root is a `SequentialAgent` (`trip_planner`): first a `ParallelAgent` (`research`) of two
`LlmAgent`s, then an `LlmAgent` (`summariser`) whose instruction reads what the two wrote to the
session state (`output_key`: `{weather}`, `{hotels}`). `weather_agent` calls its tool twice in
parallel; `hotel_agent`'s tool answers with an error (ADK's convention: an error dict) and the agent
answers around it. Two turns of one ADK session (`Runner` + `InMemorySessionService`, the same
session id), the second streamed (`RunConfig(streaming_mode=SSE)`): every agent runs again. Message
content on the spans (`OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=SPAN_ONLY`; ADK records none
by default). (The versions the capture was recorded with are in meta.json.)

The two parallel agents' first calls of a turn ask the model the same last message (the user's)
at once, in an order that varies run to run, so the fake LLM's `when` cannot tell them apart: each
reply here names the agent it was written for, and `answer_each_agent_its_own` hands a request the
first reply left for the agent its system prompt names (ADK's `Your internal name is "<name>"`).
The fake LLM logs and answers as ever.
"""

from __future__ import annotations

import asyncio
import json
import sys
import threading
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

from tests.captures.recording.session import Recording

SESSION = "adk-workflow-1"
# `agent` is this script's, not the fake LLM's: the agent the reply is for (`answer_each_agent_its_own`).
REPLIES: list[dict[str, Any]] = [
    # Turn one: the two research agents, side by side.
    {"agent": "weather_agent", "tool_calls": [{"name": "get_weather", "arguments": {"city": "Oslo"}},
                                              {"name": "get_weather", "arguments": {"city": "Bergen"}}]},
    {"agent": "hotel_agent", "tool_calls": [{"name": "find_hotel", "arguments": {"city": "Oslo", "nights": 1}}]},
    {"agent": "weather_agent", "text": "Oslo: sunny, 18°C. Bergen: rainy, 11°C."},
    {"agent": "hotel_agent",
     "text": "Hotel Nord in Oslo only takes stays of two nights or more; no room booked for one night."},
    {"agent": "summariser", "text": "Oslo is sunny and Bergen rainy; Hotel Nord needs a two-night stay."},
    # Turn two, streamed: every agent runs again.
    {"agent": "weather_agent", "text": "Oslo stays sunny this weekend."},
    {"agent": "hotel_agent", "text": "Two nights at Hotel Nord in Oslo are available."},
    {"agent": "summariser", "text": "Sunny Oslo, and Hotel Nord has two nights for you."},
]
WEATHER = {"Oslo": "sunny, 18°C", "Bergen": "rainy, 11°C"}
QUESTIONS = ["Plan a night in Oslo: the weather in Oslo and Bergen, and a hotel.",
             "Then make it two nights in Oslo."]


def answer_each_agent_its_own(script: Any) -> None:
    """Make the fake LLM's `script` (`recording.fake_llm.Script`) answer each request with the first reply left for
    the agent that sent it: the one ADK names in the system prompt (`Your internal name is "<name>"`)."""
    take = script.take
    order = threading.Lock()  # one request at a time: its reply moved first, then taken

    def take_for_agent(api: str, body: dict[str, Any], raw: bytes, **given: Any) -> Any:
        system = json.dumps((body.get("messages") or [{}])[0])
        with order:
            with script.lock:
                position = next((k for k, (index, _) in enumerate(script.replies)
                                 if f'internal name is \\"{REPLIES[index]["agent"]}\\"' in system), None)
                if position is None:
                    raise LookupError(f"no reply left for the agent of {system[:160]}")
                script.replies.insert(0, script.replies.pop(position))
            return take(api, body, raw, **given)

    script.take = take_for_agent


def main() -> None:
    with Recording(Path(__file__).parent, REPLIES, framework="google-adk", instrumentation="native",
                   packages=["google-adk", "litellm", "opentelemetry-sdk"], session_id=SESSION,
                   notes="SequentialAgent of a ParallelAgent (two LlmAgents with tools, output_key) and a "
                         "summarising LlmAgent reading their state keys; parallel tool calls; a tool answering "
                         "with an error dict; two turns of one ADK session, the second streamed (SSE)") as rec:
        rec.env()
        answer_each_agent_its_own(rec.llm.script)
        import os

        # ADK 2.x follows the GenAI semantic conventions and records no message content unless told
        # to; on the spans is what a user pointing it at an OTLP endpoint would choose.
        os.environ["OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"] = "SPAN_ONLY"
        os.environ["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"  # offline: no price table fetch
        from opentelemetry import trace
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
        from opentelemetry.sdk.resources import Resource
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import BatchSpanProcessor

        provider = TracerProvider(resource=Resource.create({"service.name": "adk-trip-planner"}))
        provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
        trace.set_tracer_provider(provider)

        from google.adk.agents import LlmAgent, ParallelAgent, RunConfig, SequentialAgent
        from google.adk.agents.run_config import StreamingMode
        from google.adk.models.lite_llm import LiteLlm
        from google.adk.runners import Runner
        from google.adk.sessions import InMemorySessionService
        from google.genai import types

        def get_weather(city: str) -> str:
            """The weather in a city."""
            return WEATHER[city]

        def find_hotel(city: str, nights: int) -> dict[str, str]:
            """Find a hotel room."""
            if nights < 2:  # ADK's convention for a tool that failed: an error the model reads
                return {"status": "error", "error_message": "Hotel Nord takes bookings of two nights or more"}
            return {"status": "success", "hotel": f"Hotel Nord in {city}, {nights} nights"}

        model = LiteLlm(model="openai/gpt-4o", api_base=rec.base_url, api_key="sk-fake")
        weather = LlmAgent(name="weather_agent", model=model, description="Reports the weather.",
                           instruction="Report the weather in the cities asked about.", tools=[get_weather],
                           output_key="weather")
        hotels = LlmAgent(name="hotel_agent", model=model, description="Finds hotels.",
                          instruction="Find a hotel for the stay asked about.", tools=[find_hotel],
                          output_key="hotels")
        summariser = LlmAgent(name="summariser", model=model, description="Summarises the research.",
                              instruction="Summarise for the traveller. Weather: {weather}. Hotels: {hotels}.")
        research = ParallelAgent(name="research", sub_agents=[weather, hotels])
        root = SequentialAgent(name="trip_planner", sub_agents=[research, summariser])

        async def run() -> None:
            sessions = InMemorySessionService()
            await sessions.create_session(app_name="trips", user_id="u1", session_id=SESSION)
            runner = Runner(agent=root, app_name="trips", session_service=sessions)
            configs = [RunConfig(), RunConfig(streaming_mode=StreamingMode.SSE)]
            for question, config in zip(QUESTIONS, configs, strict=True):
                message = types.Content(role="user", parts=[types.Part(text=question)])
                async for event in runner.run_async(user_id="u1", session_id=SESSION, new_message=message,
                                                    run_config=config):
                    if event.is_final_response() and event.content and event.content.parts:
                        print(f"{event.author}: {event.content.parts[0].text}")

        asyncio.run(run())
        rec.flush(provider)


if __name__ == "__main__":
    main()
