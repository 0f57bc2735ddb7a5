"""Re-record: a Mastra `Agent` with Memory (npm `@mastra/core` 1.x, the model router's `openai/gpt-4o-mini`): a short
message window, working memory the agent updates through Mastra's `updateWorkingMemory` tool, and semantic recall
over the thread; traced by Mastra's AI tracing exported over OTLP by `@mastra/otel-exporter`.

Needs Node and npm (no Python packages); from the repository root:

    python3 tests/captures/mastra_native_memory/record.py

It writes a small Node script into a temporary directory and, there,
`npm install @mastra/core@1.71.0 @mastra/memory@1.31.0 @mastra/libsql@1.23.1 @mastra/observability@1.17.9
@mastra/otel-exporter@1.4.0 zod@4.6.7 @opentelemetry/exporter-trace-otlp-proto@0.218.0`
(the newest of each but the last: `@mastra/otel-exporter` 1.4.0 pins its exporters' peer range to ^0.218.0),
then runs it with the Recording's environment. The model router resolves `openai/*` to the AI SDK's OpenAI provider
(bundled in @mastra/core) on the Responses API, and the embedder `ModelRouterEmbeddingModel('openai/text-embedding-3-
small')` to its embeddings API, both with their base URL from OPENAI_BASE_URL (the fake LLM, whose `/v1/embeddings`
answers a vector of each text's words). Observability is set up as the exporter's README says (as in `mastra_native`):
an `Observability` with an `OtelExporter` whose custom endpoint is OTEL_EXPORTER_OTLP_ENDPOINT (the recorder).

Memory is set up as Mastra's memory docs show: `new Memory({storage: new LibSQLStore(…), vector: new LibSQLVector(…),
embedder, options})` (libSQL: resource-scoped working memory needs a store with resources; a file in the scratch
project, deleted with it; the Mastra instance has no storage of its own, and says it falls back to an in-memory one),
`options`: `lastMessages: 2` (only the last two stored messages are sent again: Mastra stores a turn as its question
and one assistant message holding its tool calls, results and text, so the window is the last turn), `workingMemory:
{enabled: true, template}` (a Markdown profile of the traveller, resource-scoped, the default: at each turn's start
Mastra adds to the prompt, after the agent's instructions, a second system message of its instructions for the
`updateWorkingMemory` tool (`{memory}`) it gives the agent, the template and, between `<working_memory_data>` tags, the
note as last stored: `null`, then each update's), and `semanticRecall: {topK: 1, messageRange: 0}` (the question
embedded; the thread's most similar stored message recalled into the prompt, alone, when the window no longer holds
it). Each turn is `agent.generate|stream(question, {memory: {thread, resource}})`: the thread is the session (the
exporter writes it as `gen_ai.conversation.id` on every span).

Scenario, six LLM calls over three turns on one thread: turn 1 (generate), Ada says who she is and asks for the
weather and the local time in Paris: the model stores her profile (`updateWorkingMemory`) and calls both tools, all
three in parallel; the weather service times out (the tool throws), the model retries it alone, then answers. Turn 2
(`stream`), she goes to Nice instead: the model updates the profile and looks Nice up in parallel, then answers,
streamed (the window still holds turn 1, sent without its `updateWorkingMemory` call: Mastra hides those from the
history). Turn 3 (generate), "Remind me: was Paris sunny?": turn 1 has left the window; its assistant message (the
Paris tool calls and answer) is recalled by meaning, its question not, and the model answers from it. Mastra sends the
recalled message behind a user message "." of its own (`ensureGeminiCompatibleMessages`, for any provider: the first
message after the system ones must be the user's). The fake LLM's embeddings are a bag of the text's words
(`fake_llm.embedding_of`): the question shares "Paris" and "sunny" with turn 1's answer. Mastra's AI tracing opens no
span for the embedder's calls. `mastra.shutdown()` flushes the exporter before Node exits. Every function call is
scripted with the two ids the real Responses API gives it (`with_api_call_ids`).
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

from tests.captures.recording.node import npm_install_and_run
from tests.captures.recording.openai_agents_travel import with_api_call_ids
from tests.captures.recording.session import Recording

SESSION = "mastra-ada-trip-thread-1"
PINS = {
    "@mastra/core": "1.71.0",
    "@mastra/memory": "1.31.0",
    "@mastra/libsql": "1.23.1",
    "@mastra/observability": "1.17.9",
    "@mastra/otel-exporter": "1.4.0",
    "zod": "4.6.7",
    # @mastra/otel-exporter 1.4.0's peer range for it: ^0.218.0.
    "@opentelemetry/exporter-trace-otlp-proto": "0.218.0",
}
UPDATE_MEMORY = "updateWorkingMemory"  # the tool Mastra's Memory gives an agent with working memory
PROFILE = "# Traveller\n- **Name**: Ada\n- **Home city**: Lyon\n- **Trip**: Paris, next week\n"
PROFILE_NICE = "# Traveller\n- **Name**: Ada\n- **Home city**: Lyon\n- **Trip**: Nice, next week (was Paris)\n"
REPLIES = with_api_call_ids([
    # Turn 1, generate: the profile stored and both tools at once; get_weather throws.
    {"tool_calls": [{"name": UPDATE_MEMORY, "arguments": {"memory": PROFILE}},
                    {"name": "get_weather", "arguments": {"city": "Paris"}},
                    {"name": "get_local_time", "arguments": {"city": "Paris"}}],
     "input_tokens": 731, "output_tokens": 84},
    {"tool_calls": [{"name": "get_weather", "arguments": {"city": "Paris"}}], "input_tokens": 842, "output_tokens": 17},
    {"text": "Paris is sunny at 21°C, and it is 14:05 there.", "input_tokens": 881, "output_tokens": 16},
    # Turn 2, stream: the trip changed: the profile updated and the weather looked up at once.
    {"tool_calls": [{"name": UPDATE_MEMORY, "arguments": {"memory": PROFILE_NICE}},
                    {"name": "get_weather", "arguments": {"city": "Nice"}}],
     "input_tokens": 934, "output_tokens": 71},
    {"text": "Nice is clear at 24°C.", "input_tokens": 1003, "output_tokens": 9},
    # Turn 3, generate: turn 1 out of the window; its answer recalled by meaning.
    {"text": "Yes: Paris was sunny at 21°C when you asked.", "input_tokens": 962, "output_tokens": 14},
], SESSION)

SCRIPT = r"""
import { Mastra } from '@mastra/core/mastra';
import { Agent } from '@mastra/core/agent';
import { createTool } from '@mastra/core/tools';
import { ModelRouterEmbeddingModel } from '@mastra/core/llm';
import { LibSQLStore, LibSQLVector } from '@mastra/libsql';
import { Memory } from '@mastra/memory';
import { Observability } from '@mastra/observability';
import { OtelExporter } from '@mastra/otel-exporter';
import { z } from 'zod';

