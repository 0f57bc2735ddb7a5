"""Re-record: the Anthropic Python SDK in a hand-written tool loop, traced by OpenInference, the user sending images
and a tool returning one.

    python3 -m venv /tmp/cap-anthropic-sdk_openinference_image && \
        /tmp/cap-anthropic-sdk_openinference_image/bin/pip install \
        anthropic==2.17.0 openinference-instrumentation-anthropic==3.1.0 openinference-instrumentation==0.1.72 \
        openinference-semantic-conventions==0.1.42 \
        opentelemetry-sdk==1.45.2 opentelemetry-exporter-otlp-proto-http==1.45.2
    /tmp/cap-anthropic-sdk_openinference_image/bin/python tests/captures/anthropic-sdk_openinference_image/record.py

An expenses assistant checks a receipt against the shop's order page. A hand-written tool loop, as the Messages API
docs show one, on `claude-sonnet-4-5`, instrumented by OpenInference's `AnthropicInstrumentor` (its provider passed
to the instrumentor, as the OpenInference docs show; the SDK's own tracing then reports to the no-op global provider,
so only OpenInference's spans are exported). Two turns of one session (`using_session`, as OpenInference's docs set
it), each under an application AGENT span (a trace each); each tool an `OITracer.tool` span (`input.value` its
arguments, `output.value` what it returned, the exception and an error status on the raising run).

1. `messages.create`: the user's message is a text, a base64 PNG `image` block (the receipt photo, noise so it does
   not compress: ~7.7 kB of base64, over the 4,096 characters evalkit inlines) and a `{"type": "url"}` image (the
   product photo, never fetched: the fake LLM is no API). The model says what it will do and calls `get_order` and
   `take_screenshot` in parallel; `get_order` raises once (the order service is down: sent back as an `is_error`
   tool_result), `take_screenshot` returns a `tool_result` whose content is a text block and a base64 PNG `image`
   block (~4.9 kB of base64). The model asks for the order again, then answers in text.
2. `messages.stream` (streamed): a follow-up question; the model screenshots the refund form (a small PNG, ~100
   bytes of base64) and answers, both calls streamed.

(The versions the capture was recorded with are in meta.json: pip freeze gave anthropic 2.17.0,
openinference-instrumentation-anthropic 3.1.0, openinference-instrumentation 0.1.72,
openinference-semantic-conventions 0.1.42, opentelemetry-api/-sdk/-exporter-otlp-proto-http 1.45.2; each the
newest on PyPI.)
"""

from __future__ import annotations

import base64
import struct
import sys
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

from tests.captures.recording.session import Recording

SESSION = "oi-anthropic-expenses-image-1"
MODEL = "claude-sonnet-4-5"
PRODUCT_PHOTO_URL = "https://example.com/shop/products/espresso-cups.jpg"
QUESTION = ("Here is a photo of my receipt and the product's photo from the shop. Does the receipt match order "
            "A-1001?")
FOLLOW_UP = "Does the refund form show the same amount?"
REPLIES = [
    {"text": "I'll look the order up and take a screenshot of its page.",
     "tool_calls": [{"name": "get_order", "arguments": {"order_id": "A-1001"}},
                    {"name": "take_screenshot", "arguments": {"page": "orders/A-1001"}}],
     "input_tokens": 2810, "output_tokens": 74},
    {"tool_calls": [{"name": "get_order", "arguments": {"order_id": "A-1001"}}],
     "input_tokens": 3990, "output_tokens": 38},
    {"text": "The receipt matches: order A-1001 (two espresso cups) shipped on 28 November, and the receipt and the "
             "order page both show 42.50 EUR.",
     "input_tokens": 4100, "output_tokens": 49},
    {"tool_calls": [{"name": "take_screenshot", "arguments": {"page": "refunds/A-1001"}}],
     "input_tokens": 4190, "output_tokens": 31},
    {"text": "Yes: the refund form for A-1001 shows the same 42.50 EUR.",
     "input_tokens": 4370, "output_tokens": 21},
]
ORDERS = {"A-1001": "A-1001: 2 espresso cups, 42.50 EUR, shipped 2025-11-28"}
TOOLS = [
    {"name": "get_order", "description": "An order of the shop, by its id",
     "input_schema": {"type": "object", "properties": {"order_id": {"type": "string"}}, "required": ["order_id"]}},
    {"name": "take_screenshot", "description": "A screenshot of a page of the shop's back office",
     "input_schema": {"type": "object", "properties": {"page": {"type": "string"}}, "required": ["page"]}},
]
SYSTEM = "You are an expenses assistant. Check what the user sends against the shop's records with the tools."
Pixel = tuple[int, int, int]


def png(width: int, height: int, pixel: Callable[[int, int], Pixel]) -> bytes:
    """A truecolour PNG of `pixel(x, y)`: signature, IHDR, one zlib IDAT of filter-0 rows, IEND."""
    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    rows = b"".join(b"\x00" + bytes(c for x in range(width) for c in pixel(x, y)) for y in range(height))
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(rows, 9))
            + chunk(b"IEND", b""))


