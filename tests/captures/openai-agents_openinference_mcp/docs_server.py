"""The MCP server record.py runs over stdio: two tools over a small in-memory docs corpus.

It traces as OpenInference's MCP example server does (its own tracer provider exporting to the
OTLP endpoint record.py passes in its environment, `MCPInstrumentor` to join the client's trace,
a span of its own in each tool), and sets that provider globally, as `phoenix.otel.register` does,
so the MCP SDK's own server spans (mcp 2) are exported too.
"""

from __future__ import annotations

from openinference.instrumentation.mcp import MCPInstrumentor
from opentelemetry import trace
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor

provider = TracerProvider(resource=Resource.create({"service.name": "docs-mcp"}))
provider.add_span_processor(SimpleSpanProcessor(OTLPSpanExporter()))
trace.set_tracer_provider(provider)
MCPInstrumentor().instrument(tracer_provider=provider)
tracer = trace.get_tracer("docs-mcp")

from mcp.server.mcpserver import MCPServer  # noqa: E402  (after the instrumentor, as its example does)
from mcp.server.mcpserver.exceptions import ToolError  # noqa: E402

DOCS = {
    "policies/refunds.md": "Refunds are issued within 14 days of purchase, to the original payment method.",
    "faq.md": "Q: Can I get a refund after 14 days? A: Only as store credit.",
    "handbook/shipping.md": "Shipping is free over 50 EUR; otherwise a flat 4.90 EUR.",
}

server = MCPServer("docs")


@server.tool()
def search_docs(query: str) -> str:
    """Search the docs; returns the paths of the documents that mention the query."""
    with tracer.start_as_current_span("search_docs.lookup") as span:
        span.set_attribute("docs.query", query)
        hits = [path for path, text in DOCS.items() if query.lower() in (path + " " + text).lower()]
        span.set_attribute("docs.hits", len(hits))
        return "\n".join(hits) or "no documents found"


@server.tool()
def read_file(path: str) -> str:
    """Read one document of the docs by its path."""
    with tracer.start_as_current_span("read_file.load") as span:
        span.set_attribute("docs.path", path)
        if path not in DOCS:
            raise ToolError(f"No such document: {path}")
        return DOCS[path]


if __name__ == "__main__":
    try:
        server.run(transport="stdio")
    finally:
        provider.shutdown()
