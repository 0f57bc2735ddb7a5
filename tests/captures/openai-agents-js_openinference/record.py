"""Re-record: the OpenAI Agents SDK for JavaScript (npm `@openai/agents`, Responses API) with a handoff,
traced by `@arizeai/openinference-instrumentation-openai-agents`.

Needs Node and npm (no Python packages); from the repository root:

    python3 tests/captures/openai-agents-js_openinference/record.py

It writes a small Node script into a temporary directory and, there,
`npm install @openai/agents@0.20.0 openai@7.60.0 @arizeai/openinference-instrumentation-openai-agents@0.2.15
@arizeai/openinference-core@2.7.1 zod@4.6.7 @opentelemetry/api@1.9.1 @opentelemetry/sdk-trace-node@2.12.1
@opentelemetry/exporter-trace-otlp-proto@0.223.1`, then runs it with the Recording's environment: the SDK's
default OpenAI client reads OPENAI_BASE_URL (the fake LLM), the exporter posts to
OTEL_EXPORTER_OTLP_TRACES_ENDPOINT (the recorder), http/protobuf.

The instrumentation is the SDK's own `TracingProcessor` (`manuallyInstrument(agents)`, ESM: it replaces the
SDK's exporter to OpenAI), turning each SDK trace into an OpenInference AGENT root named after the workflow.
It reads no session from the SDK (not the run's `groupId`): its spans are started by OpenInference's
`OITracer`, which copies the active OTel context's attributes onto every span, so the session id is set as
OpenInference JS documents it, `context.with(setSession(context.active(), {sessionId}), …)`.

The run: two turns of one conversation kept by the SDK's `MemorySession`. Turn one: the model calls
`get_weather` and `get_local_time` in parallel, `get_weather` throws once (the SDK shows the model its
default error text), the model retries it, then answers. Turn two: the travel desk hands off to the booking
agent (`transfer_to_Booking_agent`: the JS SDK keeps the agent name's case), which calls `book_hotel` and
answers. The tracer provider is shut down (flushed) before Node exits.

Every function call is scripted with the two ids the real Responses API gives it (`with_api_call_ids`): its
`call_id` (`call_…`, which the `function_call_output` the SDK sends back names) and its item's own `id` (`fc_…`), so
that an instrumentation writing one where the other belongs shows. (Re-recorded for them with the same pins.)
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

from tests.captures.recording.node import npm_install_and_run
from tests.captures.recording.openai_agents_travel import with_api_call_ids
from tests.captures.recording.session import Recording

SESSION = "oa-js-oi-travel-1"
PINS = {
    "@openai/agents": "0.20.0",
    # The client @openai/agents takes (`^7.2.0`), unpinned at the first recording; pinned at the version npm resolved
    # for the re-recording (the only one in npm's cache), so that meta.json says it.
    "openai": "7.60.0",
    "@arizeai/openinference-instrumentation-openai-agents": "0.2.15",
    "@arizeai/openinference-core": "2.7.1",
    "zod": "4.6.7",
    # sdk-trace-node 2.12 takes @opentelemetry/api below 1.10, and exporter 0.223 is its release.
    "@opentelemetry/api": "1.9.1",
    "@opentelemetry/sdk-trace-node": "2.12.1",
    "@opentelemetry/exporter-trace-otlp-proto": "0.223.1",
}
REPLIES = with_api_call_ids([
    {"tool_calls": [{"name": "get_weather", "arguments": {"city": "Oslo"}},
                    {"name": "get_local_time", "arguments": {"city": "Oslo"}}],
     "input_tokens": 212, "output_tokens": 38},
    {"tool_calls": [{"name": "get_weather", "arguments": {"city": "Oslo"}}],
     "input_tokens": 301, "output_tokens": 17},
    {"text": "In Oslo it is rainy and 9°C, and the local time is 14:05.",
     "input_tokens": 344, "output_tokens": 21},
    {"tool_calls": [{"name": "transfer_to_Booking_agent", "arguments": {}}], "when": "hotel",
     "input_tokens": 389, "output_tokens": 12},
    {"tool_calls": [{"name": "book_hotel", "arguments": {"city": "Oslo", "nights": 2}}],
     "input_tokens": 402, "output_tokens": 24},
    {"text": "Booked Hotel Nord in Oslo for 2 nights (ref OSL-42).",
     "input_tokens": 451, "output_tokens": 19},
], SESSION)

SCRIPT = r"""
import * as agents from '@openai/agents';
import { Agent, MemorySession, Runner, tool } from '@openai/agents';
import { OpenAIAgentsInstrumentation } from '@arizeai/openinference-instrumentation-openai-agents';
import { setSession } from '@arizeai/openinference-core';
import { context } from '@opentelemetry/api';
import { NodeTracerProvider, BatchSpanProcessor } from '@opentelemetry/sdk-trace-node';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { z } from 'zod';

