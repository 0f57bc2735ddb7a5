"""Re-record: the Vercel AI SDK (npm `ai` 7), Anthropic provider, prompt caching, streamed; traced by `@ai-sdk/otel`.

Needs Node and npm (no Python packages); from the repository root:

    python3 tests/captures/vercel-ai_native_anthropic-prompt-cache-streamed/record.py

It writes a small Node script into a temporary directory and, there,
`npm install ai@7.0.185 @ai-sdk/anthropic@4.0.112 @ai-sdk/otel@1.0.185 zod@4.6.7
@opentelemetry/api@1.9.1 @opentelemetry/sdk-trace-node@2.12.1 @opentelemetry/exporter-trace-otlp-proto@0.223.1`
(@ai-sdk/anthropic 4.0.112 depends on the same @ai-sdk/provider 4.0.39 and provider-utils 5.0.86 as
ai 7.0.185), then runs it with the Recording's environment: the provider's baseURL is
ANTHROPIC_BASE_URL + `/v1` (the fake LLM's `messages` endpoint), the exporter posts to
OTEL_EXPORTER_OTLP_TRACES_ENDPOINT (the recorder), http/protobuf.

As in `vercel-ai_native`: `registerTelemetry(new LegacyOpenTelemetry(...))` gives the `ai.*` spans
(`ai.streamText` -> `ai.streamText.doStream` -> `ai.toolCall`), and the session id is runtime context
(`runtimeContext: {sessionId}`, `telemetry.includeRuntimeContext: {sessionId: true}`), written as
`ai.settings.context.sessionId`.

Caching is on the way the Anthropic provider documents it: the instructions (AI SDK 7's `system`) are a
system message with `providerOptions: {anthropic: {cacheControl: {type: 'ephemeral'}}}`, which the
provider sends as `cache_control` on the system block (the fake LLM ignores the marker). The cached
prefix is then the tools and the system prompt: the first call writes it, every later one reads it.
Anthropic reports `input_tokens` without the cache tokens; @ai-sdk/anthropic's `convertAnthropicUsage`
makes `inputTokens.total` all of them, `noCache` / `cacheRead` / `cacheWrite` the parts.

The run: two turns of streamText in one session, `stopWhen: stepCountIs(5)`, two tools (`get_weather`,
which throws for an unknown city, and `get_time`). Turn one: text and three parallel tool calls (one
fails), then the answer. Turn two, with turn one's messages as history: one tool call, then the answer.
The tracer provider is shut down (flushed) before Node exits.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

from tests.captures.recording.node import npm_install_and_run
from tests.captures.recording.session import Recording

SESSION = "vercel-anthropic-cache-1"
MODEL = "claude-sonnet-4-5"
PINS = {
    "ai": "7.0.185",
    "@ai-sdk/anthropic": "4.0.112",
    "@ai-sdk/otel": "1.0.185",
    "zod": "4.6.7",
    # @ai-sdk/otel pins @opentelemetry/api 1.9.1: the same copy for the SDK, so that one context
    # manager carries the parent span across awaits.
    "@opentelemetry/api": "1.9.1",
    "@opentelemetry/sdk-trace-node": "2.12.1",
    "@opentelemetry/exporter-trace-otlp-proto": "0.223.1",
}
REPLIES = [
    # Turn one, first call: the tools and the system prompt go into the cache.
    {"text": "Let me look those up.",
     "tool_calls": [{"name": "get_weather", "arguments": {"city": "Paris"}},
                    {"name": "get_weather", "arguments": {"city": "Atlantis"}},
                    {"name": "get_time", "arguments": {"city": "Paris"}}],
     "input_tokens": 1900, "cache_write_tokens": 1800, "output_tokens": 88},
    # The answer: the cached prefix read back.
    {"text": "Paris is sunny at 21°C and it is 14:05 there; I could not find Atlantis.",
     "input_tokens": 2080, "cache_read_tokens": 1800, "output_tokens": 27},
    # Turn two, with turn one as history.
    {"tool_calls": [{"name": "get_weather", "arguments": {"city": "Berlin"}}], "when": "Berlin",
     "input_tokens": 2150, "cache_read_tokens": 1800, "output_tokens": 36},
    {"text": "Berlin is cloudy at 17°C.",
     "input_tokens": 2230, "cache_read_tokens": 1800, "output_tokens": 12},
]

SCRIPT = r"""
import { streamText, tool, stepCountIs, registerTelemetry } from 'ai';
import { createAnthropic } from '@ai-sdk/anthropic';
import { LegacyOpenTelemetry } from '@ai-sdk/otel';
import { NodeTracerProvider, BatchSpanProcessor } from '@opentelemetry/sdk-trace-node';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { z } from 'zod';

