"""OpenLIT's pydantic-ai instrumentation (scope `openlit.instrumentation.pydantic_ai`, as of openlit 1.45).

It wraps pydantic-ai's classes (openlit/instrumentation/pydantic_ai: `Agent.__init__`, `Agent.run_sync`,
`Agent.run`, `Agent.iter` and three nodes of the agent graph) and names each span `<operation> <name>`; the model
calls are OpenLIT's OpenAI (or other client) instrumentation's `chat` spans, read in `openlit.py`. What each is:

- `Agent.run`: the agent's run, `execute_task <agent>`: the agent's name, what it was asked as
  `gen_ai.input.messages` (the user prompt; none at all when the run is given `message_history`: the formatter
  calls `.get` on pydantic-ai's message objects and gives up, `add_message_tracking`), `str()` of the run's output
  as `gen_ai.output.messages` (not JSON: the text itself for a text output), and the run's summed usage as
  `gen_ai.usage.*` (every call of the run again: its calls' spans count them). `gen_ai.agent.description` is
  `str()` of the agent's system prompts tuple (`()` when it has none, its `instructions` not among them) and
  names nothing.
- `Agent.run_sync`: `invoke_agent <agent>`, operation `execute_task` too, the same attributes. `run_sync` runs
  `Agent.run` in an event loop (`_utils.run_until_complete(self.run(…))`), so its span always holds that run's
  `execute_task` span, which is the run: this one is no run of its own (read as one, the run inside it would be
  a subagent of the same agent).
- `Agent.run_stream` is not wrapped: a streamed turn has no run span, its calls roots of their own traces.
- `Agent.iter` (`invoke_workflow <agent>`), `UserPromptNode.run` (`user_prompt_processing <model>`),
  `ModelRequestNode.run` (`model_request <model>`) and `CallToolsNode.run` (`execute_tool <model>`): the wrapper
  is synchronous and what it wraps returns an async context manager or a coroutine, so each span ends as that
  object is made (tens of microseconds), before the work it names, which runs beside it. None holds anything
  but the agent's and model's names: no run, no step. The `execute_tool` one is no tool's execution (named after
  the model, no arguments, no result): the instrumentation has no span for a tool function, whose results are
  only in the next call's input. Outside `Agent.run` (a `run_stream` turn) they are roots of one-span traces
  carrying no session id, which are no part of any session here.
- `Agent.__init__`: `create_agent <agent>`, a trace of its own: setting an agent up, no step.

Every span restates the provider (`pydantic_ai`), the model, a guessed `server.*` (`api.openai.com` for the
model-request node, `127.0.0.1:80` otherwise), the lifecycle phase and the framework's version: bookkeeping.
"""

from __future__ import annotations

from evalkit.trajectory.mappers import otel_genai
from evalkit.trajectory.mappers.reader import SpanReader, as_text
from evalkit.trajectory.operations import AgentRun, Operation
from evalkit.trajectory.span import Span

SCOPE = "openlit.instrumentation.pydantic_ai"
# The operation of `Agent.run`'s and `run_sync`'s spans: the only ones of this scope that do an agent's work (the
# graph nodes' end before theirs runs; trajectory/tables.py leaves the others out of the session index, migration 218).
RUN_OPERATION = "execute_task"
# `Agent.run`'s span; `run_sync`'s, of the same operation, is `invoke_agent <agent>` (see above).
_RUN_SPAN_PREFIX = "execute_task "
_BOOKKEEPING = ("gen_ai.provider.name", "gen_ai.agent.lifecycle.phase", "gen_ai.request.model", "gen_ai.response.model")
# What the run span says of the run besides what it was asked and answered: the system prompts' repr, the first
# input message's role and the inputs' length, the agent's tools and model settings, throughput.
_RUN_EXTRAS = ("gen_ai.agent.description", "gen_ai.message.role", "gen_ai.message.total_length",
               "gen_ai.agent.tools", "gen_ai.request.parameters", "gen_ai.performance.tokens_per_second")


def is_pydantic_ai(span: Span) -> bool:
    return span.scope_name == SCOPE


def map_span(reader: SpanReader, emitter: str) -> Operation | None:
    """One span of the instrumentation's, OpenLIT's common bookkeeping already read (`openlit.map_span`)."""
    reader.consume(*_BOOKKEEPING, *otel_genai.IDENTITY_KEYS)  # the identity: the builder's to read
    if otel_genai.operation_name(reader) == RUN_OPERATION and reader.span.name.startswith(_RUN_SPAN_PREFIX):
        return agent_run(reader, emitter)
    # `run_sync` around its run, `Agent(...)` set up, or a graph node's span made and ended before its work.
    reader.consume_prefix("gen_ai.")
    return None


def agent_run(reader: SpanReader, emitter: str) -> AgentRun:
    """`Agent.run` / `run_sync`: the agent's run, its summed usage not counted again, its output's text."""
    run = otel_genai.agent_run(reader, emitter)  # reads the name, the prompt and the model; usage consumed
    run.output_text = as_text(reader.attributes.get("gen_ai.output.messages"))
    reader.consume("gen_ai.output.messages", *_RUN_EXTRAS)
    return run
