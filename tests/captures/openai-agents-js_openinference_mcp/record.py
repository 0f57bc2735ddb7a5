"""Re-record: the OpenAI Agents SDK for JavaScript (npm `@openai/agents`, Responses API) using a local MCP server's
tools and a function tool, traced by `@arizeai/openinference-instrumentation-openai-agents`.

Needs Node and npm (no Python packages); from the repository root:

    python3 tests/captures/openai-agents-js_openinference_mcp/record.py

It writes a small Node script into a temporary directory, copies `docs_server.mjs` (beside this file) there, and
`npm install @openai/agents@0.20.0 openai@7.60.0 @arizeai/openinference-instrumentation-openai-agents@0.2.15
@arizeai/openinference-core@2.7.1 zod@4.6.7 @opentelemetry/api@1.9.1 @opentelemetry/sdk-trace-node@2.12.1
@opentelemetry/exporter-trace-otlp-proto@0.223.1 @modelcontextprotocol/sdk@1.32.2 @modelcontextprotocol/client@2.4.0`,
then runs it with the Recording's environment: the SDK's default OpenAI client reads OPENAI_BASE_URL (the fake LLM),
the exporter posts to OTEL_EXPORTER_OTLP_TRACES_ENDPOINT (the recorder), http/protobuf. The newest release of each
but the OpenTelemetry exporter (sdk-trace-node 2.12.1 takes @opentelemetry/api below 1.10, the newest exporter needs
1.10: its own release, 0.223.1, as in `openai-agents-js_openinference`). `@modelcontextprotocol/client` is the MCP
client @openai/agents-core 0.20 runs `MCPServerStdio` with (its optional dependency, `^2.0.0`), pinned at the version
npm resolved; `@modelcontextprotocol/sdk` (1.32.2, its `latest`) is the server's.

The instrumentation is set up as in `openai-agents-js_openinference` (its README's `manuallyInstrument(agents)`, ESM:
it replaces the SDK's exporter to OpenAI), the session id set as OpenInference JS documents it,
`context.with(setSession(context.active(), {sessionId}), …)` (the instrumentation reads no `groupId`), the history
kept by the SDK's `MemorySession`. The MCP server runs untraced: only the agent's side is instrumented.

The tools: `search_docs` and `read_file` from `docs_server.mjs`, an MCP server (the MCP TypeScript SDK's
`McpServer`) the SDK starts over stdio (`MCPServerStdio`, `connect()` before the runs and `close()` after, as its
MCP guide shows), and `order_status`, a function tool of the agent's own. The SDK lists the server's tools at each
turn (its `mcp_tools` span). The run, two turns of one conversation:

1. `runner.run`: "Can I still get a refund for order A-1001?" The model calls `search_docs` (MCP) and
   `order_status` (function) in parallel, then reads two documents in parallel (`read_file` twice), then answers.
2. `runner.run(…, { stream: true })`: "And what would shipping a replacement cost?" The model searches and reads
   `policies/shipping.md` in parallel; the server returns that read as an `isError` result (no such document), which
   the SDK shows the model as the tool's output; the model reads `handbook/shipping.md` instead, then answers.

Why: MCP tools must be ordinary tool calls with the results the model got, the `isError` result a flagged failure,
the SDK's list-tools spans no steps. Compare `openai-agents_openinference_mcp` (the Python SDK). The tracer provider
is shut down (flushed) and the MCP server closed before Node exits.

Every function call is scripted with the two ids the real Responses API gives it (`with_api_call_ids`): its
`call_id` (`call_…`, which the `function_call_output` the SDK sends back names) and its item's own `id` (`fc_…`).
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

from tests.captures.recording.node import npm_install_and_run
from tests.captures.recording.openai_agents_travel import with_api_call_ids
from tests.captures.recording.session import Recording

SESSION = "oa-js-oi-mcp-docs-1"
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
    # The server's MCP SDK (docs_server.mjs), and the client @openai/agents-core runs MCPServerStdio with.
    "@modelcontextprotocol/sdk": "1.32.2",
    "@modelcontextprotocol/client": "2.4.0",
}
REPLIES = with_api_call_ids([
    {"tool_calls": [{"name": "search_docs", "arguments": {"query": "refund"}},
                    {"name": "order_status", "arguments": {"order_id": "A-1001"}}],
     "input_tokens": 398, "output_tokens": 36},
    {"tool_calls": [{"name": "read_file", "arguments": {"path": "policies/refunds.md"}},
                    {"name": "read_file", "arguments": {"path": "faq.md"}}],
     "input_tokens": 476, "output_tokens": 41},
    {"text": "Yes: order A-1001 was delivered 9 days ago, and refunds are issued within 14 days of purchase, "
             "to the original payment method.",
     "input_tokens": 561, "output_tokens": 29},
    {"tool_calls": [{"name": "search_docs", "arguments": {"query": "shipping"}},
                    {"name": "read_file", "arguments": {"path": "policies/shipping.md"}}],
     "when": "shipping", "input_tokens": 612, "output_tokens": 39},
    {"tool_calls": [{"name": "read_file", "arguments": {"path": "handbook/shipping.md"}}],
     "input_tokens": 683, "output_tokens": 20},
    {"text": "Shipping a replacement is free over 50 EUR, otherwise a flat 4.90 EUR.",
     "input_tokens": 724, "output_tokens": 18},
], SESSION)

SCRIPT = r"""
import * as agents from '@openai/agents';
import { Agent, MCPServerStdio, MemorySession, Runner, tool } from '@openai/agents';
import { OpenAIAgentsInstrumentation } from '@arizeai/openinference-instrumentation-openai-agents';
import { setSession } from '@arizeai/openinference-core';
import { context } from '@opentelemetry/api';
import { NodeTracerProvider, BatchSpanProcessor } from '@opentelemetry/sdk-trace-node';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';

