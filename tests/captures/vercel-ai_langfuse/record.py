"""Re-record: the Vercel AI SDK (npm `ai` 7) with its OpenAI provider, traced into Langfuse the way Langfuse documents
it for AI SDK 7: `@langfuse/vercel-ai-sdk`'s `LangfuseVercelAiSdkIntegration` and `@langfuse/otel`'s
`LangfuseSpanProcessor`, the session from `@langfuse/tracing`'s `propagateAttributes`.

Needs Node and npm (no Python packages); from the repository root:

    python3 tests/captures/vercel-ai_langfuse/record.py

It writes a small Node script into a temporary directory and, there,
`npm install ai@7.0.185 @ai-sdk/openai@4.0.126 @langfuse/vercel-ai-sdk@5.11.1 @langfuse/otel@5.11.1
@langfuse/tracing@5.11.1 zod@4.6.7 @opentelemetry/api@1.9.1 @opentelemetry/sdk-trace-node@2.12.1` (the newest
releases; `@opentelemetry/sdk-node`, which Langfuse's page starts, is at OpenTelemetry JS 3 today, which
`@langfuse/otel`'s peers (`sdk-trace-base` ^2) do not accept, so the tracer provider is `NodeTracerProvider`, the
setup Langfuse's page gives for Next.js), then runs it with the Recording's environment: the provider's baseURL is
OPENAI_BASE_URL (the fake LLM; `openai(...)` is the Responses API in @ai-sdk/openai 4), and Langfuse's processor
posts to `{LANGFUSE_BASE_URL}/api/public/otel/v1/traces` (the recorder) with basic auth from fake keys, as OTLP/JSON
(its exporter is `@opentelemetry/exporter-trace-otlp-http`). `@langfuse/vercel-ai-sdk` declares Node 22 or later;
it was recorded on Node 20 (npm warns, the integration runs).

What Langfuse adds to the AI SDK's own spans: the integration is `@ai-sdk/otel`'s GenAI-conventions `OpenTelemetry`
(`invoke_agent` -> `step <n>` -> `chat <model>` and `execute_tool <name>`) with an `enrichSpan` writing the call's
runtime context as `langfuse.observation.metadata.<key>`; the processor adds the propagated trace attributes
(`session.id`, `user.id`, `langfuse.trace.name`, `langfuse.trace.tags`, `langfuse.trace.metadata.*`) to every span
(`langfuse.environment` and `langfuse.release` too when set; not here), and marks the first exported span of a trace
`langfuse.internal.is_app_root`.
No span carries `ai.settings.context.sessionId` here: the session is Langfuse's `session.id` alone.

Why: Langfuse is the tracing most AI SDK users pick, and this is its current (AI SDK 7) integration; the corpus had
the AI SDK only under its own exporters and Langfuse only from Python.

The run (the `vercel-ai_native` loop, for comparison): each turn inside `propagateAttributes({sessionId, userId,
traceName, tags, metadata})`; generateText with two tools (`get_weather`, which throws for an unknown city, and
`get_time`), `stopWhen: stepCountIs(5)`: the model calls three tools in parallel in one step (Atlantis throws), then
answers; then streamText in the same session, with the first call's messages as history, one tool call, then the
answer. `runtimeContext: {feature}` with `includeRuntimeContext` (Langfuse's page: route or feature metadata). The
tracer provider is shut down (flushed) before Node exits. The function calls are scripted with the two ids the real
API gives (`with_api_call_ids`): the item's `fc_…` and the `call_id` (`call_…`) the output names.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

from tests.captures.recording.node import npm_install_and_run
from tests.captures.recording.openai_agents_travel import with_api_call_ids
from tests.captures.recording.session import Recording

SESSION = "vercel-langfuse-weather-1"
PINS = {
    "ai": "7.0.185",
    "@ai-sdk/openai": "4.0.126",
    "@langfuse/vercel-ai-sdk": "5.11.1",
    "@langfuse/otel": "5.11.1",
    "@langfuse/tracing": "5.11.1",
    "zod": "4.6.7",
    # @ai-sdk/otel (under @langfuse/vercel-ai-sdk) pins @opentelemetry/api 1.9.1: the same copy for the SDK, so that
    # one context manager carries the parent span (and Langfuse's propagated attributes) across awaits.
    "@opentelemetry/api": "1.9.1",
    "@opentelemetry/sdk-trace-node": "2.12.1",
}
REPLIES = with_api_call_ids([
    {"tool_calls": [{"name": "get_weather", "arguments": {"city": "Paris"}},
                    {"name": "get_weather", "arguments": {"city": "Atlantis"}},
                    {"name": "get_time", "arguments": {"city": "Paris"}}]},
    {"text": "Paris is sunny at 21°C and it is 14:05 there; I could not find Atlantis."},
    {"tool_calls": [{"name": "get_weather", "arguments": {"city": "Berlin"}}], "when": "Berlin"},
    {"text": "Berlin is cloudy at 17°C."},
], SESSION)

SCRIPT = r"""
import { generateText, streamText, tool, stepCountIs, registerTelemetry } from 'ai';
import { createOpenAI } from '@ai-sdk/openai';
import { LangfuseSpanProcessor } from '@langfuse/otel';
import { LangfuseVercelAiSdkIntegration } from '@langfuse/vercel-ai-sdk';
import { propagateAttributes } from '@langfuse/tracing';
import { NodeTracerProvider } from '@opentelemetry/sdk-trace-node';
import { z } from 'zod';