const SESSION = process.env.CAPTURE_SESSION_ID;
const WEATHER = { Paris: 'sunny, 21°C', Lyon: 'cloudy, 17°C', Nice: 'clear, 24°C' };
const TIMES = { Paris: '14:05', Lyon: '14:05', Nice: '14:05' };
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

const memory = new Memory({
  storage: new LibSQLStore({ id: 'trip-storage', url: 'file:./memory.db' }),
  vector: new LibSQLVector({ id: 'trip-vector', url: 'file:./memory.db' }),
  embedder: new ModelRouterEmbeddingModel('openai/text-embedding-3-small'),
  options: {
    lastMessages: 2,
    workingMemory: {
      enabled: true,
      template: '# Traveller\n- **Name**:\n- **Home city**:\n- **Trip**:\n',
    },
    semanticRecall: { topK: 1, messageRange: 0 },
  },
});

const tripAgent = new Agent({
  id: 'trip-agent',
  name: 'Trip Agent',
  instructions: 'You are a terse travel assistant. Use your tools for weather and local time.',
  model: 'openai/gpt-4o-mini',
  tools: { get_weather: getWeather, get_local_time: getLocalTime },
  memory,
});

const mastra = new Mastra({
  agents: { tripAgent },
  observability: new Observability({
    configs: {
      otel: {
        serviceName: 'trip-desk',
        exporters: [new OtelExporter({
          provider: { custom: { endpoint: process.env.OTEL_EXPORTER_OTLP_ENDPOINT, protocol: 'http/protobuf' } },
          signals: { logs: false },
        })],
      },
    },
  }),
});

try {
  const agent = mastra.getAgent('tripAgent');
  const thread = { memory: { thread: SESSION, resource: 'traveller-ada' } };
  const first = await agent.generate(
    "Hi, I'm Ada from Lyon and I'm off to Paris next week. What's the weather and the local time in Paris?", thread);
  console.log('turn 1 ->', first.text);
  const second = await agent.stream("Change of plan: I'm going to Nice instead. What's the weather there?", thread);
  let streamed = '';
  for await (const piece of second.textStream) streamed += piece;
  console.log('turn 2 (streamed) ->', streamed);
  const third = await agent.generate('Remind me: was Paris sunny?', thread);
  console.log('turn 3 ->', third.text);
} finally {
  await mastra.shutdown();  // shuts observability down: the exporter's batch processor is flushed
}
"""


def main() -> None:
    capture_dir = Path(__file__).parent
    notes = ("a Mastra agent with Memory (libSQL storage and vector store, embedder openai/text-embedding-3-small): "
             "lastMessages 2, resource-scoped working memory (a Markdown traveller profile the agent stores with "
             "updateWorkingMemory; Mastra injects it each turn as a second system message), semantic recall (topK 1, "
             "messageRange 0). Turn 1 (generate): updateWorkingMemory, get_weather and get_local_time in parallel, "
             "get_weather throwing (a timeout) and retried, then the answer; turn 2 (stream): updateWorkingMemory and "
             "get_weather in parallel, then the answer; turn 3 (generate): turn 1 out of the window, its answer "
             "recalled (behind Mastra's placeholder user message '.'), the answer. Mastra's AI tracing through "
             "@mastra/otel-exporter; the session is the memory thread (gen_ai.conversation.id); model router "
             "openai/gpt-4o-mini (Responses API); function_call item ids (fc_) distinct from their call_ids (call_); "
             "no span for the embedder's calls")
    with Recording(capture_dir, REPLIES, framework="mastra", instrumentation="@mastra/otel-exporter",
                   packages=list(PINS), session_id=SESSION, notes=notes) as rec:
        npm_install_and_run(rec, PINS, SCRIPT, env={"CAPTURE_SESSION_ID": SESSION})


if __name__ == "__main__":
    main()
