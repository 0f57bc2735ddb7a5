"""OpenLIT's ag2 instrumentation (the `ag2_openlit` capture's trace exports).

Two AG2 Classic `ConversableAgent`s, an assistant whose tools a user proxy executes, two chats of one session (the
second continuing the first, streamed): parallel calls, one raising once and called again. What each span of
OpenLIT's is: `trajectory/mappers/openlit_ag2.py`.
"""

from __future__ import annotations

from typing import Any

from span_fixtures import capture_spans

from evalkit.ingest import attribution
from evalkit.trajectory.from_spans import trajectory_from_spans
from evalkit.trajectory.mappers import openlit, openlit_ag2, otel_genai
from evalkit.trajectory.mappers.reader import SpanReader
from evalkit.trajectory.operations import AgentRun, Operation
from evalkit.trajectory.span import Span
from tests.captures import corpus

CAPTURE = "ag2_openlit"
SESSION = "ag2-openlit-trip-1"


def _session_spans() -> list[Span]:
    """The session's traces, as the service reads them: not the agents' set-up, each a trace with no session."""
    spans = capture_spans(CAPTURE)
    traces = {span.trace_id for span in spans if span.attributes.get("session.id") == SESSION}
    return [span for span in spans if span.trace_id in traces]


def _document() -> dict[str, Any]:
    result = trajectory_from_spans(_session_spans(), session_id=SESSION)
    assert result.valid, [str(issue) for issue in result.issues]
    return result.document()


def _mapped(message_type: str | None) -> list[tuple[SpanReader, Operation | None]]:
    """The ag2 instrumentation's spans of one `gen_ai.agent.message_type` (None: the set-up spans), each read by
    OpenLIT's mapper."""
    found = []
    for span in capture_spans(CAPTURE):
        if span.scope_name == openlit_ag2.SCOPE and span.attributes.get(openlit_ag2.MESSAGE_TYPE) == message_type:
            reader = SpanReader(span)
            found.append((reader, openlit.map_span(reader, ())))
    assert found, message_type
    return found


def test_the_session_is_the_conversation_that_happened() -> None:
    """One step per model call (the client's `chat` spans), the agents' replies none: each `generate_reply` span
    (operation `chat`, its tokens `len(str(messages)) // 4`) was an LLM step of model `unknown`, the user proxy's
    five too: 10 steps for 5 calls, 3,485 prompt tokens for 1,976."""
    document = _document()
    truth = corpus.GroundTruth.of(corpus.load(CAPTURE).llm_log)
    assert corpus.compare(document, truth) == []
    steps = corpus.llm_steps(document)
    assert [s["model_name"] for s in steps] == ["gpt-4o-mini"] * 5
    assert not document.get("subagent_trajectories")
    # No span records a tool's execution: each result is the next call's input, the raising tool's the "Error: …"
    # text AG2 sent, on its own call.
    first = (steps[0].get("observation") or {}).get("results") or []
    assert [(r["source_call_id"], r["content"]) for r in first] == [
        ("call_0_0", "sunny, 24°C"), ("call_0_1", "Error: exchange-rate service timed out")]


def test_a_reply_is_its_agents_run_and_no_call() -> None:
    """`generate_reply`: one reply of the agent named on it, no model (OpenLIT's `unknown`), its made-up tokens
    read and not counted; the assistant's replies hold its calls, the user proxy's its tools (no spans)."""
    replies = _mapped(openlit_ag2.REPLY)
    assert len(replies) == 10
    for reader, run in replies:
        assert isinstance(run, AgentRun) and run.model is None and run.input_text is None
        assert reader.span.attributes["gen_ai.usage.input_tokens"] > 0  # the made-up count
        assert reader.unused() - set(otel_genai.IDENTITY_KEYS) == set()
    assert sorted({run.name for _, run in replies if isinstance(run, AgentRun)}) == ["travel_assistant", "traveller"]


def test_the_session_agent_is_the_one_asked_not_the_one_asking() -> None:
    """The user proxy starts each chat (`initiate_chat`'s `send`, every trace's root, names it): the session's agent
    is the assistant, whose replies are the model's calls, as the first reply's run names it."""
    assert _document()["agent"]["name"] == "travel_assistant"


def test_a_message_passed_and_an_agent_set_up_are_no_steps() -> None:
    """`send` / `receive` hold the other agent's name where the message should be (OpenLIT reads the wrong
    argument): no step, all read; `create_agent` (one failed in OpenLIT's own wrapper: `False.get` on the user
    proxy's `llm_config=False`) neither."""
    passed = _mapped("send") + _mapped("receive")
    assert len(passed) == 20
    for reader, operation in passed:
        assert operation is None
        assert reader.unused() - set(otel_genai.IDENTITY_KEYS) == set()
    created = _mapped(None)
    assert [reader.span.name for reader, _ in created] == ["create_agent unknown_agent"] * 2
    assert [reader.span.status_code for reader, _ in created] == [1, 2]
    for reader, operation in created:
        assert operation is None and reader.unused() == set()
    assert [u for u in _document()["extra"]["unmapped_attributes"] if not u.startswith("http.")] == []


def test_ingest_marks_none_of_the_instrumentations_spans_an_llm_call() -> None:
    """No span of the scope is a model call (the client's `chat` spans are): ingest's `is_llm_call` leaves it out by a
    copy of its name (ingest imports nothing of trajectory/), which must stay this mapper's. The list then counts the
    five calls (tests/trajectory_service/test_capture_corpus.py, and test_session_list_summary.py for spans stored
    before migration 219)."""
    assert attribution.OPENLIT_AG2_SCOPE == openlit_ag2.SCOPE
    (is_llm_call,) = [sql for column, sql in attribution.operation_columns("name") if column == "is_llm_call"]
    assert is_llm_call.endswith(attribution.NOT_OPENLIT_AG2)
