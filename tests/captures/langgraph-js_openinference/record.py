"""Re-record: a LangGraph.js ReAct agent (createReactAgent, ChatOpenAI), traced by OpenInference LangChain.js.

Needs Node and npm (no Python packages); from the repository root:

    python3 tests/captures/langgraph-js_openinference/record.py

It writes a small Node script into a temporary directory and, there,
`npm install @langchain/langgraph@1.7.3 @langchain/core@1.4.0 @langchain/openai@1.6.0 zod@4.6.7
@arizeai/openinference-instrumentation-langchain@4.1.1 @arizeai/openinference-core@2.7.1
@opentelemetry/api@1.9.1 @opentelemetry/sdk-trace-node@2.12.1 @opentelemetry/exporter-trace-otlp-proto@0.223.1`,
then runs it with the Recording's environment: ChatOpenAI's `configuration.baseURL` is OPENAI_BASE_URL (the
fake LLM; chat completions), the exporter posts to OTEL_EXPORTER_OTLP_TRACES_ENDPOINT (the recorder),
http/protobuf.

The instrumentation is set up as its README says for ESM: `new LangChainInstrumentation({tracerProvider})`
then `manuallyInstrument(CallbackManagerModule)` (`import * as … from "@langchain/core/callbacks/manager"`).
The session id is the LangGraph `thread_id` (the MemorySaver checkpointer's conversation): LangGraph copies
`configurable.thread_id` into every run's metadata, and the instrumentation writes the first of the
metadata's `session_id`, `thread_id`, `conversation_id` as `session.id` (its `utils.ts`, SESSION_ID_KEYS).

The run: turn 1 asks for the weather in Paris and Atlantis and the time in Paris; the model calls three
tools in parallel (get_weather x2, get_time); get_weather throws for Atlantis (ToolNode's default
handleToolErrors turns it into an error ToolMessage the model is shown), then the model answers. Turn 2
on the same thread ("And in Berlin?", the checkpointer's history) makes one tool call, then the answer.
The tracer provider is shut down (flushed) before Node exits.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

from tests.captures.recording.node import npm_install_and_run
from tests.captures.recording.session import Recording

SESSION = "lgjs-weather-thread-1"
PINS = {
    "@langchain/langgraph": "1.7.3",
    "@langchain/core": "1.4.0",
    "@langchain/openai": "1.6.0",
    "zod": "4.6.7",
    "@arizeai/openinference-instrumentation-langchain": "4.1.1",
    "@arizeai/openinference-core": "2.7.1",
    # sdk-trace-node 2.12 wants @opentelemetry/api < 1.10, and exporter 0.223 is the one built on sdk-trace 2.12.
    "@opentelemetry/api": "1.9.1",
    "@opentelemetry/sdk-trace-node": "2.12.1",
    "@opentelemetry/exporter-trace-otlp-proto": "0.223.1",
}
REPLIES = [
    {"tool_calls": [{"name": "get_weather", "arguments": {"city": "Paris"}},
                    {"name": "get_weather", "arguments": {"city": "Atlantis"}},
                    {"name": "get_time", "arguments": {"city": "Paris"}}],
     "input_tokens": 182, "output_tokens": 61},
    {"text": "Paris is sunny at 21°C and it is 14:05 there; I could not find any weather for Atlantis.",
     "input_tokens": 297, "output_tokens": 24},
    {"tool_calls": [{"name": "get_weather", "arguments": {"city": "Berlin"}}], "when": "Berlin",
     "input_tokens": 331, "output_tokens": 17},
    {"text": "Berlin is cloudy at 17°C.", "input_tokens": 365, "output_tokens": 9},
]

SCRIPT = r"""
import { NodeTracerProvider, BatchSpanProcessor } from '@opentelemetry/sdk-trace-node';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { LangChainInstrumentation } from '@arizeai/openinference-instrumentation-langchain';
import * as CallbackManagerModule from '@langchain/core/callbacks/manager';
import { ChatOpenAI } from '@langchain/openai';
import { tool } from '@langchain/core/tools';
import { createReactAgent } from '@langchain/langgraph/prebuilt';
import { MemorySaver } from '@langchain/langgraph';
import { z } from 'zod';

const provider = new NodeTracerProvider({
  spanProcessors: [new BatchSpanProcessor(new OTLPTraceExporter())],  // endpoint from OTEL_EXPORTER_OTLP_*
});
provider.register();
const instrumentation = new LangChainInstrumentation({ tracerProvider: provider });
instrumentation.manuallyInstrument(CallbackManagerModule);

const WEATHER = { Paris: 'sunny, 21°C', Berlin: 'cloudy, 17°C' };
const getWeather = tool(
  async ({ city }) => {
    if (!(city in WEATHER)) throw new Error(`unknown city: ${city}`);
    return WEATHER[city];
  },
  { name: 'get_weather', description: 'The current weather in a city.', schema: z.object({ city: z.string() }) },
);
const getTime = tool(
  async ({ city }) => JSON.stringify({ city, time: '14:05' }),
  { name: 'get_time', description: 'The local time in a city.', schema: z.object({ city: z.string() }) },
);

const model = new ChatOpenAI({
  model: 'gpt-4o-mini',
  apiKey: process.env.OPENAI_API_KEY,
  configuration: { baseURL: process.env.OPENAI_BASE_URL },
});
const agent = createReactAgent({
  llm: model,
  tools: [getWeather, getTime],
  prompt: 'You are a terse weather assistant. Use the tools.',
  checkpointSaver: new MemorySaver(),
});
const config = { configurable: { thread_id: process.env.CAPTURE_SESSION_ID } };

try {
  const first = await agent.invoke(
    { messages: [{ role: 'user', content: 'Weather and time in Paris, and the weather in Atlantis?' }] }, config);
  console.log('turn 1:', first.messages.at(-1).content);
  const second = await agent.invoke({ messages: [{ role: 'user', content: 'And in Berlin?' }] }, config);
  console.log('turn 2:', second.messages.at(-1).content);
} finally {
  await provider.shutdown();  // flushes the batch processor
}
"""


def main() -> None:
    capture_dir = Path(__file__).parent
    notes = ("createReactAgent with a MemorySaver: turn 1 makes three parallel tool calls (get_weather x2, one "
             "throwing for an unknown city, shown to the model as ToolNode's error ToolMessage; get_time), then the "
             "answer; turn 2 on the same thread_id one tool call, then the answer. OpenInference LangChain.js "
             "(manuallyInstrument); session id = thread_id (copied into run metadata, written as session.id)")
    with Recording(capture_dir, REPLIES, framework="langgraph-js",
                   instrumentation="@arizeai/openinference-instrumentation-langchain", packages=list(PINS),
                   session_id=SESSION, notes=notes) as rec:
        npm_install_and_run(rec, PINS, SCRIPT, env={"CAPTURE_SESSION_ID": SESSION})


if __name__ == "__main__":
    main()
