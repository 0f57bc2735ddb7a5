"""Re-record: a Mastra `Agent` (npm `@mastra/core` 1.x, the model router's `openai/gpt-4o-mini`), traced by
Mastra's AI tracing exported over OTLP by `@mastra/otel-exporter`.

Needs Node and npm (no Python packages); from the repository root:

    python3 tests/captures/mastra_native/record.py

It writes a small Node script into a temporary directory and, there,
`npm install @mastra/core@1.71.0 @mastra/memory@1.31.0 @mastra/observability@1.17.9
@mastra/otel-exporter@1.4.0 zod@4.6.7 @opentelemetry/exporter-trace-otlp-proto@0.218.0`,
then runs it with the Recording's environment. The model router resolves `openai/*` to the AI SDK's
OpenAI provider (bundled in @mastra/core) on the Responses API, with its base URL from OPENAI_BASE_URL (the
fake LLM). Observability is set up as the exporter's README says: `new Observability({configs: {otel:
{serviceName, exporters: [new OtelExporter({provider: {custom: {endpoint, protocol: 'http/protobuf'}}})]}}})`
on the `Mastra` instance, the endpoint being OTEL_EXPORTER_OTLP_ENDPOINT (the recorder; the exporter adds
`/v1/traces`). `@mastra/otel-exporter` 1.4 pins its exporters' peer range to 0.218.x. (It would export
Mastra's log events too with `@opentelemetry/exporter-logs-otlp-proto` installed; it is not.)

The session is Mastra memory's thread: `Memory` on the agent, an `InMemoryStore` on the Mastra instance (no
database), and each turn's `agent.generate(question, {memory: {thread, resource}})`, which the exporter
writes as `gen_ai.conversation.id` (the thread id) on every span.

Scenario: turn 1, the model asks for the weather and the local time in Paris in parallel; the weather
service times out once (the tool throws), the model retries that call alone, then answers. Turn 2, same
thread (history from memory): both tools in parallel for Lyon, then the answer. Five LLM calls. `mastra.
shutdown()` shuts the observability instances down (flushing the exporter's batch processor) before Node
exits. The function calls are scripted with the ids the real API gives, an item id (`fc_…`) beside the `call_id`
(`call_…`) the output names (re-recorded with the same pins for the ids).
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

from tests.captures.recording.node import npm_install_and_run
from tests.captures.recording.session import Recording

SESSION = "mastra-weather-thread-1"
PINS = {
    "@mastra/core": "1.71.0",
    "@mastra/memory": "1.31.0",
    "@mastra/observability": "1.17.9",
    "@mastra/otel-exporter": "1.4.0",
    "zod": "4.6.7",
    # @mastra/otel-exporter 1.4.0's peer range for it: ^0.218.0.
    "@opentelemetry/exporter-trace-otlp-proto": "0.218.0",
}
# Each function call with the two ids the real Responses API gives it: its item's own id (`fc_…`) and the
# `call_id` (`call_…`) that the `function_call_output` answering it names.
REPLIES = [
    {"tool_calls": [{"name": "get_weather", "arguments": {"city": "Paris"},
                     "id": "call_Ms3wthrParis1", "item_id": "fc_68c3wthrParis1"},
                    {"name": "get_local_time", "arguments": {"city": "Paris"},
                     "id": "call_Ms3timeParis1", "item_id": "fc_68c3timeParis1"}],
     "input_tokens": 182, "output_tokens": 46},
    {"tool_calls": [{"name": "get_weather", "arguments": {"city": "Paris"},
                     "id": "call_Ms3wthrParis2", "item_id": "fc_68c3wthrParis2"}],
     "input_tokens": 251, "output_tokens": 17},
    {"text": "Paris is sunny at 21°C, and it is 14:05 there.", "input_tokens": 290, "output_tokens": 16},
    {"tool_calls": [{"name": "get_weather", "arguments": {"city": "Lyon"},
                     "id": "call_Ms3wthrLyon01", "item_id": "fc_68c3wthrLyon01"},
                    {"name": "get_local_time", "arguments": {"city": "Lyon"},
                     "id": "call_Ms3timeLyon01", "item_id": "fc_68c3timeLyon01"}],
     "input_tokens": 318, "output_tokens": 46},
    {"text": "Lyon is cloudy at 17°C; it is 14:06 there.", "input_tokens": 401, "output_tokens": 15},
]

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
const WEATHER = { Paris: 'sunny, 21°C', Lyon: 'cloudy, 17°C' };
const TIMES = { Paris: '14:05', Lyon: '14:06' };
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
  instructions: 'You are a terse weather assistant.',
  model: 'openai/gpt-4o-mini',
  tools: { get_weather: getWeather, get_local_time: getLocalTime },
  memory: new Memory({ options: { lastMessages: 20 } }),
});

const mastra = new Mastra({
  agents: { weatherAgent },
  storage: new InMemoryStore(),
  observability: new Observability({
    configs: {
      otel: {
        serviceName: 'weather-desk',
        exporters: [new OtelExporter({
          provider: { custom: { endpoint: process.env.OTEL_EXPORTER_OTLP_ENDPOINT, protocol: 'http/protobuf' } },
          signals: { logs: false },
        })],
      },
    },
  }),
});

try {
  const agent = mastra.getAgent('weatherAgent');
  for (const question of ["What's the weather and the local time in Paris?", 'And in Lyon?']) {
    const result = await agent.generate(question, { memory: { thread: SESSION, resource: 'user-42' } });
    console.log(question, '->', result.text);
  }
} finally {
  await mastra.shutdown();  // shuts observability down: the exporter's batch processor is flushed
}
"""


def main() -> None:
    capture_dir = Path(__file__).parent
    notes = ("turn 1: two parallel tool calls, get_weather throwing once (a timeout), the model retrying it, then "
             "the answer; turn 2 (same memory thread): two parallel tool calls, then the answer. Mastra's AI tracing "
             "through @mastra/otel-exporter (GenAI v1.38-style spans); the session is the memory thread "
             "(gen_ai.conversation.id); model router openai/gpt-4o-mini (Responses API); function_call item ids (fc_) "
             "distinct from their call_ids (call_)")
    with Recording(capture_dir, REPLIES, framework="mastra", instrumentation="@mastra/otel-exporter",
                   packages=list(PINS), session_id=SESSION, notes=notes) as rec:
        npm_install_and_run(rec, PINS, SCRIPT, env={"CAPTURE_SESSION_ID": SESSION})


if __name__ == "__main__":
    main()
