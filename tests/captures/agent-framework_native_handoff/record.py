"""Re-record: a Microsoft Agent Framework handoff workflow (`HandoffBuilder`: a triage agent handing off to a weather
specialist with two function tools, OpenAI chat completions), traced by the framework's own OpenTelemetry
instrumentation.

    python3 -m venv /tmp/cap-agent-framework_native_handoff && /tmp/cap-agent-framework_native_handoff/bin/pip install \
        agent-framework-core==1.26.0 agent-framework-openai==1.17.0 agent-framework-orchestrations==1.4.0 \
        openai==3.63.0 opentelemetry-sdk==1.45.2 opentelemetry-exporter-otlp-proto-http==1.45.2
    /tmp/cap-agent-framework_native_handoff/bin/python tests/captures/agent-framework_native_handoff/record.py

Agent Framework set up as its observability docs say: `configure_otel_providers(enable_sensitive_data=True)`,
the tracer, logger and meter providers from the standard `OTEL_EXPORTER_OTLP_*` variables, the latest GenAI
conventions by default. Besides the agents' `invoke_agent <name>` > `chat <model>` / `execute_tool <function>`
spans it traces the workflow itself: `workflow.build`, an `invoke_workflow <name>` span per run (`gen_ai.operation.
name` `invoke_workflow`), an `executor.process <executor>` span per message an executor handles, `message.send` and
`edge_group.process …` spans as messages go from one executor to the others.

The handoff orchestration (`agent-framework-orchestrations`, which `agent_framework.orchestrations` re-exports)
clones each participant with a `handoff_to_<agent>` tool per agent it may hand off to, answered by the
framework's middleware (`{"handoff_to": "<agent>"}`), and asks the model for one tool call at a time
(`allow_multiple_tool_calls=False`: `parallel_tool_calls: false`); the script answers the specialist with two
calls all the same, as a model that ignores the flag would, and the framework runs both. Human in the loop is the
default: after an answer that hands off to no one the workflow asks for the user's reply (a `request_info` event
carrying `HandoffAgentUserRequest`) and goes idle; the next `run(responses=…)` answers it, and the reply goes back
to the agent that asked (`enable_return_to_previous`, on by default). A termination condition ends the workflow
once the user's second question is answered. The workflow's conversation id (`gen_ai.conversation.id`) is set only
by protocol adapters (a private context variable), so each turn runs inside an application span carrying
`session.id`.

Scenario: turn 1, streamed (`workflow.run(question, stream=True)`): the triage agent hands off to the weather
agent, which asks for the weather and the local time in Paris in parallel; the weather service times out once
(the tool raises), the agent retries that call alone, then answers. Turn 2, not streamed (`workflow.run(responses=
…)` with the user's next question): the weather agent asks for both for Lyon in parallel, then answers, and the
workflow terminates. Six LLM calls. (The versions are in meta.json.)
"""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path
from typing import Annotated, Any

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

from tests.captures.recording.session import Recording

SESSION = "agent-framework-handoff-1"
MODEL = "gpt-4o-mini"
QUESTIONS = ["What's the weather and the local time in Paris?", "And in Lyon?"]
REPLIES = [
    {"tool_calls": [{"name": "handoff_to_weather_agent", "arguments": {}}], "input_tokens": 141, "output_tokens": 12},
    {"tool_calls": [{"name": "get_weather", "arguments": {"city": "Paris"}},
                    {"name": "get_local_time", "arguments": {"city": "Paris"}}],
     "input_tokens": 204, "output_tokens": 46},
    {"tool_calls": [{"name": "get_weather", "arguments": {"city": "Paris"}}], "input_tokens": 262, "output_tokens": 17},
    {"text": "Paris is sunny at 21°C, and it is 14:05 there.", "input_tokens": 298, "output_tokens": 16},
    {"tool_calls": [{"name": "get_weather", "arguments": {"city": "Lyon"}},
                    {"name": "get_local_time", "arguments": {"city": "Lyon"}}],
     "input_tokens": 327, "output_tokens": 46},
    {"text": "Lyon is cloudy at 17°C; it is 14:06 there.", "input_tokens": 409, "output_tokens": 15},
]
WEATHER = {"Paris": "sunny, 21°C", "Lyon": "cloudy, 17°C"}
TIMES = {"Paris": "14:05", "Lyon": "14:06"}
PACKAGES = ["agent-framework-core", "agent-framework-openai", "agent-framework-orchestrations", "openai",
            "opentelemetry-sdk", "opentelemetry-exporter-otlp-proto-http"]


