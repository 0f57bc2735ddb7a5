"""Agno's conventions, as they arrive through OpenInference's Agno instrumentation.

An Agno agent or team run span carries Agno's own ids beside OpenInference's attributes:
`agno.agent` / `agno.team` (the name `graph.node.name` already gives), their `.id`, `agno.run.id`,
and `agno.tools` (the agent's tool names, whose definitions its LLM spans carry). They are
bookkeeping: read, never listed as unmapped.

A Workflow's run is a CHAIN span (`<workflow>.run`, `.arun`, `._aexecute`, …) named by `graph.node.name`,
its input and final output in `input.value` / `output.value`, its shape in `agno.workflow.*` (written by
every one of its wrappers: `_workflow_attributes`). It runs its steps' agents and teams in order, each
answering from the step before: an agent run, each step's agent run a subagent (`is_workflow_run`). A step
(`<step>.execute`, `.execute_stream`, …) and a Parallel group (`<name>.execute`) are CHAIN spans in
between, their input and output copies of what their agent run was asked and answered (a function step's
output is the next step's input): bookkeeping, read (`consume_step`).

An Agno model call's `llm.invocation_parameters` is its model's `get_request_params()`: the provider API's own
request parameters. Agno's Claude (and the Bedrock and Vertex Claudes built on it) sends its `output_config` as
given, so a Claude agent's effort is `output_config.effort` there, read as in the Anthropic SDK's calls
(`anthropic_openinference.read_request`: only the Messages API has an `output_config` of that shape); its `thinking`
budget is no effort, kept in the request as recorded. Its OpenAIResponses sends `reasoning={"effort": …}` (from its
`reasoning_effort`), read as in the OpenAI SDK's Responses calls (`openai_sdk.reasoning_effort`; seen in
tests/captures/agno_openinference_confirmation). Agno keeps the model's thinking as its
messages' `reasoning_content`, which the instrumentation writes as a `reasoning` content of the output message:
nothing to do here. Seen in a real capture: tests/captures/agno_openinference_reasoning.
A function call's TOOL span records the result as `str()` of it (`output.value`, `output.mime_type` text/plain), the
text Agno sent the model as the tool message (`Model.run_function_call`: `str()` of a result that is no string, a
`ToolResult`'s content): that text is the result, never JSON read back and re-serialised (Agno's knowledge search
returns its documents as indented JSON: `agno_knowledge`). Seen in tests/captures/agno_openinference_knowledge.
"""

from __future__ import annotations

from evalkit.trajectory.mappers import anthropic_openinference, openai_sdk
from evalkit.trajectory.mappers.reader import SpanReader
from evalkit.trajectory.operations import LlmCall, ToolExecution

SCOPE = "openinference.instrumentation.agno"
_WORKFLOW = "agno.workflow."
_TEXT_MIME_TYPE = "text/plain"  # the instrumentation's `output.mime_type` for a function's result, `str()` of it


def consume(reader: SpanReader) -> None:
    if reader.span.scope_name == SCOPE:
        reader.consume_prefix("agno.")


def is_workflow_run(reader: SpanReader) -> bool:
    """A Workflow's run span: Agno's scope, its `agno.workflow.*` shape."""
    return reader.span.scope_name == SCOPE and any(key.startswith(_WORKFLOW) for key in reader.span.attributes)


def consume_step(reader: SpanReader) -> None:
    """A workflow step's or Parallel group's CHAIN span: its node ids and its copies of its work's input and output."""
    if reader.span.scope_name == SCOPE:
        reader.consume_prefix("graph.node.")
        reader.consume("input.value", "output.value")


def read_request(call: LlmCall) -> None:
    """The effort an Agno model's recorded request parameters set, in its provider API's own shape: a Messages
    request's `output_config.effort` (its Claude), a Responses request's `reasoning.effort` (its OpenAIResponses)."""
    if call.reasoning_effort is not None:
        return
    request = call.extra.get("request")
    call.reasoning_effort = (anthropic_openinference.reasoning_effort(request)
                             or openai_sdk.reasoning_effort(request))


def tool_execution(execution: ToolExecution, reader: SpanReader) -> ToolExecution:
    """A function call's span: its result the text the model was shown, as recorded (a JSON text as written)."""
    recorded = reader.span.attributes.get("output.value")  # read by `openinference.tool_execution`
    if isinstance(recorded, str) and reader.span.attributes.get("output.mime_type") == _TEXT_MIME_TYPE:
        execution.result = recorded
    return execution
