"""Re-record: a Mastra supervisor `Agent` delegating to a subagent (its `agents: {…}`, as Mastra's "Subagents"
docs show: each subagent is offered to the model as a tool `agent-<key>`), npm `@mastra/core` 1.x, the model
router's `openai/gpt-4o-mini`, traced by Mastra's AI tracing exported over OTLP by `@mastra/otel-exporter`.

Needs Node and npm (no Python packages); from the repository root:

    python3 tests/captures/mastra_native_network/record.py

It writes a small Node script into a temporary directory and, there,
`npm install @mastra/core@1.71.0 @mastra/memory@1.31.0 @mastra/observability@1.17.9
@mastra/otel-exporter@1.4.0 zod@4.6.7 @opentelemetry/exporter-trace-otlp-proto@0.218.0`
(the newest of each but the last: `@mastra/otel-exporter` 1.4.0 pins its exporters' peer range to ^0.218.0),
then runs it with the Recording's environment. The model router resolves `openai/*` to the AI SDK's OpenAI
provider (bundled in @mastra/core) on the Responses API, with its base URL from OPENAI_BASE_URL (the fake LLM).
Observability is set up as the exporter's README says (as in `mastra_native`): an `Observability` with an
`OtelExporter` whose custom endpoint is OTEL_EXPORTER_OTLP_ENDPOINT (the recorder), protobuf.

The agents: the supervisor "Travel Desk" has no tools of its own and `agents: {weatherAgent}`; Mastra offers
the model a tool `agent-weatherAgent` (`{prompt}`) whose execution runs the "Weather Agent" (`get_weather`,
`get_local_time`) with that prompt and the supervisor's conversation as context, and sends its text back as the
tool's result. Memory (`Memory`, an `InMemoryStore` on the Mastra instance) is on the supervisor: its thread is
the session, each turn `{memory: {thread, resource}}`; the subagent, with none of its own, is given the
supervisor's memory on a thread Mastra makes up per delegation.

Scenario: turn 1 (`generate`), the supervisor delegates; the weather agent calls both tools in parallel, the
weather service times out (the tool throws), and it answers around it with the time alone; the supervisor
answers. Turn 2 (`stream`, same thread), asked to try the weather again, the supervisor delegates again; the
weather agent calls `get_weather` (now answering), then answers; the supervisor answers, streamed. Eight LLM
calls (four a delegated turn: the supervisor's delegation and answer, the subagent's tool call and answer; two
turns is the least that shows both the thrown tool and a streamed delegation). `mastra.shutdown()` flushes the
exporter before Node exits. (Mastra's stream builds a function call's arguments from the Responses API's
`response.function_call_arguments.delta` events, which the fake LLM sends as the API does; before it did, the
streamed turn's tools ran with no arguments.)

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

SESSION = "mastra-travel-desk-thread-1"
PINS = {
    "@mastra/core": "1.71.0",
    "@mastra/memory": "1.31.0",
    "@mastra/observability": "1.17.9",
    "@mastra/otel-exporter": "1.4.0",
    "zod": "4.6.7",
    # @mastra/otel-exporter 1.4.0's peer range for it: ^0.218.0.
    "@opentelemetry/exporter-trace-otlp-proto": "0.218.0",
}
DELEGATE = "agent-weatherAgent"
REPLIES = with_api_call_ids([
    # Turn 1, generate: the supervisor delegates.
    {"tool_calls": [{"name": DELEGATE, "arguments": {"prompt": "Current weather and local time in Paris."}}],
     "input_tokens": 204, "output_tokens": 24},
    # The weather agent: both tools at once; get_weather throws.
    {"tool_calls": [{"name": "get_weather", "arguments": {"city": "Paris"}},
                    {"name": "get_local_time", "arguments": {"city": "Paris"}}],
     "input_tokens": 176, "output_tokens": 46},
    {"text": "It is 14:05 in Paris; the weather service timed out.", "input_tokens": 243, "output_tokens": 15},
    {"text": "It is 14:05 in Paris. The weather service is not answering right now.",
     "input_tokens": 262, "output_tokens": 17},
    # Turn 2, stream: the supervisor delegates again.
    {"tool_calls": [{"name": DELEGATE, "arguments": {"prompt": "Current weather in Paris."}}],
     "input_tokens": 298, "output_tokens": 21},
    {"tool_calls": [{"name": "get_weather", "arguments": {"city": "Paris"}}], "input_tokens": 231, "output_tokens": 17},
    {"text": "Paris: sunny, 21°C.", "input_tokens": 262, "output_tokens": 8},
    {"text": "It worked this time: Paris is sunny at 21°C.", "input_tokens": 331, "output_tokens": 13},
], SESSION)

SCRIPT = r"""
import { Mastra } from '@mastra/core/mastra';
import { Agent } from '@mastra/core/agent';
import { createTool } from '@mastra/core/tools';
import { InMemoryStore } from '@mastra/core/storage';
import { Memory } from '@mastra/memory';
import { Observability } from '@mastra/observability';
import { OtelExporter } from '@mastra/otel-exporter';
import { z } from 'zod';

