"""openai-agents' guardrails, as the instrumentations tracing the SDK's own spans record them.

The rules are the SDK's, whoever writes its spans down; each instrumentation's way of writing them is a
`GuardrailSpans` (OpenInference's, `OPENINFERENCE`, here; OpenTelemetry's openai-agents-v2 instrumentation's in
`otel_openai_agents`). Below, OpenInference's span kinds; the other writes the same tree (its `guardrail_check`,
`invoke_agent`, `chat` spans, the SDK's task and turn spans as `unknown`).

The SDK runs a starting agent's input guardrails on the input of its run's first turn (`run_input_guardrails`) and the
final agent's output guardrails on its final output, each in a `guardrail_span` named after the guardrail: a GUARDRAIL
span under the agent's AGENT span (inside its first `turn` span when the input guardrail blocks,
`run_in_parallel=False`, and the run is not streamed). A guardrail is a function; one that asks an agent, as the
SDK's guardrails guide shows (`await Runner.run(guardrail_agent, input, context=ctx.context)`), runs that agent in the
same trace, inside the guardrail's span: an AGENT span of its own, with its calls under it. What the spans say, and
what is read from them:

- The guardrail's agent is a subagent of the agent the guardrail guards: an agent of its own (its own instructions,
  output type and model settings), run on that agent's input or output, whose calls are no step of the guarded agent's
  and whose answer (the verdict) no answer of it. Its delegation step is no call's result: no call of the guarded
  agent's model started it (`AgentRun.started_by`: "input guardrail <name>").
- The guarded agent's span is an agent of the app's (`AgentRun.app_agent`; every SDK agent span has its
  `graph.node.id`, the trace's root AGENT span named after the workflow none): when an input guardrail stops it before
  its model is called, the guardrail's agent is its only work, and it is no synthetic root grouping runs.
- An input guardrail is given the run's input (the session's history and the new items, the same the run's first call
  is sent), which no span of the guarded agent records until its first call, and none at all when the guardrail stops
  it: the guardrail agent's first call records it. What that call was asked last (the user items after
  its input's last answer or result) is what the guarded run was asked (`AgentRun.asked`). An output guardrail's agent
  is given the answer instead: the guardrail is known as an output guardrail by running after the guarded agent's turns
  ended (OpenInference drops which kind it is, and whether it tripped: `GuardrailSpanData.triggered`).
- A tripwire raises `InputGuardrailTripwireTriggered` (or `Output…`) and attaches an error to the span current at the
  time (`_error_tracing.attach_error_to_current_span`): the turn span holding the guardrail, or the agent's span, whose
  status is then "Guardrail tripwire triggered: {'guardrail': '<name>'}". It is the guarded run's failure
  (`AgentRun.error`): the run stopped there, its question unanswered.

Seen in real captures: tests/captures/openai-agents_openinference_guardrails and
tests/captures/openai-agents_otel-genai_guardrails (an input guardrail running its own agent on each of three turns,
tripping on the second; an output guardrail that is a plain function).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from evalkit.trajectory.mappers.openinference import read_messages
from evalkit.trajectory.mappers.reader import SpanReader
from evalkit.trajectory.operations import AgentRun, ErrorInfo, Message
from evalkit.trajectory.span import STATUS_ERROR, Span

SCOPE = "openinference.instrumentation.openai_agents"
_KIND = "openinference.span.kind"
_TURN_SPAN = "turn"  # the SDK's TurnSpanData, one agent loop turn (OpenInference: a CHAIN named by its type)
_TRIPWIRE = "Guardrail tripwire triggered"  # the SpanError the SDK attaches when a guardrail trips

SpanKey = tuple[str, str]


@dataclass(frozen=True)
class GuardrailSpans:
    """How an instrumentation writes the SDK's spans these rules read."""

    guardrail_name: Callable[[Span], str | None]  # a guardrail span's guardrail; None for any other span
    is_agent: Callable[[Span], bool]  # an SDK agent's span (AgentSpanData), not the trace's root workflow span
    is_turn: Callable[[Span], bool]  # one of an agent's loop turns (TurnSpanData), a child of its span
    is_call: Callable[[Span], bool]  # a model call
    input_messages: Callable[[Span], list[Message]]  # what a call was sent, as its mapper reads it


def _openinference_guardrail(span: Span) -> str | None:
    if span.scope_name == SCOPE and span.attributes.get(_KIND) == "GUARDRAIL":
        return span.name  # OpenInference names the span after the guardrail
    return None


def _openinference_agent(span: Span) -> bool:
    """An SDK agent's span (AgentSpanData: `graph.node.id` its name), not the trace's root named after the workflow."""
    return span.attributes.get(_KIND) == "AGENT" and "graph.node.id" in span.attributes


