"""Re-record: images in and out of a Strands Agents tool loop, traced by Strands' own OpenTelemetry.

    python3 -m venv /tmp/cap-strands_native_image && /tmp/cap-strands_native_image/bin/pip install \
        'strands-agents[openai]==1.65.0' openai==3.63.0 opentelemetry-sdk==1.45.1 \
        opentelemetry-exporter-otlp-proto-http==1.45.1
    /tmp/cap-strands_native_image/bin/python tests/captures/strands_native_image/record.py

strands-agents 1.65.0 is the newest release; its `openai` extra takes openai<4, so openai 3.63.0 (the newest).
opentelemetry-sdk and the exporter 1.45.1 are what pip resolved beside opentelemetry-instrumentation-threading 0.66b1
(which strands-agents requires), as for the other Strands captures.

Why: multimodal input and a tool's image output as Strands' tracer records them (default conventions: span events of
Bedrock content blocks), beside the text-only `strands_native`. A Strands prompt may be a list of content blocks, as
its docs show for images: turn 1's is a text, a PNG of ~6 KB (a 44x44 picture made here with zlib and struct: over
evalkit's inline limit as a data URL) and a 6x6 one (well under it), each `{"image": {"format": "png", "source":
{"bytes": …}}}`. The model calls `take_screenshot("home")` and `page_status("home")` in parallel; the status check
times out once (the tool raises: Strands sends the model the error's text), so the model calls it again, then
answers. `take_screenshot` returns a ToolResult whose content is a text block and an image block (Strands' docs'
ToolResult content), which Strands' `OpenAIModel` sends as the tool message's text plus its note that an image follows,
the image itself in a user message after the tool messages (Chat Completions takes images from users only:
`_split_tool_message_images`). Turn 2 (`stream_async`, its events streamed as they come) asks about the pricing page:
the model calls `take_screenshot("pricing")` (a small screenshot), then answers. Five calls, every OpenAIModel call
streamed; one agent, its session `trace_attributes={"session.id": …}` (as `strands_native` sets it), each invocation
a trace; the tools run concurrently (Strands' default ConcurrentToolExecutor). (The versions the capture was
recorded with are in meta.json.)
"""

from __future__ import annotations

import asyncio
import os
import struct
import sys
import zlib
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

from tests.captures.recording.session import Recording

SESSION = "strands-image-review-1"
QUESTIONS = ["Here is the mockup of our new home page and our logo. Does the live home page match the mockup, "
             "and is it up?",
             "Now check the pricing page the same way."]
REPLIES: list[dict[str, Any]] = [
    {"tool_calls": [{"name": "take_screenshot", "arguments": {"page": "home"}},
                    {"name": "page_status", "arguments": {"page": "home"}}]},
    {"tool_calls": [{"name": "page_status", "arguments": {"page": "home"}}]},
    {"text": "The live home page is up (200 in 180 ms) and matches the mockup, but the logo in the header is the "
             "old one, not the one you sent."},
    {"tool_calls": [{"name": "take_screenshot", "arguments": {"page": "pricing"}}]},
    {"text": "The pricing page shows the new logo and the three plans from the mockup; nothing looks off."},
]
# What was installed that the spans depend on: the framework and its tracer, the client it calls, the exporter, and
# the threading instrumentation Strands uses to carry the span context into the threads its tools run in.
PACKAGES = ["strands-agents", "openai", "opentelemetry-sdk", "opentelemetry-exporter-otlp-proto-http",
            "opentelemetry-api", "opentelemetry-instrumentation-threading", "opentelemetry-semantic-conventions"]


def png(size: int, seed: int) -> bytes:
    """A `size`x`size` RGB PNG: a gradient with deterministic noise, so zlib cannot shrink it much (the same picture
    as `openai-agents_openinference_image/record.py` makes, as bytes: what Strands' image blocks hold)."""
    state = seed
    rows = bytearray()
    for y in range(size):
        rows.append(0)  # filter: none
        for x in range(size):
            state = (state * 1103515245 + 12345) & 0x7FFFFFFF
            noise = state >> 24
            rows += bytes(((x * 255 // size + noise) & 255, (y * 255 // size + noise) & 255, (noise * 3) & 255))

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)

    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", size, size, 8, 2, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(bytes(rows), 9)) + chunk(b"IEND", b""))


MOCKUP, LOGO = png(44, seed=3), png(6, seed=9)
SCREENSHOTS = {"home": png(40, seed=21), "pricing": png(8, seed=23)}


def image_block(data: bytes) -> dict[str, Any]:
    return {"image": {"format": "png", "source": {"bytes": data}}}


def run(capture_dir: Path, latest_semconv: bool) -> None:
    """The run, into `capture_dir`; with `latest_semconv`, under the current GenAI conventions."""
    if latest_semconv:
        os.environ["OTEL_SEMCONV_STABILITY_OPT_IN"] = "gen_ai_latest_experimental"
    notes = (f"images, trace_attributes session.id, every call streamed: turn 1 a prompt of content blocks, a text, a "
             f"{len(MOCKUP)}-byte PNG and a {len(LOGO)}-byte PNG (image blocks of bytes); take_screenshot (a "
             f"ToolResult of a text and a {len(SCREENSHOTS['home'])}-byte PNG image block) and page_status (raises "
             f"once: timed out) in parallel, page_status again, the answer; turn 2 (stream_async) take_screenshot (a "
             f"{len(SCREENSHOTS['pricing'])}-byte PNG), the answer; OpenAIModel sends a tool's image in a user "
             f"message after the tool messages; conventions: "
             + ("gen_ai_latest_experimental" if latest_semconv else "Strands' default (span events)"))
    with Recording(capture_dir, REPLIES, framework="strands-agents", instrumentation="strands (native)",
                   packages=PACKAGES, session_id=SESSION, notes=notes) as rec:
        rec.env()
        from strands import Agent, tool
        from strands.models.openai import OpenAIModel
        from strands.telemetry import StrandsTelemetry

        telemetry = StrandsTelemetry()
        telemetry.setup_otlp_exporter()
        timeouts = {"left": 1}  # the status check times out once

        @tool
        def take_screenshot(page: str) -> dict[str, Any]:
            """A screenshot of one page of the live site."""
            return {"status": "success",
                    "content": [{"text": f"Screenshot of the {page} page, 1280x800."},
                                image_block(SCREENSHOTS[page])]}

        @tool
        def page_status(page: str) -> str:
            """Whether a page of the live site is up, and how fast it answers."""
            if timeouts["left"]:
                timeouts["left"] -= 1
                raise TimeoutError("status check timed out")
            return f"{page}: 200 OK in 180 ms"

        model = OpenAIModel(client_args={"base_url": rec.base_url, "api_key": "sk-fake"}, model_id="gpt-4o")
        agent = Agent(model=model, tools=[take_screenshot, page_status], name="site_reviewer",
                      callback_handler=None, trace_attributes={"session.id": SESSION},
                      system_prompt="You review a website's pages against the designs you are shown. Be brief.")

        print(agent([{"text": QUESTIONS[0]}, image_block(MOCKUP), image_block(LOGO)]))

        async def streamed(prompt: str) -> Any:
            final = None
            async for event in agent.stream_async(prompt):
                if "result" in event:
                    final = event["result"]
            return final

        print(asyncio.run(streamed(QUESTIONS[1])))
        rec.flush(telemetry.tracer_provider)


def main() -> None:
    run(Path(__file__).parent, latest_semconv=False)


if __name__ == "__main__":
    main()
