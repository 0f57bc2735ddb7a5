"""Re-record: a pydantic-ai agent traced by OpenLIT alone (`openlit.init()`; pydantic-ai's own instrumentation off).

    python3 -m venv /tmp/cap-pydantic-ai_openlit && /tmp/cap-pydantic-ai_openlit/bin/pip install -U pip && \
        /tmp/cap-pydantic-ai_openlit/bin/pip install openlit==1.45.0 'pydantic-ai==2.31.1' \
        'pydantic-ai-slim[openai]==2.31.1' openai==2.54.0 httpx==0.29.0 \
        opentelemetry-sdk==1.45.1 opentelemetry-exporter-otlp-proto-http==1.45.1
    /tmp/cap-pydantic-ai_openlit/bin/python tests/captures/pydantic-ai_openlit/record.py

Why these versions: openlit 1.45 requires `openai<3`, and pydantic-ai-slim's `openai` extra requires `openai>=3`
from 2.32 on (`>=3.50` in 2.78, the latest), so 2.31.1 is the newest pydantic-ai that installs beside it. Why
`pydantic-ai` and not only `pydantic-ai-slim[openai]`: OpenLIT's instrumentor declares `pydantic-ai >= 0.2.17` (a
distribution's name), and OpenTelemetry's `BaseInstrumentor` skips an instrumentor whose distribution is not
installed ("PydanticAIInstrumentor only instruments "pydantic-ai >= 0.2.17", but no installed version was found"):
with the slim package alone OpenLIT records only the OpenAI client's calls. The full `pydantic-ai` (what both
projects' docs install) is needed.

Set up the way OpenLIT's quickstart shows: `openlit.init(otlp_endpoint=…, capture_message_content=True)` builds the
tracer, logger and meter providers (OTLP/HTTP protobuf to the recorder) and instruments what it finds: its
`pydantic_ai` instrumentation (spans for `Agent(...)`, `Agent.run`, `Agent.run_sync`, `Agent.iter` and the graph's
user-prompt, model-request and call-tools nodes: openlit/instrumentation/pydantic_ai), its OpenAI instrumentation
(one `chat <model>` span per request pydantic-ai's OpenAIChatModel makes, plus an inference event log record) and
the httpx client (a `POST` span under each). pydantic-ai's own instrumentation (`Agent(instrument=…)`,
`Agent.instrument_all()`) is not turned on: the point is what OpenLIT alone records. OpenLIT has no session API of
its own and does not read pydantic-ai's `conversation_id`; its docs (sdk/features/custom-attributes) attach request
context to every auto-instrumented span with `openlit.using_attributes(...)` (a dict in 1.45), so each turn runs
inside `using_attributes({"session.id": SESSION})`.

The capture is recorded offline: OpenLIT's pricing table (fetched from GitHub at init) is unreachable, so every
call's `gen_ai.usage.cost` is 0.

What it recorded (trajectory/mappers/openlit_pydantic_ai.py): each LLM call once, as the OpenAI instrumentation's
`chat` span (the `model_request` node's span holds no messages or tokens); `Agent.run` an `execute_task` span
holding the run's summed usage (`run_sync` an `invoke_agent` span around the `execute_task` one); the graph nodes'
spans made and ended before their work (the wrapper is synchronous, the nodes' `run` a coroutine); no span for a
tool function; `run_stream` not wrapped, so turn two has no run span and each of its spans is a trace of its own
(the node spans with no session id).

Turn one (`agent.run`): the model asks for the weather and for hotels in parallel; `find_hotels` is asked for 0
nights and raises `ModelRetry` (pydantic-ai sends the model the retry prompt), the model asks again with 2 nights,
then answers. Turn two (`agent.run_stream`, given the first run's `all_messages()`; every request streamed): a
`get_weather` call, then the answer streamed as text. Turn three (`agent.run_sync`, given the second run's messages):
answered from the history. Six LLM calls. (The versions the capture was recorded with are in meta.json.)
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

from tests.captures.recording.session import Recording

SESSION = "pai-openlit-trip-1"
MODEL = "gpt-4o-mini"
REPLIES = [
    {"tool_calls": [{"name": "get_weather", "arguments": {"city": "Lisbon"}},
                    {"name": "find_hotels", "arguments": {"city": "Lisbon", "nights": 0}}],
     "input_tokens": 214, "output_tokens": 41},
    {"tool_calls": [{"name": "find_hotels", "arguments": {"city": "Lisbon", "nights": 2}}],
     "input_tokens": 298, "output_tokens": 19},
    {"text": "Lisbon is sunny at 24°C; Casa Alfama has a room for two nights at 110 EUR a night.",
     "input_tokens": 352, "output_tokens": 26},
    {"tool_calls": [{"name": "get_weather", "arguments": {"city": "Porto"}}], "when": "Porto",
     "input_tokens": 401, "output_tokens": 14},
    {"text": "Porto is cloudy at 18°C, so Lisbon is the warmer of the two by 6 degrees.",
     "input_tokens": 447, "output_tokens": 23},
    {"text": "Casa Alfama: 220 EUR for the two nights.", "when": "Which hotel", "input_tokens": 489,
     "output_tokens": 12},
]
WEATHER = {"Lisbon": "sunny, 24°C", "Porto": "cloudy, 18°C"}
HOTELS = {"Lisbon": [{"name": "Casa Alfama", "per_night_eur": 110}]}
QUESTIONS = ["I'm going to Lisbon: what's the weather, and find me a hotel for two nights.",
             "And Porto, is it warmer there?", "Which hotel was it, and how much for both nights?"]
PACKAGES = ["openlit", "pydantic-ai", "pydantic-ai-slim", "openai", "httpx", "opentelemetry-sdk",
            "opentelemetry-exporter-otlp-proto-http"]


def conversation(rec: Recording) -> None:
    import openlit
    from opentelemetry import metrics, trace
    from opentelemetry._logs import get_logger_provider

    # Before the agent is built: OpenLIT wraps `Agent.__init__`, `Agent.run`, `Agent.run_sync` and the graph's nodes.
    openlit.init(application_name="pai-trip", environment="dev", otlp_endpoint=rec.otlp_endpoint,
                 capture_message_content=True)
    from pydantic_ai import Agent, ModelRetry
    from pydantic_ai.models.openai import OpenAIChatModel
    from pydantic_ai.providers.openai import OpenAIProvider

    model = OpenAIChatModel(MODEL, provider=OpenAIProvider(base_url=rec.base_url, api_key="sk-fake"))
    agent = Agent(model, name="travel_desk", instructions="You plan short trips. Be brief.")

    @agent.tool_plain
    def get_weather(city: str) -> str:
        """The current weather in a city."""
        return WEATHER[city]

    @agent.tool_plain
    def find_hotels(city: str, nights: int) -> list[dict[str, object]]:
        """Hotels with a room free for that many nights."""
        if nights < 1:
            raise ModelRetry("nights must be at least 1: ask again with the number of nights.")
        return HOTELS.get(city, [])

    async def turns() -> list[Any]:
        # Turn one: not streamed; parallel calls, one raising ModelRetry, asked again, then the answer.
        with openlit.using_attributes({"session.id": SESSION}):
            first = await agent.run(QUESTIONS[0])
        print(first.output)
        # Turn two: `run_stream`, the history re-sent; a tool call, then the answer streamed as text.
        with openlit.using_attributes({"session.id": SESSION}):
            async with agent.run_stream(QUESTIONS[1], message_history=first.all_messages()) as result:
                async for delta in result.stream_text(delta=True):
                    print(delta, end="", flush=True)
                print()
        return result.all_messages()

    history = asyncio.run(turns())
    # Turn three: `run_sync` (it runs `Agent.run` in an event loop of its own), answered from the history.
    with openlit.using_attributes({"session.id": SESSION}):
        print(agent.run_sync(QUESTIONS[2], message_history=history).output)
    rec.flush(trace.get_tracer_provider(), get_logger_provider(), metrics.get_meter_provider())


def main() -> None:
    notes = ("openlit.init(otlp_endpoint=recorder, capture_message_content=True) alone (pydantic-ai's own "
             "instrumentation off): its pydantic_ai instrumentation's spans (create_agent; execute_task for "
             "Agent.run, invoke_agent for Agent.run_sync; invoke_workflow for Agent.iter; the graph nodes'), its "
             "OpenAI instrumentation's chat spans (+ an inference event log record per call), httpx POST spans, "
             "metrics; each turn under openlit.using_attributes({'session.id': …}). Turn 1 agent.run: get_weather "
             "and find_hotels in parallel, find_hotels raising ModelRetry (0 nights), asked again, the answer; turn 2 "
             "run_stream with the first run's history: get_weather, the streamed answer; turn 3 run_sync with turn "
             "2's history, answered from it. Recorded offline: OpenLIT's pricing table unreachable, so "
             "gen_ai.usage.cost is 0. Needs the full pydantic-ai distribution: with pydantic-ai-slim alone "
             "BaseInstrumentor skips OpenLIT's pydantic_ai instrumentor")
    with Recording(Path(__file__).parent, REPLIES, framework="pydantic-ai", instrumentation="openlit",
                   packages=PACKAGES, session_id=SESSION, notes=notes) as rec:
        rec.env()
        conversation(rec)


if __name__ == "__main__":
    main()
