"""openai-agents with an input guardrail running an agent of its own, traced by OpenInference (the
`openai-agents_openinference_guardrails` capture).

A travel desk (o4-mini) guarded by `travel_topic_guardrail`, which runs its own "Topic check" agent on each turn's input
(`run_in_parallel=False`), over three turns of one session: the check passes, trips (the SDK raises
`InputGuardrailTripwireTriggered` before the desk's model is called), passes again (streamed). The check's agent is a
subagent the guardrail started, not the desk's step nor its answer; the tripped turn shows its question, no answer and
the failure; each turn's question comes before its check (`trajectory/mappers/openai_agents_guardrails.py`).
"""

from __future__ import annotations

from typing import Any

from span_fixtures import capture_document, capture_spans, span_from_dict

from evalkit.trajectory.mappers import openai_agents_guardrails, openinference
from evalkit.trajectory.mappers.reader import SpanReader
from evalkit.trajectory.operations import AgentRun
from evalkit.trajectory.summary import summarise
from tests.captures import corpus

CAPTURE = "openai-agents_openinference_guardrails"
SESSION = "oa-oi-guardrails-1"
GUARDRAIL = "travel_topic_guardrail"
CHECK = "Topic check"
DELEGATION = f"Delegated to subagent {CHECK} by input guardrail {GUARDRAIL}"
TRIPWIRE = f"Guardrail tripwire triggered: {{'guardrail': '{GUARDRAIL}'}}"


def _log() -> list[dict[str, Any]]:
    return corpus.load(CAPTURE).llm_log


def _checks() -> list[dict[str, Any]]:
    """The log's calls of the guardrail's agent (its own instructions), in order."""
    return [entry for entry in _log() if entry["request"]["instructions"].startswith("Say whether")]


def _desk_calls() -> list[dict[str, Any]]:
    return [entry for entry in _log() if entry not in _checks()]


def _questions() -> list[str]:
    """What each turn asked: the last input item of each guardrail check (the turn's input, as the SDK gives it)."""
    return [entry["request"]["input"][-1]["content"] for entry in _checks()]


def _document() -> dict[str, Any]:
    return capture_document(CAPTURE, SESSION)


def _steps() -> list[dict[str, Any]]:
    return _document()["steps"]


def test_the_guardrails_agent_is_a_subagent_on_every_turn_never_the_desks_step() -> None:
    """The desk's steps are its own four calls; each of the three checks is a Topic check subagent's, its verdict
    never the desk's answer (the tripped turn's check was the desk's answer, its instructions the desk's system step:
    the desk, with no call of its own that turn, was taken for a synthetic root)."""
    desk = [step for step in _steps() if step["source"] == "agent" and step.get("llm_call_count") == 1]
    assert [step["extra"]["request"]["id"] for step in desk] == [entry["response"]["id"] for entry in _desk_calls()]
    assert [step["reasoning_content"] for step in desk] == [entry["response"]["reasoning"] for entry in _desk_calls()]
    assert {step["reasoning_effort"] for step in desk} == {"medium"}
    assert [step["message"] for step in _steps() if step["source"] == "system" and "Delegated" not in step["message"]
            ] == [_desk_calls()[0]["request"]["instructions"]]
    subagents = _document()["subagent_trajectories"]
    assert [sub["agent"]["name"] for sub in subagents] == [CHECK] * 3
    for sub, check in zip(subagents, _checks(), strict=True):
        (step,) = [step for step in sub["steps"] if step["source"] == "agent" and not step.get("is_copied_context")]
        assert (step["message"], step["reasoning_content"], step["reasoning_effort"]) == (
            check["response"]["text"], check["response"]["reasoning"], "low")


def test_each_check_is_a_delegation_step_of_its_own_holding_the_verdict() -> None:
    """No call of the desk's started the check: its delegation is a step of its own, naming the guardrail, never a
    result on the desk's latest step (turn 3's check was a result on turn 2's step)."""
    delegations = [step for step in _steps() if step.get("observation") and step["source"] == "system"]
    assert [step["message"] for step in delegations] == [DELEGATION] * 3
    verdicts = [step["observation"]["results"][0]["content"] for step in delegations]
    assert verdicts == [check["response"]["text"] for check in _checks()]
    refs = [step["observation"]["results"][0]["subagent_trajectory_ref"][0]["trajectory_id"] for step in delegations]
    assert refs == [sub["trajectory_id"] for sub in _document()["subagent_trajectories"]]
    assert not [step for step in _steps() if step["source"] == "agent"
                and any(r.get("subagent_trajectory_ref") for r in (step.get("observation") or {}).get("results", ()))]


