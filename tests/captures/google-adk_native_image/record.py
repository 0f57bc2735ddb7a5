"""Re-record: a Google ADK agent shown images, by the user and by a tool, ADK's own OTel tracing.

    python3 -m venv /tmp/cap-google-adk_native_image && /tmp/cap-google-adk_native_image/bin/pip install \
        google-adk==2.15.0 google-genai==2.34.0 litellm==1.110.2 openai==3.63.0 \
        opentelemetry-sdk==1.45.2 opentelemetry-exporter-otlp-proto-http==1.45.2
    /tmp/cap-google-adk_native_image/bin/python tests/captures/google-adk_native_image/record.py

google-adk 2.15.0 is the newest release; it requires google-genai < 3 (2.34.0, the newest such). `pip freeze` of what
matters: google-adk 2.15.0, google-genai 2.34.0, litellm 1.110.2, openai 3.63.0, opentelemetry-api/-sdk/
-exporter-otlp-proto-http 1.45.2, opentelemetry-semantic-conventions 0.66b2 (also in meta.json).

Why: images under ADK. The `LlmAgent` (`page_checker`, `LiteLlm(model="openai/gpt-4o")` against the fake LLM, as the
other LiteLlm `google-adk_native*` captures) is sent a user `types.Content` of a text part, a mockup PNG of about 5.5 KB
(`types.Part.from_bytes(data=…, mime_type="image/png")`: a data URL well over 4,096 characters), a small logo PNG (the
same, 88 bytes) and the style guide's header by URL (`types.Part.from_uri(file_uri="https://…", mime_type=…)`);
LiteLlm sends the first two as `image_url` data URLs, the third as an `image_url` of its URL. Its tool
`take_screenshot` returns a dict holding a `types.Part.from_bytes` PNG beside text: ADK 2.15 moves media a tool returns
into the `FunctionResponse`'s `parts` (`flows/llm_flows/tools/_caller.py` `_extract_multimodal_parts`), the dict's rest
its `response`; LiteLlm sends the `response` as the tool message and the image in a user message after the call's tool
messages (`lite_llm.py` `_function_response_media_parts`: a tool message is text only). `page_status` raises once (a
path without its leading slash); ADK's `ReflectAndRetryToolPlugin` (on the `App`, as in `google-adk_native_agent-tool`)
answers the model with its reflection guidance instead of failing the run. A trajectory should show the user's images
as image parts, the screenshot as its result's content if a span holds it, and no history repeated as new steps. (What
ADK's spans hold of them: each inline image a `blob` part whose `data` is `"<not serializable>"`, the bytes dropped by
its JSON encoder; the URL image a `file_data` part with its URI; the screenshots nothing at all.)

Turn one (`run_async`, three calls): `take_screenshot("/dashboard")` and `page_status("dashboard")` in parallel, the
latter raising; `page_status("/dashboard")` again; the answer. Turn two, the same ADK session
(`Runner.run_async(session_id=…)` on an `InMemorySessionService` session) streamed (`RunConfig(streaming_mode=SSE)`,
two calls): text and `take_screenshot("/settings")`, then the answer. Message content on the spans
(`OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=SPAN_ONLY`; ADK records none by default). (The versions the capture
was recorded with are in meta.json.)
"""

from __future__ import annotations

import asyncio
import os
import random
import struct
import sys
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

from tests.captures.recording.session import Recording

SESSION = "adk-image-pages-1"
HEADER_URL = "https://example.com/brand/header.png"
QUESTIONS = ["Here is my mockup of the dashboard, our logo and the style guide's header. Does the live dashboard "
             "match?",
             "Now check the settings page the same way."]
REPLIES: list[dict[str, Any]] = [
    # Turn one: a screenshot and the page's status at once; the status is asked with no leading slash.
    {"tool_calls": [{"name": "take_screenshot", "arguments": {"path": "/dashboard"}},
                    {"name": "page_status", "arguments": {"path": "dashboard"}}]},
    {"tool_calls": [{"name": "page_status", "arguments": {"path": "/dashboard"}}]},
    {"text": "The live dashboard matches your mockup: the same four bars in the same order, tallest third, with the "
             "logo in the header. The page is up (200, rendered in 420 ms)."},
    # Turn two, streamed.
    {"text": "Taking a screenshot of the settings page.",
     "tool_calls": [{"name": "take_screenshot", "arguments": {"path": "/settings"}}]},
    {"text": "The settings page shows a form with two toggles and no chart, so there is nothing of the mockup to "
             "compare there."},
]
STATUS = {"/dashboard": "200 OK, rendered in 420 ms", "/settings": "200 OK, rendered in 380 ms"}
# What matters of the virtualenv: ADK, the google-genai types it is built on, LiteLlm's path to the fake LLM (its
# OpenAI client), the OpenTelemetry SDK and exporter.
PACKAGES = ["google-adk", "google-genai", "litellm", "openai", "opentelemetry-api", "opentelemetry-sdk",
            "opentelemetry-exporter-otlp-proto-http", "opentelemetry-semantic-conventions"]
