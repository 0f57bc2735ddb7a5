"""Re-record: a pydantic-ai agent on an OpenAI Chat Completions model shown images, by the user and by a tool,
instrumented by pydantic-ai itself.

    python3 -m venv /tmp/cap-pydantic-ai_openai_image-tool && /tmp/cap-pydantic-ai_openai_image-tool/bin/pip install \
        'pydantic-ai-slim[openai]==2.78.0' openai==3.63.0 genai-prices==0.2.5 \
        opentelemetry-sdk==1.45.2 opentelemetry-exporter-otlp-proto-http==1.45.2
    /tmp/cap-pydantic-ai_openai_image-tool/bin/python tests/captures/pydantic-ai_openai_image-tool/record.py

The page checker of pydantic-ai_anthropic_image, on `gpt-4o` through `OpenAIChatModel`: the Chat Completions API's
tool messages are text only, so this is the other way pydantic-ai sends a tool's file. The tool message says
"See file <id>." (the file's identifier, the first six hex digits of its SHA-1) and the file itself follows in a
user message pydantic-ai adds after the call's tool messages, framed by `<pyai:tool_result tool_name=…
tool_call_id=… file_id=…>` tags so the model can tell it from the user's own uploads. Instrumented for every agent
with `Agent.instrument_all(InstrumentationSettings(..., version=6))`: the newest message format pydantic-ai offers
(tool results in `role: "tool"` messages; media as the GenAI conventions' `blob` and `uri` parts), binary content
included (its default). Two runs of one conversation (`conversation_id`), each its own trace, the second given the
first's `all_messages()`:

- Turn one (`agent.run`, unstreamed): the user's prompt is a list of a text, a `BinaryContent` PNG (the mockup, made
  here in pure Python) and an `ImageUrl` (the brand logo, sent as an `image_url` part, not downloaded). The model
  calls `take_screenshot` and `page_status` in parallel; `take_screenshot` returns a `BinaryContent` PNG (its tool
  message "See file <id>.", the PNG in the trailing user message); `page_status` raises `ModelRetry` (a path with no
  leading slash). The model asks again with the slash, then answers.
- Turn two (`run_stream`: both requests streamed): the model screenshots another page and asks its status in
  parallel, then answers, streamed as text.

(The versions the capture was recorded with are in meta.json: pip freeze gave pydantic-ai-slim and pydantic-graph
2.78.0 (the newest), pydantic 2.14.4, openai 3.63.0, httpx2 2.17.0, genai-prices 0.2.5,
opentelemetry-api/-sdk/-exporter-otlp-proto-http 1.45.2.)
"""

# No `from __future__ import annotations`: pydantic-ai reads a tool's hints with `get_type_hints` against this
# module's globals, and the framework is imported inside `conversation` (where only the virtualenv has it), so the
# tools' `BinaryContent` hint must be evaluated where it is written.
import asyncio
import struct
import sys
import zlib
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

from tests.captures.recording.session import Recording

SESSION = "pai-openai-image-tool-1"
LOGO_URL = "https://example.com/brand/logo.png"
REPLIES = [
    {"tool_calls": [{"name": "take_screenshot", "arguments": {"path": "/dashboard"}},
                    {"name": "page_status", "arguments": {"path": "dashboard"}}],
     "input_tokens": 1420, "output_tokens": 52},
    {"tool_calls": [{"name": "page_status", "arguments": {"path": "/dashboard"}}],
     "input_tokens": 2210, "output_tokens": 18},
    {"text": "The live dashboard matches your mockup: the same four bars in the same order, tallest third, with "
             "the logo in the header. The page is up (200, rendered in 420 ms).",
     "input_tokens": 2290, "output_tokens": 44},
    {"tool_calls": [{"name": "take_screenshot", "arguments": {"path": "/settings"}},
                    {"name": "page_status", "arguments": {"path": "/settings"}}],
     "input_tokens": 2380, "output_tokens": 50},
    {"text": "The settings page is up too (200, rendered in 380 ms); its screenshot shows a form with two toggles "
             "and no chart, so there is nothing of the mockup to compare there.",
     "input_tokens": 3150, "output_tokens": 47},
]
STATUS = {"/dashboard": "200 OK, rendered in 420 ms", "/settings": "200 OK, rendered in 380 ms"}
Pixel = tuple[int, int, int]


def png(width: int, height: int, pixel: Callable[[int, int], Pixel]) -> bytes:
    """A truecolour PNG of `pixel(x, y)`: signature, IHDR, one zlib IDAT of filter-0 rows, IEND."""
    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    rows = b"".join(b"\x00" + bytes(c for x in range(width) for c in pixel(x, y)) for y in range(height))
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(rows, 9))
            + chunk(b"IEND", b""))