OPENINFERENCE = GuardrailSpans(
    guardrail_name=_openinference_guardrail,
    is_agent=_openinference_agent,
    is_turn=lambda span: span.name == _TURN_SPAN,
    is_call=lambda span: span.attributes.get(_KIND) == "LLM",
    input_messages=lambda span: read_messages(SpanReader(span), "llm.input_messages."),
)


def complete_runs(spans: Sequence[Span], runs: Iterable[AgentRun]) -> None:
    """The session's openai-agents runs as OpenInference records their guardrails (`complete_guarded_runs`)."""
    complete_guarded_runs(spans, runs, OPENINFERENCE)


def complete_guarded_runs(spans: Sequence[Span], runs: Iterable[AgentRun], shape: GuardrailSpans) -> None:
    """The session's openai-agents runs given what their guardrails record (written as `shape` says): the guarded run
    an agent of the app's, what its input guardrail's agent was asked (the run's question), the tripwire that stopped
    it; the guardrail's agent's run started by the guardrail."""
    guardrails = [(span, name) for span in spans if (name := shape.guardrail_name(span))]
    if not guardrails:
        return
    by_key = {(span.trace_id, span.span_id): span for span in spans}
    runs_by_key = {(run.span.trace_id, run.span.span_id): run for run in runs}
    children: dict[SpanKey, list[Span]] = {}
    for span in spans:
        if span.parent_span_id:
            children.setdefault((span.trace_id, span.parent_span_id), []).append(span)
    for guardrail, name in guardrails:
        between = _ancestors_to_agent(guardrail, by_key, shape)
        if not between:
            continue
        guarded = runs_by_key.get(_key(between[-1]))
        if guarded is None:
            continue
        guarded.app_agent = True
        tripped = next((span for span in between if _tripped(span, name)), None)
        if tripped is not None and guarded.error is None:
            guarded.error = ErrorInfo(status_message=tripped.status_message)
        kind = "output" if _after_turns(guardrail, between[-1], children, shape) else "input"
        agent = _guardrail_agent(guardrail, children, shape)
        if agent is None:
            continue
        checking = runs_by_key.get(_key(agent))
        if checking is not None and checking.started_by is None:
            checking.started_by = f"{kind} guardrail {name}"
        if kind == "input" and not guarded.asked:
            call = _first_call(agent, children, shape)
            guarded.asked = _asked(shape.input_messages(call) if call is not None else [])


def _key(span: Span) -> SpanKey:
    return span.trace_id, span.span_id


def _ancestors_to_agent(span: Span, by_key: dict[SpanKey, Span], shape: GuardrailSpans) -> list[Span]:
    """The spans above `span` up to the agent span holding it (the last), [] where none does."""
    chain: list[Span] = []
    current = by_key.get((span.trace_id, span.parent_span_id))
    while current is not None and len(chain) < 64:
        chain.append(current)
        if shape.is_agent(current):
            return chain
        current = by_key.get((current.trace_id, current.parent_span_id))
    return []


def _tripped(span: Span, guardrail: str) -> bool:
    message = span.status_message
    return (span.status_code == STATUS_ERROR and message.startswith(_TRIPWIRE)
            and f"'guardrail': '{guardrail}'" in message)


def _after_turns(guardrail: Span, agent: Span, children: dict[SpanKey, list[Span]], shape: GuardrailSpans) -> bool:
    """Whether the guardrail ran once a turn of the agent's had ended: an output guardrail, checking its final output
    (input guardrails run in its first turn, before or beside its first call)."""
    return any(shape.is_turn(span) and span.end_time_unix_nano <= guardrail.start_time_unix_nano
               for span in children.get(_key(agent), ()))


def _descendants(span: Span, children: dict[SpanKey, list[Span]]) -> list[Span]:
    found: list[Span] = []
    pending = list(children.get(_key(span), ()))
    while pending:
        current = pending.pop()
        found.append(current)
        pending.extend(children.get(_key(current), ()))
    return found


def _guardrail_agent(guardrail: Span, children: dict[SpanKey, list[Span]], shape: GuardrailSpans) -> Span | None:
    """The first agent run inside the guardrail's span (the agent its function ran), None for a guardrail that is a
    function alone."""
    agents = [span for span in _descendants(guardrail, children) if shape.is_agent(span)]
    return min(agents, key=lambda span: span.start_time_unix_nano) if agents else None


def _first_call(agent: Span, children: dict[SpanKey, list[Span]], shape: GuardrailSpans) -> Span | None:
    calls = [span for span in _descendants(agent, children) if shape.is_call(span)]
    return min(calls, key=lambda span: span.start_time_unix_nano) if calls else None


def _asked(sent: list[Message]) -> list[str]:
    """What a call was asked last: the texts of the user messages after its input's last answer, result or
    instructions (`sent`, as the call's mapper reads its input)."""
    asked: list[str] = []
    for message in reversed(sent):
        if message.role != "user" or message.tool_results:
            break
        if message.text:
            asked.insert(0, message.text)
    return asked
