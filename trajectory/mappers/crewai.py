"""CrewAI's shapes, as OpenInference's crewai instrumentation records them.

A crew run is a CHAIN span `Crew_<id>.kickoff` (`crew_key`, `crew_agents`, `crew_tasks`, its
inputs in `crew_inputs`, its result a CrewOutput in `output.value`); each task an agent carries
out is an AGENT span `<role>._execute_core` (`graph.node.id` the agent's role, `task_key`,
`task_id`; its output a TaskOutput). A crew orchestrates agents: its run is the session's agent,
each task's agent a subagent. What a crew or task said is the `raw` text of its output. Each tool run
is a TOOL span `<name>.run` (`BaseTool.run`, `Tool.run`) named by the tool's `name`, which the model
does not call it by: CrewAI offers it as `sanitize_tool_name(name)` ("Delegate work to coworker" is
`delegate_work_to_coworker`), the `Tool Name:` line of the LLM-facing description the span records
as `tool.description`. An agent hands a coworker work through CrewAI's own delegation tools (a
hierarchical crew's manager, an agent with `allow_delegation`), which run the coworker's
`execute_task` inside the tool's span: no task span, the coworker's calls and tools under the
tool's. That run is a subagent the tool's call started. A tool that reports a failure returns a `ToolFailure`
(an MCP server's `isError` result, CrewAI's native MCP tools' `mcp_error`): the span ends OK, its output the
failure's JSON; the model is shown its `as_agent_message()`, and the call failed. A tool that returns a dict or list
(a multimodal agent's `AddImageTool`: a user message with an image) is recorded as its JSON, and the model is shown
its Python `str()`, as text. The crew span is named
`<crew name>.kickoff` when the crew has a name of its own (a `@CrewBase` class's crew is named for its class), else
`Crew_<crew_id>.kickoff`: a crew run is named so, or not at all (the session's agent is then the
service). A task CrewBase builds names itself in `task_name` (bookkeeping: the agent runs it). A streamed crew
(`Crew(stream=True)`) is kicked off twice: `kickoff` returns a CrewStreamingOutput at once (its span's output that
object's repr), and iterating it runs `kickoff` again in a thread, the crew's run (its own span, in a trace of its
own, its tasks under it). The first span is no run: the second is the turn.

A Flow (`@start` / `@listen` / `@router` methods over a state) is CHAIN spans: `<flow>.kickoff` per
kickoff (`flow_id`, its inputs in `flow_inputs` and `input.value`, `kickoff_id` when they hold an
`id`, its last method's result in `output.value`) and `<flow>.<method>` per method it runs
(`flow.node.name`, `flow.node.type` start / listen / router, its result in `output.value`). A flow
runs code: what its methods ask a model (`LLM.call`, the LLM spans under them) are its steps, a crew
one kicks off a subagent; the spans themselves are bookkeeping, their values the inputs and results
of the work under them or the router's route (`consume_flow`).

OpenLLMetry's crewai instrumentation (opentelemetry-instrumentation-crewai, read by `openllmetry`)
records the same run as a `crewai.workflow` span (no `traceloop.span.kind`: only
`gen_ai.operation.name` invoke_agent; `crewai.crew.*`, its result `str(CrewOutput)`, the raw text, in
`crewai.crew.result`), a `<description>.task` span per task and a `<role>.agent` span per agent
execution (`gen_ai.agent.name`); the crew again the session's agent, each agent a subagent.
"""

from __future__ import annotations

from typing import Any

from evalkit.trajectory.mappers.messages import render
from evalkit.trajectory.mappers.reader import SpanReader, as_text, parse_json
from evalkit.trajectory.operations import AgentRun, ErrorInfo, ToolExecution

_BOOKKEEPING = ("crew_key", "crew_id", "crew_agents", "crew_tasks", "crew_inputs", "kickoff_id", "task_key", "task_id",
                "task_name")
# A Flow's kickoff span's and its methods' spans' own keys (`_FlowKickoffWrapper`, `_FlowExecuteMethodWrapper`).
_FLOW_KEYS = ("flow_id", "flow_inputs", "kickoff_id", "flow.node.name", "flow.node.type")
_KICKOFF = ".kickoff"
_UNNAMED_CREW = "Crew"  # OpenInference's `_get_crew_name` for a crew named CrewAI's default: `Crew_<id>`
# A CrewAI tool's settings, on its TOOL span.
_TOOL_SETTINGS = ("tool.cache_function", "tool.current_usage_count", "tool.description_updated",
                  "tool.result_as_answer")


