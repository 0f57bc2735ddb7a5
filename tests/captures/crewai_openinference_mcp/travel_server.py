"""The MCP server record.py runs over stdio: three travel tools, FastMCP (mcp 1.x), untraced.

CrewAI's native MCP tools (`Agent(mcps=[MCPServerStdio(...)])`) start a new server process for every call (and one to
list the tools at each kickoff): the weather service's one failure is remembered in a file (`TRAVEL_FAILURES`, named
by record.py) across them. A tool that raises is FastMCP's `isError` result, "Error executing tool …".
"""

from __future__ import annotations

import os
from pathlib import Path

from mcp.server.fastmcp import FastMCP

FAILURES = Path(os.environ["TRAVEL_FAILURES"])
server = FastMCP("travel")


@server.tool()
def get_weather(city: str) -> str:
    """The current weather in a city."""
    if not FAILURES.exists():
        FAILURES.write_text("get_weather\n")
        raise TimeoutError("the weather service did not answer in time")
    return {"Oslo": "rainy, 9°C"}[city]


@server.tool()
def convert_currency(amount: float, source: str, target: str) -> str:
    """Convert an amount of money from one currency (ISO code) to another."""
    rates = {("EUR", "NOK"): 11.7}
    return f"{amount:g} {source} = {amount * rates[(source, target)]:,.0f} {target}"


@server.tool()
def book_hotel(city: str, nights: int) -> str:
    """Book a hotel room (charges the traveller's card)."""
    return f"Booked Hotel Nord in {city}, {nights} nights, ref OSL-42"


if __name__ == "__main__":
    server.run(transport="stdio")
