"""Re-record: an AutoGen AgentChat RoundRobinGroupChat of two AssistantAgents, traced by OpenInference.

    python3 -m venv /tmp/cap-autogen-agentchat_openinference && \
    /tmp/cap-autogen-agentchat_openinference/bin/pip install \
        'autogen-agentchat==0.7.5' 'autogen-ext[openai]==0.7.5' \
        'openinference-instrumentation-autogen-agentchat==0.1.22' 'openinference-instrumentation==0.1.72' \
        'opentelemetry-sdk==1.45.2' 'opentelemetry-exporter-otlp-proto-http==1.45.2'
    /tmp/cap-autogen-agentchat_openinference/bin/python tests/captures/autogen-agentchat_openinference_team/record.py

The instrumentor as in `autogen-agentchat_openinference` (its README's team example; both set up by
`recording/agentchat_openinference.py`): the team's `run_stream` a CHAIN span (`RoundRobinGroupChat.run_stream`),
each agent's turn an AGENT span (`<agent>.on_messages_stream`, `graph.node.parent_id` the agent whose message it
answers), each LLM call at AutoGen's OpenAI model client. The run is inside OpenInference's `using_session`
(AutoGen has no session id).

Scenario: a researcher (two tools, `max_tool_iterations=2`) and a critic take turns until the critic says APPROVE.
The researcher calls both tools in parallel and reports; the critic asks for Oslo too; the researcher calls a tool
again and reports; the critic approves. Six LLM calls, one `team.run`. (The versions the capture was recorded with
are in meta.json.)
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

from tests.captures.recording.agentchat_openinference import PACKAGES, run_traced
from tests.captures.recording.session import Recording

SESSION = "autogen-oi-team-1"
REPLIES = [
    {"tool_calls": [{"name": "get_weather", "arguments": {"city": "Paris"}},
                    {"name": "get_local_time", "arguments": {"city": "Paris"}}]},
    {"text": "Paris: sunny, 21°C, 14:05 local time."},
    {"text": "Good. Add Oslo's weather too."},
    {"tool_calls": [{"name": "get_weather", "arguments": {"city": "Oslo"}}]},
    {"text": "Paris: sunny, 21°C, 14:05 local time. Oslo: rainy, 9°C."},
    {"text": "APPROVE"},
]
WEATHER = {"Paris": "sunny, 21°C", "Oslo": "rainy, 9°C"}
TIMES = {"Paris": "14:05"}


async def scenario(base_url: str) -> None:
    from autogen_agentchat.agents import AssistantAgent
    from autogen_agentchat.conditions import MaxMessageTermination, TextMentionTermination
    from autogen_agentchat.teams import RoundRobinGroupChat
    from autogen_ext.models.openai import OpenAIChatCompletionClient
    from openinference.instrumentation import using_session

    def get_weather(city: str) -> str:
        """The weather in a city."""
        return WEATHER[city]

    def get_local_time(city: str) -> str:
        """The local time in a city."""
        return TIMES[city]

    client = OpenAIChatCompletionClient(model="gpt-4o", base_url=base_url, api_key="sk-fake")
    researcher = AssistantAgent("researcher", model_client=client, tools=[get_weather, get_local_time],
                                system_message="You look up weather and time, tersely.", max_tool_iterations=2)
    critic = AssistantAgent("critic", model_client=client,
                            system_message="You review the researcher's report. Say APPROVE when it is complete.")
    team = RoundRobinGroupChat([researcher, critic],
                               termination_condition=TextMentionTermination("APPROVE") | MaxMessageTermination(12))
    with using_session(SESSION):
        result = await team.run(task="Weather and local time in Paris?")
    print(result.stop_reason, "|", result.messages[-1].to_text())
    await client.close()


def main() -> None:
    notes = ("one RoundRobinGroupChat run (researcher with two tools, critic) inside OpenInference's using_session: "
             "parallel tool calls, a report, the critic's request, another tool call and report, APPROVE")
    with Recording(Path(__file__).parent, REPLIES, framework="autogen-agentchat", instrumentation="openinference",
                   packages=PACKAGES, session_id=SESSION, notes=notes) as rec:
        run_traced(rec, scenario, service_name="autogen-weather-team")


if __name__ == "__main__":
    main()
