"""Re-record: the OpenAI Agents SDK for JavaScript (npm `@openai/agents`, Responses API) on a reasoning model,
traced by `@arizeai/openinference-instrumentation-openai-agents`.

Needs Node and npm (no Python packages); from the repository root:

    python3 tests/captures/openai-agents-js_openinference_reasoning/record.py

It writes a small Node script into a temporary directory and, there,
`npm install @openai/agents@0.20.0 openai@7.60.0 @arizeai/openinference-instrumentation-openai-agents@0.2.15
@arizeai/openinference-core@2.7.1 zod@4.6.7 @opentelemetry/api@1.9.1 @opentelemetry/sdk-trace-node@2.12.1
@opentelemetry/exporter-trace-otlp-proto@0.223.1`, then runs it with the Recording's environment: the SDK's
default OpenAI client reads OPENAI_BASE_URL (the fake LLM), the exporter posts to
OTEL_EXPORTER_OTLP_TRACES_ENDPOINT (the recorder), http/protobuf. The newest release of each (openai: the version npm
resolved for @openai/agents' `^7.2.0`), but for the two OpenTelemetry packages beside the newest sdk-trace-node
(2.12.1), which takes @opentelemetry/api below 1.10: the newest exporter (0.301) needs api 1.10, so the exporter is
sdk-trace-node's own release (0.223.1), as in `openai-agents-js_openinference`. (@openai/agents 0.20.0 brings
@openai/agents-core and @openai/agents-openai 0.20.0, pinned by it.)

The instrumentation is set up as in `openai-agents-js_openinference` (its README's `manuallyInstrument(agents)`,
ESM), the session id set as OpenInference JS documents it, `context.with(setSession(context.active(),
{sessionId}), …)` (the instrumentation reads no `groupId`), the history kept by the SDK's `MemorySession`.

One travel desk agent on `o4-mini` with `modelSettings: { reasoning: { effort: 'medium', summary: 'auto' } }`,
as the SDK's docs set a reasoning model up (its default model is the Responses API's), holding `get_weather`
(throwing the first time it is called: the SDK sends the model its default error text) and `get_local_time`:

1. `runner.run`: "What is the weather and the local time in Oslo?" The model reasons, then calls both tools in
   parallel; `get_weather` throws; it reasons again and calls `get_weather` again; it reasons and answers.
2. `runner.run(…, { stream: true })`: "Is Bergen warmer than Oslo right now?" The SDK re-sends turn 1's items from
   the session, its reasoning items among them; the model reasons (streamed as `response.reasoning_summary_text.
   delta` events), asks Bergen's weather, reasons and answers.

Every call answers with a `reasoning` item (its own `summary_text`) before its text or function calls, and reports
the reasoning tokens within its output tokens (`usage.output_tokens_details.reasoning_tokens`). Why: a reasoning
model's thinking belongs to its step (`reasoning_content`), never shown as the step's text nor as a step (or a
question) of its own, nor repeated when the SDK re-sends it as history; the request's effort is the step's
`reasoning_effort`. The tracer provider is shut down (flushed) before Node exits.

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

SESSION = "oa-js-oi-reasoning-1"
PINS = {
    "@openai/agents": "0.20.0",
    # The client @openai/agents takes (`^7.2.0`), pinned at the version npm resolved.
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
    {"reasoning": "The user asks for Oslo's weather and local time. The two lookups are independent, so I will call "
                  "get_weather and get_local_time together.",
     "tool_calls": [{"name": "get_weather", "arguments": {"city": "Oslo"}},
                    {"name": "get_local_time", "arguments": {"city": "Oslo"}}],
     "input_tokens": 212, "output_tokens": 230, "reasoning_tokens": 192},
    {"reasoning": "The local time came back but the weather lookup failed. The error says to try again, so I will "
                  "retry get_weather for Oslo once.",
     "tool_calls": [{"name": "get_weather", "arguments": {"city": "Oslo"}}],
     "input_tokens": 301, "output_tokens": 145, "reasoning_tokens": 128},
    {"reasoning": "Now I have both: rainy at 9°C and 14:05. Put them in one short sentence.",
     "text": "In Oslo it is rainy and 9°C, and the local time is 14:05.",
     "input_tokens": 344, "output_tokens": 117, "reasoning_tokens": 96},
    {"reasoning": "To compare I need Bergen's weather; Oslo's 9°C is already in the conversation.",
     "tool_calls": [{"name": "get_weather", "arguments": {"city": "Bergen"}}], "when": "Bergen",
     "input_tokens": 389, "output_tokens": 86, "reasoning_tokens": 64},
    {"reasoning": "Bergen is windy at 7°C against Oslo's 9°C, so Bergen is colder: the answer is no.",
     "text": "No: Bergen is windy at 7°C, colder than Oslo's 9°C.",
     "input_tokens": 431, "output_tokens": 101, "reasoning_tokens": 80},
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

const WEATHER = { Oslo: 'rainy, 9°C', Bergen: 'windy, 7°C' };
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

// A reasoning model as the SDK's docs set one up: its reasoning settings in the model settings.
const desk = new Agent({
  name: 'Travel desk',
  model: 'o4-mini',
  modelSettings: { reasoning: { effort: 'medium', summary: 'auto' } },
  instructions: 'You answer travel questions with your tools.',
  tools: [getWeather, getLocalTime],
});

// The SDK's own conversation grouping (`groupId`, a trace's `group_id`): the instrumentation does not read it.
const runner = new Runner({ workflowName: 'Travel desk workflow', groupId: SESSION });
const session = new MemorySession();
try {
  await context.with(setSession(context.active(), { sessionId: SESSION }), async () => {
    const first = await runner.run(desk, 'What is the weather and the local time in Oslo?', { session });
    console.log('turn 1:', first.finalOutput);
    const second = await runner.run(desk, 'Is Bergen warmer than Oslo right now?', { session, stream: true });
    for await (const _event of second) { /* the stream's events, consumed as they come */ }
    await second.completed;
    console.log('turn 2:', second.finalOutput);
  });
} finally {
  await provider.shutdown();  // flushes the batch processor
}
"""


def main() -> None:
    capture_dir = Path(__file__).parent
    notes = ("o4-mini with modelSettings.reasoning {effort: 'medium', summary: 'auto'}: every call answers with a "
             "reasoning item (summary_text) first and reports reasoning tokens; two turns of one MemorySession "
             "under OpenInference's setSession context (runner.run, then runner.run with stream: true, reasoning "
             "summary deltas), the second re-sending the first's reasoning items; get_weather and get_local_time in "
             "parallel, get_weather throwing once (the SDK's default error text shown to the model) and called again; "
             "function_call item ids (fc_) distinct from their call_ids (call_)")
    with Recording(capture_dir, REPLIES, framework="openai-agents-js",
                   instrumentation="@arizeai/openinference-instrumentation-openai-agents",
                   packages=list(PINS), session_id=SESSION, notes=notes) as rec:
        npm_install_and_run(rec, PINS, SCRIPT, env={"CAPTURE_SESSION_ID": SESSION})


if __name__ == "__main__":
    main()
