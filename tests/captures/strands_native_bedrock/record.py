"""Re-record: Strands Agents with its default model provider, Amazon Bedrock (`BedrockModel`, the Converse API), traced
by Strands' own OpenTelemetry.

    python3 -m venv /tmp/cap-strands_native_bedrock && /tmp/cap-strands_native_bedrock/bin/pip install \
        'strands-agents[otel]==1.65.0' boto3==1.44.18 botocore==1.44.18 \
        opentelemetry-sdk==1.45.2 opentelemetry-exporter-otlp-proto-http==1.45.2
    /tmp/cap-strands_native_bedrock/bin/python tests/captures/strands_native_bedrock/record.py

Why: `BedrockModel` is what `Agent()` uses when it is given no model, so it is how most Strands agents run, and every
other Strands capture uses another provider. Bedrock speaks its own API (Converse: `toolUse`/`toolResult` blocks,
`reasoningContent`, `cachePoint` blocks, `inputTokens` without the cache's tokens), which Strands' other providers
only imitate in memory. boto3 is pointed at the fake LLM (`endpoint_url`, dummy credentials, a region), which answers
`POST /model/{modelId}/converse-stream` in AWS's binary event stream framing and `/converse` as JSON.

The model is a Claude inference profile (`us.anthropic.claude-sonnet-4-5-20250929-v1:0`) with extended thinking
(`additional_request_fields={"thinking": …}`: every answer opens with a signed `reasoningContent` block, re-sent in
the history) and prompt caching as Strands offers it for Bedrock (`CacheConfig(strategy="auto", tools_ttl=True)`:
`cachePoint` blocks after the system prompt, the tools and the last user message), so that every call reads or writes
cache tokens. Two turns of one session (`trace_attributes={"session.id": …}`): turn 1 streamed (the default,
`ConverseStream`): the model looks up two cities at once, the Lyon lookup raises once (a timeout), so it calls it
again, then answers; turn 2 with `streaming=False` (`model.update_config`, so `Converse`): a follow-up that needs one
more lookup, then the answer. Five calls. (The versions the capture was recorded with are in meta.json.)
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

from tests.captures.recording.session import Recording

SESSION = "strands-bedrock-1"
MODEL = "us.anthropic.claude-sonnet-4-5-20250929-v1:0"
REPLIES = [
    # Turn 1 (ConverseStream), call 1: both cities at once; the system prompt and tools go into the cache.
    {"reasoning": "Two cities to compare; I can look both up in parallel.",
     "text": "Checking both cities.",
     "tool_calls": [{"name": "get_weather", "arguments": {"city": "Paris"}},
                    {"name": "get_weather", "arguments": {"city": "Lyon"}}],
     "input_tokens": 2100, "cache_write_tokens": 1900, "output_tokens": 96},
    # Call 2: the Lyon lookup timed out; try it again. The prefix is read back, the round it added written.
    {"reasoning": "Paris came back but the Lyon lookup timed out; a retry should work.",
     "tool_calls": [{"name": "get_weather", "arguments": {"city": "Lyon"}}],
     "input_tokens": 2350, "cache_read_tokens": 1900, "cache_write_tokens": 380, "output_tokens": 64},
    # Call 3: the answer.
    {"reasoning": "Paris 21°C against Lyon 17°C: Paris is four degrees warmer.",
     "text": "Paris is warmer: sunny at 21°C, while Lyon is cloudy at 17°C.",
     "input_tokens": 2460, "cache_read_tokens": 2280, "cache_write_tokens": 120, "output_tokens": 58},
    # Turn 2 (Converse, not streamed), call 4: a follow-up city.
    {"reasoning": "A follow-up about Nice; I have not looked it up yet.",
     "tool_calls": [{"name": "get_weather", "arguments": {"city": "Nice"}}],
     "input_tokens": 2560, "cache_read_tokens": 2400, "cache_write_tokens": 90, "output_tokens": 45},
    # Call 5: the second answer.
    {"reasoning": "Nice at 24°C beats Paris at 21°C, so Nice is the warmest of the three.",
     "text": "Nice is warmer still: sunny at 24°C.",
     "input_tokens": 2640, "cache_read_tokens": 2490, "cache_write_tokens": 70, "output_tokens": 52},
]
WEATHER = {"Paris": "sunny, 21°C", "Lyon": "cloudy, 17°C", "Nice": "sunny, 24°C"}
# Long enough to be worth caching in a real run (the fake LLM counts what it is told to).
SYSTEM = ("You are a terse weather assistant for a travel agency. Look up every city the user names with "
          "get_weather, all at once, before answering; compare them in one sentence. " * 8)


def main() -> None:
    capture_dir = Path(__file__).parent
    notes = ("two turns, five Bedrock Converse calls to a Claude inference profile with extended thinking (a signed "
             "reasoningContent block before every answer) and prompt caching (CacheConfig auto: cachePoint blocks "
             "after the system prompt, the tools and the last user message; every call reads or writes cache tokens); "
             "turn 1 streamed (ConverseStream): two parallel get_weather calls, the Lyon one raising once (a timeout), "
             "retried, then the answer; turn 2 with streaming=False (Converse): one more lookup, then the answer; "
             "Strands' default conventions (span events)")
    with Recording(capture_dir, REPLIES, framework="strands-agents", instrumentation="strands (native)",
                   packages=["strands-agents", "boto3", "botocore", "opentelemetry-sdk",
                             "opentelemetry-exporter-otlp-proto-http"],
                   session_id=SESSION, notes=notes) as rec:
        rec.env()
        # Dummy credentials: the fake LLM checks no signature, but botocore signs every request.
        os.environ.update({"AWS_ACCESS_KEY_ID": "AKIAFAKEFAKEFAKEFAKE", "AWS_SECRET_ACCESS_KEY": "fake-secret",
                           "AWS_REGION": "us-east-1"})
        from strands import Agent, tool
        from strands.models import CacheConfig
        from strands.models.bedrock import BedrockModel
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

        model = BedrockModel(model_id=MODEL, region_name="us-east-1", endpoint_url=rec.base_url.removesuffix("/v1"),
                             max_tokens=4096, cache_config=CacheConfig(strategy="auto", tools_ttl=True),
                             additional_request_fields={"thinking": {"type": "enabled", "budget_tokens": 2048}})
        agent = Agent(model=model, tools=[get_weather], name="weather-agent", system_prompt=SYSTEM,
                      trace_attributes={"session.id": SESSION}, callback_handler=None)
        agent("Which is warmer right now, Paris or Lyon?")
        model.update_config(streaming=False)
        agent("And Nice?")
        rec.flush(telemetry.tracer_provider)


if __name__ == "__main__":
    main()
