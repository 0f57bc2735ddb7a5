"""Google ADK's "For context:" messages, read from the real captures that have them.

ADK hands the agent that runs next (a `transfer_to_agent` target, a workflow's next agent) each event of another agent
as a user message opening "For context:" (`_present_other_agent_message`): what that agent said, a tool it called and
what the tool returned. No person said it. Each is a system step of copied context, marked with the agent it came from
and each block (`extra.handed_over_context`), its text the one the model was sent; the person's questions stay the
user steps (trajectory/mappers/google_adk_handed_over_context.py).
"""

from __future__ import annotations

import ast
import json
from typing import Any

import pytest
from span_fixtures import capture_document, capture_spans

from evalkit.trajectory.build import map_one_span
from evalkit.trajectory.mappers.google_adk_handed_over_context import handed_over
from evalkit.trajectory.operations import LlmCall, Message, Part
from tests.captures import corpus, questions

CAPTURES = ("google-adk_native", "google-adk_native_agent-tool", "google-adk_native_workflow-agents",
            "google-adk_openinference", "google-adk_openinference_multi-agent", "google-adk_openlit")
_PREFIX = "For context:"


def _document(capture: str) -> dict[str, Any]:
    return capture_document(capture, corpus.load(capture).meta["session_id"])


def _sent(capture: str) -> list[str]:
    """Each "For context:" message the fake LLM was sent, once, its text parts joined as a step joins them."""
    found: dict[str, None] = {}
    for entry in corpus.load(capture).llm_log:
        request = entry["request"]
        for message in request.get("contents") or request.get("messages") or ():
            if message.get("role") != "user":
                continue
            content = message.get("parts") if "parts" in message else message.get("content")
            texts = [content] if isinstance(content, str) else [p.get("text") or "" for p in content or ()
                                                                if isinstance(p, dict) and p.get("text")]
            text = "\n".join(texts)
            if text.startswith(_PREFIX):
                found[text] = None
    return list(found)


def _handed_over(document: dict[str, Any]) -> list[tuple[dict[str, Any], dict[str, Any]]]:
    """Each step holding a "For context:" text, with its trajectory."""
    return [(trajectory, step) for trajectory in corpus.all_trajectories(document) for step in trajectory["steps"]
            if corpus.message_text(step.get("message")).startswith(_PREFIX)]


@pytest.mark.parametrize("capture", CAPTURES)
def test_no_for_context_message_is_a_persons_step(capture: str) -> None:
    """Every "For context:" message the model was sent is a step, none of them a user step: each a system step of
    copied context, by ADK, its text as sent."""
    document = _document(capture)
    sent = _sent(capture)
    assert sent, "the capture's requests hold ADK's rewrites"
    steps = _handed_over(document)
    assert [step["source"] for _, step in steps if step["source"] == "user"] == []
    assert {corpus.message_text(step["message"]) for _, step in steps} == set(sent)  # nothing sent is lost
    for _, step in steps:
        assert step["source"] == "system" and step["is_copied_context"] is True
        assert step["extra"]["handed_over_context"]["by"] == "Google ADK"


@pytest.mark.parametrize("capture", CAPTURES)
def test_each_is_marked_with_the_agent_it_came_from_and_what_it_did(capture: str) -> None:
    """The mark names the agent whose events they were (another trajectory's agent, not the one shown them), and each
    block is what that agent did: a text it said is its step's answer, a tool it called one of its calls with those
    arguments, a tool that returned one it called."""
    document = _document(capture)
    by_agent: dict[str, list[dict[str, Any]]] = {}
    for trajectory in corpus.all_trajectories(document):
        by_agent.setdefault(trajectory["agent"]["name"], []).append(trajectory)
    for trajectory, step in _handed_over(document):
        mark = step["extra"]["handed_over_context"]
        agent = mark["from_agent"]
        assert agent != trajectory["agent"]["name"] and agent in by_agent, (capture, agent)
        own = [s for t in by_agent[agent] for s in t["steps"] if s["source"] == "agent"]
        said = {corpus.message_text(s.get("message")).strip() for s in own}
        calls = [(c["function_name"], c["arguments"]) for s in own for c in s.get("tool_calls") or ()]
        assert mark["items"], step["message"]
        for item in mark["items"]:
            assert f"[{agent}] " in corpus.message_text(step["message"])
            if item["kind"] == "said":
                assert item["content"].strip() in said, (capture, item)
            elif item["kind"] == "called tool":
                assert (item["tool"], ast.literal_eval(item["content"])) in calls, (capture, item)
            else:
                assert item["kind"] == "tool returned" and item["tool"] in {name for name, _ in calls}, item