const SESSION = process.env.CAPTURE_SESSION_ID;
const provider = new NodeTracerProvider({
  spanProcessors: [new BatchSpanProcessor(new OTLPTraceExporter())],  // endpoint from OTEL_EXPORTER_OTLP_*
});
provider.register();
registerTelemetry(new LegacyOpenTelemetry({ tracer: provider.getTracer('ai') }));

const anthropic = createAnthropic({
  baseURL: process.env.ANTHROPIC_BASE_URL + '/v1',
  apiKey: process.env.ANTHROPIC_API_KEY,
});
const WEATHER = { Paris: 'sunny, 21°C', Berlin: 'cloudy, 17°C' };
const tools = {
  get_weather: tool({
    description: 'The weather in a city.',
    inputSchema: z.object({ city: z.string() }),
    execute: async ({ city }) => {
      if (!(city in WEATHER)) throw new Error(`unknown city: ${city}`);
      return WEATHER[city];
    },
  }),
  get_time: tool({
    description: 'The local time in a city.',
    inputSchema: z.object({ city: z.string() }),
    execute: async ({ city }) => ({ city, time: '14:05' }),
  }),
};
// Long enough to be worth caching in a real run (the fake LLM counts what it is told to).
const SYSTEM = ('You are a terse weather assistant for a travel agency. Look up every city the user names '
  + 'with the tools, all at once, before answering in one sentence. ').repeat(8);
const common = {
  model: anthropic(process.env.CAPTURE_MODEL),
  // The Anthropic provider's prompt caching: a cache breakpoint after the system prompt.
  instructions: {
    role: 'system',
    content: SYSTEM,
    providerOptions: { anthropic: { cacheControl: { type: 'ephemeral' } } },
  },
  tools,
  stopWhen: stepCountIs(5),
  runtimeContext: { sessionId: SESSION },
  telemetry: { isEnabled: true, functionId: 'weather-agent', includeRuntimeContext: { sessionId: true } },
};

async function run(options) {
  const result = streamText({ ...common, ...options });
  let streamed = '';
  for await (const chunk of result.textStream) streamed += chunk;
  console.log('streamText:', (await result.steps).length, 'steps:', streamed);
  return result;
}

try {
  const question = 'Weather and time in Paris, and the weather in Atlantis?';
  const first = await run({ prompt: question });
  await run({
    messages: [
      { role: 'user', content: question },
      ...(await first.responseMessages),  // every step's messages
      { role: 'user', content: 'And in Berlin?' },
    ],
  });
} finally {
  await provider.shutdown();  // flushes the batch processor
}
"""


def main() -> None:
    capture_dir = Path(__file__).parent
    notes = ("two turns of streamText on the Anthropic provider (claude-sonnet-4-5, streamed messages) in one "
             "session, the system prompt cached (providerOptions.anthropic.cacheControl ephemeral): the first call "
             "writes the cache, the later ones read it; turn one text and three parallel tool calls (get_weather x2, "
             "one throwing for an unknown city, get_time), then the answer; turn two with that history, one tool "
             "call, then the answer. @ai-sdk/otel LegacyOpenTelemetry (ai.* spans); session id from runtime "
             "context (ai.settings.context.sessionId)")
    with Recording(capture_dir, REPLIES, framework="vercel-ai-sdk",
                   instrumentation="@ai-sdk/otel LegacyOpenTelemetry", packages=list(PINS),
                   session_id=SESSION, notes=notes) as rec:
        npm_install_and_run(rec, PINS, SCRIPT, env={"CAPTURE_SESSION_ID": SESSION, "CAPTURE_MODEL": MODEL})


if __name__ == "__main__":
    main()
