"""OpenLIT's openai-agents instrumentation with its OpenAI client instrumentation (the `openai-agents_openlit`
capture): a travel desk handing off to a booking agent in each of two turns of one session, two parallel tool
calls, one raising once and called again; the second turn streamed.

Before `trajectory/mappers/openlit_openai_agents.py`, its spans were read as plain GenAI ones: the handoff span
(`invoke_agent Booking agent` with `gen_ai.agent.source`) an empty booking agent run, a subagent of the transfer
call saying no LLM activity was recorded, while the booking agent's real run and its calls were the top
trajectory's, named "Booking agent"; and of the two parallel calls the call span records only the last, so
`book_hotel`'s execution was a step no LLM call asked for. The streamed turn's calls are in no span (the corpus'
KNOWN_GAPS): what its spans show is checked here too.

Re-recorded with the two ids the Responses API gives a function call (the item's `fc_…`, the `call_id` `call_…`):
a call span's output message names each call by its item id, which no result names, and restates its `call_id`
as `gen_ai.tool.call.id`; every call was named by its item id until `openlit._name_calls_by_call_id`.
"""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

from evalkit.trajectory.from_spans import trajectory_from_spans
from evalkit.trajectory.mappers import openlit
from evalkit.trajectory.mappers.reader import SpanReader
from evalkit.trajectory.operations import AgentRun, LlmCall, ToolExecution
from evalkit.trajectory.span import Span
from tests.captures import corpus
from tests.trajectory.span_fixtures import capture_logs, capture_spans

CAPTURE = "openai-agents_openlit"
SESSION = "oa-openlit-travel-1"
Json = dict[str, Any]


def _turns() -> list[list[Span]]:
    """Each `Runner.run`'s trace (its `invoke_workflow` root), in order; not the `create_agent` traces."""
    spans = capture_spans(CAPTURE)
    roots = sorted((s for s in spans if s.name == "invoke_workflow Agent workflow"),
                   key=lambda s: s.start_time_unix_nano)
    return [[s for s in spans if s.trace_id == root.trace_id] for root in roots]


def _document(spans: list[Span]) -> Json:
    traces = {s.trace_id for s in spans}
    logs = [log for log in capture_logs(CAPTURE) if log.trace_id in traces]
    result = trajectory_from_spans(spans, logs, session_id=SESSION)
    assert result.valid, [str(issue) for issue in result.issues]
    return result.document()


def _replies() -> dict[str, Json]:
    """The model's answers by response id (`openai-resp-<seq>`, the call spans' `gen_ai.response.id`)."""
    return {entry["response"]["id"]: entry["response"] for entry in corpus.load(CAPTURE).llm_log}


def _call_ids(seq: int) -> list[str]:
    """The call_ids (`call_…`) of the function calls the model answered call `seq` with; each call's item has an id of
    its own too (`fc_…`), as the Responses API gives them."""
    return [call["id"] for call in corpus.load(CAPTURE).llm_log[seq]["response"]["tool_calls"]]


def _mapped(name: str) -> list[object]:
    return [openlit.map_span(SpanReader(s), ()) for s in capture_spans(CAPTURE) if s.name == name]


def test_each_span_of_the_processor_is_what_it_stands_for() -> None:
    """Workflow, task and turn spans group (no agent); the handoff span is a handoff, not an agent run."""
    assert _mapped("invoke_workflow Agent workflow") == [None, None]
    assert _mapped("create_agent Travel desk") == [None]
    unnamed = _mapped("invoke_agent")  # the SDK's task (one a run) and turn (one a model call) spans
    assert len(unnamed) == 2 + 7 and all(op is None for op in unnamed)
    booking = _mapped("invoke_agent Booking agent")
    handoffs = [op for op in booking if isinstance(op, ToolExecution)]
    runs = [op for op in booking if isinstance(op, AgentRun)]
    assert [h.handoff_to for h in handoffs] == ["Booking agent", "Booking agent"]
    assert [r.name for r in runs] == ["Booking agent", "Booking agent"]
    tools = [op for op in _mapped("execute_tool book_hotel") if isinstance(op, ToolExecution)]
    assert [t.asked_by_call_beside for t in tools] == [True, True] and tools[0].call_id is None
    assert all(op.emitter == openlit.NAME for op in [*handoffs, *runs, *tools])
    # Its bookkeeping and the group id (the session, the builder's) read: only the httpx spans' keys are left.
    document = _document([s for turn in _turns() for s in turn])
    assert document["extra"]["unmapped_attributes"] == ["http.method", "http.status_code", "http.url"]
    assert document["session_id"] == SESSION


