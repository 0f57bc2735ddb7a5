"""OpenLIT's Agno instrumentation (the `agno_openlit` capture's trace exports).

An Agno Team, `trip-team`, whose leader has a tool of its own and delegates to one member, `travel-agent` (two
tools, called in one answer, one raising once and called again); two turns of one Agno session, the second async and
streamed. The model calls are OpenLIT's OpenAI instrumentation's spans. What each span of the Agno
instrumentation's is: `trajectory/mappers/openlit_agno.py`.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from span_fixtures import capture_spans

from evalkit.trajectory.from_spans import trajectory_from_spans
from evalkit.trajectory.mappers import openlit, openlit_agno
from evalkit.trajectory.mappers.reader import SpanReader
from evalkit.trajectory.operations import AgentRun, Operation, ToolExecution
from evalkit.trajectory.span import Span
from tests.captures import corpus

CAPTURE = "agno_openlit"
SESSION = "agno-openlit-trip-1"
# What the member answered (Agno's RunOutput content: its two answers' texts joined), which the leader was shown
# as its delegation's result.
MEMBER_ANSWER = "The rate service timed out; trying again.Tokyo: light rain, 18°C. 200 EUR = 32,480 JPY."


def _document(spans: list[Span] | None = None) -> dict[str, Any]:
    result = trajectory_from_spans(spans if spans is not None else capture_spans(CAPTURE), session_id=SESSION)
    assert result.valid, [str(issue) for issue in result.issues]
    return result.document()


def _mapped(prefix: str) -> list[tuple[SpanReader, Operation | None]]:
    """The Agno instrumentation's spans whose name starts with `prefix`, each read by OpenLIT's mapper."""
    found = []
    for span in capture_spans(CAPTURE):
        if span.scope_name == openlit_agno.SCOPE and span.name.startswith(prefix):
            reader = SpanReader(span)
            found.append((reader, openlit.map_span(reader, ())))
    assert found, prefix
    return found


def _member(document: dict[str, Any]) -> dict[str, Any]:
    (member,) = document["subagent_trajectories"]
    return member


def test_the_team_is_the_sessions_agent_and_its_member_a_subagent() -> None:
    """Each turn's `invoke_workflow trip-team` is the leader's run: the session's agent is the team, whose calls
    are its steps; the member's calls are its own trajectory's."""
    runs = _mapped("invoke_workflow ")
    assert len(runs) == 2  # one per turn
    for reader, run in runs:
        assert isinstance(run, AgentRun) and run.name == "trip-team"
        assert reader.unused() == set()
    document = _document()
    assert document["agent"]["name"] == "trip-team"
    assert [s["source"] for s in document["steps"]] == ["system", "user", "agent", "agent", "user", "agent", "agent"]
    member = _member(document)
    assert member["agent"]["name"] == "travel-agent"
    assert len(corpus.llm_steps({"steps": member["steps"]})) == 3


def test_a_delegation_is_answered_by_the_members_run() -> None:
    """The delegation's span ends as `delegate_task_to_member` returns its generator (its result the generator's
    repr); the member runs after it, beside it: its run is the call's subagent, its answer the call's result."""
    ((reader, delegation),) = _mapped("execute_tool delegate_task_to_member")
    assert reader.span.attributes["gen_ai.tool.call.result"].startswith("<generator object ")
    assert isinstance(delegation, ToolExecution)
    assert delegation.result is None and delegation.delegates_to == "travel-agent"
    document = _document()
    delegating = document["steps"][2]
    (call,) = delegating["tool_calls"]
    (result,) = delegating["observation"]["results"]
    assert result["source_call_id"] == call["tool_call_id"] == "call_0_0"
    assert result["content"] == MEMBER_ANSWER
    assert result["subagent_trajectory_ref"][0]["trajectory_id"] == _member(document)["trajectory_id"]
    assert "<generator object" not in str(document)


def test_a_member_named_otherwise_than_its_id_is_still_the_delegations() -> None:
    """Agno delegates by member id, its name made URL-safe (`Travel Agent` -> `travel-agent`): a run named so is
    the first run after the delegation."""
    spans = [replace(s, attributes={**s.attributes, "gen_ai.agent.name": "Travel Agent"})
             if s.name == "invoke_agent travel-agent" else s for s in capture_spans(CAPTURE)]
    document = _document(spans)
    (result,) = document["steps"][2]["observation"]["results"]
    assert result["source_call_id"] == "call_0_0"
    assert result["subagent_trajectory_ref"][0]["trajectory_id"] == _member(document)["trajectory_id"]
    assert _member(document)["agent"]["name"] == "Travel Agent"


def test_a_delegated_run_carries_on_no_conversation() -> None:
    """Unlike a handoff's, a delegation's run starts a conversation of its own: given the user's own question as its
    task (Agno's `determine_input_for_members=False`), that question is still its user step."""
    question = "I'm in Tokyo with 200 EUR. What's the weather, and how much is that in yen?"
    task = "The weather in Tokyo, and 200 EUR in JPY."

    def asked_verbatim(span: Span) -> Span:
        value = span.attributes.get("gen_ai.input.messages")
        if span.scope_name != "openlit.instrumentation.openai" or not isinstance(value, str) or task not in value:
            return span
        return replace(span, attributes={**span.attributes, "gen_ai.input.messages": value.replace(task, question)})

    member = _member(_document([asked_verbatim(s) for s in capture_spans(CAPTURE)]))
    assert [s["message"] for s in member["steps"] if s["source"] == "user"] == [question]


def test_the_members_instructions_are_no_system_step_of_their_own() -> None:
    """`gen_ai.system_instructions` on the member's run is its `instructions`, a part of the system prompt Agno
    builds and its calls record whole: one system step, that prompt."""
    member = _member(_document())
    assert [s["message"] for s in member["steps"] if s["source"] == "system"] == [
        "<your_role>\nFinds the weather and converts currencies.\n</your_role>\n\nYou are terse."]


def test_the_failed_tool_shows_what_the_model_was_shown_and_the_rest_is_read() -> None:
    member = _member(_document())
    first = member["steps"][2]["observation"]["results"]
    assert [r["content"] for r in first] == ["light rain, 18°C", "exchange-rate service timed out"]
    assert first[1]["extra"]["is_error"] is True and "is_error" not in first[0]["extra"]
    for reader, operation in _mapped("create_agent "):
        assert operation is None and reader.unused() == set()
    # Left unmapped: only the httpx client spans' attributes.
    assert _document()["extra"]["unmapped_attributes"] == ["http.method", "http.status_code", "http.url"]
