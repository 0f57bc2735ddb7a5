"""openai-agents with an input guardrail running an agent of its own, traced by OpenTelemetry's openai-agents-v2
instrumentation (the `openai-agents_otel-genai_guardrails` capture).

`openai-agents_openinference_guardrails`' scenario: a travel desk (o4-mini) guarded by `travel_topic_guardrail`, which
runs its own "Topic check" agent on each turn's input (`run_in_parallel=False`), over three turns of one session: the
check passes, trips (the SDK raises `InputGuardrailTripwireTriggered` before the desk's model is called), passes again
(streamed). The instrumentation writes the SDK's span tree as OpenInference does (`guardrail_check` spans holding the
check's `invoke_agent`), so the same rules read it (`openai_agents_guardrails.complete_guarded_runs`, its shape
`otel_openai_agents.GUARDRAIL_SPANS`): the check a subagent the guardrail started, the tripped turn's question once
and its stop flagged, each turn's question before its check.
"""

from __future__ import annotations

from typing import Any

from span_fixtures import capture_document, capture_spans

from evalkit.trajectory.mappers import otel_openai_agents
from evalkit.trajectory.mappers.reader import SpanReader
from evalkit.trajectory.operations import AgentRun
from evalkit.trajectory.summary import summarise
from tests.captures import corpus

CAPTURE = "openai-agents_otel-genai_guardrails"
SESSION = "oa-otel-genai-guardrails-1"
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
    never the desk's answer (the tripped turn's check was the desk's answer: the desk, with no call of its own that
    turn, was taken for a synthetic root)."""
    desk = [step for step in _steps() if step["source"] == "agent" and step.get("llm_call_count") == 1]
    assert [step["extra"]["response_id"] for step in desk] == [entry["response"]["id"] for entry in _desk_calls()]
    assert [step["message"] for step in desk if step["message"]] == [
        entry["response"]["text"] for entry in _desk_calls() if entry["response"].get("text")]
    subagents = _document()["subagent_trajectories"]
    assert [sub["agent"]["name"] for sub in subagents] == [CHECK] * 3
    for sub, check in zip(subagents, _checks(), strict=True):
        (step,) = [step for step in sub["steps"] if step["source"] == "agent" and not step.get("is_copied_context")]
        assert (step["message"], step["extra"]["response_id"]) == (check["response"]["text"], check["response"]["id"])


def test_each_check_is_a_delegation_step_of_its_own_naming_the_guardrail() -> None:
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


def test_the_tripped_turn_shows_its_question_once_stopped_by_the_guardrail() -> None:
    """Turn 2: its question (once: it was shown again before turn 3's, which re-sends it from the session), the check
    saying no, then the run's failure flagged (the tripwire the SDK attached to its turn span); no answer."""
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


def test_each_turns_question_comes_before_its_check() -> None:
    """The guardrail checks the turn's input before the desk's model is called: the question comes before the check
    (turn 1's check came first, its question after it). The desk's instructions: no span records them."""
    shown = [(step["source"], step["message"]) for step in _steps() if step["source"] in ("system", "user")]
    first, tripped, last = _questions()
    assert shown == [("user", first), ("system", DELEGATION), ("user", tripped), ("system", DELEGATION),
                     ("user", last), ("system", DELEGATION)]


def test_the_guardrail_spans_are_read_not_left_unmapped() -> None:
    assert _document()["extra"]["unmapped_attributes"] == []


def _runs() -> dict[str, list[AgentRun]]:
    """The capture's agent runs as this instrumentation's mapper reads them, then completed by its guardrail rules, by
    agent name in the order they ran."""
    spans = sorted(capture_spans(CAPTURE), key=lambda span: span.start_time_unix_nano)
    runs = [run for span in spans if otel_openai_agents.detect(span)
            and isinstance(run := otel_openai_agents.map_span(SpanReader(span), ()), AgentRun)]
    otel_openai_agents.complete_runs(spans, runs)
    named: dict[str, list[AgentRun]] = {}
    for run in runs:
        named.setdefault(run.name or "", []).append(run)
    return named


def test_the_guardrail_completes_the_runs_it_guards_and_starts() -> None:
    """Each desk run: an agent of the app's, asked what its check was asked last (turn 3's check is sent the stopped
    question too: the session kept it), the tripped one failed; each check started by the input guardrail. The output
    guardrail (`no_card_numbers`, a function, its span after the desk's turns) runs no agent: nothing read of it."""
    runs = _runs()
    assert set(runs) == {"Travel desk", CHECK}  # the workflow's root spans are no runs
    desk, checks = runs["Travel desk"], runs[CHECK]
    first, tripped, last = _questions()
    assert [run.asked for run in desk] == [[first], [tripped], [tripped, last]]
    assert [run.app_agent for run in desk] == [True] * 3
    assert [run.error.status_message if run.error else None for run in desk] == [None, TRIPWIRE, None]
    assert [run.started_by for run in checks] == [f"input guardrail {GUARDRAIL}"] * 3
    assert [run.asked for run in checks] == [[], [], []]
