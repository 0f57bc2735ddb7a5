"""Re-record: a Strands agent compacting its context with `SummarizingConversationManager` as it is by default (no
summarization agent: the manager calls the agent's own model), traced by Strands' own OpenTelemetry.

    python3 -m venv /tmp/cap-strands_native_summarizing_default && \
        /tmp/cap-strands_native_summarizing_default/bin/pip install \
        'strands-agents[openai]==1.65.0' openai==3.63.0 \
        opentelemetry-sdk==1.45.2 opentelemetry-exporter-otlp-proto-http==1.45.2
    /tmp/cap-strands_native_summarizing_default/bin/python \
        tests/captures/strands_native_summarizing_default/record.py

Why: context compaction whose summary call no span records. Strands' conversation-management docs show
`Agent(conversation_manager=SummarizingConversationManager(summary_ratio=…, preserve_recent_messages=…))`; without a
`summarization_agent` the manager summarizes with the agent's model itself (`generate_summary`: `ModelProxy(agent
.aux_model or agent.model).stream(…)` with `DEFAULT_SUMMARIZATION_PROMPT` as instructions, the oldest messages and
"Please summarize this conversation."), deliberately outside the agent's pipeline, so outside its tracing: the fake LLM
answers that call, no span records it (nor its tokens). The manager then replaces the summarized messages in the
agent's history by one user message of the summary's text alone (`as_user_summary`), the kept messages after it. What
the spans hold of it: the agent's event-loop cycle span restates the history before the compaction (its message
events), its chat span is sent the history after (the summary first). A trajectory should show every question and
answer once, in order; where each compaction happened, the summary as a step saying the context was compacted (a step
of no LLM call: none is recorded); the summary the later calls are sent no new question; nothing earlier lost.

The same run as tests/captures/strands_native_summarizing without its summarization agent: `summary_ratio=0.8`,
`preserve_recent_messages=2`, `proactive_compression={"compression_threshold": 0.5}` and the agent's
`OpenAIModel(…, context_window_limit=4000)`: the manager compacts before a model call whose projected prompt (the last
answer's prompt and answer tokens plus an estimate of the messages after it; no tiktoken here, Strands'
characters/4 heuristic) passes 2,000 tokens, so turn one's and turn two's answers report 2,100 prompt tokens, the
others the fake LLM's default. The session is `trace_attributes={"session.id": …}` on the agent. get_weather raises
once (a timeout): Strands sends the model the error's text as the tool's result.

Turn 1: gpt-4o (streamed, as every call of the agent's model) calls get_weather and find_hotel in parallel;
get_weather times out; it calls get_weather again, then answers. Turn 2: before its first call the manager compacts (7
messages: 5 summarized, turn one's answer and the new question kept): gpt-4o is asked for the summary (a call in no
span); the agent is sent the summary and the 2 kept, calls convert_currency, then answers. Turn 3: the manager compacts
again (the first summary among the 5 summarized), and the agent answers. Eight calls (six in spans), three traces.
Installed then (pip freeze, the packages that matter; also in meta.json): strands-agents 1.65.0, openai 3.63.0,
opentelemetry-api / -sdk / -exporter-otlp-proto-http 1.45.2, opentelemetry-instrumentation-threading 0.66b2 (each the
newest).
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

from tests.captures.recording.session import Recording

SESSION = "strands-summarizing-default-1"
MODEL = "gpt-4o"
# The agent model's context window as configured, and the share of it past which the manager compacts before a call
# (`proactive_compression`): a call whose prompt and answer together reach 2,000 tokens makes the next call compact.
CONTEXT_WINDOW = 4000
THRESHOLD = 0.5
PAST_THRESHOLD = 2100
# What the manager asks the model for the summary (strands' `generate_summary`).
SUMMARY_REQUEST = "Please summarize this conversation."
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
    # Turn 2: the manager compacts before its first call (the last answer's tokens are past the threshold), asking the
    # agent's model itself: a call no span records.
    {"text": FIRST_SUMMARY, "when": SUMMARY_REQUEST},
    {"tool_calls": [{"name": "convert_currency", "arguments": {"amount": 4200, "source": "NOK", "target": "EUR"}}]},
    {"text": "3 nights at Hotel Bryggen cost 4200 NOK, about 359 EUR.", "input_tokens": PAST_THRESHOLD},
    # Turn 3: compacting again, the first summary among what is summarized.
    {"text": SECOND_SUMMARY, "when": SUMMARY_REQUEST},
    {"text": "Yes: Hotel Bryggen is on the wharf, a 5-minute walk from the fish market."},
]


def main() -> None:
    capture_dir = Path(__file__).parent
    notes = ("three turns of one agent whose SummarizingConversationManager, by default (no summarization agent: the "
             "agent's gpt-4o asked directly, a call no span records; proactive_compression at half a 4,000-token "
             "window) compacts twice: before turn two's first call (5 messages summarized, 2 kept) and before turn "
             "three's (the first summary among the 5); turn one: get_weather and find_hotel in parallel, get_weather "
             "timing out once, then retried; turn two: convert_currency; every call streamed; 8 LLM calls, 6 in "
             "spans; Strands' default conventions (span events)")
    with Recording(capture_dir, REPLIES, framework="strands-agents", instrumentation="strands (native)",
                   packages=PACKAGES, session_id=SESSION, notes=notes) as rec:
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

        manager = SummarizingConversationManager(summary_ratio=0.8, preserve_recent_messages=2,
                                                 proactive_compression={"compression_threshold": THRESHOLD})
        model = OpenAIModel(client_args={"base_url": rec.base_url, "api_key": "sk-fake"}, model_id=MODEL,
                            context_window_limit=CONTEXT_WINDOW)
        agent = Agent(model=model, tools=[get_weather, find_hotel, convert_currency], name="trip-agent",
                      system_prompt="You are a terse travel assistant.", conversation_manager=manager,
                      trace_attributes={"session.id": SESSION}, callback_handler=None)
        for question in QUESTIONS:
            agent(question)
        rec.flush(telemetry.tracer_provider)


if __name__ == "__main__":
    main()