OPENINFERENCE_SCOPE = "openinference.instrumentation.crewai"
# CrewAI's delegation tools (`AgentTools`: DelegateWorkTool, AskQuestionTool), by their fixed `name`s; the coworker
# is their `coworker` argument (`BaseAgentTool._get_coworker` also takes `co_worker`, and the first of a list).
_DELEGATION_TOOLS = frozenset({"Delegate work to coworker", "Ask question to coworker"})
_COWORKER_ARGUMENTS = ("coworker", "co_worker")
_TOOL_NAME_LINE = "Tool Name: "  # `format_description_for_llm`'s first line
# A `ToolFailure`'s fields (`crewai.tools.tool_failure`), its `model_dump` the tool span's output.
_FAILURE_FIELDS = frozenset({"message", "reason", "code", "retryable", "details"})
# What a streamed crew's first kickoff returns (`CrewStreamingOutput`), as its span's output records it: `str()` of it.
_STREAMING_OUTPUT = "<crewai.types.streaming.CrewStreamingOutput object"
_JSON_MIME_TYPE = "application/json"  # OpenInference's `output.mime_type` for a value it wrote as JSON


def openinference_tool(execution: ToolExecution, reader: SpanReader) -> ToolExecution:
    """A CrewAI tool's run: named as the model calls it; a delegation's coworker the agent whose run it holds."""
    if execution.name in _DELEGATION_TOOLS:
        execution.runs_agent = _coworker(execution.arguments)
    description = reader.span.attributes.get("tool.description")  # read by `openinference.tool_execution`
    first_line = description.partition("\n")[0] if isinstance(description, str) else ""
    offered = first_line.removeprefix(_TOOL_NAME_LINE).strip() if first_line.startswith(_TOOL_NAME_LINE) else ""
    if offered:
        execution.name = offered
    _reported_failure(execution)
    _shown_as_str(execution, reader)
    return execution


def _shown_as_str(execution: ToolExecution, reader: SpanReader) -> None:
    """A tool's result that was no string (a dict, a list), as the model was shown it: its Python `str()`.

    CrewAI sends the model a tool's result as `str()` of what the tool returned (native function calling's
    `format_native_tool_output_for_agent`, the ReAct loop's `ToolUsage.use`), and OpenInference records a dict or list
    as its JSON (`output.mime_type` application/json; a string as itself, text/plain). So the JSON read back is
    written as Python writes it. The multimodal agent's `AddImageTool` returns a user message with an `image_url` part:
    the model is shown that message's repr as text, no image (tests/captures/crewai_openinference_image). A tool
    returning a pydantic model (other than a ToolFailure, read above) is recorded as its dump too, though CrewAI shows
    the model's own `str()`: no span says which it was.
    """
    recorded = reader.span.attributes.get("output.mime_type")  # read by `openinference.map_span`
    if recorded == _JSON_MIME_TYPE and isinstance(execution.result, dict | list):
        execution.result = str(execution.result)


def _reported_failure(execution: ToolExecution) -> None:
    """A tool's `ToolFailure`: what the model was shown (`as_agent_message`: the message, its code after it), and
    the call failed, of the failure's code (an exception's class) or else its reason (`mcp_error`, …)."""
    failure = execution.result
    if not (isinstance(failure, dict) and set(failure) == _FAILURE_FIELDS and isinstance(failure["message"], str)
            and isinstance(failure["reason"], str)):
        return
    message, code = failure["message"], failure["code"]
    execution.result = f"{message} (code: {code})" if code else message
    if execution.error is None:
        execution.error = ErrorInfo(status_message=message, error_type=as_text(code) or failure["reason"])


def _coworker(arguments: Any) -> str:
    """The coworker a delegation names, as CrewAI reads it; "" when it names none."""
    if not isinstance(arguments, dict):
        return ""
    named = next((arguments[key] for key in _COWORKER_ARGUMENTS if arguments.get(key)), None)
    if not isinstance(named, str):
        return ""
    if named.startswith("[") and named.endswith("]"):
        named = named[1:-1].split(",")[0]
    return named.strip()


def is_crewai(reader: SpanReader) -> bool:
    return reader.has("crew_key")


def is_crew_run(reader: SpanReader) -> bool:
    return is_crewai(reader) and reader.span.name.endswith(".kickoff")