const SESSION = process.env.CAPTURE_SESSION_ID;
const WEATHER = { Paris: 'sunny, 21°C' };
const TIMES = { Paris: '14:05' };
let failures = 1;

const getWeather = createTool({
  id: 'get_weather',
  description: 'The current weather in a city.',
  inputSchema: z.object({ city: z.string().describe('The city to look up.') }),
  execute: async ({ city }) => {
    if (failures > 0) {
      failures -= 1;
      throw new Error('weather service timed out');
    }
    return WEATHER[city];
  },
});
const getLocalTime = createTool({
  id: 'get_local_time',
  description: 'The local time in a city.',
  inputSchema: z.object({ city: z.string().describe('The city to look up.') }),
  execute: async ({ city }) => ({ city, time: TIMES[city] }),
});

const weatherAgent = new Agent({
  id: 'weather-agent',
  name: 'Weather Agent',
  description: 'Looks up the current weather and the local time in a city.',
  instructions: 'You look up weather and local time with your tools. Answer in one line.',
  model: 'openai/gpt-4o-mini',
  tools: { get_weather: getWeather, get_local_time: getLocalTime },
});

const travelDesk = new Agent({
  id: 'travel-desk',
  name: 'Travel Desk',
  description: 'Answers travellers, delegating weather and time questions.',
  instructions: 'You are a travel desk. Delegate weather and local-time questions to the weather agent.',
  model: 'openai/gpt-4o-mini',
  agents: { weatherAgent },
  memory: new Memory({ options: { lastMessages: 20 } }),
});

const mastra = new Mastra({
  agents: { travelDesk, weatherAgent },
  storage: new InMemoryStore(),
  observability: new Observability({
    configs: {
      otel: {
        serviceName: 'travel-desk',
        exporters: [new OtelExporter({
          provider: { custom: { endpoint: process.env.OTEL_EXPORTER_OTLP_ENDPOINT, protocol: 'http/protobuf' } },
          signals: { logs: false },
        })],
      },
    },
  }),
});

try {
  const desk = mastra.getAgent('travelDesk');
  const memory = { memory: { thread: SESSION, resource: 'traveller-7' } };
  const first = await desk.generate("What's the weather and the local time in Paris?", memory);
  console.log('turn 1 ->', first.text);
  const second = await desk.stream('Could you try the weather again?', memory);
  let streamed = '';
  for await (const piece of second.textStream) streamed += piece;
  console.log('turn 2 (streamed) ->', streamed);
} finally {
  await mastra.shutdown();  // shuts observability down: the exporter's batch processor is flushed
}
"""


def main() -> None:
    capture_dir = Path(__file__).parent
    notes = ("a supervisor agent (Travel Desk, agents: {weatherAgent}) delegating through Mastra's agent-weatherAgent "
             "tool to a subagent (Weather Agent, two tools). Turn 1 (generate): the subagent's two parallel tool "
             "calls, get_weather throwing (a timeout), answered around; turn 2 (stream, same memory thread): "
             "delegated again, get_weather answering. Mastra's AI tracing through @mastra/otel-exporter; the "
             "session is the supervisor's memory thread (gen_ai.conversation.id); model router openai/gpt-4o-mini "
             "(Responses API); function_call item ids (fc_) distinct from their call_ids (call_)")
    with Recording(capture_dir, REPLIES, framework="mastra", instrumentation="@mastra/otel-exporter",
                   packages=list(PINS), session_id=SESSION, notes=notes) as rec:
        npm_install_and_run(rec, PINS, SCRIPT, env={"CAPTURE_SESSION_ID": SESSION})


if __name__ == "__main__":
    main()
