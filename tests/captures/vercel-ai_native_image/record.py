"""Re-record: the Vercel AI SDK (npm `ai` 7) with its OpenAI provider, images in and out, traced by `@ai-sdk/otel`.

Needs Node and npm (no Python packages); from the repository root:

    python3 tests/captures/vercel-ai_native_image/record.py

It writes a small Node script into a temporary directory and, there,
`npm install ai@7.0.185 @ai-sdk/openai@4.0.126 @ai-sdk/otel@1.0.185 zod@4.6.7
@opentelemetry/api@1.9.1 @opentelemetry/sdk-trace-node@2.12.1 @opentelemetry/exporter-trace-otlp-proto@0.223.1`
(the newest `ai`, `@ai-sdk/openai` and `@ai-sdk/otel`; the newest exporter, 0.301.2, wants @opentelemetry/api ^1.10,
which @ai-sdk/otel 1.0.185 (pinning 1.9.1) and sdk-trace-node 2.12.1 (<1.10) exclude, so the exporter of the
sdk-trace-node 2.12 line), then runs it with the Recording's environment: the provider's baseURL is OPENAI_BASE_URL
(the fake LLM; `openai(...)` is the Responses API in @ai-sdk/openai 4), the exporter posts to
OTEL_EXPORTER_OTLP_TRACES_ENDPOINT (the recorder), http/protobuf.

As in `vercel-ai_native`: `registerTelemetry(new LegacyOpenTelemetry(...))` gives the `ai.*` spans
(`ai.generateText` -> `ai.generateText.doGenerate` -> `ai.toolCall`, the same under `ai.streamText`); the session id
is runtime context (`runtimeContext: {sessionId}`, `telemetry.includeRuntimeContext: {sessionId: true}`), written as
`ai.settings.context.sessionId`.

Images, as AI SDK 7 documents them. The question holds text, a photo sent whole (a 48x48 PNG of noise made here, its
base64 well over the 4,096 characters evalkit inlines: the canonical `{type: 'file', mediaType: 'image/png', data:
<Uint8Array>}` part) and a photo by URL (the deprecated but documented `{type: 'image', image: new URL('https://…')}`
part, which the OpenAI provider passes on as a URL, never downloading it). `get_map` returns a map as a PNG: its
`execute` returns `{city, mediaType, base64}` and its `toModelOutput` turns that into `{type: 'content', value: [text,
{type: 'file', mediaType, data: {type: 'data', data}}]}`, which @ai-sdk/openai sends as a function_call_output of
`input_text` and `input_image` (a data URL) items. Paris's map is noise (large), Berlin's a flat 8x8 (small).

The run: turn one is generateText, `stopWhen: stepCountIs(5)`, two tools (`get_weather`, which throws for an
unknown city, and `get_map`): the model calls three tools in parallel (Paris's weather, Atlantis's
weather, which throws, and Paris's map), then retries the failed city under another name with a line of text, then
answers. Turn two is streamText in the same session with turn one's messages (the question with its images, and
every step's, `responseMessages`: the map's image re-sent) as history: the weather and map of Berlin in parallel,
then the answer. Five LLM calls. The function calls are scripted with the ids the real Responses API gives, an item
id (`fc_…`) beside the `call_id` (`call_…`). The tracer provider is shut down (flushed) before Node exits.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

from tests.captures.recording.node import npm_install_and_run
from tests.captures.recording.session import Recording

SESSION = "vercel-image-1"
PINS = {
    "ai": "7.0.185",
    "@ai-sdk/openai": "4.0.126",
    "@ai-sdk/otel": "1.0.185",
    "zod": "4.6.7",
    # @ai-sdk/otel pins @opentelemetry/api 1.9.1: the same copy for the SDK, so that one context
    # manager carries the parent span across awaits.
    "@opentelemetry/api": "1.9.1",
    "@opentelemetry/sdk-trace-node": "2.12.1",
    "@opentelemetry/exporter-trace-otlp-proto": "0.223.1",
}
REPLIES = [
    # Turn one (generateText).
    {"tool_calls": [{"name": "get_weather", "arguments": {"city": "Paris"},
                     "id": "call_Im4wthrParis1", "item_id": "fc_71c0wthrParis1"},
                    {"name": "get_weather", "arguments": {"city": "Atlantis"},
                     "id": "call_Im4wthrAtlnt1", "item_id": "fc_71c0wthrAtlnt1"},
                    {"name": "get_map", "arguments": {"city": "Paris"},
                     "id": "call_Im4mapParis01", "item_id": "fc_71c0mapParis01"}]},
    {"text": "Atlantis is not a city the weather service knows; the second photo looks like the resort in Nassau.",
     "tool_calls": [{"name": "get_weather", "arguments": {"city": "Nassau"},
                     "id": "call_Im4wthrNassu1", "item_id": "fc_71c0wthrNassu1"}]},
    {"text": "The first photo is Paris: sunny, 21°C (map attached). The second is the Atlantis resort in Nassau: "
             "humid, 29°C."},
    # Turn two (streamText), with turn one as history.
    {"tool_calls": [{"name": "get_weather", "arguments": {"city": "Berlin"},
                     "id": "call_Im4wthrBerln1", "item_id": "fc_71c0wthrBerln1"},
                    {"name": "get_map", "arguments": {"city": "Berlin"},
                     "id": "call_Im4mapBerln01", "item_id": "fc_71c0mapBerln01"}], "when": "Berlin"},
    {"text": "Berlin is cloudy at 17°C; its map is the grey square."},
]

SCRIPT = r"""
import { generateText, streamText, tool, stepCountIs, registerTelemetry } from 'ai';
import { createOpenAI } from '@ai-sdk/openai';
import { LegacyOpenTelemetry } from '@ai-sdk/otel';
import { NodeTracerProvider, BatchSpanProcessor } from '@opentelemetry/sdk-trace-node';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { deflateSync } from 'node:zlib';
import { z } from 'zod';