BARS = (0.45, 0.6, 0.9, 0.7)  # the mockup's four bars, tallest third


def chart(x: int, y: int, width: int, height: int, top: int = 0) -> Pixel:
    """The bar chart both the mockup and the dashboard's screenshot show, below `top` rows of header."""
    slot = width // len(BARS)
    bar = min(x // slot, len(BARS) - 1)
    inside = slot // 6 <= x % slot < slot - slot // 6
    if inside and y >= top and (height - y) < BARS[bar] * (height - top):
        return (40 + 50 * bar, 90, 200 - 30 * bar)
    return (255, 255, 255)


def screenshot(path: str) -> bytes:
    """A page's screenshot: a grey header with noise (anti-aliased text, as a browser renders it), then the page."""
    width, height, header = 160, 100, 16
    seed = sum(map(ord, path))

    def pixel(x: int, y: int) -> Pixel:
        if y < header:
            shade = 200 + (x * 7919 + y * 104729 + seed) % 37
            return (shade, shade, shade)
        if path == "/dashboard":
            return chart(x, y, width, height, header)
        toggle = (30 <= y < 42 or 54 <= y < 66) and 20 <= x < 44
        return (60, 160, 90) if toggle else (250, 250, 250)
    return png(width, height, pixel)


async def conversation(rec: Recording) -> None:
    from openai import AsyncOpenAI
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor
    from pydantic_ai import Agent, BinaryContent, ImageUrl, ModelRetry
    from pydantic_ai.models.instrumented import InstrumentationSettings
    from pydantic_ai.models.openai import OpenAIChatModel
    from pydantic_ai.providers.openai import OpenAIProvider

    provider = TracerProvider(resource=Resource.create({"service.name": "pai-page-checker"}))
    provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
    Agent.instrument_all(InstrumentationSettings(tracer_provider=provider, version=6))
    client = AsyncOpenAI(base_url=rec.base_url, api_key="sk-fake")
    agent = Agent(OpenAIChatModel("gpt-4o", provider=OpenAIProvider(openai_client=client)), name="page_checker",
                  instructions="You check a web app's live pages against the mockups users send.")

    @agent.tool_plain
    def take_screenshot(path: str) -> BinaryContent:
        """A screenshot of the app's page at a path."""
        return BinaryContent(data=screenshot(path), media_type="image/png")

    @agent.tool_plain
    def page_status(path: str) -> str:
        """The HTTP status and render time of the app's page at a path."""
        if not path.startswith("/"):
            raise ModelRetry(f"Paths start with '/': did you mean '/{path}'?")
        return STATUS[path]

    mockup = BinaryContent(data=png(64, 48, lambda x, y: chart(x, y, 64, 48)), media_type="image/png")
    # Turn one: unstreamed; the user's images, a tool's image, a parallel call with one retried.
    first = await agent.run(["Here is my mockup of the dashboard and our logo. Does the live dashboard match?",
                             mockup, ImageUrl(url=LOGO_URL)], conversation_id=SESSION)
    print(first.output)

    # Turn two: streamed, carried on with the first turn's messages (the images re-sent with them).
    async with agent.run_stream("Now check the settings page the same way.",
                                message_history=first.all_messages(), conversation_id=SESSION) as result:
        async for delta in result.stream_text(delta=True):
            print(delta, end="", flush=True)
        print()
    rec.flush(provider)


def main() -> None:
    with Recording(Path(__file__).parent, REPLIES, framework="pydantic-ai", instrumentation="pydantic-ai",
                   packages=["pydantic-ai-slim", "pydantic-graph", "pydantic", "openai", "httpx2", "genai-prices",
                             "opentelemetry-api", "opentelemetry-sdk", "opentelemetry-exporter-otlp-proto-http"],
                   session_id=SESSION,
                   notes="images on OpenAI Chat Completions: turn one's prompt is text, a BinaryContent PNG and an "
                         "ImageUrl; take_screenshot returns a BinaryContent PNG, sent as the tool message 'See file "
                         "<id>.' and the PNG in a trailing user message framed by pyai:tool_result tags; parallel "
                         "take_screenshot + page_status, page_status raising ModelRetry once; turn two run_stream "
                         "with message_history: a parallel pair, then the answer streamed. Instrumentation version "
                         "6 via Agent.instrument_all") as rec:
        rec.env()
        asyncio.run(conversation(rec))


if __name__ == "__main__":
    main()