async def scenario(base_url: str) -> None:
    from agent_framework import Agent, Message, tool
    from agent_framework.openai import OpenAIChatCompletionClient
    from agent_framework.orchestrations import HandoffAgentUserRequest, HandoffBuilder
    from opentelemetry import trace

    failures = {"left": 1}

    @tool
    def get_weather(city: Annotated[str, "The city to look up."]) -> str:
        """The current weather in a city."""
        if failures["left"]:
            failures["left"] -= 1
            raise TimeoutError("weather service timed out")
        return WEATHER[city]

    @tool
    def get_local_time(city: Annotated[str, "The city to look up."]) -> str:
        """The local time in a city."""
        return TIMES[city]

    client = OpenAIChatCompletionClient(model=MODEL, api_key="sk-fake", base_url=base_url)
    # Handoff clones each agent and answers its handoff calls in middleware: the workflow insists that every agent
    # persist its history per service call, so that the short-circuited calls stay in it.
    triage = Agent(client=client, name="triage_agent", description="Routes a traveller's question.",
                   instructions="You route each question to the right specialist.",
                   require_per_service_call_history_persistence=True)
    weather = Agent(client=client, name="weather_agent", description="Answers questions about weather and time.",
                    instructions="You are a terse weather assistant.", tools=[get_weather, get_local_time],
                    require_per_service_call_history_persistence=True)

    def second_question_answered(conversation: list[Message]) -> bool:
        asked = sum(1 for message in conversation if message.role == "user")
        return asked >= len(QUESTIONS) and conversation[-1].role == "assistant"

    workflow = (HandoffBuilder(name="travel_desk", participants=[triage, weather],
                               termination_condition=second_question_answered)
                .with_start_agent(triage)
                .add_handoff(triage, [weather])
                .add_handoff(weather, [triage])
                .build())
    tracer = trace.get_tracer("travel-desk")

    pending: list[Any] = []
    updates = 0
    with tracer.start_as_current_span("support turn", attributes={"session.id": SESSION}):
        async for event in workflow.run(QUESTIONS[0], stream=True):
            if event.type == "request_info":
                pending.append(event)
            elif event.type == "output":
                updates += 1  # the agents' AgentResponseUpdates, as they stream
    (asked,) = pending
    assert isinstance(asked.data, HandoffAgentUserRequest), asked.data
    print(f"turn 1 ({updates} streamed updates):", asked.data.agent_response.text)

    with tracer.start_as_current_span("support turn", attributes={"session.id": SESSION}):
        result = await workflow.run(
            responses={asked.request_id: HandoffAgentUserRequest.create_response(QUESTIONS[1])})
    print("turn 2:", [getattr(o, "text", o) for o in result.get_outputs()], result.get_final_state())
    assert not result.get_request_info_events(), "the termination condition should have ended the workflow"


def main() -> None:
    capture_dir = Path(__file__).parent
    notes = ("HandoffBuilder workflow (triage_agent -> weather_agent, human in the loop): turn 1 streamed "
             "(workflow.run(stream=True)): the triage agent hands off, the weather agent makes two parallel tool "
             "calls (despite the parallel_tool_calls: false handoff asks for), get_weather raising once (a timeout), "
             "retries it, answers; the workflow asks for the user's reply (request_info). Turn 2 "
             "(workflow.run(responses=...)): the reply goes back to the weather agent, two parallel tool calls, the "
             "answer, a termination condition ends the workflow. Agent Framework's own telemetry via "
             "configure_otel_providers(enable_sensitive_data=True), default (latest) GenAI conventions, workflow "
             "spans (workflow.build, invoke_workflow, executor.process, message.send, edge_group.process), the v1.36 "
             "message events as log records; each turn wrapped in an application span carrying session.id (the "
             "workflow writes gen_ai.conversation.id only from a protocol adapter's private context variable)")
    with Recording(capture_dir, REPLIES, framework="agent-framework",
                   instrumentation="agent-framework (native)", packages=PACKAGES, session_id=SESSION,
                   notes=notes) as rec:
        rec.env()
        os.environ["OTEL_SERVICE_NAME"] = "travel-desk"
        from agent_framework.observability import configure_otel_providers
        from opentelemetry import metrics, trace
        from opentelemetry._logs import get_logger_provider

        configure_otel_providers(enable_sensitive_data=True)
        asyncio.run(scenario(rec.base_url))
        rec.flush(trace.get_tracer_provider(), get_logger_provider(), metrics.get_meter_provider())


if __name__ == "__main__":
    main()
