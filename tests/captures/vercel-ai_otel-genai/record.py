"""Re-record: the Vercel AI SDK (npm `ai` 7), OpenAI Responses provider on o4-mini with reasoning summaries; traced by
`@ai-sdk/otel`'s GenAI semantic-conventions integration (`OpenTelemetry`, not `LegacyOpenTelemetry`).

Needs Node and npm (no Python packages); from the repository root:

    python3 tests/captures/vercel-ai_otel-genai/record.py

It writes a small Node script into a temporary directory and, there,
`npm install ai@7.0.185 @ai-sdk/openai@4.0.126 @ai-sdk/otel@1.0.185 zod@4.6.7
@opentelemetry/api@1.9.1 @opentelemetry/sdk-trace-node@2.12.1 @opentelemetry/exporter-trace-otlp-proto@0.223.1`
(the newest releases of the three `ai` packages), then runs it with the Recording's environment: the provider's
baseURL is OPENAI_BASE_URL (the fake LLM's `responses` endpoint), the exporter posts to
OTEL_EXPORTER_OTLP_TRACES_ENDPOINT (the recorder), http/protobuf.

The integration is set up as the AI SDK's telemetry docs show it: the tracer provider registered globally, then
`registerTelemetry(new OpenTelemetry({...}))` (its tracer `trace.getTracer('gen_ai')`). Its spans follow the GenAI
conventions: `invoke_agent o4-mini` (one a generateText / streamText) -> `step <n>` (`gen_ai.operation.name`
`agent_step`) -> `chat o4-mini` (one an LLM call: `gen_ai.input.messages`, `gen_ai.output.messages` with `reasoning`
parts, usage) and `execute_tool <name>` (a sibling of the chat span, under the step). Two of its documented
supplemental options are on: `runtimeContext: true`, without which no span names the session (AI SDK 7 has no
telemetry metadata: the session id is runtime context, `runtimeContext: {sessionId}` with
`telemetry.includeRuntimeContext: {sessionId: true}`, written as `ai.settings.context.sessionId` on the run and step
spans), and `usage: true`, without which no span says how many output tokens were reasoning (the conventions' usage
attributes it writes are input, output and cache tokens; the breakdown is `ai.usage.outputTokenDetails.*`).

Reasoning is on the way the OpenAI provider documents it: `openai.responses('o4-mini')` with `providerOptions:
{openai: {reasoningEffort: 'medium', reasoningSummary: 'auto'}}` on every call. The model reasons before each answer
(the fake LLM's Responses `reasoning` item with a `summary_text`, streamed as `reasoning_summary_text` deltas),
distinct text each call, and its usage reports how many output tokens were reasoning
(`output_tokens_details.reasoning_tokens`). The SDK re-sends each earlier answer's reasoning in the next request (an
`item_reference` to the stored item, the Responses API storing responses by default).

The run: turn one is generateText, `stopWhen: stepCountIs(5)`, two tools (`get_weather`, which throws for an unknown
city, and `get_time`): the model reasons, says a line and calls three tools in parallel (the last throws), reasons again
and retries the failed city under another name, then answers. Turn two is streamText in the same session, with turn
one's messages (its `responseMessages`: every step's, reasoning included) as history: one tool call, then the answer.
Five LLM calls. The tracer provider is shut down (flushed) before Node exits. Every function call is scripted with
the two ids the real Responses API gives it (`with_api_call_ids`): its `call_id` (`call_…`, which the
`function_call_output` the provider sends back names) and its item's own `id` (`fc_…`); first recorded with one value
for both, re-recorded with the same pins for the two.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

from tests.captures.recording.node import npm_install_and_run
from tests.captures.recording.openai_agents_travel import with_api_call_ids
from tests.captures.recording.session import Recording

SESSION = "vercel-otel-genai-reasoning-1"
MODEL = "o4-mini"
PINS = {
    "ai": "7.0.185",
    "@ai-sdk/openai": "4.0.126",
    "@ai-sdk/otel": "1.0.185",
    "zod": "4.6.7",
    # @ai-sdk/otel pins @opentelemetry/api 1.9.1: the same copy for the SDK, so that its global tracer provider is
    # the one registered here and one context manager carries the parent span across awaits.
    "@opentelemetry/api": "1.9.1",
    "@opentelemetry/sdk-trace-node": "2.12.1",
    "@opentelemetry/exporter-trace-otlp-proto": "0.223.1",
}
REPLIES = with_api_call_ids([
    # Turn one (generateText).
    {"reasoning": "Three lookups are needed: weather for Paris and Atlantis, time for Paris. They are "
                  "independent, so I can request all of them at once.",
     "text": "Let me look those up.",
     # Atlantis last: each result is an input item of its own, and the retry's reply waits for its error.
     "tool_calls": [{"name": "get_weather", "arguments": {"city": "Paris"}},
                    {"name": "get_time", "arguments": {"city": "Paris"}},
                    {"name": "get_weather", "arguments": {"city": "Atlantis"}}],
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
], SESSION)

SCRIPT = r"""
import { generateText, streamText, tool, stepCountIs, registerTelemetry } from 'ai';
import { createOpenAI } from '@ai-sdk/openai';
import { OpenTelemetry } from '@ai-sdk/otel';
import { NodeTracerProvider, BatchSpanProcessor } from '@opentelemetry/sdk-trace-node';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { z } from 'zod';

