"""Re-record: Strands Agents with its AnthropicModel provider and extended thinking, traced by Strands' own tracing.

    python3 -m venv /tmp/cap-strands_native_anthropic-thinking && \
        /tmp/cap-strands_native_anthropic-thinking/bin/pip install \
        'strands-agents[anthropic]==1.62.0' anthropic==0.125.0 \
        opentelemetry-sdk==1.45.1 opentelemetry-exporter-otlp-proto-http==1.45.1
    /tmp/cap-strands_native_anthropic-thinking/bin/python tests/captures/strands_native_anthropic-thinking/record.py

(anthropic 0.125.0 is the newest the `anthropic` extra allows, `<1.0.0`; opentelemetry 1.45.1 the newest that
Strands' `opentelemetry-instrumentation-threading` 0.66b1 allows.)

Thinking is on the way Strands' docs show it for Anthropic: `AnthropicModel(params={"thinking": {"type":
"enabled", "budget_tokens": …}})`. Every call answers with a thinking block first (distinct text each, a
signature streamed as `signature_delta`), and its usage names the thinking tokens
(`output_tokens_details.thinking_tokens`, part of `output_tokens`). Strands streams every Anthropic call and
turns the thinking into a Bedrock-style `reasoningContent` block (`reasoningText` with its text and signature)
in its message, which it re-sends as a `thinking` block in the history of every later call (Anthropic
rejects a tool round whose thinking is missing). Two turns of one session (`trace_attributes={"session.id":
…}`): the first, `agent(…)`, asks about two cities, the model calls get_weather for both at once and the
Lyon lookup raises once (a timeout), so the model calls it again, then answers; the second,
`agent.stream_async(…)`, asks a follow-up that needs one more lookup, then the answer. Five calls.
`strands_native_anthropic-thinking_latest-semconv` is the same run with
`OTEL_SEMCONV_STABILITY_OPT_IN=gen_ai_latest_experimental`. Strands' `StrandsTelemetry` records no thinking
tokens (its `Usage` has none: models/anthropic.py keeps only the usage's integers) nor the thinking budget
(a chat span names only `gen_ai.request.model` of the request). (The versions the capture was recorded with
are in meta.json.)
"""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

from tests.captures.recording.session import Recording

SESSION = "strands-anthropic-thinking-1"
MODEL = "claude-sonnet-4-5"
REPLIES = [
    # Turn 1, call 1: both cities at once.
    {"reasoning": "The user wants Paris and Lyon compared; I can look both up in parallel.",
     "text": "Checking both cities.",
     "tool_calls": [{"name": "get_weather", "arguments": {"city": "Paris"}},
                    {"name": "get_weather", "arguments": {"city": "Lyon"}}],
     "input_tokens": 620, "output_tokens": 96, "reasoning_tokens": 40},
    # Call 2: the Lyon lookup timed out; try it again.
    {"reasoning": "Paris came back but the Lyon lookup timed out; a retry should work.",
     "tool_calls": [{"name": "get_weather", "arguments": {"city": "Lyon"}}],
     "input_tokens": 780, "output_tokens": 64, "reasoning_tokens": 35},
    # Call 3: the answer.
    {"reasoning": "Paris 21°C against Lyon 17°C: Paris is four degrees warmer.",
     "text": "Paris is warmer: sunny at 21°C, while Lyon is cloudy at 17°C.",
     "input_tokens": 860, "output_tokens": 58, "reasoning_tokens": 30},
    # Turn 2 (streamed), call 4: a follow-up city.
    {"reasoning": "A follow-up about Nice; I have not looked it up yet.",
     "tool_calls": [{"name": "get_weather", "arguments": {"city": "Nice"}}],
     "input_tokens": 940, "output_tokens": 45, "reasoning_tokens": 25},
    # Call 5: the second answer.
    {"reasoning": "Nice at 24°C beats Paris at 21°C, so Nice is the warmest of the three.",
     "text": "Nice is warmer still: sunny at 24°C.",
     "input_tokens": 1010, "output_tokens": 52, "reasoning_tokens": 28},
]
WEATHER = {"Paris": "sunny, 21°C", "Lyon": "cloudy, 17°C", "Nice": "sunny, 24°C"}


def run(capture_dir: Path, latest_semconv: bool) -> None:
    if latest_semconv:
        os.environ["OTEL_SEMCONV_STABILITY_OPT_IN"] = "gen_ai_latest_experimental"
    notes = ("two turns, five streamed Anthropic calls with extended thinking (a thinking block with a signature "
             "before every answer, its tokens in usage.output_tokens_details.thinking_tokens), re-sent by Strands as "
             "reasoningContent/thinking blocks in the history; turn 1 (agent()): two parallel get_weather calls, the "
             "Lyon one raising once (a timeout), retried, then the answer; turn 2 (stream_async): one more lookup, "
             "then the answer; conventions: "
             + ("gen_ai_latest_experimental" if latest_semconv else "Strands' default (span events)"))
    with Recording(capture_dir, REPLIES, framework="strands-agents", instrumentation="strands (native)",
                   packages=["strands-agents", "anthropic", "opentelemetry-sdk",
                             "opentelemetry-exporter-otlp-proto-http"],
                   session_id=SESSION, notes=notes) as rec:
        rec.env()
        from strands import Agent, tool
        from strands.models.anthropic import AnthropicModel
        from strands.telemetry import StrandsTelemetry

        telemetry = StrandsTelemetry()
        telemetry.setup_otlp_exporter()
        timed_out: set[str] = set()

        @tool
        def get_weather(city: str) -> str:
            """The weather in a city."""
            if city == "Lyon" and city not in timed_out:  # the weather service times out once
                timed_out.add(city)
                raise TimeoutError(f"weather service timed out for {city}")
            return WEATHER[city]

        model = AnthropicModel(client_args={"base_url": rec.base_url.removesuffix("/v1"), "api_key": "sk-ant-fake"},
                               model_id=MODEL, max_tokens=4096,
                               params={"thinking": {"type": "enabled", "budget_tokens": 2048}})
        agent = Agent(model=model, tools=[get_weather], name="weather-agent",
                      system_prompt="You are a terse weather assistant. Look cities up with get_weather.",
                      trace_attributes={"session.id": SESSION}, callback_handler=None)
        agent("Which is warmer right now, Paris or Lyon?")

        async def follow_up() -> None:
            async for _event in agent.stream_async("And Nice?"):
                pass

        asyncio.run(follow_up())
        rec.flush(telemetry.tracer_provider)


def main() -> None:
    run(Path(__file__).parent, latest_semconv=False)


if __name__ == "__main__":
    main()
