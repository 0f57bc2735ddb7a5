"""Re-record: AutoGen AgentChat's AssistantAgent on a DeepSeek-R1-style reasoning model, traced by OpenInference.

    python3 -m venv /tmp/cap-autogen-agentchat_openinference_reasoning && \
    /tmp/cap-autogen-agentchat_openinference_reasoning/bin/pip install \
        'autogen-agentchat==0.7.5' 'autogen-ext[openai]==0.7.5' \
        'openinference-instrumentation-autogen-agentchat==0.1.22' 'openinference-instrumentation==0.1.72' \
        'opentelemetry-sdk==1.45.2' 'opentelemetry-exporter-otlp-proto-http==1.45.2'
    /tmp/cap-autogen-agentchat_openinference_reasoning/bin/python \
        tests/captures/autogen-agentchat_openinference_reasoning/record.py

(That installs openai 3.63.0, autogen-core 0.7.5, openinference-semantic-conventions 0.1.42, opentelemetry-api
1.45.2; the versions recorded are in meta.json.) The tracing is `autogen-agentchat_openinference`'s
(`recording/agentchat_openinference.py`: `AutogenAgentChatInstrumentor().instrument(tracer_provider=…)`, an LLM
span per call of AutoGen's OpenAI model client, `create` or `create_stream`), and so is the scenario, on a
reasoning model: `OpenAIChatCompletionClient(model="deepseek-r1", base_url=…, model_info={…, "family": "r1"})`,
as AutoGen's docs set a model it does not know. The endpoint answers as DeepSeek's does: the model's thinking in
`choices[0].message.reasoning_content` beside `content` (streamed: `delta.reasoning_content` chunks before the
content's), counted in `usage.completion_tokens_details.reasoning_tokens`. Every call reasons, a distinct text.

What AutoGen 0.7.5 makes of it (`autogen_ext/models/openai/_openai_client.py`): a text answer's
`reasoning_content` becomes the CreateResult's `thought` (streamed: the `reasoning_content` deltas joined, between
`<think>`/`</think>` markers it strips again); an answer with tool calls puts the text written beside them in
`thought` and drops `reasoning_content`, streamed or not. `<think>…</think>` in the content is parsed
(`parse_r1_content`) only for the R1 family when no `reasoning_content` came, so the endpoint sends the field, as
DeepSeek's API does. `RequestUsage` keeps prompt and completion tokens, no breakdown. A text answer's thought is
kept on its AssistantMessage in the agent's context and sent back as nothing (only its content): the
instrumentor records it as `llm.input_messages.<i>.thought` all the same.

Scenario: an AssistantAgent with two tools (`max_tool_iterations=3`), both turns inside OpenInference's
`using_session` (AutoGen has no session id). Turn 1 (`run`, not streamed): the model asks for the weather and the
local time in Paris in parallel; the time service times out once (the tool raises, AutoGen sends the model the
error as the call's result), the model says it retries and calls it again, then answers. Turn 2 (`run_stream`):
an agent loaded from the first's saved state (`save_state`/`load_state`), its model calls streamed
(`model_client_stream=True`, usage asked for with `stream_options`) and reflecting on its tool use: one tool
call, then the reflection's answer. Five LLM calls.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

from tests.captures.recording.agentchat_openinference import PACKAGES, run_traced
from tests.captures.recording.session import Recording

SESSION = "autogen-oi-r1-weather-1"
MODEL = "deepseek-r1"
REPLIES = [
    {"reasoning": "Weather and local time are two independent lookups for Paris: call both tools at once.",
     "tool_calls": [{"name": "get_weather", "arguments": {"city": "Paris"}},
                    {"name": "get_local_time", "arguments": {"city": "Paris"}}],
     "output_tokens": 58, "reasoning_tokens": 22},
    {"reasoning": "The weather came back but the time service timed out, a transient error: retry it once.",
     "text": "The time service timed out; trying again.",
     "tool_calls": [{"name": "get_local_time", "arguments": {"city": "Paris"}}],
     "output_tokens": 50, "reasoning_tokens": 21},
    {"reasoning": "Sunny and 21°C, and 14:05 local time: one terse sentence with both answers it.",
     "text": "Paris is sunny at 21°C and it is 14:05 there.", "output_tokens": 36, "reasoning_tokens": 19},
    {"reasoning": "Oslo now, only its weather is asked: a single get_weather call is enough.",
     "tool_calls": [{"name": "get_weather", "arguments": {"city": "Oslo"}}],
     "output_tokens": 34, "reasoning_tokens": 18},
    {"reasoning": "Rainy and 9°C in Oslo means cold and wet, so an umbrella is the useful advice.",
     "text": "Oslo is rainy at 9°C: take an umbrella.", "output_tokens": 38, "reasoning_tokens": 20},
]
WEATHER = {"Paris": "sunny, 21°C", "Oslo": "rainy, 9°C"}
TIMES = {"Paris": "14:05"}
SYSTEM = "You are a terse weather assistant."
# AutoGen knows no `deepseek-r1`: its model info is given, as its docs show for a model it does not list.
MODEL_INFO = {"vision": False, "function_calling": True, "json_output": False, "family": "r1",
              "structured_output": False}


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

    client = OpenAIChatCompletionClient(model=MODEL, base_url=base_url, api_key="sk-fake", model_info=MODEL_INFO)
    agent = AssistantAgent("weather_agent", model_client=client, tools=[get_weather, get_local_time],
                           system_message=SYSTEM, max_tool_iterations=3)
    with using_session(SESSION):
        result = await agent.run(task="Weather and local time in Paris?")
    print(result.messages[-1].to_text())

    streaming = OpenAIChatCompletionClient(model=MODEL, base_url=base_url, api_key="sk-fake", model_info=MODEL_INFO,
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
    notes = ("deepseek-r1 (model_info family r1), every call reasoning (reasoning_content beside the content, "
             "streamed as reasoning_content deltas; reasoning_tokens in completion_tokens_details). Turn 1 (run): two "
             "parallel tool calls, the time tool raising once, its retry with a text beside it, the answer; turn 2 "
             "(run_stream, an agent loaded from the first's saved state, model_client_stream=True, "
             "reflect_on_tool_use=True): one tool call, then the streamed reflection. AutoGen keeps a text answer's "
             "reasoning_content as its CreateResult's thought and drops a tool-call answer's; both turns inside "
             "OpenInference's using_session")
    with Recording(Path(__file__).parent, REPLIES, framework="autogen-agentchat", instrumentation="openinference",
                   packages=PACKAGES, session_id=SESSION, notes=notes) as rec:
        run_traced(rec, scenario, service_name="autogen-r1-weather")


if __name__ == "__main__":
    main()