def test_the_handoff_starts_the_booking_agent_as_a_subagent_of_the_travel_desk() -> None:
    document = _document(_turns()[0])
    assert document["agent"]["name"] == "Travel desk"
    (booking,) = document["subagent_trajectories"]
    assert booking["agent"]["name"] == "Booking agent"
    transfer = next(s for s in document["steps"] if s.get("tool_calls"))
    (result,) = transfer["observation"]["results"]
    assert result["source_call_id"] == _call_ids(0)[0] and result["extra"]["handoff_to"] == "Booking agent"
    assert [ref["trajectory_id"] for ref in result["subagent_trajectory_ref"]] == [booking["trajectory_id"]]
    # The booking agent's calls are its own, none the travel desk's; and no empty run saying nothing happened.
    assert [s["source"] for s in document["steps"]] == ["system", "user", "agent"]
    assert [s["source"] for s in booking["steps"]] == ["system", "agent", "agent", "agent"]


def test_a_parallel_call_the_call_span_dropped_is_restored_from_its_tool_span() -> None:
    """OpenLIT keeps the last function call of a non-streamed Responses answer: `book_hotel`, asked beside
    `get_weather`, is on its tool span alone, under the turn span holding the call."""
    (chat,) = [s for s in _turns()[0] if s.attributes.get("gen_ai.response.id") == "openai-resp-1"]
    call = openlit.map_span(SpanReader(chat), ())
    assert isinstance(call, LlmCall)
    assert [p.name for m in call.output_messages for p in m.tool_calls] == ["get_weather"]

    document = _document(_turns()[0])
    # Turn one is the conversation that happened: its four calls, each result on its call.
    log = corpus.load(CAPTURE).llm_log
    assert corpus.compare(document, corpus.GroundTruth.of(log[:4])) == []
    (booking,) = document["subagent_trajectories"]
    parallel = booking["steps"][1]
    assert [(c["function_name"], c["arguments"]) for c in parallel["tool_calls"]] == [
        ("book_hotel", {"city": "Oslo", "nights": 2}), ("get_weather", {"city": "Oslo"})]
    restored = parallel["tool_calls"][0]
    assert restored["extra"] == {"synthesized_id": True, "from": "tool span"}  # its id is in no span
    booking_id, weather_id = _call_ids(1)
    failed, weather = parallel["observation"]["results"]
    assert failed["source_call_id"] == restored["tool_call_id"] and failed["extra"]["is_error"] is True
    assert failed["content"] == corpus.GroundTruth.of(log).tool_results[booking_id]  # the failure text it was sent
    assert (weather["source_call_id"], weather["content"]) == (weather_id, "rainy, 9°C")
    assert not [s for t in corpus.all_trajectories(document) for s in t["steps"] if s.get("llm_call_count") == 0]


