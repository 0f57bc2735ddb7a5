"""Re-record: Strands Agents with its AnthropicModel provider and prompt caching, traced by Strands' own OpenTelemetry.

    python3 -m venv /tmp/cap-pc-strands-anthropic && /tmp/cap-pc-strands-anthropic/bin/pip install \
        'strands-agents[anthropic]==1.62.0' anthropic==0.125.0 \
        opentelemetry-sdk==1.45.1 opentelemetry-exporter-otlp-proto-http==1.45.1
    /tmp/cap-pc-strands-anthropic/bin/python tests/captures/strands_native_anthropic-prompt-cache/record.py

Caching is on the way Strands supports it: `AnthropicModel(cache_config=CacheConfig(strategy="anthropic",
tools_ttl=True))` puts `cache_control` on the system prompt's end, the tool definitions and the last
user message (the fake LLM ignores the markers). One turn, three streamed `messages` calls: the first
writes the cache (system prompt and tools), the second reads it and writes the tool round it adds,
the third reads all of that. Anthropic reports `input_tokens` without the cache tokens; Strands'
provider turns them into `inputTokens` (uncached) plus `cacheRead/WriteInputTokens` and
`totalTokens` counting all four, and its tracer's `gen_ai.usage.input_tokens` adds the cache tokens
back (`telemetry/metrics.py: _total_prompt_tokens`), with the cache tokens beside it under
`gen_ai.usage.cache_read.input_tokens` / `gen_ai.usage.cache_creation.input_tokens` (and the older
`gen_ai.usage.cache_read_input_tokens` / `gen_ai.usage.cache_write_input_tokens`).
(The versions the capture was recorded with are in meta.json.)
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

from tests.captures.recording.session import Recording

SESSION = "strands-anthropic-cache-1"
MODEL = "claude-sonnet-4-5"
REPLIES = [
    # First call: the system prompt and tools go into the cache.
    {"text": "Let me check Paris first.",
     "tool_calls": [{"name": "get_weather", "arguments": {"city": "Paris"}}],
     "input_tokens": 1800, "cache_write_tokens": 1500, "output_tokens": 42},
    # Second: that prefix is read back; the round it added is written.
    {"text": "Now Lyon.",
     "tool_calls": [{"name": "get_weather", "arguments": {"city": "Lyon"}}],
     "input_tokens": 1900, "cache_read_tokens": 1500, "cache_write_tokens": 340, "output_tokens": 38},
    # Third: all of it is read back.
    {"text": "Paris is sunny at 21°C and Lyon is cloudy at 17°C: Paris is warmer.",
     "input_tokens": 2000, "cache_read_tokens": 1840, "cache_write_tokens": 110, "output_tokens": 25},
]
WEATHER = {"Paris": "sunny, 21°C", "Lyon": "cloudy, 17°C"}
# Long enough to be worth caching in a real run (the fake LLM counts what it is told to).
SYSTEM = ("You are a terse weather assistant for a travel agency. Look up every city the user names with "
          "get_weather, one at a time, before answering; compare them in one sentence. " * 8)


def main() -> None:
    capture_dir = Path(__file__).parent
    notes = ("one turn, three streamed Anthropic calls with prompt caching (CacheConfig: system prompt, tools, "
             "last user message): the first writes the cache, the later ones read it and write what they add; "
             "two sequential tool calls, then the answer; Strands' default conventions (span events)")
    with Recording(capture_dir, REPLIES, framework="strands-agents", instrumentation="strands (native)",
                   packages=["strands-agents", "anthropic", "opentelemetry-sdk"], session_id=SESSION,
                   notes=notes) as rec:
        rec.env()
        from strands import Agent, tool
        from strands.models import CacheConfig
        from strands.models.anthropic import AnthropicModel
        from strands.telemetry import StrandsTelemetry

        telemetry = StrandsTelemetry()
        telemetry.setup_otlp_exporter()

        @tool
        def get_weather(city: str) -> str:
            """The weather in a city."""
            return WEATHER[city]

        model = AnthropicModel(client_args={"base_url": rec.base_url.removesuffix("/v1"), "api_key": "sk-ant-fake"},
                               model_id=MODEL, max_tokens=1024,
                               cache_config=CacheConfig(strategy="anthropic", tools_ttl=True))
        agent = Agent(model=model, tools=[get_weather], name="weather-agent", system_prompt=SYSTEM,
                      trace_attributes={"session.id": SESSION}, callback_handler=None)
        agent("Which is warmer right now, Paris or Lyon?")
        rec.flush(telemetry.tracer_provider)


if __name__ == "__main__":
    main()
