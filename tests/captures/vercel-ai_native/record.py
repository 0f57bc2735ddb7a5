"""Re-record: the Vercel AI SDK (npm `ai` 7) with its OpenAI provider, traced by `@ai-sdk/otel`'s LegacyOpenTelemetry.

Needs Node and npm (no Python packages); from the repository root:

    python3 tests/captures/vercel-ai_native/record.py

It writes a small Node script into a temporary directory and, there,
`npm install ai@7.0.185 @ai-sdk/openai@4.0.126 @ai-sdk/otel@1.0.185 zod@4.6.7
@opentelemetry/api@1.9.1 @opentelemetry/sdk-trace-node@2.12.1 @opentelemetry/exporter-trace-otlp-proto@0.223.1`,
then runs it with the Recording's environment: the provider's baseURL is OPENAI_BASE_URL (the
fake LLM; `openai(...)` is the Responses API in @ai-sdk/openai 4), the exporter posts to
OTEL_EXPORTER_OTLP_TRACES_ENDPOINT (the recorder), http/protobuf.

AI SDK 7 has no built-in tracer any more: `registerTelemetry(new LegacyOpenTelemetry(...))` gives
the `ai.*` spans of AI SDK 4-6 (`ai.generateText` -> `ai.generateText.doGenerate` -> `ai.toolCall`).
AI SDK 7 also dropped `telemetry.metadata`: the session id travels as runtime context
(`runtimeContext: {sessionId}` with `telemetry.includeRuntimeContext: {sessionId: true}`), which
LegacyOpenTelemetry writes as `ai.settings.context.sessionId`.

The run: generateText with two tools (`get_weather`, which throws for an unknown city, and
`get_time`); the model calls three tools in parallel in one step (one fails), then answers; then
streamText in the same session, with the first call's messages as history, one tool call, then
the answer. The tracer provider is shut down (flushed) before Node exits. The function calls are scripted with the
ids the real API gives, an item id (`fc_…`) beside the `call_id` (`call_…`) the output names (re-recorded with the
same pins for the ids).
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

from tests.captures.recording.node import npm_install_and_run
from tests.captures.recording.session import Recording

SESSION = "vercel-weather-1"
PINS = {
    "ai": "7.0.185",
    "@ai-sdk/openai": "4.0.126",
    "@ai-sdk/otel": "1.0.185",
    "zod": "4.6.7",
    # @ai-sdk/otel pins @opentelemetry/api 1.9.1: the same copy for the SDK, so that one context
    # manager carries the parent span across awaits.
    "@opentelemetry/api": "1.9.1",
    "@opentelemetry/sdk-trace-node": "2.12.1",
    "@opentelemetry/exporter-trace-otlp-proto": "0.223.1",
}
# Each function call with the two ids the real Responses API gives it: its item's own id (`fc_…`) and the
# `call_id` (`call_…`) that the `function_call_output` answering it names.
REPLIES = [
    {"tool_calls": [{"name": "get_weather", "arguments": {"city": "Paris"},
                     "id": "call_Vx7wthrParis1", "item_id": "fc_68b2wthrParis1"},
                    {"name": "get_weather", "arguments": {"city": "Atlantis"},
                     "id": "call_Vx7wthrAtlnt1", "item_id": "fc_68b2wthrAtlnt1"},
                    {"name": "get_time", "arguments": {"city": "Paris"},
                     "id": "call_Vx7timeParis1", "item_id": "fc_68b2timeParis1"}]},
    {"text": "Paris is sunny at 21°C and it is 14:05 there; I could not find Atlantis."},
    {"tool_calls": [{"name": "get_weather", "arguments": {"city": "Berlin"},
                     "id": "call_Vx7wthrBerln1", "item_id": "fc_68b2wthrBerln1"}], "when": "Berlin"},
    {"text": "Berlin is cloudy at 17°C."},
]

SCRIPT = r"""
import { generateText, streamText, tool, stepCountIs, registerTelemetry } from 'ai';
import { createOpenAI } from '@ai-sdk/openai';
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

const openai = createOpenAI({ baseURL: process.env.OPENAI_BASE_URL, apiKey: process.env.OPENAI_API_KEY });
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
const common = {
  model: openai('gpt-4o'),
  system: 'You are a terse weather assistant.',
  tools,
  stopWhen: stepCountIs(5),
  runtimeContext: { sessionId: SESSION },
  telemetry: { isEnabled: true, functionId: 'weather-agent', includeRuntimeContext: { sessionId: true } },
};

try {
  const first = await generateText({ ...common, prompt: 'Weather and time in Paris, and the weather in Atlantis?' });
  console.log('generateText:', first.steps.length, 'steps:', first.text);
  const second = streamText({
    ...common,
    messages: [
      { role: 'user', content: 'Weather and time in Paris, and the weather in Atlantis?' },
      ...first.responseMessages,  // every step's messages (AI SDK 7; `response.messages` is the last step's)
      { role: 'user', content: 'And in Berlin?' },
    ],
  });
  let streamed = '';
  for await (const chunk of second.textStream) streamed += chunk;
  console.log('streamText:', (await second.steps).length, 'steps:', streamed);
} finally {
  await provider.shutdown();  // flushes the batch processor
}
"""


def main() -> None:
    capture_dir = Path(__file__).parent
    notes = ("generateText: three parallel tool calls in one step (get_weather x2, one throwing for an unknown "
             "city, get_time), then the answer; then streamText in the same session with that history, one tool "
             "call, then the answer. @ai-sdk/otel LegacyOpenTelemetry (ai.* spans); session id from runtime "
             "context (ai.settings.context.sessionId); function_call item ids (fc_) distinct from their call_ids "
             "(call_)")
    with Recording(capture_dir, REPLIES, framework="vercel-ai-sdk",
                   instrumentation="@ai-sdk/otel LegacyOpenTelemetry", packages=list(PINS),
                   session_id=SESSION, notes=notes) as rec:
        npm_install_and_run(rec, PINS, SCRIPT, env={"CAPTURE_SESSION_ID": SESSION})


if __name__ == "__main__":
    main()