def test_the_streamed_turn_s_calls_are_in_no_span_and_its_tool_is_no_call_s() -> None:
    """The corpus' known gap: OpenLIT never ends a streamed call's span under openai-agents' streaming, so the
    turn's three calls are missing and their httpx children hang from parents that never arrived. Its tool
    span then answers no call: nothing beside it asked, and no call of another turn is taken for it."""
    turn = _turns()[1]
    ids = {s.span_id for s in turn}
    assert not [s for s in turn if s.scope_name == "openlit.instrumentation.openai"]
    posts = [s for s in turn if s.name == "POST"]
    assert len(posts) == 3 and not [s for s in posts if s.parent_span_id in ids]
    document = _document([s for t in _turns() for s in t])
    assert len(corpus.llm_steps(document)) == 4
    bergen = [s for t in corpus.all_trajectories(document) for s in t["steps"]
              if [c["arguments"] for c in s.get("tool_calls") or ()] == [{"city": "Bergen"}]]
    assert [(s["llm_call_count"], s["extra"]["dispatch"]) for s in bergen] == [
        (0, "tool execution without an LLM call requesting it")]



def test_a_responses_answer_s_calls_are_named_by_their_call_id_not_their_item_id() -> None:
    """Each call span names the function call it kept by its item's id (`fc_…`) in `gen_ai.output.messages`, and
    restates it under its `call_id` (`gen_ai.tool.call.id`), the id the model's output names: the step's call is
    named by the `call_id`, as the model named it; a restated list that is not the answer's calls renames nothing."""
    replies = _replies()
    chats = sorted((s for s in capture_spans(CAPTURE) if s.scope_name == "openlit.instrumentation.openai"
                    and s.attributes.get("gen_ai.tool.call.id")), key=lambda s: s.start_time_unix_nano)
    assert len(chats) == 3  # turn one's calls answered with function calls (turn two's are in no span)
    for chat in chats:
        (kept,) = json.loads(str(chat.attributes["gen_ai.output.messages"]))[0]["parts"]
        (model_call,) = [c for c in replies[str(chat.attributes["gen_ai.response.id"])]["tool_calls"]
                         if c["name"] == kept["name"]]
        # As recorded: the item id on the message, the call_id restated; two different ids.
        assert (kept["id"], chat.attributes["gen_ai.tool.call.id"]) == (model_call["item_id"], model_call["id"])
        assert model_call["item_id"] != model_call["id"]
        call = openlit.map_span(SpanReader(chat), ())
        assert isinstance(call, LlmCall)
        assert [(p.call_id, p.name) for m in call.output_messages for p in m.tool_calls] == [
            (model_call["id"], model_call["name"])]
        # Restated calls that are not the answer's (another tool's name) rename nothing: no wrong pairing.
        other = replace(chat, attributes={**chat.attributes, "gen_ai.tool.name": "another_tool"})
        unpaired = openlit.map_span(SpanReader(other), ())
        assert isinstance(unpaired, LlmCall)
        assert [p.call_id for m in unpaired.output_messages for p in m.tool_calls] == [model_call["item_id"]]

    # In the trajectory: every call the spans recorded, and its result, under the model's call_id; the one OpenLIT
    # dropped (restored from its tool span) under evalkit's id, its own being in no span.
    document = _document(_turns()[0])
    steps = corpus.llm_steps(document)
    (booking_id, weather_id), (retried_id,) = _call_ids(1), _call_ids(2)
    named = [[c["tool_call_id"] for c in s.get("tool_calls") or ()] for s in steps]
    assert named[0] == _call_ids(0) and named[2:] == [[retried_id], []]
    restored_id, kept_id = named[1]
    assert kept_id == weather_id and restored_id not in (booking_id, weather_id)
    assert not [s for s in capture_spans(CAPTURE) if booking_id in json.dumps(s.attributes, default=str)]
    assert [[r["source_call_id"] for r in (s.get("observation") or {}).get("results") or ()] for s in steps] == named
    assert "fc_" not in json.dumps(document)  # no item id anywhere: no call, no result, no text
    # So only the restored call is not named as the model named it (the corpus' CALL_IDS_NOT_RECORDED entry).
    log = corpus.load(CAPTURE).llm_log
    assert corpus.compare(document, corpus.GroundTruth.of(log[:4]), call_ids=True) == [
        f"call 1: tool call book_hotel named {restored_id!r}, the model named it {booking_id!r}"]