// A PNG (RGB, 8 bits) of `size` x `size` pixels, each given by `pixel(x, y)`: made here, no image library.
function crc32(bytes) {
  let crc = ~0;
  for (const byte of bytes) {
    crc ^= byte;
    for (let k = 0; k < 8; k++) crc = (crc >>> 1) ^ (0xedb88320 & -(crc & 1));
  }
  return ~crc >>> 0;
}
function chunk(type, data) {
  const head = Buffer.alloc(8);
  head.writeUInt32BE(data.length, 0);
  head.write(type, 4, 'ascii');
  const tail = Buffer.alloc(4);
  tail.writeUInt32BE(crc32(Buffer.concat([head.subarray(4), data])), 0);
  return Buffer.concat([head, data, tail]);
}
function png(size, pixel) {
  const header = Buffer.alloc(13);
  header.writeUInt32BE(size, 0);
  header.writeUInt32BE(size, 4);
  header.set([8, 2, 0, 0, 0], 8);
  const rows = [];
  for (let y = 0; y < size; y++) {
    rows.push(0);  // filter: none
    for (let x = 0; x < size; x++) rows.push(...pixel(x, y));
  }
  return new Uint8Array(Buffer.concat([
    Buffer.from([137, 80, 78, 71, 13, 10, 26, 10]), chunk('IHDR', header),
    chunk('IDAT', deflateSync(Buffer.from(rows))), chunk('IEND', Buffer.alloc(0)),
  ]));
}
function noise(seed) {  // deterministic, so that a re-recording sends the same bytes
  let state = seed;
  // An LCG's high bits: its low ones repeat within 256 draws, which deflate would squeeze away.
  return () => { state = (state * 1103515245 + 12345) & 0x7fffffff; return (state >>> 16) & 0xff; };
}
const photoNoise = noise(7);
const PHOTO = png(48, () => [photoNoise(), photoNoise(), photoNoise()]);  // its base64 far over 4,096 characters
const mapNoise = noise(11);
const MAPS = {
  Paris: png(48, () => [mapNoise(), 120, mapNoise()]),  // large: referenced, as the photo
  Berlin: png(8, () => [128, 128, 128]),  // small: inlined as its data URL
};

