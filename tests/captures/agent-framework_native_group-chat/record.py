"""Re-record: a Microsoft Agent Framework group chat (`GroupChatBuilder` with an LLM manager agent choosing each
speaker: a researcher with two function tools and a writer, OpenAI chat completions), traced by the framework's own
OpenTelemetry instrumentation.

    python3 -m venv /tmp/cap-agent-framework_native_group-chat && \
        /tmp/cap-agent-framework_native_group-chat/bin/pip install \
        agent-framework-core==1.26.0 agent-framework-openai==1.17.0 agent-framework-orchestrations==1.4.0 \
        openai==3.63.0 opentelemetry-sdk==1.45.2 opentelemetry-exporter-otlp-proto-http==1.45.2
    /tmp/cap-agent-framework_native_group-chat/bin/python tests/captures/agent-framework_native_group-chat/record.py

Agent Framework set up as its observability docs say: `configure_otel_providers(enable_sensitive_data=True)`, the
tracer, logger and meter providers from the standard `OTEL_EXPORTER_OTLP_*` variables, the latest GenAI conventions
by default. Besides the agents' `invoke_agent <name>` > `chat <model>` / `execute_tool <function>` spans it traces
the workflow: `workflow.build`, an `invoke_workflow <name>` span per run, an `executor.process <executor>` span per
message an executor handles, `message.send` and `edge_group.process …` spans as messages are routed.

The group chat (`agent-framework-orchestrations`, re-exported by `agent_framework.orchestrations`) is built with
`orchestrator_agent=`: the workflow's start executor is an `AgentBasedGroupChatOrchestrator` whose id is the manager
agent's name. Each round it runs the manager agent (not streamed, whatever the run's mode: `response_format` the
orchestration's `AgentOrchestrationOutput`, the JSON `{terminate, reason, next_speaker, final_message}`) on the
messages since its last decision plus the orchestration's "Decide what to do next" instruction, broadcasts the
last speaker's messages to the other participants and asks the chosen one to speak. A termination condition (the
writer has spoken) ends each turn with the orchestration's completion message. The workflow keeps its executors'
state across `run()` calls ("so that a WorkflowAgent can deliver multi-turn input on the same instance"), so the
second `workflow.run(message)` continues the same group chat. The workflow's conversation id
(`gen_ai.conversation.id`) is set only by protocol adapters (a private context variable), so each turn runs inside
an application span carrying `session.id`.

Scenario: turn 1, streamed (`workflow.run(question, stream=True)`; the participants stream, the manager does not):
the manager picks the researcher, who asks for the weather and the local time in Paris in parallel; the weather
service times out once (the tool raises), the researcher retries that call alone, then reports; the manager picks
the writer, who writes the note. Turn 2, not streamed (`workflow.run(next message)`): the manager picks the writer,
who rewrites the note. Eight LLM calls. (The versions are in meta.json.)
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path
from typing import Annotated

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

from tests.captures.recording.session import Recording

SESSION = "agent-framework-group-chat-1"
MODEL = "gpt-4o-mini"
QUESTIONS = ["Check the weather and the local time in Paris, then write me a one-line note for the afternoon.",
             "Make the note mention a café."]
NOTES = ["Sunny, 21°C at 14:05: a perfect afternoon for a walk along the Seine.",
         "Sunny, 21°C at 14:05: stroll along the Seine, then a café crème on a terrace."]


def decision(next_speaker: str, reason: str) -> str:
    """The manager's answer, as the orchestration's `AgentOrchestrationOutput` asks for it."""
    return json.dumps({"terminate": False, "reason": reason, "next_speaker": next_speaker, "final_message": None})


REPLIES = [
    {"text": decision("researcher", "The weather and the local time are needed first."),
     "input_tokens": 212, "output_tokens": 38},
    {"tool_calls": [{"name": "get_weather", "arguments": {"city": "Paris"}},
                    {"name": "get_local_time", "arguments": {"city": "Paris"}}],
     "input_tokens": 188, "output_tokens": 46},
    {"tool_calls": [{"name": "get_weather", "arguments": {"city": "Paris"}}], "input_tokens": 241, "output_tokens": 17},
    {"text": "Paris: sunny, 21°C; the local time is 14:05.", "input_tokens": 276, "output_tokens": 16},
    {"text": decision("writer", "The facts are in; the writer can write the note."),
     "input_tokens": 305, "output_tokens": 36},
    {"text": NOTES[0], "input_tokens": 164, "output_tokens": 19},
    {"text": decision("writer", "The user asks to change the note."), "input_tokens": 398, "output_tokens": 33},
    {"text": NOTES[1], "input_tokens": 221, "output_tokens": 23},
]
WEATHER = {"Paris": "sunny, 21°C"}
TIMES = {"Paris": "14:05"}
PACKAGES = ["agent-framework-core", "agent-framework-openai", "agent-framework-orchestrations", "openai",
            "opentelemetry-sdk", "opentelemetry-exporter-otlp-proto-http"]


async def scenario(base_url: str) -> None:
    from agent_framework import Agent, Message, tool
    from agent_framework.openai import OpenAIChatCompletionClient
    from agent_framework.orchestrations import GroupChatBuilder
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
    manager = Agent(client=client, name="manager", description="Chooses who speaks next.",
                    instructions="You coordinate a researcher and a writer to answer a traveller.")
    researcher = Agent(client=client, name="researcher", description="Looks up the weather and the local time.",
                       instructions="You look up facts with your tools and report them tersely.",
                       tools=[get_weather, get_local_time])
    writer = Agent(client=client, name="writer", description="Writes short travel notes.",
                   instructions="You write one-line travel notes from the facts given.")

    def writer_has_spoken(conversation: list[Message]) -> bool:
        last = conversation[-1]
        return last.role == "assistant" and last.author_name == writer.name

    workflow = GroupChatBuilder(name="travel_notes", participants=[researcher, writer], orchestrator_agent=manager,
                                termination_condition=writer_has_spoken).build()
    tracer = trace.get_tracer("travel-notes")

    updates = 0
    with tracer.start_as_current_span("support turn", attributes={"session.id": SESSION}):
        async for event in workflow.run(QUESTIONS[0], stream=True):
            if event.type == "output":
                updates += 1
    print(f"turn 1: {updates} streamed outputs")

    with tracer.start_as_current_span("support turn", attributes={"session.id": SESSION}):
        result = await workflow.run(QUESTIONS[1])
    print("turn 2:", [getattr(o, "text", o) for o in result.get_outputs()], result.get_final_state())


def main() -> None:
    capture_dir = Path(__file__).parent
    notes = ("GroupChatBuilder workflow 'travel_notes' with an LLM manager agent (orchestrator_agent=manager, "
             "structured AgentOrchestrationOutput decisions, never streamed) choosing between a researcher (two "
             "function tools) and a writer; a termination condition (the writer has spoken) ends each turn. Turn 1 "
             "streamed (workflow.run(stream=True)): manager -> researcher, who makes two parallel tool calls, "
             "get_weather raising once (a timeout), retries it, reports; manager -> writer, who writes the note. "
             "Turn 2 (a second workflow.run(message) on the same workflow, which keeps its executors' state): "
             "manager -> writer, who rewrites it. Agent Framework's own telemetry via "
             "configure_otel_providers(enable_sensitive_data=True), default (latest) GenAI conventions, workflow "
             "spans (workflow.build, invoke_workflow, executor.process, message.send, edge_group.process), the v1.36 "
             "message events as log records; each turn wrapped in an application span carrying session.id (the "
             "workflow writes gen_ai.conversation.id only from a protocol adapter's private context variable)")
    with Recording(capture_dir, REPLIES, framework="agent-framework",
                   instrumentation="agent-framework (native)", packages=PACKAGES, session_id=SESSION,
                   notes=notes) as rec:
        rec.env()
        os.environ["OTEL_SERVICE_NAME"] = "travel-notes"
        from agent_framework.observability import configure_otel_providers
        from opentelemetry import metrics, trace
        from opentelemetry._logs import get_logger_provider

        configure_otel_providers(enable_sensitive_data=True)
        asyncio.run(scenario(rec.base_url))
        rec.flush(trace.get_tracer_provider(), get_logger_provider(), metrics.get_meter_provider())


if __name__ == "__main__":
    main()