def test_the_tripped_turn_shows_its_question_stopped_by_the_guardrail() -> None:
    """Turn 2: its question (asked once: turn 3's desk call re-sends it from the session), the check saying no, then
    the run's failure flagged (the tripwire the SDK attached to its turn span); no answer."""
    steps = _steps()
    tripped = _questions()[1]
    asked = [index for index, step in enumerate(steps) if step["source"] == "user" and step["message"] == tripped]
    assert len(asked) == 1
    question, check, stop, following = steps[asked[0]:asked[0] + 4]
    assert check["message"] == DELEGATION
    assert '"on_topic": false' in check["observation"]["results"][0]["content"]
    assert (stop["source"], stop["message"], stop["llm_call_count"]) == ("agent", "", 0)
    assert stop["extra"]["error"] == {"status": "error", "message": TRIPWIRE}
    assert question["timestamp"] < check["timestamp"] <= stop["timestamp"]
    assert (following["source"], following["message"]) == ("user", _questions()[2])
    # The failed book_hotel call and the stopped turn.
    assert summarise(_document()).errors == 2


def test_each_turns_question_and_the_desks_instructions_come_before_its_check() -> None:
    """The guardrail checks the turn's input before the desk's model is called: the question (and, first, the
    instructions the desk's first call shows) come before the check (the check came first, its turn's question after
    it)."""
    shown = [(step["source"], step["message"]) for step in _steps() if step["source"] in ("system", "user")]
    first, tripped, last = _questions()
    assert shown == [("system", _desk_calls()[0]["request"]["instructions"]), ("user", first), ("system", DELEGATION),
                     ("user", tripped), ("system", DELEGATION), ("user", last), ("system", DELEGATION)]


def _runs() -> dict[str, list[AgentRun]]:
    """The capture's agent runs as the OpenInference mapper reads them, then completed by the guardrail rules, by agent
    name in the order they ran."""
    spans = sorted(capture_spans(CAPTURE), key=lambda span: span.start_time_unix_nano)
    runs = [run for span in spans if isinstance(run := openinference.map_span(SpanReader(span), ()), AgentRun)]
    openai_agents_guardrails.complete_runs(spans, runs)
    named: dict[str, list[AgentRun]] = {}
    for run in runs:
        named.setdefault(run.name or "", []).append(run)
    return named


def test_the_guardrail_completes_the_runs_it_guards_and_starts() -> None:
    """Each desk run: an agent of the app's, asked what its check was asked last (turn 3's check is sent the stopped
    question too: the session kept it), the tripped one failed; each check started by the input guardrail. The output
    guardrail (`no_card_numbers`, a function) runs no agent: nothing read of it."""
    runs = _runs()
    desk, checks = runs["Travel desk"], runs[CHECK]
    first, tripped, last = _questions()
    assert [run.asked for run in desk] == [[first], [tripped], [tripped, last]]
    assert [run.app_agent for run in desk] == [True] * 3
    assert [run.error.status_message if run.error else None for run in desk] == [None, TRIPWIRE, None]
    assert [run.started_by for run in checks] == [f"input guardrail {GUARDRAIL}"] * 3
    assert [run.asked for run in checks] == [[], [], []]
    roots = runs[""]  # the workflow's root AGENT spans, one a trace: no agent's, nothing completed
    assert len(roots) == 3 and not any(run.app_agent or run.asked or run.started_by or run.error for run in roots)


def test_an_output_guardrails_agent_is_given_the_answer_not_the_question() -> None:
    """An output guardrail runs once the agent's turns ended, its agent given the answer: its agent is started by the
    output guardrail, and what it was asked is not the guarded run's question. (Spans shaped as the instrumentation
    writes them: the capture's output guardrail is a function.)"""
    scope = openai_agents_guardrails.SCOPE

    def span(span_id: str, parent: str, name: str, kind: str, start: int, end: int, **attributes: Any) -> Any:
        return span_from_dict({"span_id": span_id, "parent_span_id": parent, "name": name, "scope": scope,
                               "start_time_unix_nano": start, "end_time_unix_nano": end,
                               "attributes": {"openinference.span.kind": kind, **attributes}})

    spans = [
        span("a1", "", "Travel desk", "AGENT", 0, 100, **{"graph.node.id": "Travel desk", "agent.name": "Travel desk"}),
        span("t1", "a1", "turn", "CHAIN", 1, 50),
        span("g1", "a1", "tone_guardrail", "GUARDRAIL", 60, 90),
        span("a2", "g1", "Tone check", "AGENT", 61, 89, **{"graph.node.id": "Tone check", "agent.name": "Tone check"}),
        span("l1", "a2", "response", "LLM", 62, 88, **{"llm.input_messages.0.message.role": "user",
                                                       "llm.input_messages.0.message.content": "Booked."}),
    ]
    desk, check = AgentRun(span=spans[0], emitter="openinference", name="Travel desk"), AgentRun(
        span=spans[3], emitter="openinference", name="Tone check")
    openai_agents_guardrails.complete_runs(spans, [desk, check])
    assert check.started_by == "output guardrail tone_guardrail"
    assert desk.asked == [] and desk.app_agent and desk.error is None
