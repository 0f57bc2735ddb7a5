"""The MCP server record.py runs over stdio: three travel tools, FastMCP (mcp 1.x).

It traces as OpenInference's MCP example server does (`examples/streamable_http/server.py`): a tracer provider of
its own exporting to the OTLP endpoint record.py passes in its environment, `MCPInstrumentor` so that the client's
trace context (sent in each request's `_meta`) is current while a tool runs, and a span of its own in each tool.
The instrumentor makes no span itself, nor does mcp 1.x: those tool spans are all the server exports.

`MultiServerMCPClient.get_tools()` starts a new client session, so a new server process, for every tool call: the
weather service's one failure is remembered in a file (`TRAVEL_FAILURES`, named by record.py) across them.
"""

from __future__ import annotations

import os
from pathlib import Path

from openinference.instrumentation.mcp import MCPInstrumentor
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor

provider = TracerProvider(resource=Resource.create({"service.name": "travel-mcp"}))
provider.add_span_processor(SimpleSpanProcessor(OTLPSpanExporter()))
tracer = provider.get_tracer("travel-mcp")
MCPInstrumentor().instrument(tracer_provider=provider)

from mcp.server.fastmcp import FastMCP  # noqa: E402  (after the instrumentor, as its example does)

FAILURES = Path(os.environ["TRAVEL_FAILURES"])
server = FastMCP("travel")


@server.tool()
async def get_weather(city: str) -> str:
    """The weather in a city."""
    with tracer.start_as_current_span("get_weather.forecast") as span:
        span.set_attribute("travel.city", city)
        if not FAILURES.exists():
            FAILURES.write_text("get_weather\n")
            raise TimeoutError("the weather service did not answer in time")
        return {"Oslo": "rainy, 9°C"}[city]


@server.tool()
async def book_hotel(city: str, nights: int) -> str:
    """Book a hotel room (charges the user's card)."""
    with tracer.start_as_current_span("book_hotel.reserve") as span:
        span.set_attribute("travel.city", city)
        span.set_attribute("travel.nights", nights)
        return f"Booked Hotel Nord in {city}, {nights} nights, ref OSL-42"


@server.tool()
async def convert_currency(amount: float, currency: str) -> str:
    """Convert an amount to EUR."""
    with tracer.start_as_current_span("convert_currency.rate") as span:
        span.set_attribute("travel.currency", currency)
        return f"{amount:g} {currency} is {amount / 11.7:.0f} EUR"


if __name__ == "__main__":
    try:
        server.run(transport="stdio")
    finally:
        provider.shutdown()
