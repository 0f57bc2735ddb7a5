"""Re-record: the Vercel AI SDK (npm `ai` 7) `ToolLoopAgent` delegating to a subagent through a tool, traced by
`@ai-sdk/otel`'s LegacyOpenTelemetry.

Needs Node and npm (no Python packages); from the repository root:

    python3 tests/captures/vercel-ai_native_subagent/record.py

It writes a small Node script into a temporary directory and, there,
`npm install ai@7.0.185 @ai-sdk/openai@4.0.126 @ai-sdk/otel@1.0.185 zod@4.6.7
@opentelemetry/api@1.9.1 @opentelemetry/sdk-trace-node@2.12.1 @opentelemetry/exporter-trace-otlp-proto@0.223.1`
(the newest ai, @ai-sdk/openai, @ai-sdk/otel and zod; the OpenTelemetry pins those of `vercel-ai_native`:
@ai-sdk/otel pins @opentelemetry/api 1.9.1, and the same copy must serve the SDK), then runs it with the
Recording's environment: the provider's baseURL is OPENAI_BASE_URL (the fake LLM; `openai(...)` is the
Responses API in @ai-sdk/openai 4), the exporter posts to OTEL_EXPORTER_OTLP_TRACES_ENDPOINT (the recorder),
http/protobuf.

Telemetry as in `vercel-ai_native`: `registerTelemetry(new LegacyOpenTelemetry(...))` gives the `ai.*` spans
(`ai.generateText` / `ai.streamText` -> `.doGenerate` / `.doStream` -> `ai.toolCall`); the session id is runtime
context (`runtimeContext: {sessionId}`, `telemetry.includeRuntimeContext: {sessionId: true}`), written as
`ai.settings.context.sessionId`. Each agent names itself by `telemetry.functionId`.

The agents, as the AI SDK's "Subagents" page shows ("Basic Subagent Without Streaming"): a main `ToolLoopAgent`
(`travel-planner`, the session's runtime context) whose one tool, `research`, runs a second `ToolLoopAgent`
(`research-agent`: its own instructions, its own tools `get_weather` and `get_events`, no session context of its
own: it runs inside the main agent's `ai.toolCall` span, in its trace) with `researchSubagent.generate({prompt:
task, abortSignal})` and returns its `text`.

The run, seven LLM calls: turn one `mainAgent.generate({prompt})`: the main agent calls `research`; the subagent
calls `get_weather` and `get_events` in parallel, `get_weather` throwing (its service timed out: it throws once),
then answers around the failure; the main agent answers. Turn two `mainAgent.stream({messages})` in the same
session, with turn one's messages as history: the main agent calls `research` again, the subagent answers at once,
the main agent's streamed answer. The tracer provider is shut down (flushed) before Node exits.

Every function call is scripted with the two ids the real Responses API gives it (`with_api_call_ids`): its
`call_id` (`call_…`, which the `function_call_output` sent back names) and its item's own `id` (`fc_…`), so that an
instrumentation writing one where the other belongs shows. (Re-recorded for them with the same pins.)
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

from tests.captures.recording.node import npm_install_and_run
from tests.captures.recording.openai_agents_travel import with_api_call_ids
from tests.captures.recording.session import Recording

SESSION = "vercel-subagent-1"
PINS = {
    "ai": "7.0.185",
    "@ai-sdk/openai": "4.0.126",
    "@ai-sdk/otel": "1.0.185",
    "zod": "4.6.7",
    # @ai-sdk/otel pins @opentelemetry/api 1.9.1: the same copy for the SDK, so that one context
    # manager carries the parent span across awaits (the subagent's spans under the research tool's).
    "@opentelemetry/api": "1.9.1",
    "@opentelemetry/sdk-trace-node": "2.12.1",
    "@opentelemetry/exporter-trace-otlp-proto": "0.223.1",
}
QUESTIONS = ["I'm in Lisbon tomorrow: what's the weather and what's on?",
             "Is there a good day trip from Lisbon?"]
REPLIES = with_api_call_ids([
    # Turn one. The main agent delegates.
    {"tool_calls": [{"name": "research", "arguments": {"task": "Tomorrow's weather and events in Lisbon"}}]},
    # The subagent: both its tools at once; get_weather throws.
    {"tool_calls": [{"name": "get_weather", "arguments": {"city": "Lisbon"}},
                    {"name": "get_events", "arguments": {"city": "Lisbon"}}],
     "when": "Tomorrow's weather and events in Lisbon"},
    {"text": "Events tomorrow in Lisbon: Fado night at Alfama (21:00), Feira da Ladra flea market (09:00-18:00). "
             "The weather service timed out, so no forecast."},
    {"text": "Tomorrow in Lisbon: a fado night in Alfama at 21:00 and the Feira da Ladra flea market from 9:00. "
             "I couldn't get a forecast: the weather service timed out."},
    # Turn two, streamed: the main agent delegates again; the subagent answers at once.
    {"tool_calls": [{"name": "research", "arguments": {"task": "A good day trip from Lisbon"}}],
     "when": "day trip"},
    {"text": "Sintra: 40 minutes by train from Rossio; Pena Palace and the Moorish Castle.",
     "when": "A good day trip from Lisbon"},
    {"text": "Yes: Sintra, 40 minutes by train from Rossio, for Pena Palace and the Moorish Castle."},
], SESSION)

SCRIPT = r"""
import { ToolLoopAgent, tool, stepCountIs, registerTelemetry } from 'ai';
import { createOpenAI } from '@ai-sdk/openai';
import { LegacyOpenTelemetry } from '@ai-sdk/otel';
import { NodeTracerProvider, BatchSpanProcessor } from '@opentelemetry/sdk-trace-node';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { z } from 'zod';

