"""Re-record: a Microsoft Agent Framework Magentic orchestration (`MagenticBuilder` with an LLM manager agent that
plans, picks each participant with a JSON progress ledger and writes the final answer: a researcher with two function
tools and a writer, OpenAI chat completions), traced by the framework's own OpenTelemetry instrumentation.

    python3 -m venv /tmp/cap-agent-framework_native_magentic && \
        /tmp/cap-agent-framework_native_magentic/bin/pip install \
        agent-framework-core==1.26.0 agent-framework-openai==1.17.0 agent-framework-orchestrations==1.4.0 \
        openai==3.63.0 opentelemetry-sdk==1.45.2 opentelemetry-exporter-otlp-proto-http==1.45.2
    /tmp/cap-agent-framework_native_magentic/bin/python tests/captures/agent-framework_native_magentic/record.py

Agent Framework set up as its observability docs say: `configure_otel_providers(enable_sensitive_data=True)`, the
tracer, logger and meter providers from the standard `OTEL_EXPORTER_OTLP_*` variables, the latest GenAI conventions
by default. Besides the agents' `invoke_agent <name>` > `chat <model>` / `execute_tool <function>` spans it traces
the workflow: `workflow.build`, an `invoke_workflow <name>` span per run, an `executor.process <executor>` span per
message an executor handles, `message.send` and `edge_group.process …` spans as messages are routed.

Magentic (`agent-framework-orchestrations`, re-exported by `agent_framework.orchestrations`) is built with
`manager_agent=`: the workflow's start executor is a `MagenticOrchestrator` (id `magentic_orchestrator`) holding a
`StandardMagenticManager` that runs the manager agent itself, never streamed, each time on a fresh session with the
whole task context it keeps: the task ledger (a facts survey, then a plan), a progress ledger each round (JSON
`{is_request_satisfied, is_in_loop, is_progress_being_made, next_speaker, instruction_or_question}`, each
`{reason, answer}`) whose instruction goes to the participant it names as a user message, and, once the ledger says
the request is satisfied, the final answer, which is the workflow's output. A finished Magentic workflow takes no
further message (`MagenticOrchestrator._handle_messages`: "This Magentic workflow has already been completed"), so
this is one run. The workflow's conversation id (`gen_ai.conversation.id`) is set only by protocol adapters (a
private context variable), so the run is inside an application span carrying `session.id`.

Scenario, one run, streamed (`workflow.run(task, stream=True)`; the participants stream, the manager does not): the
manager surveys the facts and plans; its first progress ledger picks the researcher, who asks for the weather and the
local time in Paris in parallel; the weather service times out once (the tool raises), the researcher retries that
call alone, then reports; the second ledger picks the writer, who writes the note; the third says the request is
satisfied and the manager writes the final answer (`max_round_count=6` only bounds a script gone wrong). Ten LLM
calls: six of the manager's (the least Magentic makes for two participants' rounds), three of the researcher's, one of
the writer's. (The versions are in meta.json.)
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

SESSION = "agent-framework-magentic-1"
MODEL = "gpt-4o-mini"
TASK = "Check the weather and the local time in Paris, then write me a one-line note for the afternoon."
NOTE = "Sunny, 21°C at 14:05: a perfect afternoon for a walk along the Seine."
FACTS = ("1. GIVEN OR VERIFIED FACTS\n- The city is Paris; the note is for this afternoon.\n"
         "2. FACTS TO LOOK UP\n- The current weather in Paris and its local time (the researcher's tools).\n"
         "3. FACTS TO DERIVE\n- None.\n4. EDUCATED GUESSES\n- A fine afternoon suits a walk.")
PLAN = ("- researcher: look up the weather and the local time in Paris.\n"
        "- writer: write the one-line note from those facts.")


def ledger(*, satisfied: bool, next_speaker: str, instruction: str, reason: str) -> str:
    """The manager's progress ledger, as the orchestration's prompt asks for it."""
    return json.dumps({
        "is_request_satisfied": {"reason": reason, "answer": satisfied},
        "is_in_loop": {"reason": "Each step is new.", "answer": False},
        "is_progress_being_made": {"reason": "Just starting." if next_speaker == "researcher" else "On track.",
                                   "answer": True},
        "next_speaker": {"reason": reason, "answer": next_speaker},
        "instruction_or_question": {"reason": reason, "answer": instruction},
    })


REPLIES = [
    {"text": FACTS, "input_tokens": 402, "output_tokens": 71},
    {"text": PLAN, "input_tokens": 498, "output_tokens": 29},
    {"text": ledger(satisfied=False, next_speaker="researcher",
                    instruction="Look up the current weather and the local time in Paris.",
                    reason="The weather and the local time are needed first."),
     "input_tokens": 911, "output_tokens": 112},
    {"tool_calls": [{"name": "get_weather", "arguments": {"city": "Paris"}},
                    {"name": "get_local_time", "arguments": {"city": "Paris"}}],
     "input_tokens": 188, "output_tokens": 46},
    {"tool_calls": [{"name": "get_weather", "arguments": {"city": "Paris"}}], "input_tokens": 241, "output_tokens": 17},
    {"text": "Paris: sunny, 21°C; the local time is 14:05.", "input_tokens": 276, "output_tokens": 16},
    {"text": ledger(satisfied=False, next_speaker="writer",
                    instruction="Write a one-line afternoon note from: Paris, sunny, 21°C, 14:05.",
                    reason="The facts are in; the writer can write the note."),
     "input_tokens": 1062, "output_tokens": 118},
    {"text": NOTE, "input_tokens": 203, "output_tokens": 19},
    {"text": ledger(satisfied=True, next_speaker="writer", instruction="None: the note is written.",
                    reason="The note is written from the facts looked up."),
     "input_tokens": 1140, "output_tokens": 109},
    {"text": f"Here is your note for the afternoon: {NOTE}", "input_tokens": 1015, "output_tokens": 27},
]
WEATHER = {"Paris": "sunny, 21°C"}
TIMES = {"Paris": "14:05"}
PACKAGES = ["agent-framework-core", "agent-framework-openai", "agent-framework-orchestrations", "openai",
            "opentelemetry-sdk", "opentelemetry-exporter-otlp-proto-http"]


async def scenario(base_url: str) -> None:
    from agent_framework import Agent, tool
    from agent_framework.openai import OpenAIChatCompletionClient
    from agent_framework.orchestrations import MagenticBuilder
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
    manager = Agent(client=client, name="manager", description="Plans the task and chooses who acts next.",
                    instructions="You coordinate a researcher and a writer to answer a traveller.")
    researcher = Agent(client=client, name="researcher", description="Looks up the weather and the local time.",
                       instructions="You look up facts with your tools and report them tersely.",
                       tools=[get_weather, get_local_time])
    writer = Agent(client=client, name="writer", description="Writes short travel notes.",
                   instructions="You write one-line travel notes from the facts given.")

    workflow = MagenticBuilder(name="travel_notes", participants=[researcher, writer], manager_agent=manager,
                               max_round_count=6).build()
    tracer = trace.get_tracer("travel-notes")

    outputs = []
    with tracer.start_as_current_span("support turn", attributes={"session.id": SESSION}):
        async for event in workflow.run(TASK, stream=True):
            if event.type == "output":
                outputs.append(getattr(event.data, "text", event.data))
    print("outputs:", outputs)


def main() -> None:
    capture_dir = Path(__file__).parent
    notes = ("MagenticBuilder workflow 'travel_notes' with an LLM manager agent (manager_agent=manager: a "
             "StandardMagenticManager run by the MagenticOrchestrator executor, never streamed, a fresh session each "
             "call) coordinating a researcher (two function tools) and a writer. One run, streamed "
             "(workflow.run(task, stream=True); a finished Magentic workflow takes no further message): the "
             "manager's facts survey and plan (the task ledger); progress ledger -> researcher, who makes two "
             "parallel tool calls, get_weather raising once (a timeout), retries it, reports; progress ledger -> "
             "writer, who writes the note; progress ledger: satisfied; the manager's final answer. Agent Framework's "
             "own telemetry via configure_otel_providers(enable_sensitive_data=True), default (latest) GenAI "
             "conventions, workflow spans (workflow.build, invoke_workflow, executor.process, message.send, "
             "edge_group.process), the v1.36 message events as log records; the run wrapped in an application span "
             "carrying session.id (the workflow writes gen_ai.conversation.id only from a protocol adapter's private "
             "context variable)")
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
