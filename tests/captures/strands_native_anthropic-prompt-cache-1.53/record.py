"""Re-record: Strands Agents 1.53 (the last release whose tracer writes cache tokens under legacy names only)
with its AnthropicModel provider and prompt caching, traced by Strands' own OpenTelemetry.

    python3 -m venv /tmp/cap44-strands-old && /tmp/cap44-strands-old/bin/pip install \
        'strands-agents[anthropic]==1.53.0' anthropic==0.125.0 \
        opentelemetry-sdk==1.45.1 opentelemetry-exporter-otlp-proto-http==1.45.1
    /tmp/cap44-strands-old/bin/python tests/captures/strands_native_anthropic-prompt-cache-1.53/record.py

Caching is on for the static prefix only, the way Strands 1.53 documents it: a `cachePoint` block
after the system prompt (`Agent(system_prompt=[{"text": …}, {"cachePoint": …}])`) and
`AnthropicModel(cache_tools="default")` put `cache_control` on the system prompt's end and the tool
definitions (no `cache_config`, so the conversation itself is not cached; the fake LLM ignores the
markers). One turn, three streamed `messages` calls: the first writes the prefix to the cache, the
second and third read it back, and the third's uncached part (a long tool result, 3500 tokens) is
larger than what it reads (1500). Anthropic reports `input_tokens` without the cache tokens, and
Strands 1.53 passes that on unchanged: its provider's `inputTokens` is Anthropic's `input_tokens`
and `totalTokens` is `input_tokens + output_tokens` (models/anthropic.py, `format_chunk`
"metadata"); its tracer writes `gen_ai.usage.input_tokens` / `gen_ai.usage.prompt_tokens` =
`usage["inputTokens"]` (telemetry/tracer.py, `end_model_invoke_span`), with the cache tokens beside
them only as `gen_ai.usage.cache_read_input_tokens` / `gen_ai.usage.cache_write_input_tokens`
(`_add_optional_usage_and_metrics_attributes`). 1.54 added the `gen_ai.usage.cache_read.input_tokens`
/ `cache_creation.input_tokens` names and `_total_prompt_tokens` (which adds the cache tokens only
when `inputTokens + outputTokens != totalTokens`, so not for AnthropicModel); 1.57.2 made
AnthropicModel's `totalTokens` count them. See tests/captures/strands_native_anthropic-prompt-cache
for 1.62.
(The versions the capture was recorded with are in meta.json.)
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

from tests.captures.recording.session import Recording

SESSION = "strands-anthropic-cache-153"
MODEL = "claude-sonnet-4-5"
# input_tokens count every prompt token, cached or not (the fake LLM reports Anthropic's uncached part).
REPLIES = [
    # First call: the system prompt and tools go into the cache (300 uncached).
    {"text": "Let me pull the Paris forecast first.",
     "tool_calls": [{"name": "get_forecast", "arguments": {"city": "Paris"}}],
     "input_tokens": 1800, "cache_write_tokens": 1500, "output_tokens": 42},
    # Second: that prefix is read back; the first tool round is not cached (400 uncached).
    {"text": "Now Lyon.",
     "tool_calls": [{"name": "get_forecast", "arguments": {"city": "Lyon"}}],
     "input_tokens": 1900, "cache_read_tokens": 1500, "output_tokens": 38},
    # Third: the prefix is read back; both tool rounds, with the long Lyon forecast, are not:
    # 3500 uncached tokens, more than the 1500 read (the weak case for a "prompt smaller than its
    # cache tokens" rule).
    {"text": "Paris will be warmer: 21°C and sunny against Lyon's 17°C and cloudy.",
     "input_tokens": 5000, "cache_read_tokens": 1500, "output_tokens": 25},
]
FORECAST = {"Paris": "sunny, 21°C",
            "Lyon": "cloudy, 17°C. " + "Hourly: cloudy, light wind from the north-west, 17°C. " * 60}
# Long enough to be worth caching in a real run (the fake LLM counts what it is told to).
SYSTEM = ("You are a terse weather assistant for a travel agency. Look up every city the user names with "
          "get_forecast, one at a time, before answering; compare them in one sentence. " * 8)


def main() -> None:
    capture_dir = Path(__file__).parent
    notes = ("Strands 1.53 (prompt tokens as Anthropic reports them, without cache tokens; cache writes only "
             "as gen_ai.usage.cache_write_input_tokens): one turn, three streamed Anthropic calls with prompt "
             "caching of the system prompt (cachePoint block) and tools (cache_tools): the first writes the "
             "cache, the second reads it, the third reads 1500 while 3500 of its prompt (a long tool result) are "
             "uncached; two sequential tool calls, then the answer; Strands' default conventions (span events)")
    with Recording(capture_dir, REPLIES, framework="strands-agents", instrumentation="strands (native)",
                   packages=["strands-agents", "anthropic", "opentelemetry-sdk"], session_id=SESSION,
                   notes=notes) as rec:
        rec.env()
        from strands import Agent, tool
        from strands.models.anthropic import AnthropicModel
        from strands.telemetry import StrandsTelemetry

        telemetry = StrandsTelemetry()
        telemetry.setup_otlp_exporter()

        @tool
        def get_forecast(city: str) -> str:
            """Today's forecast for a city."""
            return FORECAST[city]

        model = AnthropicModel(client_args={"base_url": rec.base_url.removesuffix("/v1"), "api_key": "sk-ant-fake"},
                               model_id=MODEL, max_tokens=1024, cache_tools="default")
        agent = Agent(model=model, tools=[get_forecast], name="weather-agent",
                      system_prompt=[{"text": SYSTEM}, {"cachePoint": {"type": "default"}}],
                      trace_attributes={"session.id": SESSION}, callback_handler=None)
        agent("Which will be warmer today, Paris or Lyon?")
        rec.flush(telemetry.tracer_provider)


if __name__ == "__main__":
    main()
