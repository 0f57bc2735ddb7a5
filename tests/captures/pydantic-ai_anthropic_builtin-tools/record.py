"""Re-record: a pydantic-ai agent on an Anthropic model with the provider's own tools (web search, code execution, web
fetch), instrumented by pydantic-ai itself.

    python3 -m venv /tmp/cap-pydantic-ai_anthropic_builtin-tools && \\
        /tmp/cap-pydantic-ai_anthropic_builtin-tools/bin/pip install \\
        'pydantic-ai-slim[anthropic]==2.78.0' anthropic==2.17.0 genai-prices==0.2.5 \\
        opentelemetry-sdk==1.45.2 opentelemetry-exporter-otlp-proto-http==1.45.2
    /tmp/cap-pydantic-ai_anthropic_builtin-tools/bin/python tests/captures/pydantic-ai_anthropic_builtin-tools/record.py

pydantic-ai's native tools as its docs show them: the `WebSearch` and `WebFetch` capabilities (native only, no local
fallback) and `NativeTool(CodeExecutionTool())` beside three function tools, on `claude-sonnet-4-6` (claude-sonnet-4-5,
which the other Anthropic server-tool captures use, is past its retirement date: pydantic-ai warns). pydantic-ai's
Anthropic adapter sends them as Anthropic's server tools on the beta Messages API (`web_search_20260209`,
`web_fetch_20260209`, `code_execution_20260120`: the versions the model's profile picks), with
`anthropic_web_tools_allowed_callers=["direct"]` (the documented setting for the model calling the web tools itself,
not from code execution, as the fake LLM answers: its answers' citations are the direct calls'). The API runs them
itself, within the answer, and pydantic-ai keeps each `server_tool_use` block as a `NativeToolCallPart` and its result
block as a `NativeToolReturnPart` of the same response, which its instrumentation records as `tool_call` /
`tool_call_response` parts marked `builtin: true` in the call's output messages (a code execution named by its kind,
`code_execution`), and re-sends in every later call's history; an answer's text blocks are `text` parts, one a block,
their citations in no span; the searches are `gen_ai.usage.details.web_search_requests`, the fetches nowhere.

Two runs of one conversation (`conversation_id`), each its own trace, the second given the first's `all_messages()`.
Turn one (`agent.run`, unstreamed: `max_tokens` 4096): the model searches for a jazz concert, answers with a cited
passage and calls `get_exchange_rate` and `get_weather` in parallel; `get_exchange_rate` raises `ModelRetry` (the rates
service is busy), which Anthropic is shown as an `is_error` tool result; the model calls it again, then runs a command
(code execution) that prices two tickets in dollars and answers. Turn two (`run_stream`, every request streamed: each
server tool's input as `input_json_delta`, its result block whole in `content_block_start`, each citation a
`citations_delta`): the model fetches the ferry operator's timetable page (web fetch), runs a command that fails
(return code 1) and one that works, and calls `get_walking_time`; then it searches for the concert's end and answers
citing it. Five model calls; two searches, one fetch, three commands.

Why: a real user of pydantic-ai turns the provider's tools on with one capability each; the corpus had these tools
only under OpenInference's Anthropic instrumentation, never as pydantic-ai records them (`builtin` tool parts of the
answer, results beside their calls in the same message, re-sent in the history). These are the newest releases on
PyPI (pydantic-ai-slim 2.78.0, anthropic 2.17.0); the versions recorded are in meta.json.
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

from tests.captures.recording.session import Recording

SESSION = "pai-anthropic-builtin-tools-1"
QUESTIONS = ["Is there a jazz concert in Lisbon this Saturday? What would two tickets cost in US dollars, and what's "
             "the weather?",
             "Can I get a ferry back to Cacilhas after it? Check the operator's timetable."]
HOT_CLUBE = {"url": "https://hcp.pt/agenda", "title": "Agenda | Hot Clube de Portugal", "page_age": "2 days ago"}
JAZZ_EM_AGOSTO = {"url": "https://gulbenkian.pt/jazzemagosto", "title": "Jazz em Agosto | Gulbenkian",
                  "page_age": "3 weeks ago"}
TIMETABLE_URL = "https://ttsl.pt/horarios/cais-do-sodre-cacilhas"
TIMETABLE = ("Cais do Sodre - Cacilhas, Saturdays\n\nDepartures from Cais do Sodre after 22:00: 22:20, 22:50, 23:20, "
             "23:50, 00:20, 00:50, 01:20, 01:40 (last).\n")


def _bash(command: str, stdout: str = "", stderr: str = "", return_code: int = 0) -> dict[str, Any]:
    return {"name": "bash_code_execution", "input": {"command": command},
            "result": {"type": "bash_code_execution_result", "stdout": stdout, "stderr": stderr,
                       "return_code": return_code, "content": []}}


REPLIES = [
    {"web_search": [{"query": "Lisbon jazz concert this Saturday", "results": [HOT_CLUBE, JAZZ_EM_AGOSTO]}],
     "text": "Yes: the Lisbon Jazz Quartet plays Hot Clube de Portugal on Saturday at 22:00, tickets 15 EUR each. "
             "Getting the rate and the weather.",
     "citations": [{**HOT_CLUBE, "cited": "the Lisbon Jazz Quartet plays Hot Clube de Portugal on Saturday at 22:00",
                    "cited_text": "Sat 22:00 - Lisbon Jazz Quartet. Tickets 15 EUR at the door or online."}],
     "tool_calls": [{"name": "get_exchange_rate", "arguments": {"base": "EUR", "quote": "USD"}},
                    {"name": "get_weather", "arguments": {"city": "Lisbon"}}]},
    {"text": "The rates service was busy; asking again.",
     "tool_calls": [{"name": "get_exchange_rate", "arguments": {"base": "EUR", "quote": "USD"}}]},
    {"server_tools": [_bash("python3 -c \"print(round(2 * 15 * 1.0842, 2))\"", stdout="32.53\n")],
     "text": "Two tickets cost USD 32.53 (EUR 30 at 1.0842). Saturday in Lisbon: clear, 19°C."},
    {"server_tools": [
        {"name": "web_fetch", "input": {"url": TIMETABLE_URL},
         "result": {"type": "web_fetch_result", "url": TIMETABLE_URL, "retrieved_at": "2025-10-09T21:14:05Z",
                    "content": {"type": "document", "title": "Cais do Sodré - Cacilhas | Transtejo",
                                "source": {"type": "text", "media_type": "text/plain", "data": TIMETABLE}}}},
        _bash("python3 -c \"import pendulum; print(pendulum.parse('01:40') - pendulum.parse('00:30'))\"",
              stderr="Traceback (most recent call last):\n  File \"<string>\", line 1, in <module>\n"
                     "ModuleNotFoundError: No module named 'pendulum'\n", return_code=1),
        _bash("python3 -c \"print((1 * 60 + 40) - 30)\"", stdout="70\n")],
     "tool_calls": [{"name": "get_walking_time",
                     "arguments": {"origin": "Hot Clube de Portugal", "destination": "Cais do Sodré"}}]},
    {"web_search": [{"query": "Hot Clube de Portugal Saturday concert end time", "results": [HOT_CLUBE]}],
     "text": "Yes. The concert ends around 00:30 and the last ferry to Cacilhas leaves Cais do Sodré at 01:40, a "
             "12-minute walk away: 70 minutes to spare.",
     "citations": [{**HOT_CLUBE, "cited": "The concert ends around 00:30",
                    "cited_text": "Two sets, 22:00 and 23:30; doors close at 00:30."}]},
]
WEATHER = {"Lisbon": "clear, 19°C"}


async def conversation(rec: Recording) -> None:
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor
    from pydantic_ai import Agent, CodeExecutionTool, ModelRetry
    from pydantic_ai.capabilities import NativeTool, WebFetch, WebSearch
    from pydantic_ai.capabilities.instrumentation import Instrumentation
    from pydantic_ai.models.anthropic import AnthropicModel, AnthropicModelSettings
    from pydantic_ai.models.instrumented import InstrumentationSettings
    from pydantic_ai.providers.anthropic import AnthropicProvider

    provider = TracerProvider(resource=Resource.create({"service.name": "pai-city-break"}))
    provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
    settings = InstrumentationSettings(tracer_provider=provider)
    model = AnthropicModel("claude-sonnet-4-6", provider=AnthropicProvider(
        base_url=rec.base_url.removesuffix("/v1"), api_key="sk-ant-fake"))
    agent = Agent(model, name="city_break",
                  instructions="You are a terse city-break assistant. Search the web for what is on, fetch pages to "
                               "read them, compute with code execution; use the tools for rates, weather and walks.",
                  model_settings=AnthropicModelSettings(
                      max_tokens=4096, anthropic_web_tools_allowed_callers=["direct"]),
                  capabilities=[WebSearch(max_uses=3), WebFetch(max_uses=2), NativeTool(CodeExecutionTool()),
                                Instrumentation(settings=settings)])
    busy = {"get_exchange_rate": 1}

    @agent.tool_plain
    def get_exchange_rate(base: str, quote: str) -> str:
        """The exchange rate between two currencies."""
        if busy["get_exchange_rate"]:
            busy["get_exchange_rate"] -= 1
            raise ModelRetry("The rates service is busy; try again.")
        return f"1 {base} = 1.0842 {quote}"

    @agent.tool_plain
    def get_weather(city: str) -> str:
        """The weather forecast for Saturday in a city."""
        return WEATHER[city]

    @agent.tool_plain
    def get_walking_time(origin: str, destination: str) -> str:
        """How long it takes to walk from one place to another."""
        return f"{origin} to {destination}: 12 minutes on foot"

    # Turn one: unstreamed; a search with a cited answer, parallel function calls (one retried), a command.
    first = await agent.run(QUESTIONS[0], conversation_id=SESSION)
    print(first.output)

    # Turn two: streamed, carried on with the first turn's messages (its native tool parts re-sent).
    async with agent.run_stream(QUESTIONS[1], message_history=first.all_messages(), conversation_id=SESSION) as result:
        async for delta in result.stream_text(delta=True):
            print(delta, end="", flush=True)
        print()
    rec.flush(provider)


def main() -> None:
    with Recording(Path(__file__).parent, REPLIES, framework="pydantic-ai", instrumentation="pydantic-ai",
                   packages=["pydantic-ai-slim", "pydantic-graph", "pydantic", "anthropic", "genai-prices",
                             "opentelemetry-api", "opentelemetry-sdk", "opentelemetry-exporter-otlp-proto-http"],
                   session_id=SESSION,
                   notes="pydantic-ai's native tools on Anthropic (claude-sonnet-4-6): WebSearch(max_uses=3), "
                         "WebFetch(max_uses=2) and NativeTool(CodeExecutionTool()) beside three function tools, "
                         "sent as server tools (web_search_20260209 and web_fetch_20260209 with allowed_callers "
                         "['direct'], code_execution_20260120); each server_tool_use and its result block a "
                         "builtin tool_call / tool_call_response part of the answer, re-sent in the history. Turn "
                         "one agent.run: a "
                         "search and a cited answer with get_exchange_rate and get_weather in parallel, "
                         "get_exchange_rate raising ModelRetry once, then a command and the answer; turn two "
                         "run_stream with message_history: a fetch, a command failing (return code 1) and one "
                         "working, get_walking_time, then a search and the answer citing it") as rec:
        rec.env()
        asyncio.run(conversation(rec))


if __name__ == "__main__":
    main()
