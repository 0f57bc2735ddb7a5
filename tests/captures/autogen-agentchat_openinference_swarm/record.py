"""Re-record: an AutoGen AgentChat Swarm (a travel agent handing off to a flights agent), traced by OpenInference.

    python3 -m venv /tmp/cap-autogen-agentchat_openinference_swarm && \
    /tmp/cap-autogen-agentchat_openinference_swarm/bin/pip install \
        'autogen-agentchat==0.7.5' 'autogen-ext[openai]==0.7.5' \
        'openinference-instrumentation-autogen-agentchat==0.1.22' 'openinference-instrumentation==0.1.72' \
        'opentelemetry-sdk==1.45.2' 'opentelemetry-exporter-otlp-proto-http==1.45.2'
    /tmp/cap-autogen-agentchat_openinference_swarm/bin/python \
        tests/captures/autogen-agentchat_openinference_swarm/record.py

The instrumentor as in `autogen-agentchat_openinference_team` (both set up by `recording/agentchat_openinference.py`):
the team's `run_stream` a CHAIN span (`Swarm.run_stream`), each agent's turn an AGENT span
(`<agent>.on_messages_stream`), each tool a TOOL span, each LLM call at AutoGen's OpenAI model client. A Swarm's
agents hand off with the tools AgentChat makes of their `handoffs` (`transfer_to_<agent>`), which answer with a
HandoffMessage; the team's next speaker is its target. The runs are inside OpenInference's `using_session` (AutoGen
has no session id), the model client asks for parallel tool calls (`parallel_tool_calls=True`).

Scenario, the Swarm's documented human-in-the-loop pattern: `travel_agent` (streaming its calls,
`model_client_stream=True`) and `flights_agent` (three tools, `max_tool_iterations=3`), stopped by a handoff to the
user (`HandoffTermination(target="user")`) or TERMINATE (`TextMentionTermination`).
Run 1 (`team.run(task=…)`): the travel agent hands off to the flights agent, which looks up the booking and searches
flights in parallel; the booking service times out once (the tool raises, AgentChat sends the model the error text
with `is_error`), the agent calls it again, then says what it found and hands off to the user (the run stops).
Run 2 (`team.run(task=HandoffMessage(source="user", target="flights_agent", …))`, the same team, which keeps its
state): the flights agent changes the booking, hands back to the travel agent, which closes with TERMINATE.
Seven LLM calls. (The versions the capture was recorded with are in meta.json.)
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

from tests.captures.recording.agentchat_openinference import PACKAGES, run_traced
from tests.captures.recording.session import Recording

SESSION = "autogen-oi-swarm-1"
REPLIES = [
    {"tool_calls": [{"name": "transfer_to_flights_agent", "arguments": {}}]},
    {"tool_calls": [{"name": "get_booking", "arguments": {"reference": "QX7Y2B"}},
                    {"name": "search_flights", "arguments": {"destination": "Oslo", "day": "Friday"}}]},
    {"tool_calls": [{"name": "get_booking", "arguments": {"reference": "QX7Y2B"}}]},
    {"text": "Booking QX7Y2B: Paris to Berlin, Friday 08:00. Oslo on Friday: SK4035 at 09:10 or DY1303 at 17:40. "
             "Which one?",
     "tool_calls": [{"name": "transfer_to_user", "arguments": {}}]},
    {"tool_calls": [{"name": "change_booking", "arguments": {"reference": "QX7Y2B", "flight": "SK4035"}}]},
    {"text": "Changed: QX7Y2B is now SK4035, Paris to Oslo, Friday 09:10.",
     "tool_calls": [{"name": "transfer_to_travel_agent", "arguments": {}}]},
    {"text": "You are on SK4035 to Oslo on Friday at 09:10. Have a good trip! TERMINATE"},
]
FLIGHTS = {("Oslo", "Friday"): "SK4035 09:10, DY1303 17:40"}


async def scenario(base_url: str) -> None:
    from autogen_agentchat.agents import AssistantAgent
    from autogen_agentchat.conditions import HandoffTermination, TextMentionTermination
    from autogen_agentchat.messages import HandoffMessage
    from autogen_agentchat.teams import Swarm
    from autogen_ext.models.openai import OpenAIChatCompletionClient
    from openinference.instrumentation import using_session

    timeouts = ["booking service timed out"]  # the first lookup fails, the next ones answer

    def get_booking(reference: str) -> str:
        """A booking's flight."""
        if timeouts:
            raise TimeoutError(timeouts.pop())
        return f"{reference}: Paris to Berlin, Friday 08:00"

    def search_flights(destination: str, day: str) -> str:
        """Flights from Paris to a destination on a day."""
        return FLIGHTS[(destination, day)]

    def change_booking(reference: str, flight: str) -> str:
        """Move a booking to another flight."""
        return f"{reference} moved to {flight}"

    client = OpenAIChatCompletionClient(model="gpt-4o", base_url=base_url, api_key="sk-fake",
                                        parallel_tool_calls=True, stream_options={"include_usage": True})
    travel_agent = AssistantAgent(
        "travel_agent", model_client=client, handoffs=["flights_agent", "user"], model_client_stream=True,
        system_message="You are a travel agent. Hand flight changes to flights_agent. Say TERMINATE when done.")
    flights_agent = AssistantAgent(
        "flights_agent", model_client=client, handoffs=["travel_agent", "user"],
        tools=[get_booking, search_flights, change_booking], max_tool_iterations=3,
        system_message="You change flight bookings. Ask the user to choose when there are options; "
                       "hand back to travel_agent when done.")
    team = Swarm([travel_agent, flights_agent],
                 termination_condition=HandoffTermination(target="user") | TextMentionTermination("TERMINATE"))
    with using_session(SESSION):
        first = await team.run(task="Please move my booking QX7Y2B to Oslo, same day.")
    last = first.messages[-1]
    print(first.stop_reason, "|", last.to_text())
    assert isinstance(last, HandoffMessage) and last.target == "user", last
    with using_session(SESSION):
        second = await team.run(task=HandoffMessage(source="user", target=last.source,
                                                    content="The 09:10 one, please."))
    print(second.stop_reason, "|", second.messages[-1].to_text())
    await client.close()


def main() -> None:
    notes = ("a Swarm (travel_agent streaming, flights_agent with three tools) run twice inside OpenInference's "
             "using_session: run 1 the travel agent hands off to the flights agent, parallel tool calls, the "
             "booking lookup raising once and retried, its answer with a handoff to the user (HandoffTermination); "
             "run 2 (a HandoffMessage from the user, the team keeping its state) a tool call, a handoff back to "
             "the travel agent, its TERMINATE")
    with Recording(Path(__file__).parent, REPLIES, framework="autogen-agentchat", instrumentation="openinference",
                   packages=PACKAGES, session_id=SESSION, notes=notes) as rec:
        run_traced(rec, scenario, service_name="autogen-travel-swarm")


if __name__ == "__main__":
    main()