const SESSION = process.env.CAPTURE_SESSION_ID;
const provider = new NodeTracerProvider({
  spanProcessors: [new BatchSpanProcessor(new OTLPTraceExporter())],  // endpoint from OTEL_EXPORTER_OTLP_*
});
provider.register();
new OpenAIAgentsInstrumentation({ tracerProvider: provider }).manuallyInstrument(agents);

const WEATHER = { Oslo: 'rainy, 9°C', Paris: 'sunny, 21°C' };
let weatherCalls = 0;
const getWeather = tool({
  name: 'get_weather',
  description: 'The current weather in a city.',
  parameters: z.object({ city: z.string() }),
  execute: async ({ city }) => {
    weatherCalls += 1;
    if (weatherCalls === 1) throw new Error('weather service timed out');
    return WEATHER[city] ?? 'unknown';
  },
});
const getLocalTime = tool({
  name: 'get_local_time',
  description: 'The local time in a city.',
  parameters: z.object({ city: z.string() }),
  execute: async ({ city }) => `${city}: 14:05`,
});
const bookHotel = tool({
  name: 'book_hotel',
  description: 'Book a hotel room.',
  parameters: z.object({ city: z.string(), nights: z.number().int() }),
  execute: async ({ city, nights }) => `Booked Hotel Nord in ${city}, ${nights} nights, ref OSL-42`,
});

const booking = new Agent({
  name: 'Booking agent',
  model: 'gpt-4o-mini',
  instructions: 'You book hotels.',
  handoffDescription: 'Books hotel rooms.',
  tools: [bookHotel],
});
const triage = new Agent({
  name: 'Travel desk',
  model: 'gpt-4o-mini',
  instructions: 'You answer travel questions; hand hotel bookings to the booking agent.',
  tools: [getWeather, getLocalTime],
  handoffs: [booking],
});

// The SDK's own conversation grouping (`groupId`, a trace's `group_id`): the instrumentation does not read it.
const runner = new Runner({ workflowName: 'Travel desk workflow', groupId: SESSION });
const session = new MemorySession();
try {
  await context.with(setSession(context.active(), { sessionId: SESSION }), async () => {
    const first = await runner.run(triage, 'What is the weather and the local time in Oslo?', { session });
    console.log('turn 1:', first.finalOutput);
    const second = await runner.run(triage, 'Great, book me a hotel there for two nights.', { session });
    console.log('turn 2:', second.finalOutput);
  });
} finally {
  await provider.shutdown();  // flushes the batch processor
}
"""


def main() -> None:
    capture_dir = Path(__file__).parent
    notes = ("two turns (runner.run twice) of one MemorySession; turn one: get_weather and get_local_time in parallel, "
             "get_weather throwing once (the SDK's default error text shown to the model), its retry, the "
             "answer; turn two: a handoff to the booking agent, book_hotel, the answer. Session id from "
             "OpenInference's context (setSession), copied onto every span by its OITracer; function_call item ids "
             "(fc_) distinct from their call_ids (call_)")
    with Recording(capture_dir, REPLIES, framework="openai-agents-js",
                   instrumentation="@arizeai/openinference-instrumentation-openai-agents",
                   packages=list(PINS), session_id=SESSION, notes=notes) as rec:
        npm_install_and_run(rec, PINS, SCRIPT, env={"CAPTURE_SESSION_ID": SESSION})


if __name__ == "__main__":
    main()