const SESSION = process.env.CAPTURE_SESSION_ID;
const provider = new NodeTracerProvider({
  spanProcessors: [new BatchSpanProcessor(new OTLPTraceExporter())],  // endpoint from OTEL_EXPORTER_OTLP_*
});
provider.register();
// The GenAI-conventions integration, on the global tracer provider; runtime context (the session id) and the
// usage breakdown (reasoning tokens) are supplemental attributes, off unless asked for.
registerTelemetry(new OpenTelemetry({ runtimeContext: true, usage: true }));

const openai = createOpenAI({ baseURL: process.env.OPENAI_BASE_URL, apiKey: process.env.OPENAI_API_KEY });
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
  model: openai.responses(process.env.CAPTURE_MODEL),
  instructions: 'You are a terse weather assistant. Look up every city the user names, all at once.',
  tools,
  stopWhen: stepCountIs(5),
  // Reasoning with its summary, as the OpenAI provider documents it.
  providerOptions: { openai: { reasoningEffort: 'medium', reasoningSummary: 'auto' } },
  runtimeContext: { sessionId: SESSION },
  telemetry: { functionId: 'weather-agent', includeRuntimeContext: { sessionId: true } },
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
      ...first.responseMessages,  // every step's messages, the reasoning included
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
    notes = ("the OpenAI Responses provider (openai.responses('o4-mini')) with reasoning (providerOptions.openai "
             "reasoningEffort medium, reasoningSummary auto), the model reasoning before every answer (distinct "
             "summary text each call, reasoning tokens in its usage). Turn one, generateText: text and three parallel "
             "tool calls (get_weather Paris, get_time Paris, get_weather Atlantis throwing for an unknown city), a "
             "retry of the failed city under another name, then the answer; turn two, streamText in the same session "
             "with turn one's messages "
             "(reasoning re-sent as item references) as history: one tool call, then the answer. @ai-sdk/otel "
             "OpenTelemetry (GenAI semantic conventions: invoke_agent / step / chat / execute_tool spans) with its "
             "runtimeContext and usage supplemental attributes; session id from runtime context "
             "(ai.settings.context.sessionId); function_call item ids (fc_) distinct from their call_ids (call_)")
    with Recording(capture_dir, REPLIES, framework="vercel-ai-sdk",
                   instrumentation="@ai-sdk/otel OpenTelemetry (GenAI semantic conventions)", packages=list(PINS),
                   session_id=SESSION, notes=notes) as rec:
        npm_install_and_run(rec, PINS, SCRIPT, env={"CAPTURE_SESSION_ID": SESSION, "CAPTURE_MODEL": MODEL})


if __name__ == "__main__":
    main()