const SESSION = process.env.CAPTURE_SESSION_ID;
const QUESTIONS = JSON.parse(process.env.CAPTURE_QUESTIONS);
const provider = new NodeTracerProvider({
  spanProcessors: [new BatchSpanProcessor(new OTLPTraceExporter())],  // endpoint from OTEL_EXPORTER_OTLP_*
});
provider.register();
registerTelemetry(new LegacyOpenTelemetry({ tracer: provider.getTracer('ai') }));

const openai = createOpenAI({ baseURL: process.env.OPENAI_BASE_URL, apiKey: process.env.OPENAI_API_KEY });

let weatherCalls = 0;
const researchSubagent = new ToolLoopAgent({
  model: openai('gpt-4o'),
  instructions: 'You are a research agent. Summarize your findings in your final response.',
  tools: {
    get_weather: tool({
      description: "Tomorrow's weather in a city.",
      inputSchema: z.object({ city: z.string() }),
      execute: async ({ city }) => {
        weatherCalls += 1;
        if (weatherCalls === 1) throw new Error('weather service timed out');
        return `${city}: sunny, 24°C`;
      },
    }),
    get_events: tool({
      description: "Tomorrow's events in a city.",
      inputSchema: z.object({ city: z.string() }),
      execute: async ({ city }) => ({
        city,
        events: [{ name: 'Fado night at Alfama', time: '21:00' }, { name: 'Feira da Ladra', time: '09:00-18:00' }],
      }),
    }),
  },
  stopWhen: stepCountIs(5),
  telemetry: { functionId: 'research-agent' },
});

const research = tool({
  description: 'Research a topic or question in depth.',
  inputSchema: z.object({ task: z.string().describe('The research task to complete') }),
  execute: async ({ task }, { abortSignal }) => {
    const result = await researchSubagent.generate({ prompt: task, abortSignal });
    return result.text;
  },
});

const mainAgent = new ToolLoopAgent({
  model: openai('gpt-4o'),
  instructions: 'You are a helpful travel assistant that can delegate research tasks.',
  tools: { research },
  stopWhen: stepCountIs(5),
  runtimeContext: { sessionId: SESSION },
  telemetry: { functionId: 'travel-planner', includeRuntimeContext: { sessionId: true } },
});

try {
  const first = await mainAgent.generate({ prompt: QUESTIONS[0] });
  console.log('generate:', first.steps.length, 'steps:', first.text);
  const second = await mainAgent.stream({
    messages: [
      { role: 'user', content: QUESTIONS[0] },
      ...first.responseMessages,  // every step's messages (AI SDK 7; `response.messages` is the last step's)
      { role: 'user', content: QUESTIONS[1] },
    ],
  });
  let streamed = '';
  for await (const chunk of second.textStream) streamed += chunk;
  console.log('stream:', (await second.steps).length, 'steps:', streamed);
} finally {
  await provider.shutdown();  // flushes the batch processor
}
"""


def main() -> None:
    import json

    capture_dir = Path(__file__).parent
    notes = ("ToolLoopAgent travel-planner whose research tool runs a ToolLoopAgent research-agent (generate, its "
             "text the tool's result), as the AI SDK's Subagents page shows. Turn one generate: research; the "
             "subagent's get_weather and get_events in parallel, get_weather throwing once, the subagent answering "
             "around it; the main answer. Turn two stream in the same session with that history: research, the "
             "subagent answering at once, the streamed main answer. @ai-sdk/otel LegacyOpenTelemetry (ai.* spans); "
             "session id from the main agent's runtime context (ai.settings.context.sessionId); the subagent's "
             "spans carry none, in the main agent's trace; function_call item ids (fc_) distinct from their "
             "call_ids (call_)")
    with Recording(capture_dir, REPLIES, framework="vercel-ai-sdk",
                   instrumentation="@ai-sdk/otel LegacyOpenTelemetry", packages=list(PINS),
                   session_id=SESSION, notes=notes) as rec:
        npm_install_and_run(rec, PINS, SCRIPT,
                            env={"CAPTURE_SESSION_ID": SESSION, "CAPTURE_QUESTIONS": json.dumps(QUESTIONS)})


if __name__ == "__main__":
    main()
