"""Re-record: the Vercel AI SDK (npm `ai` 7), Anthropic provider with extended thinking; traced by `@ai-sdk/otel`.

Needs Node and npm (no Python packages); from the repository root:

    python3 tests/captures/vercel-ai_native_reasoning/record.py

It writes a small Node script into a temporary directory and, there,
`npm install ai@7.0.185 @ai-sdk/anthropic@4.0.112 @ai-sdk/otel@1.0.185 zod@4.6.7
@opentelemetry/api@1.9.1 @opentelemetry/sdk-trace-node@2.12.1 @opentelemetry/exporter-trace-otlp-proto@0.223.1`
(the newest releases of the three `ai` packages), then runs it with the Recording's environment: the provider's
baseURL is ANTHROPIC_BASE_URL + `/v1` (the fake LLM's `messages` endpoint), the exporter posts to
OTEL_EXPORTER_OTLP_TRACES_ENDPOINT (the recorder), http/protobuf.

As in `vercel-ai_native`: `registerTelemetry(new LegacyOpenTelemetry(...))` gives the `ai.*` spans
(`ai.generateText` -> `ai.generateText.doGenerate` -> `ai.toolCall`, the same under `ai.streamText`). AI SDK 7
has no `experimental_telemetry.metadata` any more: the session id is runtime context (`runtimeContext:
{sessionId}`, `telemetry.includeRuntimeContext: {sessionId: true}`), written as `ai.settings.context.sessionId`.

Extended thinking is on the way the Anthropic provider documents it: `providerOptions: {anthropic: {thinking:
{type: 'enabled', budgetTokens: 2048}}}` on every call. The model thinks before each answer (the fake LLM's
`thinking` blocks, a `thinking_delta` and a `signature_delta` when streamed), distinct text each call, and its
usage reports how many output tokens were thinking (`output_tokens_details.thinking_tokens`). The SDK records
the thinking as `ai.response.reasoning`, and re-sends it (a `reasoning` part with its signature in
`providerOptions.anthropic`) in the next step's `ai.prompt.messages`, so the history is replayed with it.

The run: turn one is generateText, `stopWhen: stepCountIs(5)`, two tools (`get_weather`, which throws for an
unknown city, and `get_time`): the model thinks, says a line and calls three tools in parallel (one throws),
thinks again and retries the failed city under another name, then answers. Turn two is streamText in the same
session, with turn one's messages (its `responseMessages`: every step's, thinking included) as history: one
tool call, then the answer. Five LLM calls. The tracer provider is shut down (flushed) before Node exits.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

from tests.captures.recording.node import npm_install_and_run
from tests.captures.recording.session import Recording

SESSION = "vercel-anthropic-thinking-1"
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
    # Turn one (generateText).
    {"reasoning": "Three lookups are needed: weather for Paris and Atlantis, time for Paris. They are "
                  "independent, so I can request all of them at once.",
     "text": "Let me look those up.",
     "tool_calls": [{"name": "get_weather", "arguments": {"city": "Paris"}},
                    {"name": "get_weather", "arguments": {"city": "Atlantis"}},
                    {"name": "get_time", "arguments": {"city": "Paris"}}],
     "output_tokens": 120, "reasoning_tokens": 41},
    {"reasoning": "The weather service does not know Atlantis. The user probably means the Atlantis resort, "
                  "which is in Nassau; retry there.",
     "tool_calls": [{"name": "get_weather", "arguments": {"city": "Nassau"}}],
     "when": "unknown city", "output_tokens": 64, "reasoning_tokens": 38},
    {"reasoning": "I now have Paris weather and time, and Nassau's weather stands in for Atlantis. One "
                  "sentence answers it.",
     "text": "Paris is sunny at 21°C and it is 14:05 there; Atlantis (the resort in Nassau) is humid at 29°C.",
     "output_tokens": 70, "reasoning_tokens": 33},
    # Turn two (streamText), with turn one as history.
    {"reasoning": "A follow-up about Berlin: only its weather is asked for, one lookup.",
     "tool_calls": [{"name": "get_weather", "arguments": {"city": "Berlin"}}],
     "when": "Berlin", "output_tokens": 40, "reasoning_tokens": 22},
    {"reasoning": "Berlin's weather came back cloudy and 17°C; answer briefly.",
     "text": "Berlin is cloudy at 17°C.",
     "output_tokens": 30, "reasoning_tokens": 18},
]

SCRIPT = r"""
import { generateText, streamText, tool, stepCountIs, registerTelemetry } from 'ai';
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
const WEATHER = { Paris: 'sunny, 21°C', Nassau: 'humid, 29°C', Berlin: 'cloudy, 17°C' };
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
const common = {
  model: anthropic(process.env.CAPTURE_MODEL),
  instructions: 'You are a terse weather assistant. Look up every city the user names, all at once.',
  tools,
  stopWhen: stepCountIs(5),
  // Extended thinking, as the Anthropic provider documents it.
  providerOptions: { anthropic: { thinking: { type: 'enabled', budgetTokens: 2048 } } },
  runtimeContext: { sessionId: SESSION },
  telemetry: { isEnabled: true, functionId: 'weather-agent', includeRuntimeContext: { sessionId: true } },
};

try {
  const question = 'Weather and time in Paris, and the weather in Atlantis?';
  const first = await generateText({ ...common, prompt: question });
  console.log('generateText:', first.steps.length, 'steps:', first.text);
  console.log('reasoning:', JSON.stringify(first.steps.map((s) => s.reasoningText)));
  const second = streamText({
    ...common,
    messages: [
      { role: 'user', content: question },
      ...first.responseMessages,  // every step's messages, the thinking with its signature included
      { role: 'user', content: 'And in Berlin?' },
    ],
  });
  let streamed = '';
  for await (const chunk of second.textStream) streamed += chunk;
  console.log('streamText:', (await second.steps).length, 'steps:', streamed);
  console.log('reasoning:', JSON.stringify((await second.steps).map((s) => s.reasoningText)));
} finally {
  await provider.shutdown();  // flushes the batch processor
}
"""


def main() -> None:
    capture_dir = Path(__file__).parent
    notes = ("the Anthropic provider (claude-sonnet-4-5) with extended thinking (providerOptions.anthropic.thinking "
             "enabled, budgetTokens 2048), the model thinking before every answer (distinct text each call, "
             "thinking tokens in its usage). Turn one, generateText: text and three parallel tool calls (get_weather "
             "x2, one throwing for an unknown city, get_time), a retry of the failed city under another name, then "
             "the answer; turn two, streamText in the same session with turn one's messages (thinking and "
             "signatures re-sent) as history: one tool call, then the answer. @ai-sdk/otel LegacyOpenTelemetry "
             "(ai.* spans); session id from runtime context (ai.settings.context.sessionId)")
    with Recording(capture_dir, REPLIES, framework="vercel-ai-sdk",
                   instrumentation="@ai-sdk/otel LegacyOpenTelemetry", packages=list(PINS),
                   session_id=SESSION, notes=notes) as rec:
        npm_install_and_run(rec, PINS, SCRIPT, env={"CAPTURE_SESSION_ID": SESSION, "CAPTURE_MODEL": MODEL})


if __name__ == "__main__":
    main()
