"""Re-record: a one-agent CrewAI crew whose tools are a local MCP server's (CrewAI's own `mcps=[MCPServerStdio(…)]`),
traced by OpenInference, two kickoffs in one session, the second streamed.

    python3 -m venv /tmp/cap-crewai_openinference_mcp && \
        /tmp/cap-crewai_openinference_mcp/bin/pip install crewai==1.15.30 mcp==1.30.0 \
        openinference-instrumentation-crewai==1.1.21 openinference-instrumentation-openai==0.1.66 \
        opentelemetry-sdk==1.45.2 opentelemetry-exporter-otlp-proto-http==1.45.2
    /tmp/cap-crewai_openinference_mcp/bin/python tests/captures/crewai_openinference_mcp/record.py

Recorded with (pip freeze, the packages that matter; also in meta.json): crewai 1.15.30 (crewai-core 1.15.30),
mcp 1.30.0, openai 2.54.0, openinference-instrumentation-crewai 1.1.21, openinference-instrumentation-openai 0.1.66,
openinference-instrumentation 0.1.72, openinference-semantic-conventions 0.1.42, opentelemetry-sdk 1.45.2,
opentelemetry-exporter-otlp-proto-http 1.45.2, pydantic 2.12.5; Python 3.11.7. Each is the newest on PyPI but mcp:
crewai 1.15.30 requires `mcp<2` (2.3.0 is the newest), so 1.30.0. No crewai-tools: CrewAI's docs show the agent's own
`mcps` field first ("Simple DSL Integration (Recommended)"), `MCPServerAdapter` as the advanced way.

Why: MCP tools under CrewAI. The tools are `travel_server.py`'s (beside this file, FastMCP, untraced), given as
CrewAI's MCP docs show: `Agent(mcps=[MCPServerStdio(command="python", args=["travel_server.py"], env=…)])`. CrewAI
lists the server's tools at each task (a server process of its own) and makes each a native tool named
`<server>_<tool>`, the server `<command>_<args>` (`python_travel_server.py`, sanitized for the API:
`python_travel_server_py_get_weather`); each call starts a new server process (`MCPNativeTool`: a client per call,
so parallel calls share nothing). An `isError` result is returned as CrewAI's `ToolFailure` (reason `mcp_error`): the
model is shown its message, the run goes on. Traced as `crewai_openinference_hierarchical` is: one tracer provider
exporting OTLP/HTTP (protobuf, batched) to the recorder, the crewai instrumentor (CHAIN `<crew>.kickoff`, AGENT
`<role>._execute_core` per task, TOOL `<tool>.run`: its `tool.name` the unsanitized `python_travel_server.py_…`, its
output a ToolFailure's JSON for the isError call, the span OK) and the openai one (an LLM span per call: CrewAI 1.x
calls OpenAI through the OpenAI SDK). No MCP instrumentation: the protocol work (listing, initialize, tools/call)
makes no span. CrewAI's own usage telemetry and tracing to its servers are off.

CrewAI has no session id: the session is OpenInference's `using_session` around each kickoff (it puts `session.id` on
every span started inside), the same crew kicked off twice in it. The second kickoff is streamed as CrewAI's streaming
docs show (`stream=True` on the crew, set on it before that kickoff: `kickoff` returns a CrewStreamingOutput at once,
iterated for its chunks, then `.result`): CrewAI's first `kickoff` (a span of its own, its output the stream's repr)
returns it, and the iteration runs `kickoff` again in a thread (the run's span, in a trace of its own: the context is
copied when the iteration starts), its LLM calls streamed (`include_usage`).

Turn 1: the agent asks for Oslo's weather and a currency conversion in one answer (two parallel MCP calls, run in
CrewAI's thread pool); the server's get_weather raises once (FastMCP answers `isError`, "Error executing tool
get_weather: …", its one failure remembered in a scratch file across server processes); the agent asks again, then
answers. Turn 2 (streamed): the agent books a hotel, then answers. Five LLM calls, three traces.
"""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

from tests.captures.recording.session import Recording