def is_streaming_kickoff(reader: SpanReader) -> bool:
    """A streamed crew's first kickoff span, which returned the stream to iterate, not the crew's run: its
    bookkeeping, its inputs (the run's again) and the stream's repr read, no operation."""
    output = reader.span.attributes.get("output.value")
    if not (is_crew_run(reader) and isinstance(output, str) and output.startswith(_STREAMING_OUTPUT)):
        return False
    consume(reader)
    reader.consume("input.value", "output.value")
    return True


def crew_run_name(reader: SpanReader) -> str | None:
    """The name the crew was given (`Crew.name`, a CrewBase class's), from its span's `<name>.kickoff`; None for a
    crew with CrewAI's default name, whose span OpenInference names `Crew_<crew_id>.kickoff`."""
    name = reader.span.name.removesuffix(_KICKOFF)
    if name in (_UNNAMED_CREW, f"{_UNNAMED_CREW}_{reader.text('crew_id')}"):
        return None
    return name or None


def is_flow_span(reader: SpanReader) -> bool:
    """A Flow's kickoff span or one of its methods'."""
    attributes = reader.span.attributes
    return reader.span.scope_name == OPENINFERENCE_SCOPE and ("flow_id" in attributes or "flow.node.name" in attributes)


def consume_flow(reader: SpanReader) -> None:
    """A Flow's span: its ids, its method's name and kind, and copies of the inputs and results of its work."""
    if is_flow_span(reader):
        reader.consume(*_FLOW_KEYS, "input.value", "output.value")


def consume(reader: SpanReader) -> None:
    reader.consume(*_BOOKKEEPING)


def consume_tool(reader: SpanReader) -> None:
    reader.consume(*_TOOL_SETTINGS)


def crew_input(reader: SpanReader) -> str | None:
    inputs = parse_json(reader.get("crew_inputs"))
    return render(inputs) if inputs else None


def raw_output(value: Any) -> str | None:
    """A CrewOutput's / TaskOutput's `raw` text; None for anything else."""
    output = parse_json(value)
    raw = output.get("raw") if isinstance(output, dict) else None
    return render(raw) if raw is not None else None


# --- OpenLLMetry's crewai instrumentation ---------------------------------------------------------

_OPENLLMETRY_SCOPE = "opentelemetry.instrumentation.crewai"  # `get_tracer(__name__)` of its instrumentation module
_OPENLLMETRY_PREFIXES = ("crewai.crew.", "crewai.task.", "crewai.agent.")
_DEFAULT_CREW_NAME = "crew"  # CrewAI's `Crew.name` default (`Field(default="crew")`)


def crew_name(name: str | None) -> str | None:
    """A crew's own name; None for CrewAI's default, which names nothing."""
    return name if name and name != _DEFAULT_CREW_NAME else None


def is_openllmetry_crewai(reader: SpanReader) -> bool:
    return reader.span.scope_name.startswith(_OPENLLMETRY_SCOPE)


def is_openllmetry_crew_run(reader: SpanReader) -> bool:
    return is_openllmetry_crewai(reader) and reader.span.name == "crewai.workflow"


def read_openllmetry_crew_run(reader: SpanReader, run: AgentRun) -> None:
    """The crew's `crewai.workflow` span, an invoke_agent span otherwise nameless and empty.

    Left so, it would be a synthetic root grouping runs (build.py), and every agent's steps one flat
    trajectory named after the first agent. It is the crew: what it answered is `crewai.crew.result`
    (`span.set_attribute(f"crewai.{class_name.lower()}.result", str(result))`); the instrumentation
    records no kickoff inputs. Its name is the crew's, unless CrewAI's default, which names nothing:
    then the service's, as for OpenInference's crew run.
    """
    name = reader.text("crewai.crew.name")
    run.name = run.name or crew_name(name) or as_text(
        reader.span.resource_attributes.get("service.name"))
    run.output_text = run.output_text or reader.text("crewai.crew.result")
    reader.consume("gen_ai.provider.name")
    consume_openllmetry(reader)


def consume_openllmetry(reader: SpanReader) -> None:
    """The crew's, task's and agent's settings (`crewai.crew.*` also holds the crew's own token summary, which
    its LLM calls' spans count), and the agent's id and model: bookkeeping."""
    if not is_openllmetry_crewai(reader):
        return
    reader.consume_prefix(*_OPENLLMETRY_PREFIXES)
    reader.consume("gen_ai.agent.id", "gen_ai.request.model", "gen_ai.response.model")
