"""openai-agents with an input guardrail running an agent of its own, traced by OpenLLMetry's openai-agents
instrumentation (the `openai-agents_openllmetry_guardrails` capture).

`openai-agents_openinference_guardrails`' scenario on gpt-4o: a travel desk guarded by `travel_topic_guardrail`, which
runs its own "Topic check" agent on each turn's input (`run_in_parallel=False`), over three turns of one session: the
check passes, trips (the SDK raises `InputGuardrailTripwireTriggered` before the desk's model is called), passes again
(streamed). OpenLLMetry writes no guardrail, task or turn span and starts every agent span under the trace's workflow
span, so the check's agent is beside the desk's, within its time (`trajectory/mappers/openllmetry_openai_agents.py`);
the shared rules read it as under the other instrumentations (`openai_agents_guardrails.complete_guarded_runs`): the
check a subagent the guardrail started, nested in the desk's run (`AgentRun.inside_run`), the tripped turn's question
once and its stop flagged, each turn's question before its check. The guardrail's name and a blocking guardrail's
tripwire are in no span.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from span_fixtures import capture_document, capture_spans

from evalkit.trajectory.mappers import openllmetry, openllmetry_openai_agents
from evalkit.trajectory.mappers.reader import SpanReader
from evalkit.trajectory.operations import AgentRun
from evalkit.trajectory.span import STATUS_ERROR, Span
from evalkit.trajectory.summary import summarise
from tests.captures import corpus

CAPTURE = "openai-agents_openllmetry_guardrails"
SESSION = "oa-ollm-guardrails-1"
CHECK = "Topic check"
DESK = "Travel desk"
DELEGATION = f"Delegated to subagent {CHECK} by input guardrail"  # OpenLLMetry names no guardrail
STOPPED = "Stopped after its input guardrail's check, before its model was called (no span records the tripwire)"


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
    never the desk's answer (every check was a step of the desk's, its instructions the desk's first step: its span
    is beside the desk's, not under it)."""
    desk = [step for step in _steps() if step["source"] == "agent" and step.get("llm_call_count") == 1]
    assert [step["extra"]["response_id"] for step in desk] == [entry["response"]["id"] for entry in _desk_calls()]
    assert [step["message"] for step in desk if step["message"]] == [
        entry["response"]["text"] for entry in _desk_calls() if entry["response"].get("text")]
    subagents = _document()["subagent_trajectories"]
    assert [sub["agent"]["name"] for sub in subagents] == [CHECK] * 3
    for sub, check in zip(subagents, _checks(), strict=True):
        (step,) = [step for step in sub["steps"] if step["source"] == "agent" and not step.get("is_copied_context")]
        assert (step["message"], step["extra"]["response_id"]) == (check["response"]["text"], check["response"]["id"])
        assert sub["steps"][0]["message"] == check["request"]["instructions"]


def test_each_check_is_a_delegation_step_of_its_own() -> None:
    """No call of the desk's started the check: its delegation is a step of its own, saying an input guardrail
    started it (which one, no span says), never a result on the desk's latest step."""
    delegations = [step for step in _steps() if step.get("observation") and step["source"] == "system"]
    assert [step["message"] for step in delegations] == [DELEGATION] * 3
    verdicts = [step["observation"]["results"][0]["content"] for step in delegations]
    assert verdicts == [check["response"]["text"] for check in _checks()]
    refs = [step["observation"]["results"][0]["subagent_trajectory_ref"][0]["trajectory_id"] for step in delegations]
    assert refs == [sub["trajectory_id"] for sub in _document()["subagent_trajectories"]]
    assert not [step for step in _steps() if step["source"] == "agent"
                and any(r.get("subagent_trajectory_ref") for r in (step.get("observation") or {}).get("results", ()))]


def test_the_tripped_turn_shows_its_question_once_stopped_after_the_check() -> None:
    """Turn 2: its question (once: it was shown again before turn 3's, which re-sends it from the session, and before
    that its check's verdict was the desk's answer), the check saying no, then the run's stop flagged (no span records
    the tripwire: the desk's run ended before its model was called); no answer."""
    steps = _steps()
    tripped = _questions()[1]
    asked = [index for index, step in enumerate(steps) if step["source"] == "user" and step["message"] == tripped]
    assert len(asked) == 1
    question, check, stop, following = steps[asked[0]:asked[0] + 4]
    assert check["message"] == DELEGATION
    assert '"on_topic": false' in check["observation"]["results"][0]["content"]
    assert (stop["source"], stop["message"], stop["llm_call_count"]) == ("agent", "", 0)
    assert stop["extra"]["error"] == {"status": "error", "message": STOPPED}
    assert question["timestamp"] < check["timestamp"] <= stop["timestamp"]
    assert (following["source"], following["message"]) == ("user", _questions()[2])
    # The failed book_hotel call and the stopped turn.
    assert summarise(_document()).errors == 2


