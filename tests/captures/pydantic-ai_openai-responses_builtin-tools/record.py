"""Re-record: a pydantic-ai agent on OpenAI's Responses API with the provider's own tools (web search, code
interpreter), instrumented by pydantic-ai itself.

    python3 -m venv /tmp/cap-pydantic-ai_openai-responses_builtin-tools && \\
        /tmp/cap-pydantic-ai_openai-responses_builtin-tools/bin/pip install \\
        'pydantic-ai-slim[openai]==2.78.0' openai==3.63.0 genai-prices==0.2.5 \\
        opentelemetry-sdk==1.45.2 opentelemetry-exporter-otlp-proto-http==1.45.2
    /tmp/cap-pydantic-ai_openai-responses_builtin-tools/bin/python \\
        tests/captures/pydantic-ai_openai-responses_builtin-tools/record.py

pydantic-ai's native tools as its docs show them on OpenAI: the `WebSearch` capability and
`NativeTool(CodeExecutionTool())` beside three function tools, on `OpenAIResponsesModel("gpt-4.1")`, with
`openai_include_web_search_sources` and `openai_include_code_execution_outputs` (the documented settings for keeping
what a search read and what the code printed: the request's `include`). pydantic-ai sends them as the Responses API's
`{"type": "web_search"}` and `{"type": "code_interpreter", "container": {"type": "auto"}}` tools; the API runs them
itself within the answer, each a `web_search_call` item (its `action.sources`, included) or a `code_interpreter_call`
item (its `code`, and its `outputs` logs, included), which pydantic-ai keeps as a `NativeToolCallPart` and a
`NativeToolReturnPart` of the same response (a search's result its status and sources, a run's its status and logs),
recorded by its instrumentation as `tool_call` / `tool_call_response` parts marked `builtin: true` in the call's output
messages and re-sent in every later call's history; it counts an answer's searches (`search` actions) as
`gen_ai.usage.details.web_search_requests`. The answer's `url_citation` annotations are in no span.

Two runs of one conversation (`conversation_id`), each its own trace, the second given the first's `all_messages()`.
Turn one (`agent.run`, unstreamed): the model searches for a jazz concert in Porto, answers with a cited passage and
calls `get_exchange_rate` and `get_weather` in parallel; `get_exchange_rate` raises `ModelRetry` (the rates service is
busy), which the model is shown as the call's output; it calls it again, then runs code (the code interpreter) that
prices two tickets in dollars and answers. Turn two (`run_stream`, every request streamed: a run's code as
`code_interpreter_call_code.delta` events): the model runs code that raises (the API's run still `completed`, the
traceback its logs) and code that works, calls `get_walking_time`, then searches for the concert's end and answers
citing it. Five model calls; two searches, three runs of code.

Why: a real user of pydantic-ai on OpenAI turns the provider's tools on with one capability each, on the Responses
API (which alone runs them); the corpus had pydantic-ai's native tools only on Anthropic
(`pydantic-ai_anthropic_builtin-tools`), whose blocks differ in every way (a search's pages in its result, a command's
return code), and the Responses API's hosted tools only under openai-agents' instrumentations (a search no result, no
code interpreter at all). These are the newest releases on PyPI (pydantic-ai-slim 2.78.0, openai 3.63.0); the
versions recorded are in meta.json.
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

from tests.captures.recording.session import Recording

SESSION = "pai-openai-builtin-tools-1"
QUESTIONS = ["Is there a jazz concert in Porto this Friday? What would two tickets cost in US dollars, and what's the "
             "weather?",
             "Can I walk to the metro after it and still catch the last train to Matosinhos?"]
HOT_FIVE = "https://hotfiveclub.pt/agenda"
CASA_DA_MUSICA = "https://casadamusica.com/agenda"
METRO = "https://metrodoporto.pt/horarios/linha-a"
FAILING_CODE = "import pendulum\nprint(pendulum.parse('01:05') - pendulum.parse('23:40'))"
# The code interpreter is a Jupyter kernel: code that raises prints IPython's traceback, and the run is `completed`.
TRACEBACK = ("---------------------------------------------------------------------------\n"
             "ModuleNotFoundError                       Traceback (most recent call last)\n"
             "Cell In[2], line 1\n----> 1 import pendulum\n      2 print(pendulum.parse('01:05') - "
             "pendulum.parse('23:40'))\n\nModuleNotFoundError: No module named 'pendulum'\n")
REPLIES = [
    {"web_search": [{"query": "Porto jazz concert this Friday", "sources": [HOT_FIVE, CASA_DA_MUSICA]}],
     "text": "Yes: the Porto Jazz Trio plays the Hot Five Jazz & Blues Club on Friday at 22:30, tickets 12 EUR each. "
             "Getting the rate and the weather.",
     "citations": [{"url": HOT_FIVE, "title": "Agenda | Hot Five Jazz & Blues Club",
                    "cited": "the Porto Jazz Trio plays the Hot Five Jazz & Blues Club on Friday at 22:30"}],
     "tool_calls": [{"name": "get_exchange_rate", "arguments": {"base": "EUR", "quote": "USD"}},
                    {"name": "get_weather", "arguments": {"city": "Porto"}}]},
    {"text": "The rates service was busy; asking again.",
     "tool_calls": [{"name": "get_exchange_rate", "arguments": {"base": "EUR", "quote": "USD"}}]},
    {"code_interpreter": [{"code": "print(round(2 * 12 * 1.0842, 2))", "logs": "26.02\n"}],
     "text": "Two tickets cost USD 26.02 (EUR 24 at 1.0842). Friday in Porto: light rain, 16°C."},
    {"code_interpreter": [{"code": FAILING_CODE, "logs": TRACEBACK},
                          {"code": "print((24 * 60 + 65) - (23 * 60 + 40))", "logs": "85\n"}],
     "tool_calls": [{"name": "get_walking_time",
                     "arguments": {"origin": "Hot Five Jazz & Blues Club", "destination": "Trindade metro"}}]},
    {"web_search": [{"query": "Hot Five Jazz Club Porto Friday concert end time", "sources": [HOT_FIVE, METRO]}],
     "text": "Yes. The concert ends around 23:40 and the last train to Matosinhos leaves Trindade at 01:05, a "
             "9-minute walk away: 85 minutes to spare.",
     "citations": [{"url": HOT_FIVE, "title": "Agenda | Hot Five Jazz & Blues Club",
                    "cited": "The concert ends around 23:40"},
                   {"url": METRO, "title": "Linha A | Metro do Porto",
                    "cited": "the last train to Matosinhos leaves Trindade at 01:05"}]},
]
WEATHER = {"Porto": "light rain, 16°C"}


async def conversation(rec: Recording) -> None:
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor
    from pydantic_ai import Agent, CodeExecutionTool, ModelRetry
    from pydantic_ai.capabilities import NativeTool, WebSearch
    from pydantic_ai.capabilities.instrumentation import Instrumentation
    from pydantic_ai.models.instrumented import InstrumentationSettings
    from pydantic_ai.models.openai import OpenAIResponsesModel, OpenAIResponsesModelSettings
    from pydantic_ai.providers.openai import OpenAIProvider

    provider = TracerProvider(resource=Resource.create({"service.name": "pai-night-out"}))
    provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
    settings = InstrumentationSettings(tracer_provider=provider)
    model = OpenAIResponsesModel("gpt-4.1", provider=OpenAIProvider(base_url=rec.base_url, api_key="sk-fake"))
    agent = Agent(model, name="night_out",
                  instructions="You are a terse night-out assistant. Search the web for what is on, compute with the "
                               "code interpreter; use the tools for rates, weather and walks.",
                  model_settings=OpenAIResponsesModelSettings(
                      openai_include_web_search_sources=True, openai_include_code_execution_outputs=True),
                  capabilities=[WebSearch(), NativeTool(CodeExecutionTool()), Instrumentation(settings=settings)])
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
        """The weather forecast for Friday in a city."""
        return WEATHER[city]

    @agent.tool_plain
    def get_walking_time(origin: str, destination: str) -> str:
        """How long it takes to walk from one place to another."""
        return f"{origin} to {destination}: 9 minutes on foot"

    # Turn one: unstreamed; a search with a cited answer, parallel function calls (one retried), a run of code.
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
                   packages=["pydantic-ai-slim", "pydantic-graph", "pydantic", "openai", "genai-prices",
                             "opentelemetry-api", "opentelemetry-sdk", "opentelemetry-exporter-otlp-proto-http"],
                   session_id=SESSION,
                   notes="pydantic-ai's native tools on OpenAI's Responses API (OpenAIResponsesModel, gpt-4.1): "
                         "WebSearch() and NativeTool(CodeExecutionTool()) beside three function tools, with "
                         "openai_include_web_search_sources and openai_include_code_execution_outputs; each "
                         "web_search_call / code_interpreter_call item a builtin tool_call / tool_call_response part "
                         "of the answer, re-sent in the history. Turn one agent.run: a search and a cited answer with "
                         "get_exchange_rate and get_weather in parallel, get_exchange_rate raising ModelRetry once, "
                         "then a run of code and the answer; turn two run_stream with message_history: code that "
                         "raises (its traceback the logs, the run completed) and code that works, get_walking_time, "
                         "then a search and the answer citing it") as rec:
        rec.env()
        asyncio.run(conversation(rec))


if __name__ == "__main__":
    main()
