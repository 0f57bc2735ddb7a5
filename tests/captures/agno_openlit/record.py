"""Re-record: an Agno Team (a leader with a tool of its own and one member agent) on OpenAIChat, traced by OpenLIT.

    python3 -m venv /tmp/cap-agno_openlit && /tmp/cap-agno_openlit/bin/pip install -U pip && \
        /tmp/cap-agno_openlit/bin/pip install agno==3.1.10 openlit==1.45.0 openai==2.54.0 \
        opentelemetry-sdk==1.45.1 opentelemetry-exporter-otlp-proto-http==1.45.1
    /tmp/cap-agno_openlit/bin/python tests/captures/agno_openlit/record.py

Set up the way OpenLIT's quickstart shows: `openlit.init(otlp_endpoint=…)` (content capture on by default) builds
the tracer, logger and meter providers, all to the endpoint (the recorder), and instruments every library it
finds: here its Agno instrumentation (wrapped `Agent.__init__` / `run` / `arun`, `Team.run` / `arun` and
`FunctionCall.execute`: `create_agent`, `invoke_agent`, `invoke_workflow` and `execute_tool` spans) and its OpenAI
one under it (Agno's `OpenAIChat` calls the `openai` client: its `chat <model>` spans), plus the HTTP client
instrumentations it bundles. The capture shows which spans each writes and whether a call is reported twice.

The session is Agno's own: the Team built with `session_id=` and an in-memory db (`add_history_to_context`, so the
second turn is shown the first), as Agno's sessions docs show; OpenLIT copies the session id onto its agent, team
and tool spans as `gen_ai.conversation.id`. No `openlit.using_attributes`.

One `Team` (coordinate mode) whose leader has a tool of its own (`get_forecast`) and one member, `travel-agent`,
with two (`get_weather`, `convert_currency`). Turn 1 (`team.run`): the leader delegates to the member
(`delegate_task_to_member`); the member calls get_weather and convert_currency in one answer; the conversion
raises once (Agno hands the model the exception's text), the member calls it again and answers; the leader,
shown the member's answer as its delegation's result, answers. Turn 2, the same session, async and streamed
(`team.arun(…, stream=True)`, iterated as Agno's streaming docs show): the leader calls its own forecast tool, then
answers. Seven LLM calls.

Why the streamed turn is async: OpenLIT 1.45 wraps the synchronous `Team.run` / `Agent.run` with a plain wrapper
that ends its span when the call returns, and `run(…, stream=True)` returns a generator at once: the turn's span
ends before its first model call, whose spans (and its tools') are then roots of traces of their own with no
session id, which no reading can put back in the session. Its async wrapper (`_team_arun_stream_wrapper`) holds the
span open while the stream is iterated, so the streamed turn is recorded in its session.

Recorded offline: OpenLIT's pricing table (fetched from GitHub at init) is unreachable, so any `gen_ai.usage.cost`
it writes is 0. (The versions the capture was recorded with are in meta.json.)
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

from tests.captures.recording.session import Recording

SESSION = "agno-openlit-trip-1"
MODEL = "gpt-4o-mini"
REPLIES = [
    # turn 1: the leader delegates
    {"tool_calls": [{"name": "delegate_task_to_member",
                     "arguments": {"member_id": "travel-agent",
                                   "task": "The weather in Tokyo, and 200 EUR in JPY."}}],
     "input_tokens": 412, "output_tokens": 31},
    # travel-agent: both tools in one answer; the conversion raises once, it tries again
    {"tool_calls": [{"name": "get_weather", "arguments": {"city": "Tokyo"}},
                    {"name": "convert_currency", "arguments": {"amount": 200, "from_currency": "EUR",
                                                               "to_currency": "JPY"}}],
     "input_tokens": 188, "output_tokens": 48},
    {"text": "The rate service timed out; trying again.",
     "tool_calls": [{"name": "convert_currency", "arguments": {"amount": 200, "from_currency": "EUR",
                                                               "to_currency": "JPY"}}],
     "input_tokens": 267, "output_tokens": 33},
    {"text": "Tokyo: light rain, 18°C. 200 EUR = 32,480 JPY.", "input_tokens": 305, "output_tokens": 19},
    # the leader answers
    {"text": "Tokyo has light rain at 18°C, so take an umbrella; 200 EUR is about 32,480 JPY.",
     "input_tokens": 471, "output_tokens": 27},
    # turn 2, streamed: the leader's own tool
    {"tool_calls": [{"name": "get_forecast", "arguments": {"city": "Kyoto", "day": "tomorrow"}}], "when": "Kyoto",
     "input_tokens": 533, "output_tokens": 18},
    {"text": "Kyoto will be sunny at 21°C tomorrow: no umbrella needed.", "input_tokens": 569, "output_tokens": 16},
]
WEATHER = {"Tokyo": "light rain, 18°C"}
FORECAST = {"Kyoto": "sunny, 21°C"}
QUESTIONS = ["I'm in Tokyo with 200 EUR. What's the weather, and how much is that in yen?",
             "And tomorrow in Kyoto, will I need an umbrella?"]
PACKAGES = ["agno", "openlit", "openai", "opentelemetry-sdk", "opentelemetry-exporter-otlp-proto-http"]


def main() -> None:
    notes = ("openlit.init(otlp_endpoint=recorder): its Agno and OpenAI instrumentations (+ HTTP client spans, + log "
             "records, + metrics). A Team (session_id, InMemoryDb, add_history_to_context) whose leader has "
             "get_forecast and delegates to travel-agent (get_weather, convert_currency). Turn 1 team.run: the "
             "leader delegates; the member calls both tools in one answer, the conversion raising once (Agno sends "
             "the exception's text), retried, the member answers, the leader answers; turn 2 team.arun(stream=True): "
             "the leader calls get_forecast, then answers. Recorded offline: OpenLIT's pricing table unreachable")
    with Recording(Path(__file__).parent, REPLIES, framework="agno", instrumentation="openlit",
                   packages=PACKAGES, session_id=SESSION, notes=notes) as rec:
        rec.env()
        import openlit
        from opentelemetry import metrics, trace
        from opentelemetry._logs import get_logger_provider

        openlit.init(application_name="travel-assistant", environment="dev", otlp_endpoint=rec.otlp_endpoint)

        from agno.agent import Agent
        from agno.db.in_memory import InMemoryDb
        from agno.models.openai import OpenAIChat
        from agno.team import Team

        failures = {"convert_currency": 1}

        def get_weather(city: str) -> str:
            """The weather in a city today.

            Args:
                city: the city
            """
            return WEATHER[city]

        def convert_currency(amount: float, from_currency: str, to_currency: str) -> str:
            """Convert an amount of money between currencies.

            Args:
                amount: how much
                from_currency: the currency it is in
                to_currency: the currency wanted
            """
            if failures["convert_currency"]:
                failures["convert_currency"] -= 1
                raise TimeoutError("exchange-rate service timed out")
            return f"{amount:g} {from_currency} = {round(amount * 162.4):,} {to_currency}"

        def get_forecast(city: str, day: str) -> str:
            """The weather forecast in a city.

            Args:
                city: the city
                day: which day
            """
            return f"{day} in {city}: {FORECAST[city]}"

        def model() -> OpenAIChat:
            return OpenAIChat(id=MODEL, base_url=rec.base_url, api_key="sk-fake")

        member = Agent(name="travel-agent", role="Finds the weather and converts currencies.", model=model(),
                       tools=[get_weather, convert_currency], instructions="You are terse.", telemetry=False)
        team = Team(name="trip-team", members=[member], model=model(), tools=[get_forecast],
                    instructions="You are a terse travel assistant: ask your member, or check a forecast yourself.",
                    db=InMemoryDb(), session_id=SESSION, add_history_to_context=True, telemetry=False)

        print(team.run(QUESTIONS[0]).content)

        async def streamed_turn() -> None:
            async for event in team.arun(QUESTIONS[1], stream=True):  # the answer's text as it comes
                if getattr(event, "event", "") == "TeamRunContent" and event.content:
                    print(event.content, end="", flush=True)
            print()

        asyncio.run(streamed_turn())
        rec.flush(trace.get_tracer_provider(), get_logger_provider(), metrics.get_meter_provider())


if __name__ == "__main__":
    main()
