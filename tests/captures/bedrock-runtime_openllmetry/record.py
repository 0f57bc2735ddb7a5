"""Re-record: a hand-written Amazon Bedrock Converse tool loop (boto3's `bedrock-runtime` client), traced by
OpenLLMetry's Bedrock instrumentation.

    python3 -m venv /tmp/cap-bedrock-runtime && /tmp/cap-bedrock-runtime/bin/pip install \
        boto3==1.44.18 opentelemetry-instrumentation-bedrock==0.62.4 \
        opentelemetry-sdk==1.45.2 opentelemetry-exporter-otlp-proto-http==1.45.2
    /tmp/cap-bedrock-runtime/bin/python tests/captures/bedrock-runtime_openllmetry/record.py

Why: calling Bedrock's Converse API directly with boto3 is how most Bedrock applications that use no framework talk to
Claude, and OpenLLMetry's `opentelemetry-instrumentation-bedrock` is the Bedrock instrumentation most installed (every
`traceloop-sdk` brings it; OpenInference's `openinference-instrumentation-bedrock` is the other). The corpus had no
direct Bedrock call under any instrumentation. boto3 is pointed at the fake LLM (`endpoint_url`, dummy credentials, a
region), which answers `POST /model/{modelId}/converse-stream` in AWS's binary event stream framing and `/converse` as
JSON.

The loop is written as the Converse docs show it: the system prompt and tools each followed by a `cachePoint` block,
each turn's question too (prompt caching: every call reads or writes cache tokens; a tool round's messages, after the
question's cache point, are not cached, so a long tool result outnumbers the cached prefix); extended thinking on
(`additionalModelRequestFields={"thinking": …}`), so every answer opens with a signed `reasoningContent` block that the
loop sends back with the answer, as Claude requires; each tool result a `toolResult` block, a failed tool's with
`status: "error"`. Each user turn is an application span naming the session (`session.id`), every Converse call a
`chat` span of the instrumentation's under it. Turn 1 streamed (`converse_stream`): the model looks up two cities at
once, the Lyon lookup raises (a timeout: sent as an error result), so it calls it again, then answers. Turn 2, the
history re-sent, not streamed (`converse`): a week's forecast for one more city (a long result: the last call's
2,650 uncached prompt tokens outnumber the 2,550 it reads from the cache), then the answer. Five calls. (The versions
the capture was recorded with are in meta.json.)
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

from tests.captures.recording.session import Recording

SESSION = "bedrock-weather-1"
MODEL = "us.anthropic.claude-sonnet-4-5-20250929-v1:0"
REPLIES = [
    # Turn 1 (converse_stream), call 1: both cities at once; the system prompt and tools go into the cache.
    {"reasoning": "Two cities to compare; I can look both up in parallel.",
     "text": "Checking both cities.",
     "tool_calls": [{"name": "get_weather", "arguments": {"city": "Paris"}},
                    {"name": "get_weather", "arguments": {"city": "Lyon"}}],
     "input_tokens": 2100, "cache_write_tokens": 2080, "output_tokens": 96},
    # Call 2: the Lyon lookup timed out; try it again. The prefix up to the question is read back; the tool round
    # after it is not cached.
    {"reasoning": "Paris came back but the Lyon lookup timed out; a retry should work.",
     "tool_calls": [{"name": "get_weather", "arguments": {"city": "Lyon"}}],
     "input_tokens": 2350, "cache_read_tokens": 2080, "output_tokens": 64},
    # Call 3: the answer.
    {"reasoning": "Paris 21°C against Lyon 17°C: Paris is four degrees warmer.",
     "text": "Paris is warmer: sunny at 21°C, while Lyon is cloudy at 17°C.",
     "input_tokens": 2460, "cache_read_tokens": 2080, "output_tokens": 58},
    # Turn 2 (converse, not streamed), call 4: a follow-up city's week; turn 1 and the question are written.
    {"reasoning": "A follow-up about Nice and its week; I need its forecast.",
     "tool_calls": [{"name": "get_forecast", "arguments": {"city": "Nice", "days": 7}}],
     "input_tokens": 2560, "cache_read_tokens": 2080, "cache_write_tokens": 470, "output_tokens": 45},
    # Call 5: the second answer, the week's forecast (a long result, not cached) after the cached prefix.
    {"reasoning": "Nice at 24°C today beats Paris at 21°C, and the forecast stays sunny all week.",
     "text": "Nice is warmer still: sunny at 24°C today, and it stays sunny at 22-25°C all week.",
     "input_tokens": 5200, "cache_read_tokens": 2550, "output_tokens": 52},
]
WEATHER = {"Paris": "sunny, 21°C", "Lyon": "cloudy, 17°C", "Nice": "sunny, 24°C"}
# Long enough to be worth caching in a real run (the fake LLM counts what it is told to).
SYSTEM = ("You are a terse weather assistant for a travel agency. Look up every city the user names with "
          "get_weather, all at once, before answering; compare them in one sentence. " * 8)
TOOLS = [{"toolSpec": {"name": "get_weather", "description": "The weather in a city.",
                       "inputSchema": {"json": {"type": "object", "properties": {"city": {"type": "string"}},
                                                "required": ["city"]}}}},
         {"toolSpec": {"name": "get_forecast", "description": "A city's forecast, day by day.",
                       "inputSchema": {"json": {"type": "object",
                                                "properties": {"city": {"type": "string"}, "days": {"type": "integer"}},
                                                "required": ["city", "days"]}}}},
         {"cachePoint": {"type": "default"}}]
CACHE_POINT = {"cachePoint": {"type": "default"}}


def main() -> None:
    notes = ("a hand-written boto3 Converse tool loop on a Claude inference profile with extended thinking (a signed "
             "reasoningContent block before every answer, sent back with it) and prompt caching (cachePoint blocks "
             "after the system prompt, the tools and each turn's question); each turn an application span naming "
             "session.id; turn 1 converse_stream: two parallel get_weather calls, the Lyon one raising (sent as a "
             "toolResult with status error), retried, then the answer; turn 2 converse: get_forecast for a week (a "
             "long result after the question's cache point: the last call's uncached prompt tokens outnumber its "
             "cache reads), then the answer")
    with Recording(Path(__file__).parent, REPLIES, framework="bedrock-runtime", instrumentation="openllmetry",
                   packages=["boto3", "botocore", "opentelemetry-instrumentation-bedrock", "opentelemetry-sdk",
                             "opentelemetry-exporter-otlp-proto-http"],
                   session_id=SESSION, notes=notes) as rec:
        rec.env()
        # Dummy credentials: the fake LLM checks no signature, but botocore signs every request.
        os.environ.update({"AWS_ACCESS_KEY_ID": "AKIAFAKEFAKEFAKEFAKE", "AWS_SECRET_ACCESS_KEY": "fake-secret"})
        import boto3
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
        from opentelemetry.instrumentation.bedrock import BedrockInstrumentor
        from opentelemetry.sdk.resources import Resource
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import BatchSpanProcessor

        provider = TracerProvider(resource=Resource.create({"service.name": "weather-desk"}))
        provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
        BedrockInstrumentor().instrument(tracer_provider=provider)
        tracer = provider.get_tracer("weather-desk")
        client = boto3.client("bedrock-runtime", region_name="us-east-1",
                              endpoint_url=rec.base_url.removesuffix("/v1"))
        failed_once: set[str] = set()

        def get_weather(city: str) -> str:
            if city == "Lyon" and city not in failed_once:  # the weather service times out once
                failed_once.add(city)
                raise TimeoutError(f"weather service timed out for {city}")
            return WEATHER[city]

        def get_forecast(city: str, days: int) -> str:
            return "\n".join(f"Day {day}: sunny, {22 + day % 4}°C, light wind from the sea, no rain expected; "
                             f"UV index high, humidity {55 + day}%." for day in range(1, days + 1))

        tools = {"get_weather": get_weather, "get_forecast": get_forecast}

        def converse(messages: list[dict[str, Any]], question: int, stream: bool) -> dict[str, Any]:
            """One Converse call, the turn's question (`messages[question]`) marked as a cache point; the answer as a
            message."""
            marked = {**messages[question], "content": [*messages[question]["content"], CACHE_POINT]}
            sent = [*messages[:question], marked, *messages[question + 1:]]
            request: dict[str, Any] = {
                "modelId": MODEL, "messages": sent, "system": [{"text": SYSTEM}, CACHE_POINT],
                "toolConfig": {"tools": TOOLS}, "inferenceConfig": {"maxTokens": 4096},
                "additionalModelRequestFields": {"thinking": {"type": "enabled", "budget_tokens": 2048}}}
            if not stream:
                return client.converse(**request)["output"]["message"]
            blocks: dict[int, dict[str, Any]] = {}  # the answer's content blocks as the stream builds them
            for event in client.converse_stream(**request)["stream"]:
                if "contentBlockStart" in event:
                    start = event["contentBlockStart"]
                    use = start["start"]["toolUse"]
                    blocks[start["contentBlockIndex"]] = {"toolUse": {**use, "input": ""}}
                elif "contentBlockDelta" in event:
                    delta = event["contentBlockDelta"]
                    block = blocks.setdefault(delta["contentBlockIndex"], {})
                    piece = delta["delta"]
                    if "text" in piece:
                        block["text"] = block.get("text", "") + piece["text"]
                    elif "toolUse" in piece:
                        block["toolUse"]["input"] += piece["toolUse"]["input"]
                    elif "reasoningContent" in piece:
                        reasoning = block.setdefault("reasoningContent", {"reasoningText": {"text": ""}})
                        reasoning["reasoningText"]["text"] += piece["reasoningContent"].get("text", "")
                        if "signature" in piece["reasoningContent"]:
                            reasoning["reasoningText"]["signature"] = piece["reasoningContent"]["signature"]
            for block in blocks.values():
                if "toolUse" in block:
                    block["toolUse"]["input"] = json.loads(block["toolUse"]["input"] or "{}")
            return {"role": "assistant", "content": [blocks[index] for index in sorted(blocks)]}

        def turn(messages: list[dict[str, Any]], question: str, stream: bool) -> None:
            with tracer.start_as_current_span("weather-desk turn", attributes={"session.id": SESSION}):
                messages.append({"role": "user", "content": [{"text": question}]})
                asked = len(messages) - 1
                while True:
                    answer = converse(messages, asked, stream)
                    messages.append(answer)
                    uses = [block["toolUse"] for block in answer["content"] if "toolUse" in block]
                    if not uses:
                        return
                    results = []
                    for use in uses:
                        try:
                            result = {"toolUseId": use["toolUseId"],
                                      "content": [{"text": tools[use["name"]](**use["input"])}]}
                        except Exception as exc:  # the model is told the tool failed, as the Converse docs show
                            result = {"toolUseId": use["toolUseId"], "content": [{"text": f"Error: {exc}"}],
                                      "status": "error"}
                        results.append({"toolResult": result})
                    messages.append({"role": "user", "content": results})

        conversation: list[dict[str, Any]] = []
        turn(conversation, "Which is warmer right now, Paris or Lyon?", stream=True)
        turn(conversation, "And Nice? How does its week look?", stream=False)
        rec.flush(provider)


if __name__ == "__main__":
    main()
