"""Re-record: an AutoGen AgentChat SelectorGroupChat (a planner and two specialists), traced by OpenInference.

    python3 -m venv /tmp/cap-autogen-agentchat_openinference_selector && \
    /tmp/cap-autogen-agentchat_openinference_selector/bin/pip install \
        'autogen-agentchat==0.7.5' 'autogen-ext[openai]==0.7.5' \
        'openinference-instrumentation-autogen-agentchat==0.1.22' 'openinference-instrumentation==0.1.72' \
        'opentelemetry-sdk==1.45.2' 'opentelemetry-exporter-otlp-proto-http==1.45.2'
    /tmp/cap-autogen-agentchat_openinference_selector/bin/python \
        tests/captures/autogen-agentchat_openinference_selector/record.py

(The newest release of each. `pip freeze` of what matters: autogen-agentchat==0.7.5, autogen-core==0.7.5,
autogen-ext==0.7.5, openai==3.63.0, openinference-instrumentation-autogen-agentchat==0.1.22,
openinference-instrumentation==0.1.72, openinference-semantic-conventions==0.1.42, opentelemetry-api==1.45.2,
opentelemetry-sdk==1.45.2, opentelemetry-exporter-otlp-proto-http==1.45.2.) The instrumentor as in
`autogen-agentchat_openinference_team` (both set up by `recording/agentchat_openinference.py`): the team's
`run_stream` a CHAIN span (`SelectorGroupChat.run_stream`), each agent's turn an AGENT span
(`<agent>.on_messages_stream`), each tool a TOOL span, each LLM call at AutoGen's OpenAI model client. What is the
SelectorGroupChat's own: before every turn its group chat manager asks the team's model client who speaks next
(`SelectorGroupChatManager._select_speaker`: AgentChat's default selector prompt, the roles and the conversation so
far in one system message; the answer a participant's name), an LLM call that is no participant's. The runs are
inside OpenInference's `using_session` (AutoGen has no session id); the model client asks for parallel tool calls.

Scenario, the SelectorGroupChat guide's pattern (a planning agent delegating to specialists, the planner closing
with TERMINATE: `TextMentionTermination`, `MaxMessageTermination` as a guard), the same team run twice:
Run 1 (`team.run(task=…)`): the selector picks the planner, which delegates to flights_agent; the selector picks
flights_agent, which calls its two tools in parallel; the booking lookup raises once (AgentChat sends the model the
error text with `is_error`) and the agent answers around it (`max_tool_iterations=2`); the selector picks the
planner, which asks the user to choose and says TERMINATE.
Run 2 (`team.run_stream(task=…)`, the same team keeping its state, hotels_agent streaming its call with
`model_client_stream=True`): the selector picks hotels_agent, whose tool call ends its turn (AgentChat's
ToolCallSummaryMessage, the tool's result); the selector picks the planner, which closes with TERMINATE.
Eleven LLM calls, five of them the selector's. (The versions the capture was recorded with are in meta.json.)
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

from tests.captures.recording.agentchat_openinference import PACKAGES, run_traced
from tests.captures.recording.session import Recording

SESSION = "autogen-oi-selector-1"
PLAN = "flights_agent: look up booking QX7Y2B and Friday's flights to Oslo."
AROUND = ("The booking service timed out, so I could not read QX7Y2B. Oslo on Friday: SK4035 at 09:10 or "
          "DY1303 at 17:40.")
QUESTION = "Oslo on Friday: SK4035 at 09:10 or DY1303 at 17:40. Which one should I book for QX7Y2B? TERMINATE"
CLOSING = "QX7Y2B goes on SK4035 (Friday 09:10); Thon Hotel Opera, by Oslo S, holds Friday night. TERMINATE"
REPLIES = [
    # run 1
    {"text": "planner"},
    {"text": PLAN},
    {"text": "flights_agent"},
    {"tool_calls": [{"name": "get_booking", "arguments": {"reference": "QX7Y2B"}},
                    {"name": "search_flights", "arguments": {"destination": "Oslo", "day": "Friday"}}]},
    {"text": AROUND},
    {"text": "planner"},
    {"text": QUESTION},
    # run 2
    {"text": "hotels_agent"},
    {"tool_calls": [{"name": "find_hotel", "arguments": {"city": "Oslo", "night": "Friday"}}]},
    {"text": "planner"},
    {"text": CLOSING},
]
FLIGHTS = {("Oslo", "Friday"): "SK4035 09:10, DY1303 17:40"}


async def scenario(base_url: str) -> None:
    from autogen_agentchat.agents import AssistantAgent
    from autogen_agentchat.base import TaskResult
    from autogen_agentchat.conditions import MaxMessageTermination, TextMentionTermination
    from autogen_agentchat.teams import SelectorGroupChat
    from autogen_ext.models.openai import OpenAIChatCompletionClient
    from openinference.instrumentation import using_session

    timeouts = ["booking service timed out"]  # the first lookup fails

    def get_booking(reference: str) -> str:
        """A booking's flight."""
        if timeouts:
            raise TimeoutError(timeouts.pop())
        return f"{reference}: Paris to Berlin, Friday 08:00"

    def search_flights(destination: str, day: str) -> str:
        """Flights from Paris to a destination on a day."""
        return FLIGHTS[(destination, day)]

    def find_hotel(city: str, night: str) -> str:
        """A hotel with a room in a city on a night."""
        return f"Thon Hotel Opera, {city} (by Oslo S): a room on {night} night, 1,450 NOK"

    client = OpenAIChatCompletionClient(model="gpt-4o", base_url=base_url, api_key="sk-fake",
                                        parallel_tool_calls=True, stream_options={"include_usage": True})
    planner = AssistantAgent(
        "planner", model_client=client,
        description="Plans the trip: hands each task to a specialist, and closes when it is done.",
        system_message="You plan trips. Hand each task to flights_agent or hotels_agent as '<agent>: <task>'. "
                       "When everything is answered, summarise for the user and end with TERMINATE.")
    flights_agent = AssistantAgent(
        "flights_agent", model_client=client, tools=[get_booking, search_flights], max_tool_iterations=2,
        description="Looks up bookings and flights.",
        system_message="You look up bookings and flights with your tools, tersely.")
    hotels_agent = AssistantAgent(
        "hotels_agent", model_client=client, tools=[find_hotel], model_client_stream=True,
        description="Finds hotels.", system_message="You find hotels with your tool.")
    team = SelectorGroupChat([planner, flights_agent, hotels_agent], model_client=client,
                             termination_condition=TextMentionTermination("TERMINATE") | MaxMessageTermination(20))
    with using_session(SESSION):
        first = await team.run(task="Move my booking QX7Y2B to a Friday flight to Oslo.")
    print(first.stop_reason, "|", first.messages[-1].to_text())
    with using_session(SESSION):
        second = None
        async for event in team.run_stream(task="SK4035, please. And a hotel near Oslo S for Friday night."):
            if isinstance(event, TaskResult):
                second = event
    assert second is not None
    print(second.stop_reason, "|", second.messages[-1].to_text())
    await client.close()


def main() -> None:
    notes = ("a SelectorGroupChat (planner; flights_agent with two tools, max_tool_iterations=2; hotels_agent with "
             "one tool, streaming) run twice inside OpenInference's using_session, the selector (the team's model "
             "client) picking every speaker: run 1 (run) the planner delegates, flights_agent's parallel tool calls "
             "with the booking lookup raising once (is_error) and an answer around it, the planner's question and "
             "TERMINATE; run 2 (run_stream, the team keeping its state) hotels_agent's streamed tool call ending its "
             "turn (ToolCallSummaryMessage), the planner's TERMINATE")
    with Recording(Path(__file__).parent, REPLIES, framework="autogen-agentchat", instrumentation="openinference",
                   packages=PACKAGES, session_id=SESSION, notes=notes) as rec:
        run_traced(rec, scenario, service_name="autogen-trip-selector")


if __name__ == "__main__":
    main()
