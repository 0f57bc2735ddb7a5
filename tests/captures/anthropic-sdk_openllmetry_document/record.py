"""Re-record: the Anthropic SDK's own tracing and OpenLLMetry's, the user sending a PDF and images, a tool an image.

    python3 -m venv /tmp/cap-anthropic-sdk_openllmetry_document && \
        /tmp/cap-anthropic-sdk_openllmetry_document/bin/pip install \
        anthropic==2.17.0 opentelemetry-instrumentation-anthropic==0.62.4 \
        opentelemetry-sdk==1.45.2 opentelemetry-exporter-otlp-proto-http==1.45.2
    /tmp/cap-anthropic-sdk_openllmetry_document/bin/python tests/captures/anthropic-sdk_openllmetry_document/record.py

An expenses assistant checks an invoice against a receipt and the shop's order page. A hand-written tool loop, as
the Messages API docs show one, on `claude-sonnet-4-5`; two turns of one session (the SDK's `conversation_id`, as the
other OpenLLMetry Anthropic captures set it), each under an application span (a trace each), each tool run in an
application `execute_tool` span of the GenAI conventions (name, call id, arguments, a text result; a raising run
failed with its exception and `error.type`). The screenshot's span records no result: its image is no attribute
value; what the model was shown is only in the next call's input.

1. `messages.create`: the user's message is a text, a one-page PDF `document` block (base64, made here in pure
   Python, 600-odd bytes), a base64 PNG `image` (the receipt photo, noise so it does not compress: ~7.7 kB of base64,
   over what evalkit inlines) and a `{"type": "url"}` image (the product photo, never fetched: the fake LLM is no
   API). The model says what it will do and calls `get_order` and `take_screenshot` in parallel; `get_order` raises
   once (the order service is down: sent back as an `is_error` tool_result), `take_screenshot` returns a
   `tool_result` whose content is a text block and a base64 PNG `image` block (~4.9 kB of base64). The model asks
   for the order again, then answers in text.
2. `messages.stream` (streamed): a follow-up question; the model screenshots the refund form (a small PNG, ~100
   bytes of base64) and answers, both calls streamed.

Every call is reported twice: by the SDK's own `anthropic.messages.create` span (content mode on, the session as its
`conversation_id`) and by OpenLLMetry's `anthropic.chat` span, with the same response id. (The versions the capture
was recorded with are in meta.json: pip freeze gave anthropic 2.17.0, opentelemetry-instrumentation-anthropic
0.62.4, opentelemetry-semantic-conventions-ai 0.5.1, opentelemetry-api/-sdk/-exporter-otlp-proto-http 1.45.2,
opentelemetry-instrumentation 0.66b2; both the newest on PyPI.)
"""

from __future__ import annotations

import base64
import json
import struct
import sys
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

from tests.captures.recording.session import Recording

SESSION = "anthropic-expenses-document-1"
MODEL = "claude-sonnet-4-5"
PRODUCT_PHOTO_URL = "https://example.com/shop/products/espresso-cups.jpg"
REPLIES = [
    {"text": "I'll look the order up and take a screenshot of its page.",
     "tool_calls": [{"name": "get_order", "arguments": {"order_id": "A-1001"}},
                    {"name": "take_screenshot", "arguments": {"page": "orders/A-1001"}}],
     "input_tokens": 3120, "output_tokens": 74},
    {"tool_calls": [{"name": "get_order", "arguments": {"order_id": "A-1001"}}],
     "input_tokens": 4310, "output_tokens": 38},
    {"text": "The invoice matches: order A-1001 (two espresso cups) shipped on 28 November, and the invoice, the "
             "receipt and the order page all show 42.50 EUR.",
     "input_tokens": 4420, "output_tokens": 52},
    {"tool_calls": [{"name": "take_screenshot", "arguments": {"page": "refunds/A-1001"}}],
     "input_tokens": 4510, "output_tokens": 31},
    {"text": "Yes: the refund form for A-1001 shows the same 42.50 EUR.",
     "input_tokens": 4690, "output_tokens": 21},
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


def pdf(lines: list[str]) -> bytes:
    """A one-page PDF 1.4 showing `lines` in Helvetica: catalog, pages, page, content stream, font, and the xref
    table of their byte offsets that a reader needs."""
    text = "BT /F1 12 Tf 72 720 Td 16 TL " + " ".join(f"({line}) '" for line in lines) + " ET"
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R "
        b"/Resources << /Font << /F1 5 0 R >> >> >>",
        b"<< /Length %d >>\nstream\n%s\nendstream" % (len(text), text.encode("latin-1")),
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
    ]
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += b"%d 0 obj\n%s\nendobj\n" % (number, body)
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % offset for offset in offsets)
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objects) + 1, xref)
    return bytes(out)


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


INVOICE = pdf(["Invoice 2025-118", "Order A-1001: 2 espresso cups", "Total: 42.50 EUR"])
RECEIPT_PHOTO = png(48, 40, noise(7))  # ~5.8 kB: a photo's grain
ORDER_PAGE = png(40, 30, noise(11))  # ~3.6 kB
REFUND_FORM = png(8, 6, lambda x, y: (240, 240, 240) if y else (20, 90, 200))  # a header bar: compresses to ~80 B
SCREENSHOTS = {"orders/A-1001": ORDER_PAGE, "refunds/A-1001": REFUND_FORM}