const SESSION = process.env.CAPTURE_SESSION_ID;
// Host and keys from LANGFUSE_BASE_URL / LANGFUSE_PUBLIC_KEY / LANGFUSE_SECRET_KEY.
const langfuse = new LangfuseSpanProcessor();
const provider = new NodeTracerProvider({ spanProcessors: [langfuse] });
provider.register();
registerTelemetry(new LangfuseVercelAiSdkIntegration());

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
  runtimeContext: { feature: 'weather-chat' },
  telemetry: { isEnabled: true, functionId: 'weather-agent', includeRuntimeContext: { feature: true } },
};
const trace = { sessionId: SESSION, userId: 'user-1', traceName: 'weather-chat', tags: ['capture'],
                metadata: { channel: 'cli' } };

try {
  const question = 'Weather and time in Paris, and the weather in Atlantis?';
  const first = await propagateAttributes(trace, () => generateText({ ...common, prompt: question }));
  console.log('generateText:', first.steps.length, 'steps:', first.text);
  const streamed = await propagateAttributes(trace, async () => {
    const second = streamText({
      ...common,
      messages: [
        { role: 'user', content: question },
        ...first.responseMessages,  // every step's messages (AI SDK 7; `response.messages` is the last step's)
        { role: 'user', content: 'And in Berlin?' },
      ],
    });
    let text = '';
    for await (const chunk of second.textStream) text += chunk;
    console.log('streamText:', (await second.steps).length, 'steps');
    return text;
  });
  console.log('streamed:', streamed);
} finally {
  await provider.shutdown();  // flushes Langfuse's processor (its batch exporter)
}
"""


def main() -> None:
    capture_dir = Path(__file__).parent
    notes = ("generateText: three parallel tool calls in one step (get_weather x2, one throwing for an unknown "
             "city, get_time), then the answer; then streamText in the same session with that history, one tool "
             "call, then the answer. @langfuse/vercel-ai-sdk LangfuseVercelAiSdkIntegration (@ai-sdk/otel "
             "OpenTelemetry: invoke_agent / step / chat / execute_tool spans) exported by @langfuse/otel "
             "LangfuseSpanProcessor (OTLP/JSON to /api/public/otel/v1/traces); session and user from "
             "@langfuse/tracing propagateAttributes (session.id, user.id on every span); runtime context `feature` "
             "as langfuse.observation.metadata.feature; function_call item ids (fc_) distinct from their call_ids")
    with Recording(capture_dir, REPLIES, framework="vercel-ai-sdk",
                   instrumentation="@langfuse/vercel-ai-sdk + @langfuse/otel LangfuseSpanProcessor",
                   packages=list(PINS), session_id=SESSION, notes=notes) as rec:
        npm_install_and_run(rec, PINS, SCRIPT, env={
            "CAPTURE_SESSION_ID": SESSION, "LANGFUSE_BASE_URL": rec.otlp_endpoint,
            "LANGFUSE_PUBLIC_KEY": "pk-lf-fake", "LANGFUSE_SECRET_KEY": "sk-lf-fake"})


if __name__ == "__main__":
    main()
