"""Re-record: a Genkit agent (npm `genkit` 1.42, `ai.defineAgent` from `genkit/beta`) on an OpenAI-compatible model
(`@genkit-ai/compat-oai`'s `openAI` plugin, `openai/gpt-4o-mini` over Chat Completions), traced by Genkit's own
OpenTelemetry instrumentation and exported over OTLP/HTTP protobuf.

Needs Node and npm (no Python packages); from the repository root:

    python3 tests/captures/genkit_native/record.py

It writes a small Node script into a temporary directory and, there,
`npm install genkit@1.42.0 @genkit-ai/compat-oai@1.42.0 @opentelemetry/sdk-trace-base@1.25.1
@opentelemetry/exporter-trace-otlp-proto@0.52.1`, then runs it with the Recording's environment. The plugin is
given `baseURL` OPENAI_BASE_URL (the fake LLM). Genkit starts its own OpenTelemetry NodeSDK (`@opentelemetry/sdk-node`
0.52, hence the exporter's 0.52.1 and sdk-trace-base's 1.25.1, the versions genkit 1.42's core pins) on its first
action; `enableTelemetry({spanProcessors: [new BatchSpanProcessor(new OTLPTraceExporter({url}))]})` from
`genkit/tracing`, called before any action, adds the span processor to that SDK beside Genkit's own telemetry-server
processor (which sends nothing here: no `GENKIT_TELEMETRY_SERVER`), the url being OTEL_EXPORTER_OTLP_TRACES_ENDPOINT
(the recorder). `flushTracing()` from `genkit/tracing` flushes every span processor before Node exits.

The session is the agent's: `ai.defineAgent({..., store: new InMemorySessionStore()})` (server-managed state) and
`agent.chat({sessionId})`; each `chat.send(question)` is one run of the agent's bidi action, a trace of its own,
whose root span records the session as `genkit:metadata:agent:sessionId`; the second turn resumes from the first
turn's snapshot (its history). The tools are `ai.defineTool`s; a tool that throws fails Genkit's whole generate,
so a small generate middleware (`generateMiddleware` with a `tool` hook, `use` on the agent) answers the model with
the error instead, as an application does to let its model retry: the tool's span still ends in error.

Scenario: turn 1, the model says a word and asks for the weather and the local time in Paris in parallel; the
weather service times out once (the tool throws), the model retries that call alone, then answers. Turn 2 (same
session): one weather call for Lyon, then the answer. Five LLM calls, `maxTurns` 5 per turn.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

from tests.captures.recording.node import npm_install_and_run
from tests.captures.recording.session import Recording

SESSION = "genkit-weather-session-1"
PINS = {
    "genkit": "1.42.0",
    "@genkit-ai/compat-oai": "1.42.0",
    # The versions of @genkit-ai/core 1.42.0's own OpenTelemetry SDK (sdk-node ^0.52, sdk-trace-base ~1.25).
    "@opentelemetry/sdk-trace-base": "1.25.1",
    "@opentelemetry/exporter-trace-otlp-proto": "0.52.1",
}
REPLIES = [
    {"text": "Let me look that up.",
     "tool_calls": [{"name": "get_weather", "arguments": {"city": "Paris"}, "id": "call_Gk1wthrParis1"},
                    {"name": "get_local_time", "arguments": {"city": "Paris"}, "id": "call_Gk1timeParis1"}],
     "input_tokens": 164, "output_tokens": 52},
    {"tool_calls": [{"name": "get_weather", "arguments": {"city": "Paris"}, "id": "call_Gk1wthrParis2"}],
     "input_tokens": 241, "output_tokens": 17},
    {"text": "Paris is sunny at 21°C, and it is 14:05 there.", "input_tokens": 280, "output_tokens": 16},
    {"tool_calls": [{"name": "get_weather", "arguments": {"city": "Lyon"}, "id": "call_Gk1wthrLyon01"}],
     "input_tokens": 309, "output_tokens": 17},
    {"text": "Lyon is cloudy at 17°C.", "input_tokens": 342, "output_tokens": 9},
]

SCRIPT = r"""
import { genkit, z } from 'genkit/beta';
import { generateMiddleware } from 'genkit';
import { InMemorySessionStore } from 'genkit/beta';
import { enableTelemetry, flushTracing } from 'genkit/tracing';
import { openAI } from '@genkit-ai/compat-oai/openai';
import { BatchSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-proto';

const SESSION = process.env.CAPTURE_SESSION_ID;
// Before the first action: Genkit starts its NodeSDK with this processor beside its own.
await enableTelemetry({
  serviceName: 'weather-desk',
  spanProcessors: [
    new BatchSpanProcessor(new OTLPTraceExporter({ url: process.env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT })),
  ],
});

const ai = genkit({
  plugins: [openAI({ apiKey: process.env.OPENAI_API_KEY, baseURL: process.env.OPENAI_BASE_URL })],
});

const WEATHER = { Paris: 'sunny, 21°C', Lyon: 'cloudy, 17°C' };
const TIMES = { Paris: '14:05', Lyon: '14:06' };
let failures = 1;

const getWeather = ai.defineTool(
  {
    name: 'get_weather',
    description: 'The current weather in a city.',
    inputSchema: z.object({ city: z.string().describe('The city to look up.') }),
    outputSchema: z.string(),
  },
  async ({ city }) => {
    if (failures > 0) {
      failures -= 1;
      throw new Error('weather service timed out');
    }
    return WEATHER[city];
  },
);
const getLocalTime = ai.defineTool(
  {
    name: 'get_local_time',
    description: 'The local time in a city.',
    inputSchema: z.object({ city: z.string().describe('The city to look up.') }),
    outputSchema: z.object({ city: z.string(), time: z.string() }),
  },
  async ({ city }) => ({ city, time: TIMES[city] }),
);

// A thrown tool error would end the whole generate: tell the model instead, so that it can retry.
const toolErrorsToModel = generateMiddleware({ name: 'toolErrorsToModel' }, () => ({
  tool: async (req, ctx, next) => {
    try {
      return await next(req, ctx);
    } catch (e) {
      return { toolResponse: { name: req.toolRequest.name, ref: req.toolRequest.ref,
                               output: `Error: ${e.message}` } };
    }
  },
}));

const weatherAgent = ai.defineAgent({
  name: 'weatherAgent',
  model: openAI.model('gpt-4o-mini'),
  system: 'You are a terse weather assistant.',
  tools: [getWeather, getLocalTime],
  maxTurns: 5,
  use: [toolErrorsToModel()],
  store: new InMemorySessionStore(),
});

try {
  const chat = weatherAgent.chat({ sessionId: SESSION });
  for (const question of ["What's the weather and the local time in Paris?", 'And the weather in Lyon?']) {
    const response = await chat.send(question);
    console.log(question, '->', response.text, '| session', response.sessionId);
  }
} finally {
  await flushTracing();
}
process.exit(0);
"""


def main() -> None:
    capture_dir = Path(__file__).parent
    notes = ("turn 1: text and two parallel tool calls, get_weather throwing once (a timeout; a generate middleware "
             "answers the model with the error), the model retrying it, then the answer; turn 2 (same agent session, "
             "resumed from the store's snapshot): one tool call, then the answer. Genkit's own OpenTelemetry spans "
             "(genkit:* attributes) through a span processor given to genkit/tracing's enableTelemetry; the session is "
             "the agent's (genkit:metadata:agent:sessionId on each turn's root span); openai/gpt-4o-mini through "
             "@genkit-ai/compat-oai (Chat Completions)")
    with Recording(capture_dir, REPLIES, framework="genkit", instrumentation="native",
                   packages=list(PINS), session_id=SESSION, notes=notes) as rec:
        npm_install_and_run(rec, PINS, SCRIPT, env={"CAPTURE_SESSION_ID": SESSION})


if __name__ == "__main__":
    main()
