"""OpenLLMetry's Haystack and OpenAI instrumentors around a Haystack 2 Agent, Haystack's own tracer auto-enabled
beside them (the `haystack_openllmetry_no-session` capture's trace exports).

Each LLM call is three spans, one inside the other: Haystack's `haystack.component.run` of the chat generator (no
content: Haystack's content tracing is off), OpenLLMetry's `haystack.openai.chat` around the generator's `run`, and
OpenLLMetry's `openai.chat` around the client's request, the only one with the messages and the usage. No session
id: the application's one span around the conversation makes it a trace.
"""

from __future__ import annotations

from span_fixtures import capture_spans

from evalkit.trajectory.from_spans import trajectory_from_spans
from evalkit.trajectory.mappers import haystack, openllmetry
from evalkit.trajectory.mappers.reader import SpanReader
from evalkit.trajectory.operations import LlmCall
from evalkit.trajectory.span import Span
from tests.captures import corpus

CAPTURE = "haystack_openllmetry_no-session"


def _conversation() -> list[Span]:
    """The spans of the conversation's trace (the application's `weather chat` span is its root)."""
    spans = capture_spans(CAPTURE)
    (root,) = [span for span in spans if not span.parent_span_id and span.scope_name == "weather-desk"]
    return [span for span in spans if span.trace_id == root.trace_id]


def test_the_conversation_is_the_calls_that_happened_each_counted_once() -> None:
    result = trajectory_from_spans(_conversation(), session_id="conversation")
    assert result.valid, [str(issue) for issue in result.issues]
    document = result.document()
    capture = corpus.load(CAPTURE)
    assert corpus.compare(document, corpus.GroundTruth.of(capture.llm_log)) == []
    # Three tracers' spans per call, one step each: Haystack's component runs and agent runs are no steps.
    assert {openllmetry.NAME, haystack.NAME} <= set(document["extra"]["emitters"])
    assert [s["source"] for s in document["steps"]] == ["system", "user", "agent", "agent", "user", "agent", "agent"]
    assert all(s["extra"]["emitter"] == openllmetry.NAME for s in corpus.llm_steps(document))
    assert not document.get("subagent_trajectories")


def test_haystack_s_auto_enable_spans_are_no_agent_work() -> None:
    """Haystack 2 opens `haystack.tracing.auto_enable` spans as it is imported, each a trace of its own (one failed
    on a circular import): no operation, so no session of their own and no error in the conversation's."""
    auto_enable = [span for span in capture_spans(CAPTURE) if span.name == "haystack.tracing.auto_enable"]
    assert len(auto_enable) == 2 and len({span.trace_id for span in auto_enable}) == 2
    conversation = {span.trace_id for span in _conversation()}
    assert not conversation & {span.trace_id for span in auto_enable}
    assert [haystack.map_span(SpanReader(span), ()) for span in auto_enable] == [None, None]


def test_the_haystack_instrumentor_s_generator_span_records_no_answer() -> None:
    """`haystack.openai.chat`'s `gen_ai.completion.0.content` is `replies`, the key of the generator's result
    (OpenLLMetry writes the result dict as if it were the replies): no answer. With the openai instrumentor's span
    under it, a wrapper not counted; with the Haystack instrumentor alone, calls whose answer no span records."""
    generator_spans = [span for span in capture_spans(CAPTURE) if span.scope_name == haystack.OPENLLMETRY_SCOPE]
    assert len(generator_spans) == 4
    for span in generator_spans:
        assert span.attributes["gen_ai.completion.0.content"] == "replies"
        call = openllmetry.map_span(SpanReader(span), ())
        assert isinstance(call, LlmCall) and call.emitter == openllmetry.NAME
        assert call.output_messages == []

    alone = [span for span in _conversation() if span.scope_name != "opentelemetry.instrumentation.openai.v1"]
    steps = corpus.llm_steps(trajectory_from_spans(alone, session_id="conversation").document())
    assert len(steps) == 4
    assert [step["message"] for step in steps] == ["", "", "", ""]
