"""openai-agents' guardrails, as the instrumentations tracing the SDK's own spans record them.

The rules are the SDK's, whoever writes its spans down; each instrumentation's way of writing them is a
`GuardrailSpans` (OpenInference's, `OPENINFERENCE`, here; OpenTelemetry's openai-agents-v2 instrumentation's in
`otel_openai_agents`; OpenLLMetry's in `openllmetry_openai_agents`). Below, OpenInference's span kinds; openai-agents-v2
writes the same tree (its `guardrail_check`, `invoke_agent`, `chat` spans, the SDK's task and turn spans as `unknown`).
OpenLLMetry writes another (last paragraph).

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

OpenLLMetry's instrumentation writes no guardrail, task or turn span, and starts every agent span under the trace's
workflow span: a guardrail's agent is beside the agent it guards, within its time (`_checks_beside`), and the rules
read the same from that: a span of the guarded agent's model calls stands for the turn it ended (an agent starting
after one ended is an output guardrail's), and an agent within the time of one of its tool spans is that tool's (an
agent run as a tool), no guardrail's. The agent's run is nested in the guarded one (`AgentRun.inside_run`). It writes
the guardrail's name nowhere, and the tripwire only where the SDK attaches it to the agent's span (its status is the
`SpanError` dict's text, naming the guardrail); a blocking input guardrail's, on the turn span, is in no span. The SDK
calls the guarded agent's model once its input guardrails passed, so a guarded run whose input guardrail ran and whose
model was never called stopped there (`_STOPPED`, where no span records the tripwire).

Seen in real captures: tests/captures/openai-agents_openinference_guardrails,
tests/captures/openai-agents_otel-genai_guardrails and tests/captures/openai-agents_openllmetry_guardrails (an input
guardrail running its own agent on each of three turns, tripping on the second; an output guardrail that is a plain
function).
"""

from __future__ import annotations

import re
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
_TRIPWIRE_GUARDRAIL = re.compile(r"'guardrail': '([^']+)'")  # the guardrail its data names
# A guarded run stopped before its model was called, its input guardrail's agent run, where no span records why.
_STOPPED = "Stopped after its input guardrail's check, before its model was called (no span records the tripwire)"

SpanKey = tuple[str, str]


@dataclass(frozen=True)
class GuardrailSpans:
    """How an instrumentation writes the SDK's spans these rules read."""

    # A guardrail span's guardrail; None for any other span. None: the instrumentation writes no guardrail span, a
    # guardrail's agent's span is beside the guarded agent's (OpenLLMetry's).
    guardrail_name: Callable[[Span], str | None] | None
    is_agent: Callable[[Span], bool]  # an SDK agent's span (AgentSpanData), not the trace's root workflow span
    is_turn: Callable[[Span], bool]  # one of an agent's loop turns (TurnSpanData), a child of its span
    is_call: Callable[[Span], bool]  # a model call
    input_messages: Callable[[Span], list[Message]]  # what a call was sent, as its mapper reads it
    # A tool's execution (FunctionSpanData), read where a guardrail's agent is beside the guarded agent: an agent run
    # within one of its tools' time is the tool's.
    is_tool: Callable[[Span], bool] = lambda span: False


