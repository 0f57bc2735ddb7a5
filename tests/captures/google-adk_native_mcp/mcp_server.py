"""The MCP server record.py runs over stdio: a travel desk's weather and flight lookups, mcp 2's `MCPServer` (FastMCP's
name before mcp 2).

mcp 2 traces every request it serves itself (its `OpenTelemetryMiddleware`, through the global tracer provider,
joining the trace the client's `_meta` names); a server exports those spans only with an OpenTelemetry SDK set up, the
user's part (as the MCP docs show): here a provider exporting to the OTLP endpoint record.py passes in the server's
environment, so that the capture shows whether ADK's trace reaches the server process. `get_weather` fails once for
Oslo (the weather service timing out): a `ToolError`, which the server answers as an `isError` result.
"""

from __future__ import annotations

from opentelemetry import trace
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor

# Each span sent as it ends: the client ends this process when it closes the session, with no flush.
provider = TracerProvider(resource=Resource.create({"service.name": "travel-info"}))
provider.add_span_processor(SimpleSpanProcessor(OTLPSpanExporter()))
trace.set_tracer_provider(provider)

from mcp.server.mcpserver import MCPServer  # noqa: E402  (after the provider, which its tracer then uses)
from mcp.server.mcpserver.exceptions import ToolError  # noqa: E402

WEATHER = {"Oslo": "rainy, 9°C", "Bergen": "cloudy, 11°C"}
FLIGHTS = {("Oslo", "Bergen"): "SK 267 at 08:05 and DY 612 at 12:40, 55 min, from 890 NOK"}
timeouts = {"Oslo": 1}  # the weather service times out once for Oslo

server = MCPServer("travel-info")


@server.tool()
def get_weather(city: str) -> str:
    """Today's weather in a city."""
    if timeouts.get(city):
        timeouts[city] -= 1
        raise ToolError(f"weather service timed out for {city}")
    if city not in WEATHER:
        raise ToolError(f"no weather station in {city}")
    return WEATHER[city]


@server.tool()
def find_flights(origin: str, destination: str) -> str:
    """Today's direct flights between two cities."""
    return FLIGHTS.get((origin, destination), f"no direct flights from {origin} to {destination} today")


if __name__ == "__main__":
    try:
        server.run(transport="stdio")
    finally:
        provider.shutdown()
