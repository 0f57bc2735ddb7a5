"""openai-agents' guardrails as OpenLLMetry's openai-agents instrumentation records them.

`opentelemetry-instrumentation-openai-agents` (0.62) is a processor of the SDK's own tracing that writes a span of the
SDK's agent, response, function and handoff spans only (`_hooks.OpenTelemetryTracingProcessor.on_span_start`): no
guardrail, task or turn span. It starts every agent span (`<agent>.agent`) under the trace's `Agent Workflow` span,
whatever ran the agent, and a call (`openai.response`) or tool (`<tool>.tool`) under the agent span current then. So an
input guardrail running an agent of its own, as the SDK's guardrails guide shows, leaves that agent's span beside the
guarded agent's, within its time, its call under it; the guardrail's name is on no span. The SDK attaches a blocking
input guardrail's tripwire to its turn span, which is not written: the tripped run's agent span ends OK, no call under
it. `openai_agents_guardrails.complete_guarded_runs` reads the runs from that (`GUARDRAIL_SPANS`: no guardrail span,
a call standing for the turn it ended).

Seen in a real capture: tests/captures/openai-agents_openllmetry_guardrails (an input guardrail running its own agent
on each of three turns, tripping on the second; an output guardrail that is a plain function, in no span).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from evalkit.trajectory.mappers import openai_agents_guardrails, openllmetry
from evalkit.trajectory.mappers.reader import SpanReader
from evalkit.trajectory.operations import AgentRun, LlmCall, Message
from evalkit.trajectory.span import Span

_SPAN_KIND = "traceloop.span.kind"
_CALL_SPAN = "openai.response"  # a Responses or Chat Completions call's span (`_start_generation_span`)


def _is_agent(span: Span) -> bool:
    return span.scope_name == openllmetry.OPENAI_AGENTS_SCOPE and span.attributes.get(_SPAN_KIND) == "agent"


def _is_call(span: Span) -> bool:
    return span.scope_name == openllmetry.OPENAI_AGENTS_SCOPE and span.name == _CALL_SPAN


def _is_tool(span: Span) -> bool:
    return span.scope_name == openllmetry.OPENAI_AGENTS_SCOPE and span.attributes.get(_SPAN_KIND) == "tool"


def _sent(span: Span) -> list[Message]:
    call = openllmetry.map_span(SpanReader(span), ())
    return call.input_messages if isinstance(call, LlmCall) else []


GUARDRAIL_SPANS = openai_agents_guardrails.GuardrailSpans(
    guardrail_name=None,
    is_agent=_is_agent,
    is_turn=_is_call,  # no turn span: each call ends one of the agent's turns
    is_call=_is_call,
    input_messages=_sent,
    is_tool=_is_tool,
)


def complete_runs(spans: Sequence[Span], runs: Iterable[AgentRun]) -> None:
    """The session's openai-agents runs as this instrumentation records their guardrails
    (`openai_agents_guardrails.complete_guarded_runs`)."""
    openai_agents_guardrails.complete_guarded_runs(spans, runs, GUARDRAIL_SPANS)