MODEL = "gpt-4o-mini"
SESSION = "crew-mcp-1"
ROLE = "Travel agent"
# CrewAI names a native MCP tool `<server>_<tool>`, the server `<command>_<args>`, sanitized for the API
# (`python_travel_server.py` → `python_travel_server_py`): the names the model is offered and calls.
SERVER = "python_travel_server_py"
REPLIES = [
    # turn 1: the weather and a conversion in one answer (two parallel MCP calls); get_weather's server answers isError
    {"tool_calls": [{"name": f"{SERVER}_get_weather", "arguments": {"city": "Oslo"}},
                    {"name": f"{SERVER}_convert_currency",
                     "arguments": {"amount": 200, "source": "EUR", "target": "NOK"}}],
     "input_tokens": 512, "output_tokens": 44},
    {"tool_calls": [{"name": f"{SERVER}_get_weather", "arguments": {"city": "Oslo"}}],
     "input_tokens": 601, "output_tokens": 19},
    {"text": "Thought: I now know the final answer\nFinal Answer: Oslo is rainy, 9°C; 200 EUR is 2,340 NOK.",
     "input_tokens": 634, "output_tokens": 26},
    # turn 2, streamed: a booking, then the answer
    {"tool_calls": [{"name": f"{SERVER}_book_hotel", "arguments": {"city": "Oslo", "nights": 2}}],
     "input_tokens": 498, "output_tokens": 21},
    {"text": "Thought: I now know the final answer\nFinal Answer: Booked Hotel Nord in Oslo for 2 nights (ref OSL-42).",
     "input_tokens": 547, "output_tokens": 24},
]
PACKAGES = ["crewai", "openai", "mcp", "openinference-instrumentation-crewai", "openinference-instrumentation-openai",
            "openinference-instrumentation", "openinference-semantic-conventions", "opentelemetry-sdk",
            "opentelemetry-exporter-otlp-proto-http"]
REQUESTS = ["Plan a day in Oslo: check the weather and what 200 EUR is in NOK.",
            "Book me a hotel in Oslo for two nights."]


def main() -> None:
    notes = ("one-agent crew whose tools are a stdio MCP server's (Agent(mcps=[MCPServerStdio]), CrewAI's native MCP "
             "tools, a server process per call): two parallel MCP calls, get_weather's server answering isError "
             "once (CrewAI's ToolFailure, mcp_error) and asked again; two kickoffs of the same crew in one "
             "OpenInference using_session, the second streamed (Crew.stream)")
    here = Path(__file__).resolve().parent
    with Recording(here, REPLIES, framework="crewai", instrumentation="openinference", packages=PACKAGES,
                   session_id=SESSION, notes=notes) as rec, tempfile.TemporaryDirectory() as scratch:
        rec.env()
        os.environ["CREWAI_DISABLE_TELEMETRY"] = "true"  # CrewAI's own usage telemetry (to its servers)
        os.environ["CREWAI_TRACING_ENABLED"] = "false"
        # The server runs as `python travel_server.py`, as CrewAI's docs write it: this virtualenv's python (which
        # has mcp), from this folder (the server's name, so the tools' names, hold no path of this machine).
        os.environ["PATH"] = os.path.dirname(sys.executable) + os.pathsep + os.environ["PATH"]
        os.chdir(here)
        from openinference.instrumentation import using_session
        from openinference.instrumentation.crewai import CrewAIInstrumentor
        from openinference.instrumentation.openai import OpenAIInstrumentor
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
        from opentelemetry.sdk.resources import Resource
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import BatchSpanProcessor

        provider = TracerProvider(resource=Resource.create({"service.name": "travel-crew"}))
        provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
        CrewAIInstrumentor().instrument(tracer_provider=provider)
        OpenAIInstrumentor().instrument(tracer_provider=provider)

        from crewai import LLM, Agent, Crew, Process, Task
        from crewai.mcp import MCPServerStdio

        travel = MCPServerStdio(command="python", args=["travel_server.py"],
                                env={"TRAVEL_FAILURES": str(Path(scratch) / "failures")})
        agent = Agent(role=ROLE, goal="Plan and book trips with the travel service's tools",
                      backstory="A travel agent who checks the weather and the money before booking.",
                      mcps=[travel], llm=LLM(model=MODEL))
        task = Task(description="{request}", expected_output="A short answer for the traveller.", agent=agent)
        crew = Crew(agents=[agent], tasks=[task], process=Process.sequential)

        with using_session(SESSION):
            print(crew.kickoff(inputs={"request": REQUESTS[0]}))
        # The second kickoff streamed, as CrewAI's streaming docs show (`stream=True`: kickoff gives a
        # CrewStreamingOutput to iterate, its LLM calls streamed); the same crew, so the field is set on it.
        crew.stream = True
        with using_session(SESSION):
            streaming = crew.kickoff(inputs={"request": REQUESTS[1]})
            for chunk in streaming:
                print(chunk.content, end="", flush=True)
            print("\n" + streaming.result.raw)
        rec.flush(provider)


if __name__ == "__main__":
    main()
