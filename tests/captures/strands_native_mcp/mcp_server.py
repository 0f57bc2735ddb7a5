"""The MCP server record.py runs over stdio: a bookshop's catalogue, two tools, mcp 2's `MCPServer` (FastMCP's name
before mcp 2).

mcp 2 traces every request it serves itself (its `OpenTelemetryMiddleware`, through the global tracer provider,
joining the trace the client's `_meta` names); a server exports those spans only with an OpenTelemetry SDK set up, the
user's part (as the MCP and FastMCP docs show): here a provider exporting to the OTLP endpoint record.py passes in
the server's environment, so that the capture shows whether the agent's trace reaches the server process.
`stock_level` fails once for The Left Hand of Darkness (the inventory service timing out): a `ToolError`, which the
server answers as an `isError` result the model is shown.
"""

from __future__ import annotations

from opentelemetry import trace
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor

# Each span sent as it ends: the client ends this process when it closes the session, with no flush.
provider = TracerProvider(resource=Resource.create({"service.name": "bookshop-catalogue"}))
provider.add_span_processor(SimpleSpanProcessor(OTLPSpanExporter()))
trace.set_tracer_provider(provider)

from mcp.server.mcpserver import MCPServer  # noqa: E402  (after the provider, which its tracer then uses)
from mcp.server.mcpserver.exceptions import ToolError  # noqa: E402

BOOKS = {
    "the left hand of darkness": ("978-0441478125", "The Left Hand of Darkness, Ursula K. Le Guin, 1969"),
    "the dispossessed": ("978-0061054884", "The Dispossessed, Ursula K. Le Guin, 1974"),
}
STOCK = {"978-0441478125": 3, "978-0061054884": 0}
timeouts = {"978-0441478125": 1}  # the inventory service times out once for this book

server = MCPServer("bookshop-catalogue")


@server.tool()
def find_book(title: str) -> str:
    """Find a book in the catalogue by its title; returns its ISBN and edition."""
    found = BOOKS.get(title.strip().lower())
    if found is None:
        return f"No book titled {title!r} in the catalogue."
    isbn, edition = found
    return f"ISBN {isbn}: {edition}"


@server.tool()
def stock_level(isbn: str) -> str:
    """How many copies of a book (by ISBN) the shop has in stock."""
    if timeouts.get(isbn):
        timeouts[isbn] -= 1
        raise ToolError("inventory service timed out")
    if isbn not in STOCK:
        raise ToolError(f"unknown ISBN: {isbn}")
    copies = STOCK[isbn]
    return f"{copies} copies in stock" if copies else "out of stock; reorder takes 5 days"


if __name__ == "__main__":
    try:
        server.run(transport="stdio")
    finally:
        provider.shutdown()