const SESSION = process.env.CAPTURE_SESSION_ID;
const provider = new NodeTracerProvider({
  spanProcessors: [new BatchSpanProcessor(new OTLPTraceExporter())],  // endpoint from OTEL_EXPORTER_OTLP_*
});
provider.register();
registerTelemetry(new LegacyOpenTelemetry({ tracer: provider.getTracer('ai') }));

const openai = createOpenAI({ baseURL: process.env.OPENAI_BASE_URL, apiKey: process.env.OPENAI_API_KEY });
const WEATHER = { Paris: 'sunny, 21°C', Nassau: 'humid, 29°C', Berlin: 'cloudy, 17°C' };
const tools = {
  get_weather: tool({
    description: 'The weather in a city.',
    inputSchema: z.object({ city: z.string() }),
    execute: async ({ city }) => {
      if (!(city in WEATHER)) throw new Error(`unknown city: ${city}`);
      return WEATHER[city];
    },
  }),
  get_map: tool({
    description: 'A map of a city, as an image.',
    inputSchema: z.object({ city: z.string() }),
    execute: async ({ city }) => ({ city, mediaType: 'image/png', base64: Buffer.from(MAPS[city]).toString('base64') }),
    // The image itself for the model, as the AI SDK documents a tool's image result (AI SDK 7's `file` part).
    toModelOutput: ({ output }) => ({
      type: 'content',
      value: [
        { type: 'text', text: `Map of ${output.city}:` },
        { type: 'file', mediaType: output.mediaType, data: { type: 'data', data: output.base64 } },
      ],
    }),
  }),
};
const common = {
  model: openai('gpt-4o'),
  system: 'You are a terse travel assistant. Look up every city you are asked about, all at once.',
  tools,
  stopWhen: stepCountIs(5),
  runtimeContext: { sessionId: SESSION },
  telemetry: { isEnabled: true, functionId: 'photo-agent', includeRuntimeContext: { sessionId: true } },
};

try {
  const question = {
    role: 'user',
    content: [
      { type: 'text', text: 'Where were these two photos taken? Tell me the weather there, and show me a map.' },
      { type: 'file', mediaType: 'image/png', data: PHOTO },
      { type: 'image', image: new URL('https://images.example.com/photos/atlantis-resort.jpg') },
    ],
  };
  const first = await generateText({ ...common, messages: [question] });
  console.log('generateText:', first.steps.length, 'steps:', first.text);
  const second = streamText({
    ...common,
    messages: [
      question,
      ...first.responseMessages,  // every step's messages (AI SDK 7; `response.messages` is the last step's)
      { role: 'user', content: 'And Berlin? Its weather and map too.' },
    ],
  });
  let streamed = '';
  for await (const piece of second.textStream) streamed += piece;
  console.log('streamText:', (await second.steps).length, 'steps:', streamed);
} finally {
  await provider.shutdown();  // flushes the batch processor
}
"""


def main() -> None:
    capture_dir = Path(__file__).parent
    notes = ("images in and out on the OpenAI provider (Responses API): the question holds text, a 48x48 PNG sent "
             "whole (a file part of a Uint8Array, base64 over 4,096 characters) and an https image URL (an image part "
             "of a URL); get_map returns a PNG that toModelOutput makes a content output of text and a file part "
             "(sent as input_text and input_image items). Turn one, generateText: three parallel tool calls "
             "(get_weather x2, one throwing for an unknown city, get_map), a retry of the failed city under another "
             "name with a line of text, then the answer; turn two, streamText in the same session with turn one's "
             "messages (the images re-sent) as history: get_weather and get_map in parallel, then the answer. "
             "@ai-sdk/otel LegacyOpenTelemetry (ai.* spans); session id from runtime context "
             "(ai.settings.context.sessionId); function_call item ids (fc_) distinct from their call_ids (call_)")
    with Recording(capture_dir, REPLIES, framework="vercel-ai-sdk",
                   instrumentation="@ai-sdk/otel LegacyOpenTelemetry", packages=list(PINS),
                   session_id=SESSION, notes=notes) as rec:
        npm_install_and_run(rec, PINS, SCRIPT, env={"CAPTURE_SESSION_ID": SESSION})


if __name__ == "__main__":
    main()