class OrderServiceDown(Exception):
    pass


class Shop:
    """The tools; the order service's first answer is an outage."""

    def __init__(self) -> None:
        self.order_lookups = 0

    def get_order(self, order_id: str) -> str:
        self.order_lookups += 1
        if self.order_lookups == 1:
            raise OrderServiceDown("the order service is unavailable (503)")
        return ORDERS[order_id]

    def take_screenshot(self, page: str) -> list[dict[str, Any]]:
        return [{"type": "text", "text": f"Screenshot of {page}"},
                {"type": "image", "source": {"type": "base64", "media_type": "image/png",
                                             "data": b64(SCREENSHOTS[page])}}]


def main() -> None:
    with Recording(Path(__file__).parent, REPLIES, framework="anthropic-sdk", instrumentation="openllmetry",
                   packages=["anthropic", "opentelemetry-instrumentation-anthropic", "opentelemetry-sdk",
                             "opentelemetry-exporter-otlp-proto-http", "opentelemetry-semantic-conventions-ai",
                             "opentelemetry-instrumentation"],
                   session_id=SESSION,
                   notes="documents and images in the input: each call reported by the SDK's own span and "
                         "OpenLLMetry's (same response id); turn one's question a text, a base64 PDF document block, "
                         "a base64 PNG image block and a url image block; parallel tool uses, get_order raising once "
                         "(is_error tool_result) and asked again, take_screenshot's tool_result a text and a base64 "
                         "PNG image block; two turns (a trace each), the second streamed",
                   ) as rec:
        rec.env()
        import anthropic
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
        from opentelemetry.instrumentation.anthropic import AnthropicInstrumentor
        from opentelemetry.sdk.resources import Resource
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import BatchSpanProcessor
        from opentelemetry.trace import Status, StatusCode

        provider = TracerProvider(resource=Resource.create({"service.name": "expenses-bot"}))
        provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
        AnthropicInstrumentor().instrument(tracer_provider=provider)
        tracer = provider.get_tracer("expenses-bot")
        client = anthropic.Anthropic(open_telemetry={
            "tracer_provider": provider, "traces": {"content_mode": "content"}, "conversation_id": SESSION})
        shop = Shop()

        def run_tools(content: list[Any]) -> list[dict[str, Any]]:
            # Each run in an `execute_tool` span of the GenAI conventions (a hand-written loop has no runner): the
            # tool_use id ties the run to the model's call. A text result is the span's result; an image is no
            # attribute value, so the screenshot's span records none.
            results = []
            for block in content:
                if block.type != "tool_use":
                    continue
                with tracer.start_as_current_span(f"execute_tool {block.name}", attributes={
                        "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": block.name,
                        "gen_ai.tool.type": "function", "gen_ai.tool.call.id": block.id,
                        "gen_ai.tool.call.arguments": json.dumps(block.input)}) as span:
                    try:
                        output = getattr(shop, block.name)(**block.input)
                    except OrderServiceDown as exc:
                        span.record_exception(exc)
                        span.set_status(Status(StatusCode.ERROR, str(exc)))
                        span.set_attribute("error.type", type(exc).__qualname__)
                        results.append({"type": "tool_result", "tool_use_id": block.id, "content": f"Error: {exc}",
                                        "is_error": True})
                        continue
                    if isinstance(output, str):
                        span.set_attribute("gen_ai.tool.call.result", output)
                results.append({"type": "tool_result", "tool_use_id": block.id, "content": output})
            return results

        def as_sent(content: list[Any]) -> list[dict[str, Any]]:
            return [block.model_dump(exclude_none=True) for block in content]

        question: list[dict[str, Any]] = [
            {"type": "text", "text": "Here is my invoice, a photo of the receipt and the product's photo from the "
                                     "shop. Does the invoice match order A-1001?"},
            {"type": "document", "source": {"type": "base64", "media_type": "application/pdf", "data": b64(INVOICE)},
             "title": "invoice-2025-118.pdf"},
            {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": b64(RECEIPT_PHOTO)}},
            {"type": "image", "source": {"type": "url", "url": PRODUCT_PHOTO_URL}},
        ]
        messages: list[dict[str, Any]] = [{"role": "user", "content": question}]
        with tracer.start_as_current_span("expenses-bot turn"):
            while True:
                answer = client.messages.create(model=MODEL, max_tokens=1024, system=SYSTEM, messages=messages,
                                                tools=TOOLS)
                messages.append({"role": "assistant", "content": as_sent(answer.content)})
                if answer.stop_reason != "tool_use":
                    break
                messages.append({"role": "user", "content": run_tools(answer.content)})

        messages.append({"role": "user", "content": "Does the refund form show the same amount?"})
        with tracer.start_as_current_span("expenses-bot turn"):
            while True:
                with client.messages.stream(model=MODEL, max_tokens=1024, system=SYSTEM, messages=messages,
                                            tools=TOOLS) as stream:
                    for _ in stream:
                        pass
                    final = stream.get_final_message()
                messages.append({"role": "assistant", "content": as_sent(final.content)})
                if final.stop_reason != "tool_use":
                    break
                messages.append({"role": "user", "content": run_tools(final.content)})
        rec.flush(provider)


if __name__ == "__main__":
    main()