def noise(seed: int) -> Callable[[int, int], Pixel]:
    """A photo's grain: pixels from a linear congruential generator, which zlib cannot shrink."""
    state = [seed]

    def pixel(_x: int, _y: int) -> Pixel:
        values = []
        for _ in range(3):
            state[0] = (state[0] * 1103515245 + 12345) % 2**31
            values.append(state[0] >> 23)
        return values[0], values[1], values[2]
    return pixel


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


RECEIPT_PHOTO = png(48, 40, noise(7))  # ~5.8 kB: a photo's grain
ORDER_PAGE = png(40, 30, noise(11))  # ~3.6 kB
REFUND_FORM = png(8, 6, lambda x, y: (240, 240, 240) if y else (20, 90, 200))  # a header bar: compresses to ~80 B
SCREENSHOTS = {"orders/A-1001": ORDER_PAGE, "refunds/A-1001": REFUND_FORM}


class OrderServiceDown(Exception):
    pass


def main() -> None:
    with Recording(Path(__file__).parent, REPLIES, framework="anthropic-sdk", instrumentation="openinference",
                   packages=["anthropic", "openinference-instrumentation-anthropic", "openinference-instrumentation",
                             "openinference-semantic-conventions", "opentelemetry-sdk",
                             "opentelemetry-exporter-otlp-proto-http"],
                   session_id=SESSION,
                   notes="images in the input: turn one's question a text, a base64 PNG image block (~7.7 kB of "
                         "base64) and a url image block (messages.create); parallel tool uses, get_order raising once "
                         "(is_error tool_result) and asked again, take_screenshot's tool_result a text and a base64 "
                         "PNG image block; two turns of one session (using_session, a trace each under an AGENT "
                         "span), the second streamed (messages.stream); tools are OITracer.tool spans",
                   ) as rec:
        rec.env()
        import anthropic
        from openinference.instrumentation import OITracer, TraceConfig, using_session
        from openinference.instrumentation.anthropic import AnthropicInstrumentor
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
        from opentelemetry.sdk.resources import Resource
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import BatchSpanProcessor

        provider = TracerProvider(resource=Resource.create({"service.name": "expenses-bot"}))
        provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
        AnthropicInstrumentor().instrument(tracer_provider=provider)
        tracer = OITracer(provider.get_tracer("expenses-bot"), config=TraceConfig())
        order_lookups = [0]

        @tracer.tool(name="get_order")
        def get_order(order_id: str) -> str:
            order_lookups[0] += 1
            if order_lookups[0] == 1:
                raise OrderServiceDown("the order service is unavailable (503)")
            return ORDERS[order_id]

        @tracer.tool(name="take_screenshot")
        def take_screenshot(page: str) -> list[dict[str, Any]]:
            # What the model is shown: a caption and the page as a base64 PNG, a tool_result's content blocks.
            return [{"type": "text", "text": f"Screenshot of {page}"},
                    {"type": "image", "source": {"type": "base64", "media_type": "image/png",
                                                 "data": b64(SCREENSHOTS[page])}}]

        functions: dict[str, Callable[..., Any]] = {"get_order": get_order, "take_screenshot": take_screenshot}
        client = anthropic.Anthropic()

        def ask(streamed: bool, messages: list[dict[str, Any]]) -> Any:
            request: dict[str, Any] = {"model": MODEL, "max_tokens": 1024, "system": SYSTEM, "messages": messages,
                                       "tools": TOOLS}
            if not streamed:
                return client.messages.create(**request)
            with client.messages.stream(**request) as stream:
                for _ in stream.text_stream:
                    pass
                return stream.get_final_message()

        def run_tool(block: Any) -> dict[str, Any]:
            try:
                return {"type": "tool_result", "tool_use_id": block.id, "content": functions[block.name](**block.input)}
            except OrderServiceDown as exc:  # the model is told, as a real loop would
                return {"type": "tool_result", "tool_use_id": block.id, "is_error": True, "content": f"Error: {exc}"}

        question: list[dict[str, Any]] = [
            {"type": "text", "text": QUESTION},
            {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": b64(RECEIPT_PHOTO)}},
            {"type": "image", "source": {"type": "url", "url": PRODUCT_PHOTO_URL}},
        ]
        messages: list[dict[str, Any]] = []
        for turn, content in enumerate([question, FOLLOW_UP]):
            messages.append({"role": "user", "content": content})
            with using_session(SESSION), tracer.start_as_current_span(
                    "expenses-bot", openinference_span_kind="agent") as agent:
                agent.set_input(QUESTION if turn == 0 else FOLLOW_UP)
                while True:
                    answer = ask(turn == 1, messages)
                    messages.append({"role": "assistant",
                                     "content": [b.model_dump(exclude_none=True) for b in answer.content]})
                    if answer.stop_reason != "tool_use":
                        break
                    messages.append({"role": "user",
                                     "content": [run_tool(b) for b in answer.content if b.type == "tool_use"]})
                agent.set_output("".join(b.text for b in answer.content if b.type == "text"))
        rec.flush(provider)


if __name__ == "__main__":
    main()
