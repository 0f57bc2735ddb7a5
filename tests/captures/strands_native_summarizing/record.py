"""Re-record: a Strands agent compacting its context with `SummarizingConversationManager` and a summarization agent,
traced by Strands' own OpenTelemetry.

    python3 -m venv /tmp/cap-strands_native_summarizing && /tmp/cap-strands_native_summarizing/bin/pip install \
        'strands-agents[openai]==1.65.0' openai==3.63.0 \
        opentelemetry-sdk==1.45.2 opentelemetry-exporter-otlp-proto-http==1.45.2
    /tmp/cap-strands_native_summarizing/bin/python tests/captures/strands_native_summarizing/record.py

Why: context compaction. Strands' conversation-management docs show `Agent(conversation_manager=
SummarizingConversationManager(summary_ratio=…, preserve_recent_messages=…, summarization_agent=…))`: when the context
overflows, or (`proactive_compression`) before a model call whose projected prompt passes a share of the model's
`context_window_limit`, the manager hands the oldest messages (`summary_ratio` of them, at least
`preserve_recent_messages` kept, never splitting a toolUse from its toolResult) to its summarization agent, asks it
"Please summarize this conversation.", and replaces them in the agent's history by one user message of the summary's
text, the kept messages after it. A trajectory should show every question and answer once, in order; the summary as a
compaction of the agent's context where it happened (not an answer nor a subagent's conversation); the request and the
summarizer's instructions no steps; the summary the agent's later calls are sent no new question; nothing earlier lost.

Built as the docs and the class show: a `summarizer` Agent (gpt-4o-mini, not streamed, instructions of its own, no
tools: the manager gives it a `noop` one) as `summarization_agent`, `summary_ratio=0.8`, `preserve_recent_messages=2`,
`proactive_compression={"compression_threshold": 0.5}` and the agent's `OpenAIModel(…, context_window_limit=4000)`. The
projection is the last answer's prompt and answer tokens plus an estimate of the messages after it (no tiktoken here:
Strands' characters/4 heuristic), so the script's prompt tokens decide when the manager compacts: turn one's and turn
two's answers report 2,100, the others the fake LLM's default (a quarter of the request's bytes, far below). The
session is `trace_attributes={"session.id": …}` on the agent (the summarizer's spans, in the agent's traces, carry
none). get_weather raises once (a timeout): Strands sends the model the error's text as the tool's result.

Turn 1: gpt-4o (streamed, as every agent call) calls get_weather and find_hotel in parallel; get_weather times out; it
calls get_weather again, then answers. Turn 2: before its first call the manager compacts (7 messages: 5 summarized,
turn one's answer and the new question kept); the summarizer's run (an `invoke_agent` span under the agent's event-loop
cycle) makes one call; the agent is sent the summary and the 2 kept, calls convert_currency, then answers. Turn 3: the
manager compacts again (the first summary among the 5 summarized), and the agent answers. Eight calls, three traces.
Without a summarization agent the manager calls the agent's model itself (`generate_summary`), outside the agent's
tracing: no span records that call, only its summary in the later calls' input (recorded and read for this capture's
report, not kept). Installed then (pip freeze, the packages that matter; also in meta.json): strands-agents 1.65.0,
openai 3.63.0, opentelemetry-api / -sdk / -exporter-otlp-proto-http 1.45.2, opentelemetry-instrumentation-threading
0.66b2 (each the newest).
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

from tests.captures.recording.session import Recording

SESSION = "strands-summarizing-1"
AGENT_MODEL = "gpt-4o"
SUMMARY_MODEL = "gpt-4o-mini"
# The agent model's context window as configured, and the share of it past which the manager compacts before a call
# (`proactive_compression`): a call whose prompt and answer together reach 2,000 tokens makes the next call compact.
CONTEXT_WINDOW = 4000
THRESHOLD = 0.5
PAST_THRESHOLD = 2100
QUESTIONS = ["I'm going to Bergen for 3 nights: what's the weather there, and find me a hotel.",
             "What do 3 nights there cost in euros?",
             "Is that hotel close to the fish market?"]
FIRST_SUMMARY = ("## Conversation Summary\n* The user is going to Bergen for 3 nights and asked for the weather and "
                 "a hotel.\n\n## Tools Executed\n* get_weather(Bergen): failed once (timeout), then rainy, 8°C\n"
                 "* find_hotel(Bergen, 3 nights): Hotel Bryggen, 1400 NOK a night")
SECOND_SUMMARY = ("## Conversation Summary\n* The user is staying 3 nights in Bergen (rainy, 8°C) at Hotel Bryggen, "
                  "1400 NOK a night, and asked the cost in euros.\n\n## Tools Executed\n"
                  "* convert_currency(4200 NOK to EUR): 359 EUR")
PACKAGES = ["strands-agents", "openai", "opentelemetry-api", "opentelemetry-sdk",
            "opentelemetry-exporter-otlp-proto-http", "opentelemetry-instrumentation-threading"]
REPLIES = [
    # Turn 1: two tools in parallel, get_weather times out; the model calls it again, then answers.
    {"text": "Let me check both.",
     "tool_calls": [{"name": "get_weather", "arguments": {"city": "Bergen"}},
                    {"name": "find_hotel", "arguments": {"city": "Bergen", "nights": 3}}]},
    {"tool_calls": [{"name": "get_weather", "arguments": {"city": "Bergen"}}]},
    {"text": "Bergen will be rainy, 8°C. Hotel Bryggen has a room for 3 nights at 1400 NOK a night.",
     "input_tokens": PAST_THRESHOLD},
    # Turn 2: the manager compacts before its first call (the last answer's tokens are past the threshold).
    {"text": FIRST_SUMMARY, "when": "Please summarize this conversation."},
    {"tool_calls": [{"name": "convert_currency", "arguments": {"amount": 4200, "source": "NOK", "target": "EUR"}}]},
    {"text": "3 nights at Hotel Bryggen cost 4200 NOK, about 359 EUR.", "input_tokens": PAST_THRESHOLD},
    # Turn 3: compacting again, the first summary among what is summarized.
    {"text": SECOND_SUMMARY, "when": "Please summarize this conversation."},
    {"text": "Yes: Hotel Bryggen is on the wharf, a 5-minute walk from the fish market."},
]


def main() -> None:
    capture_dir = Path(__file__).parent
    notes = ("three turns of one agent whose SummarizingConversationManager (a summarization agent, gpt-4o-mini; "
             "proactive_compression at half a 4,000-token window) compacts twice: before turn two's first call "
             "(5 messages summarized, 2 kept) and before turn three's (the first summary among the 5); turn one: "
             "get_weather and find_hotel in parallel, get_weather timing out once, then retried; turn two: "
             "convert_currency; the agent's calls streamed, the summarizer's not; Strands' default conventions "
             "(span events)")
    with Recording(capture_dir, REPLIES, framework="strands-agents", instrumentation="strands (native)",
                   packages=PACKAGES,
                   session_id=SESSION, notes=notes) as rec:
        rec.env()
        from strands import Agent, tool
        from strands.agent.conversation_manager import SummarizingConversationManager
        from strands.models.openai import OpenAIModel
        from strands.telemetry import StrandsTelemetry

        telemetry = StrandsTelemetry()
        telemetry.setup_otlp_exporter()
        timeouts = iter([TimeoutError("the weather service did not answer in time")])

        @tool
        def get_weather(city: str) -> str:
            """The weather in a city."""
            failure = next(timeouts, None)
            if failure is not None:
                raise failure
            return "rainy, 8°C"

        @tool
        def find_hotel(city: str, nights: int) -> str:
            """A hotel with a room free in a city for a number of nights."""
            return f"Hotel Bryggen, {city}: a room free for {nights} nights, 1400 NOK a night"

        @tool
        def convert_currency(amount: float, source: str, target: str) -> str:
            """Convert an amount of money from one currency to another."""
            return f"{amount:g} {source} is 359 {target}"

        client_args = {"base_url": rec.base_url, "api_key": "sk-fake"}
        summarizer = Agent(model=OpenAIModel(client_args=client_args, model_id=SUMMARY_MODEL, stream=False),
                           name="summarizer", callback_handler=None,
                           system_prompt="Summarize the conversation for the agent that will carry it on.")
        manager = SummarizingConversationManager(summary_ratio=0.8, preserve_recent_messages=2,
                                                 summarization_agent=summarizer,
                                                 proactive_compression={"compression_threshold": THRESHOLD})
        model = OpenAIModel(client_args=client_args, model_id=AGENT_MODEL, context_window_limit=CONTEXT_WINDOW)
        agent = Agent(model=model, tools=[get_weather, find_hotel, convert_currency], name="trip-agent",
                      system_prompt="You are a terse travel assistant.", conversation_manager=manager,
                      trace_attributes={"session.id": SESSION}, callback_handler=None)
        for question in QUESTIONS:
            agent(question)
        rec.flush(telemetry.tracer_provider)


if __name__ == "__main__":
    main()