NOTES = ("LlmAgent (LiteLlm) shown images: turn one's user Content is a text part, a ~5.5 KB mockup PNG and a small "
         "logo PNG (Part.from_bytes), an https image (Part.from_uri); take_screenshot returns a dict holding a "
         "Part.from_bytes PNG (ADK moves it to the FunctionResponse's parts, LiteLlm sends it in a user message "
         "after the tool messages); parallel take_screenshot + page_status, page_status raising once "
         "(ReflectAndRetryToolPlugin on the App), retried; turn two streamed (SSE): text and take_screenshot, the "
         "answer; one ADK session")
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


def mockup() -> bytes:
    """The user's mockup: the chart on a paper texture (a scanned sketch's grain), so that it stays over 4 KB."""
    grain = random.Random(7)
    width, height = 96, 64

    def pixel(x: int, y: int) -> Pixel:
        r, g, b = chart(x, y, width, height)
        noise = grain.randrange(-12, 1)
        return (max(r + noise, 0), max(g + noise, 0), max(b + noise, 0))
    return png(width, height, pixel)


def logo() -> bytes:
    """The brand's logo: a small two-colour square, a data URL well under 4 KB."""
    return png(12, 12, lambda x, y: (200, 40, 40) if (x // 4 + y // 4) % 2 else (250, 250, 250))


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


def main() -> None:
    with Recording(Path(__file__).parent, REPLIES, framework="google-adk", instrumentation="native",
                   packages=PACKAGES, session_id=SESSION, notes=NOTES) as rec:
        rec.env()
        # ADK 2.x follows the GenAI semantic conventions and records no message content unless told
        # to; on the spans is what a user pointing it at an OTLP endpoint would choose.
        os.environ["OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"] = "SPAN_ONLY"
        os.environ["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"  # offline: no price table fetch
        from opentelemetry import trace
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
        from opentelemetry.sdk.resources import Resource
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import BatchSpanProcessor

        provider = TracerProvider(resource=Resource.create({"service.name": "adk-page-checker"}))
        provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
        trace.set_tracer_provider(provider)

        from google.adk.agents import LlmAgent, RunConfig
        from google.adk.agents.run_config import StreamingMode
        from google.adk.apps import App
        from google.adk.models.lite_llm import LiteLlm
        from google.adk.plugins.reflect_retry_tool_plugin import ReflectAndRetryToolPlugin
        from google.adk.runners import Runner
        from google.adk.sessions import InMemorySessionService
        from google.genai import types

        def take_screenshot(path: str) -> dict[str, Any]:
            """A screenshot of the app's page at a path."""
            # The Part is media ADK hands the model beside the rest of the dict (the FunctionResponse's parts).
            return {"page": path, "size": "160x100",
                    "screenshot": types.Part.from_bytes(data=screenshot(path), mime_type="image/png")}

        def page_status(path: str) -> str:
            """The HTTP status and render time of the app's page at a path."""
            if not path.startswith("/"):
                raise ValueError(f"paths start with '/': did you mean '/{path}'?")
            return STATUS[path]

        model = LiteLlm(model="openai/gpt-4o", api_base=rec.base_url, api_key="sk-fake")
        agent = LlmAgent(name="page_checker", model=model,
                         instruction="You check a web app's live pages against the mockups users send.",
                         tools=[take_screenshot, page_status])
        app = App(name="pages", root_agent=agent, plugins=[ReflectAndRetryToolPlugin(max_retries=2)])

        async def run() -> None:
            sessions = InMemorySessionService()
            await sessions.create_session(app_name="pages", user_id="u1", session_id=SESSION)
            runner = Runner(app=app, session_service=sessions)
            messages = [
                types.Content(role="user", parts=[
                    types.Part(text=QUESTIONS[0]),
                    types.Part.from_bytes(data=mockup(), mime_type="image/png"),
                    types.Part.from_bytes(data=logo(), mime_type="image/png"),
                    types.Part.from_uri(file_uri=HEADER_URL, mime_type="image/png")]),
                types.Content(role="user", parts=[types.Part(text=QUESTIONS[1])]),
            ]
            configs = [RunConfig(), RunConfig(streaming_mode=StreamingMode.SSE)]
            for message, config in zip(messages, configs, strict=True):
                async for event in runner.run_async(user_id="u1", session_id=SESSION, new_message=message,
                                                    run_config=config):
                    if event.is_final_response() and event.content and event.content.parts:
                        print(event.content.parts[0].text)

        asyncio.run(run())
        rec.flush(provider)


if __name__ == "__main__":
    main()