def test_each_turns_question_comes_before_its_check_after_the_desks_instructions() -> None:
    """The guardrail checks the turn's input before the desk's model is called: the question comes before the check
    (turn 1's came twice, before and after it); the desk's instructions first, the check's in its subagent."""
    shown = [(step["source"], step["message"]) for step in _steps() if step["source"] in ("system", "user")]
    first, tripped, last = _questions()
    assert shown == [("system", _desk_calls()[0]["request"]["instructions"]), ("user", first), ("system", DELEGATION),
                     ("user", tripped), ("system", DELEGATION), ("user", last), ("system", DELEGATION)]


def _spans() -> list[Span]:
    return sorted(capture_spans(CAPTURE), key=lambda span: span.start_time_unix_nano)


def _runs(spans: list[Span]) -> dict[str, list[AgentRun]]:
    """The agent runs of `spans` as OpenLLMetry's mapper reads them, then completed by its guardrail rules, by agent
    name in the order they ran."""
    runs = [run for span in spans if openllmetry.detect(span)
            and isinstance(run := openllmetry.map_span(SpanReader(span), ()), AgentRun)]
    openllmetry_openai_agents.complete_runs(spans, runs)
    named: dict[str, list[AgentRun]] = {}
    for run in runs:
        named.setdefault(run.name or "", []).append(run)
    return named


def _key(run: AgentRun) -> tuple[str, str]:
    return run.span.trace_id, run.span.span_id


def test_the_guardrail_completes_the_runs_it_guards_and_starts() -> None:
    """Each desk run: an agent of the app's, asked what its check was asked last (turn 3's check is sent the stopped
    question too: the session kept it), the one never calling its model stopped; each check started by the input
    guardrail and nested in the desk's run of its trace. The output guardrail (`no_card_numbers`, a function) writes no
    span: nothing read of it."""
    runs = _runs(_spans())
    assert set(runs) == {DESK, CHECK}
    desk, checks = runs[DESK], runs[CHECK]
    first, tripped, last = _questions()
    assert [run.asked for run in desk] == [[first], [tripped], [tripped, last]]
    assert [run.app_agent for run in desk] == [True] * 3
    assert [run.error.status_message if run.error else None for run in desk] == [None, STOPPED, None]
    assert [run.started_by for run in checks] == ["input guardrail"] * 3
    assert [run.inside_run for run in checks] == [_key(run) for run in desk]


def _with(spans: list[Span], changed: Span) -> list[Span]:
    return [changed if span.span_id == changed.span_id else span for span in spans]


def test_a_tripwire_on_the_agents_span_is_the_runs_failure_naming_the_guardrail() -> None:
    """Where the SDK attaches the tripwire to the agent's span (a streamed run's or a parallel guardrail's), OpenLLMetry
    writes the `SpanError` as its status, naming the guardrail: the run's failure, and the check's starter named."""
    spans = _spans()
    tripped_desk = [span for span in spans if span.name == f"{DESK}.agent"][1]
    status = "{'message': 'Guardrail tripwire triggered', 'data': {'guardrail': 'travel_topic_guardrail'}}"
    runs = _runs(_with(spans, replace(tripped_desk, status_code=STATUS_ERROR, status_message=status)))
    assert [run.error.status_message if run.error else None for run in runs[DESK]] == [None, status, None]
    assert [run.started_by for run in runs[CHECK]] == [
        "input guardrail", "input guardrail travel_topic_guardrail", "input guardrail"]


def test_an_agent_beside_the_desk_is_a_guardrails_only_outside_its_tools() -> None:
    """Turn 1's check moved into the desk's `book_hotel` span is an agent that tool ran (an agent as a tool), no
    guardrail's; moved after the desk's last call, an output guardrail's, asking the desk nothing."""
    spans = _spans()
    first_check = next(span for span in spans if span.name == f"{CHECK}.agent")
    tool = next(span for span in spans if span.name == "book_hotel.tool" and span.trace_id == first_check.trace_id)
    last_call = max((span for span in spans if span.name == "openai.response" and span.trace_id == tool.trace_id
                     and span.parent_span_id == tool.parent_span_id), key=lambda span: span.end_time_unix_nano)
    in_tool = _runs(_with(spans, replace(first_check, start_time_unix_nano=tool.start_time_unix_nano + 1,
                                         end_time_unix_nano=tool.end_time_unix_nano - 1)))
    assert (in_tool[CHECK][0].started_by, in_tool[CHECK][0].inside_run) == (None, None)
    after = _runs(_with(spans, replace(first_check, start_time_unix_nano=last_call.end_time_unix_nano + 1,
                                       end_time_unix_nano=last_call.end_time_unix_nano + 2)))
    assert after[CHECK][0].started_by == "output guardrail"
    assert after[DESK][0].asked == []
