"""Re-record: AutoGen AgentChat's AssistantAgent, two turns of one session, traced by OpenInference.

    python3 -m venv /tmp/cap-autogen-agentchat_openinference && \
    /tmp/cap-autogen-agentchat_openinference/bin/pip install \
        'autogen-agentchat==0.7.5' 'autogen-ext[openai]==0.7.5' \
        'openinference-instrumentation-autogen-agentchat==0.1.22' 'openinference-instrumentation==0.1.72' \
        'opentelemetry-sdk==1.45.2' 'opentelemetry-exporter-otlp-proto-http==1.45.2'
    /tmp/cap-autogen-agentchat_openinference/bin/python tests/captures/autogen-agentchat_openinference/record.py

The instrumentor (as its README shows: `AutogenAgentChatInstrumentor().instrument(tracer_provider=…)`, no
global provider, so autogen-core's own tracing stays off; set up by `recording/agentchat_openinference.py`, shared
with `autogen-agentchat_openinference_team`) wraps AgentChat itself: an AGENT span per `on_messages_stream`, a
TOOL span per `_execute_tool_call`, and the LLM calls at AutoGen's OpenAI model client
(`BaseOpenAIChatCompletionClient.create` / `create_stream`), so no OpenAI SDK instrumentation is needed.
AutoGen has no session id of its own: both turns run inside OpenInference's `using_session` (the documented
way), which every span of the instrumentor copies from the context.

Scenario: an AssistantAgent with two tools (`max_tool_iterations=3`). Turn 1 (`run`): the model asks for
the weather and the local time in Paris in parallel; the time service times out once (the tool raises, AutoGen
sends the model the error as the call's result), the model calls it again, then answers. Turn 2 (`run_stream`):
the conversation resumed on an agent loaded from the first one's saved state (`save_state`/`load_state`,
AutoGen's way to persist an agent), this one streaming its model calls (`model_client_stream=True`, usage
asked for with `stream_options`) and reflecting on its tool use: one tool call, then the reflection's answer.
(The versions the capture was recorded with are in meta.json.)
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

from tests.captures.recording.agentchat_openinference import PACKAGES, run_traced
from tests.captures.recording.session import Recording

SESSION = "autogen-oi-weather-1"
REPLIES = [
    {"tool_calls": [{"name": "get_weather", "arguments": {"city": "Paris"}},
                    {"name": "get_local_time", "arguments": {"city": "Paris"}}]},
    {"tool_calls": [{"name": "get_local_time", "arguments": {"city": "Paris"}}]},
    {"text": "Paris is sunny at 21°C and it is 14:05 there."},
    {"tool_calls": [{"name": "get_weather", "arguments": {"city": "Oslo"}}]},
    {"text": "Oslo is rainy at 9°C: take an umbrella."},
]
WEATHER = {"Paris": "sunny, 21°C", "Oslo": "rainy, 9°C"}
TIMES = {"Paris": "14:05"}
SYSTEM = "You are a terse weather assistant."


async def scenario(base_url: str) -> None:
    from autogen_agentchat.agents import AssistantAgent
    from autogen_ext.models.openai import OpenAIChatCompletionClient
    from openinference.instrumentation import using_session

    timeouts = ["time service timed out"]  # the first time lookup fails, the next ones answer

    def get_weather(city: str) -> str:
        """The weather in a city."""
        return WEATHER[city]

    def get_local_time(city: str) -> str:
        """The local time in a city."""
        if timeouts:
            raise TimeoutError(timeouts.pop())
        return TIMES[city]

    client = OpenAIChatCompletionClient(model="gpt-4o", base_url=base_url, api_key="sk-fake")
    agent = AssistantAgent("weather_agent", model_client=client, tools=[get_weather, get_local_time],
                           system_message=SYSTEM, max_tool_iterations=3)
    with using_session(SESSION):
        result = await agent.run(task="Weather and local time in Paris?")
    print(result.messages[-1].to_text())

    streaming = OpenAIChatCompletionClient(model="gpt-4o", base_url=base_url, api_key="sk-fake",
                                           stream_options={"include_usage": True})
    resumed = AssistantAgent("weather_agent", model_client=streaming, tools=[get_weather, get_local_time],
                             system_message=SYSTEM, model_client_stream=True, reflect_on_tool_use=True)
    await resumed.load_state(await agent.save_state())
    with using_session(SESSION):
        async for message in resumed.run_stream(task="And the weather in Oslo?"):
            if hasattr(message, "messages"):  # the TaskResult, last
                print(message.messages[-1].to_text())
    await client.close()
    await streaming.close()


def main() -> None:
    notes = ("turn 1 (run): two parallel tool calls, the time tool raising once, its retry, the answer; turn 2 "
             "(run_stream, an agent loaded from the first's saved state, model_client_stream=True, "
             "reflect_on_tool_use=True): one tool call, then the streamed reflection. Both turns inside "
             "OpenInference's using_session (AutoGen has no session id); the LLM spans are the instrumentor's, "
             "at AutoGen's OpenAI model client")
    with Recording(Path(__file__).parent, REPLIES, framework="autogen-agentchat", instrumentation="openinference",
                   packages=PACKAGES, session_id=SESSION, notes=notes) as rec:
        run_traced(rec, scenario, service_name="autogen-weather")


if __name__ == "__main__":
    main()