const SESSION = process.env.CAPTURE_SESSION_ID;
const provider = new NodeTracerProvider({
  spanProcessors: [new BatchSpanProcessor(new OTLPTraceExporter())],  // endpoint from OTEL_EXPORTER_OTLP_*
});
provider.register();
new OpenAIAgentsInstrumentation({ tracerProvider: provider }).manuallyInstrument(agents);

const orderStatus = tool({
  name: 'order_status',
  description: 'The delivery status of an order.',
  parameters: z.object({ order_id: z.string() }),
  execute: async ({ order_id }) => `${order_id}: delivered 9 days ago, 38.50 EUR`,
});

const docs = new MCPServerStdio({
  name: 'docs',
  command: process.execPath,
  args: [fileURLToPath(new URL('./docs_server.mjs', import.meta.url))],
});
await docs.connect();

const agent = new Agent({
  name: 'Docs assistant',
  model: 'gpt-4o-mini',
  instructions: 'Answer from the company docs: search them, then read what you need; look orders up by their id.',
  tools: [orderStatus],
  mcpServers: [docs],
});

const runner = new Runner({ workflowName: 'Docs assistant workflow', groupId: SESSION });
const session = new MemorySession();
try {
  await context.with(setSession(context.active(), { sessionId: SESSION }), async () => {
    const first = await runner.run(agent, 'Can I still get a refund for order A-1001?', { session });
    console.log('turn 1:', first.finalOutput);
    const second = await runner.run(agent, 'And what would shipping a replacement cost?', { session, stream: true });
    for await (const _event of second) { /* the events as they stream; the answer is read once completed */ }
    await second.completed;
    console.log('turn 2:', second.finalOutput);
  });
} finally {
  await docs.close();
  await provider.shutdown();  // flushes the batch processor
}
"""


def main() -> None:
    capture_dir = Path(__file__).parent
    notes = ("tools from a local MCP server over stdio (MCPServerStdio; docs_server.mjs, the MCP TypeScript SDK's "
             "McpServer) and one function tool (order_status); two turns (runner.run, then runner.run streamed) of "
             "one MemorySession; turn one: search_docs (MCP) and order_status in parallel, two read_file in "
             "parallel, the answer; turn two (streamed): search_docs and read_file in parallel, the read an isError "
             "result, read_file of the right path, the answer. Session id from OpenInference's context "
             "(setSession), copied onto every span by its OITracer; function_call item ids (fc_) distinct from "
             "their call_ids (call_)")
    with Recording(capture_dir, REPLIES, framework="openai-agents-js",
                   instrumentation="@arizeai/openinference-instrumentation-openai-agents",
                   packages=list(PINS), session_id=SESSION, notes=notes) as rec:
        npm_install_and_run(rec, PINS, SCRIPT, env={"CAPTURE_SESSION_ID": SESSION},
                            files={"docs_server.mjs": capture_dir / "docs_server.mjs"})


if __name__ == "__main__":
    main()