@pytest.mark.parametrize("capture", CAPTURES)
def test_the_persons_questions_remain_user_steps(capture: str) -> None:
    """What the person asked is still a user step where it was asked (each asking, in order), and every user step is
    a question the person asked."""
    document = _document(capture)
    log = corpus.load(capture).llm_log
    assert questions.missing_questions(document, log) == []
    asked = {"".join(a.text.split()) for a in questions.asked_anew(log)}
    shown = [corpus.message_text(s["message"]) for t in corpus.all_trajectories(document) for s in t["steps"]
             if s["source"] == "user"]
    assert shown and all("".join(text.split()) in asked for text in shown), shown


def test_a_sub_agent_opens_on_the_handed_over_context_then_acts() -> None:
    """The multi-agent capture's booking agent, reached by the coordinator's transfer: its instructions, then the five
    events of the coordinator ADK handed it (two called-tool blocks and two results of its parallel weather calls in
    two messages, what it said, its transfer call and its result), each a system step from `trip_coordinator`, then
    its own calls."""
    document = _document("google-adk_openinference_multi-agent")
    (booking,) = [t for t in corpus.all_trajectories(document) if t["agent"]["name"] == "booking_agent"]
    steps = booking["steps"]
    assert [s["source"] for s in steps] == ["system"] * 6 + ["agent"] * 3
    marks = [s["extra"]["handed_over_context"] for s in steps[1:6]]
    assert {m["from_agent"] for m in marks} == {"trip_coordinator"}
    assert [[(i["kind"], i.get("tool")) for i in m["items"]] for m in marks] == [
        [("called tool", "get_weather"), ("called tool", "get_weather"), ("called tool", "events_guide")],
        [("tool returned", "get_weather"), ("tool returned", "get_weather"), ("tool returned", "events_guide")],
        [("said", None)],
        [("said", None), ("called tool", "transfer_to_agent")],
        [("tool returned", "transfer_to_agent")]]
    assert marks[3]["items"][0]["content"] == "Handing you to our booking desk."
    assert ast.literal_eval(marks[3]["items"][1]["content"]) == {"agent_name": "booking_agent"}
    assert json.dumps(marks[4]["items"][0]["content"]) == json.dumps("{'result': None}")


def _first_handed_over_call() -> LlmCall:
    """The first call of `google-adk_openinference` sent ADK's rewrites, as its mapper reads it."""
    for span in capture_spans("google-adk_openinference"):
        call = map_one_span(span)
        if isinstance(call, LlmCall) and any(m.extra for m in call.input_messages):
            return call
    raise AssertionError("no call sent ADK's rewrites")


def test_adks_earlier_form_is_read_and_a_question_in_other_words_is_left() -> None:
    """Before ADK 2.8 the rewrite was a "For context:" part, then "[<agent>] said: <text>" / "[<agent>] called tool
    `<name>` with parameters: <args>" / "[<agent>] `<name>` tool returned result: <response>" parts (contents.py,
    `_present_other_agent_message`): read the same. A user message opening "For context:" in any other words, or
    with a part ADK would not write after it, is a person's message: left unmarked."""
    call = _first_handed_over_call()
    question = Message("user", [Part("text", text="For context: I fly on Friday. Book me a hotel.")])
    earlier = Message("user", [Part("text", text="For context:"),
                               Part("text", text="[travel_desk] said: Paris is sunny."),
                               Part("text", text="[travel_desk] called tool `get_weather` with parameters: "
                                                 "{'city': 'Oslo'}"),
                               Part("text", text="[travel_desk] `get_weather` tool returned result: "
                                                 "{'result': 'rainy'}")])
    mixed = Message("user", [Part("text", text="For context:"), Part("text", text="[travel_desk] said: Hi."),
                             Part("text", text="and book it for two")])
    call.input_messages = [question, earlier, mixed]
    handed_over(call)
    assert call.input_messages[0] is question and call.input_messages[2] is mixed  # not ADK's: left as they are
    assert call.input_messages[1].extra == {"handed_over_context": {
        "by": "Google ADK", "from_agent": "travel_desk", "items": [
            {"kind": "said", "content": "Paris is sunny."},
            {"kind": "called tool", "tool": "get_weather", "content": "{'city': 'Oslo'}"},
            {"kind": "tool returned", "tool": "get_weather", "content": "{'result': 'rainy'}"}]}}
    assert earlier.extra is None  # a new message: the memo's are shared with other calls