@dataclass(frozen=True)
class _Check:
    """One guardrail's run, as its spans show it."""

    guarded: Span  # the guarded agent's span
    holding: list[Span]  # the spans the SDK may attach the tripwire to: the guardrail's ancestors, the agent's last
    name: str | None  # the guardrail, where a span names it
    kind: str  # "input" or "output"
    agent: Span | None  # the agent the guardrail ran; None for a guardrail that is a function alone
    beside: bool  # the agent's span beside the guarded agent's, not under it


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
    it; the guardrail's agent's run started by the guardrail, nested in the guarded run where its span is beside it."""
    checks, children = _checks_under(spans, shape) if shape.guardrail_name is not None else _checks_beside(spans, shape)
    if not checks:
        return
    runs_by_key = {(run.span.trace_id, run.span.span_id): run for run in runs}
    for check in checks:
        guarded = runs_by_key.get(_key(check.guarded))
        if guarded is None:
            continue
        guarded.app_agent = True
        tripped = next((span for span in check.holding if _tripped(span, check.name)), None)
        if tripped is not None and guarded.error is None:
            guarded.error = ErrorInfo(status_message=tripped.status_message)
        if check.agent is None:
            continue
        checking = runs_by_key.get(_key(check.agent))
        if checking is not None and checking.started_by is None:
            checking.started_by = " ".join(filter(None, (check.kind, "guardrail", check.name)))
        if checking is not None and check.beside:
            checking.inside_run = _key(check.guarded)
        if check.kind == "input" and not guarded.asked:
            call = _first_call(check.agent, children, shape)
            guarded.asked = _asked(shape.input_messages(call) if call is not None else [])
        if check.kind == "input" and guarded.error is None and not _own_calls(check.guarded, children, shape):
            guarded.error = ErrorInfo(status_message=_STOPPED)


_Checks = tuple[list[_Check], dict[SpanKey, list[Span]]]  # the guardrails' runs found, the spans under each span


def _checks_under(spans: Sequence[Span], shape: GuardrailSpans) -> _Checks:
    """The guardrails an instrumentation writes a span of (OpenInference's, openai-agents-v2's): each under the agent
    it guards, the agent it ran under it."""
    assert shape.guardrail_name is not None
    guardrails = [(span, name) for span in spans if (name := shape.guardrail_name(span))]
    if not guardrails:
        return [], {}
    by_key = {(span.trace_id, span.span_id): span for span in spans}
    children = _children(spans)
    checks: list[_Check] = []
    for guardrail, name in guardrails:
        between = _ancestors_to_agent(guardrail, by_key, shape)
        if not between:
            continue
        kind = "output" if _after_turns(guardrail, between[-1], children, shape) else "input"
        checks.append(_Check(between[-1], between, name, kind, _guardrail_agent(guardrail, children, shape), False))
    return checks, children


def _checks_beside(spans: Sequence[Span], shape: GuardrailSpans) -> _Checks:
    """The guardrails' agents of an instrumentation writing no guardrail span (OpenLLMetry's): an agent span beside
    another under one parent, within its time and in none of its tools' (the innermost such agent: a guardrail's
    agent's own guardrail's agent is within both). Only its own agent span may hold the tripwire, naming the
    guardrail."""
    beside: dict[SpanKey, list[Span]] = {}
    for span in spans:
        if span.parent_span_id and shape.is_agent(span):
            beside.setdefault((span.trace_id, span.parent_span_id), []).append(span)
    held = [(agent, holders) for agents in beside.values() if len(agents) > 1 for agent in agents
            if (holders := [other for other in agents if other is not agent and _within(agent, other)])]
    if not held:
        return [], {}
    children = _children(spans)
    checks: list[_Check] = []
    for agent, holders in held:
        guarded = max(holders, key=lambda span: span.start_time_unix_nano)
        if any(shape.is_tool(span) and _within(agent, span) for span in children.get(_key(guarded), ())):
            continue  # an agent a tool of the guarded agent ran (an agent as a tool)
        kind = "output" if _after_turns(agent, guarded, children, shape) else "input"
        named = _TRIPWIRE_GUARDRAIL.search(guarded.status_message) if _tripped(guarded, None) else None
        checks.append(_Check(guarded, [guarded], named.group(1) if named else None, kind, agent, True))
    return checks, children


def _children(spans: Sequence[Span]) -> dict[SpanKey, list[Span]]:
    children: dict[SpanKey, list[Span]] = {}
    for span in spans:
        if span.parent_span_id:
            children.setdefault((span.trace_id, span.parent_span_id), []).append(span)
    return children


def _within(span: Span, other: Span) -> bool:
    """Whether `span` ran within `other`'s time, in its trace."""
    return (span.trace_id == other.trace_id and other.start_time_unix_nano <= span.start_time_unix_nano
            and span.end_time_unix_nano <= other.end_time_unix_nano)


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


def _tripped(span: Span, guardrail: str | None) -> bool:
    """Whether `span` holds the tripwire of `guardrail` (of any, for None). OpenInference writes the SDK's error as
    "<message>: <data>", OpenLLMetry as the `SpanError` dict's text."""
    message = span.status_message
    return (span.status_code == STATUS_ERROR and _TRIPWIRE in message
            and (guardrail is None or f"'guardrail': '{guardrail}'" in message))


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


def _own_calls(agent: Span, children: dict[SpanKey, list[Span]], shape: GuardrailSpans) -> bool:
    """Whether the agent's model was called: a call under its span, not under another agent's (a guardrail's) there."""
    pending = list(children.get(_key(agent), ()))
    while pending:
        current = pending.pop()
        if shape.is_call(current):
            return True
        if not shape.is_agent(current):
            pending.extend(children.get(_key(current), ()))
    return False


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
