"""Agent frameworks' captures (openai-agents, smolagents, ADK, CrewAI, AutoGen, Semantic Kernel, DSPy): what happened.

`test_capture_corpus.py` checks every capture's steps, tool results and tokens against the fake
LLM's log; this checks what that comparison does not see: who the agents are (a synthetic trace
root is none), which call started a subagent (a handoff, a managed agent, a transfer), that a
failed tool call is flagged with what the model was shown, and that a framework's restatements
of its own messages (smolagents' `tool-call` / `tool-response`, DSPy ReAct's re-rendered loop) are not user steps.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from tests.captures import corpus
from tests.trajectory_service.conftest import Service, ServiceFactory

Json = dict[str, Any]


async def _trajectory(service: Service, name: str) -> Json:
    capture = corpus.load(name)
    agent, key = await service.new_agent(name.replace("_", "-")[:60])
    await asyncio.to_thread(corpus.replay, capture, service.running.otlp_http, key)
    session = capture.session_id
    if session is None:
        listed = await service.get(f"/api/agents/{agent}/sessions")
        assert len(listed.body["sessions"]) == 1, listed.body
        session = listed.body["sessions"][0]["session_id"]
    reply = await service.trajectory(agent, str(session), "?wait=10")
    assert reply.status == 200, reply.text
    assert reply.body["extra"]["status"] == "valid", reply.body["extra"]
    return reply.body


def _calls(document: Json) -> dict[str, tuple[Json, Json]]:
    """function name -> (its call, its result), the last call of each name."""
    found = {}
    for step in document["steps"]:
        results = {r.get("source_call_id"): r for r in (step.get("observation") or {}).get("results") or ()}
        for call in step.get("tool_calls") or ():
            found[call["function_name"]] = (call, results.get(call["tool_call_id"], {}))
    return found


def _no_system_delegation_steps(document: Json) -> None:
    for trajectory in corpus.all_trajectories(document):
        assert not [s for s in trajectory["steps"] if str(s.get("message", "")).startswith("Delegated to")]


def _subagent(document: Json, call_name: str, agent_name: str) -> Json:
    """The one subagent, referenced from the result of `call_name` at the top level."""
    subagents = document.get("subagent_trajectories") or []
    assert [s["agent"]["name"] for s in subagents] == [agent_name]
    _, result = _calls(document)[call_name]
    assert [ref["trajectory_id"] for ref in result.get("subagent_trajectory_ref") or ()] == [
        subagents[0]["trajectory_id"]]
    return subagents[0]


def openai_agents_turns_are_one_agent_and_the_handoff_starts_the_booking_agent(document: Json) -> None:
    # The workflow root is no agent: both turns are the triage agent's own steps, in one trajectory.
    assert document["agent"]["name"] == "Travel desk"
    _no_system_delegation_steps(document)
    assert [s["source"] for s in document["steps"]] == ["system", "user", "agent", "agent", "user", "agent", "agent"]
    assert not [s for s in document["steps"] if s.get("is_copied_context")]
    # The third get_weather span (no call id) answers the call for Bergen, not a re-sent one for Paris.
    weather = {call["arguments"]["city"]: result["content"]
               for step in document["steps"] for call in step.get("tool_calls") or ()
               for result in (step.get("observation") or {}).get("results") or ()
               if call["function_name"] == "get_weather" and result["source_call_id"] == call["tool_call_id"]}
    assert weather == {"Paris": "sunny, 21°C", "Oslo": "rainy, 9°C", "Bergen": "windy, 7°C"}
    # The handoff span meets the model's transfer call; the receiving agent carries on from there.
    booking = _subagent(document, "transfer_to_booking_agent", "Booking agent")
    _, handoff = _calls(document)["transfer_to_booking_agent"]
    assert handoff["content"] == '{"assistant": "Booking agent"}'
    assert [s["source"] for s in booking["steps"]] == ["system", "agent", "agent", "agent"]
    failed, retried = (s["observation"]["results"][0] for s in booking["steps"][1:3])
    assert failed["extra"]["is_error"] is True and failed["content"].startswith("An error occurred")
    assert "is_error" not in retried.get("extra", {})


def openai_agents_memory_turns_are_asked_once_and_a_run_ending_in_max_turns_says_so(document: Json) -> None:
    # SQLiteSession re-sends the stored conversation on every turn: each question is one user step.
    assert [s["message"] for s in document["steps"] if s["source"] == "user"] == [
        "Weather in Paris?", "And Oslo and Bergen?", "Check Oslo, then Bergen, again.", "Book me a hotel in Paris."]
    for trajectory in corpus.all_trajectories(document):
        assert not [s for s in trajectory["steps"] if s.get("is_copied_context")]
    # The agent used as a tool is a subagent answering its call.
    researcher = _subagent(document, "ask_researcher", "Researcher")
    assert _calls(researcher)["get_weather"][1]["content"] == "sunny, 21°C"
    # Turn three hit max_turns after two tool calls that went well: the run's last step says so, not silence.
    third = document["steps"][[s["message"] for s in document["steps"]].index("Check Oslo, then Bergen, again.") + 1:]
    assert [(s["source"], s.get("llm_call_count")) for s in third[:4]] == [
        ("agent", 1), ("agent", 1), ("agent", 0), ("user", None)]
    ended = third[2]
    assert ended["extra"]["from"] == "agent span" and ended["extra"]["run_error"] is True
    assert ended["extra"]["error"]["message"] == "Max turns exceeded: {'max_turns': 2}"
    # Turn four ended with its tool's exception (no failure function): the failed result shows it, once.
    last = document["steps"][-1]
    assert [c["function_name"] for c in last["tool_calls"]] == ["book_hotel"]
    (failed,) = last["observation"]["results"]
    assert failed["extra"]["is_error"] is True and "the booking service is unreachable" in failed["extra"]["error"][
        "message"]


def smolagents_managed_agent_answers_its_call_and_tool_messages_are_no_user_steps(document: Json) -> None:
    for trajectory in corpus.all_trajectories(document):
        users = [s["message"] for s in trajectory["steps"] if s["source"] == "user"]
        assert len(users) == 1 and users[0].startswith("New task:"), users
        assert not [s for s in trajectory["steps"] if s.get("is_copied_context")]
    weather = _subagent(document, "weather_agent", "weather_agent")
    _, answer = _calls(document)["weather_agent"]
    assert answer["content"].endswith("Paris: sunny, 21°C. Oslo: rainy, 9°C.")
    assert _calls(weather)["final_answer"][1]["content"] == "Paris: sunny, 21°C. Oslo: rainy, 9°C."
    # The failed tool span has no output: its result is what the model was shown next.
    _, failed = _calls(document)["lookup_flight"]
    assert failed["extra"]["is_error"] is True
    assert failed["content"].startswith("Error:\nError executing tool 'lookup_flight'")
    assert document["agent"]["name"] == "trip-planner"  # the service: smolagents names no top agent


def smolagents_code_agent_tools_have_their_arguments_and_the_code_is_not_repeated(document: Json) -> None:
    assert not [s for s in document["steps"] if s.get("is_copied_context")]
    call, result = _calls(document)["get_weather"]
    assert call["arguments"] == {"city": "Paris"} and result["content"] == "sunny, 21°C"
    code_steps = [s for s in document["steps"] if s.get("llm_call_count") == 1]
    assert len(code_steps) == 2
    # What the first step's code printed is that step's observation (what the model was shown next).
    observed = [r["content"] for r in code_steps[0]["observation"]["results"]]
    assert observed == ["Observation:\nExecution logs:\nsunny, 21°C\nLast output from code snippet:\nNone"], observed


def smolagents_max_steps_answer_is_asked_once_and_a_continued_run_repeats_nothing(document: Json) -> None:
    # Run two (reset=False) re-sends run one's memory: nothing of it is a step again.
    assert not [s for s in document["steps"] if s.get("is_copied_context")]
    users = [s["message"] for s in document["steps"] if s["source"] == "user"]
    assert len(users) == 3 and users[0] == "New task:\nWeather in Paris, Oslo and Bergen?"
    assert users[1].startswith("Based on the above, please provide an answer") and users[2] == "New task:\nAnd Bergen?"
    # Out of steps, smolagents asks the model itself for an answer from its memory: that call is the run's answer.
    answer = next(s for s in document["steps"] if s["source"] == "agent" and s["message"])
    assert answer["message"].endswith("I ran out of steps before Bergen.") and not answer.get("tool_calls")
    assert _calls(document)["final_answer"][1]["content"] == "Bergen is windy at 7°C."


def agno_team_members_are_subagents_answering_their_delegation_calls(document: Json) -> None:
    assert document["agent"]["name"] == "trip-team"
    _no_system_delegation_steps(document)
    # Agno's own ids and tool names on its run spans are bookkeeping, read: nothing is left unmapped.
    assert document["extra"]["unmapped_attributes"] == []
    # The member runs hang beside the delegation tool spans (OpenInference ends the span as Agno drains
    # its generator): each is the subagent that call started, referenced from that call's result only.
    subagents = document.get("subagent_trajectories") or []
    assert [s["agent"]["name"] for s in subagents] == ["weather-agent", "flight-agent"]
    delegating = next(s for s in document["steps"] if s.get("tool_calls"))
    calls = {c["tool_call_id"]: c["arguments"]["member_id"] for c in delegating["tool_calls"]}
    refs = {r["source_call_id"]: [ref["trajectory_id"] for ref in r["subagent_trajectory_ref"]]
            for r in delegating["observation"]["results"]}
    assert {calls[call]: ids for call, ids in refs.items()} == {
        "weather-agent": [subagents[0]["trajectory_id"]], "flight-agent": [subagents[1]["trajectory_id"]]}
    weather, flights = subagents
    assert [s["message"] for s in weather["steps"] if s["source"] == "user"] == ["The weather in Oslo."]
    assert _calls(weather)["get_weather"][1]["content"] == "rainy, 9°C"
    failed, retried = (s["observation"]["results"][0] for s in flights["steps"] if s.get("tool_calls"))
    assert failed["content"] == "booking system busy, try again" and failed["extra"]["is_error"] is True
    assert retried["content"] == "SK832, Paris 08:15 -> Oslo 10:35" and "is_error" not in retried["extra"]


def adk_transfer_starts_the_sub_agent_and_merged_tool_spans_are_no_steps(document: Json) -> None:
    assert document["agent"]["name"] == "travel_desk"
    _no_system_delegation_steps(document)
    assert "(merged tools)" not in _calls(document)
    assert not [s for s in document["steps"] if s.get("llm_call_count") == 0]
    booking = _subagent(document, "transfer_to_agent", "booking_agent")
    assert next(s["message"] for s in booking["steps"] if s["source"] == "system").startswith("You book hotels.")
    assert [s["source"] for s in document["steps"]] == ["system", "user", "agent", "agent"]


def crewai_crew_is_the_agent_and_each_task_a_subagent(document: Json) -> None:
    assert document["agent"]["name"] == "trip-crew"  # the service: a crew has no name of its own
    subagents = document.get("subagent_trajectories") or []
    assert [s["agent"]["name"] for s in subagents] == ["Weather researcher", "Travel writer"]
    refs = [ref["trajectory_id"] for step in document["steps"]
            for result in (step.get("observation") or {}).get("results") or ()
            for ref in result.get("subagent_trajectory_ref") or ()]
    assert refs == [s["trajectory_id"] for s in subagents]
    # The crew's answer is its last task's: no agent step of its own repeating it.
    assert not [s for s in document["steps"] if s["source"] == "agent"]
    call, result = _calls(subagents[0])["get_weather"]
    assert call["arguments"] == {"city": "Paris"} and result["content"] == "sunny, 21°C"


def autogen_runs_are_one_session_and_a_failed_tool_is_one_error(document: Json) -> None:
    # Two `run`s, a trace each, one session through their parent spans' `session.id`.
    assert document["extra"]["settlement"]["trace_count"] == 2
    assert document["agent"]["name"] == "weather_agent"
    assert [s["source"] for s in document["steps"]] == ["system", "user", "agent", "agent", "user", "agent", "agent"]
    assert [s["message"] for s in document["steps"] if s["source"] == "user"] == [
        "Weather in Paris, and the time in Atlantis?", "And the time in Paris?"]
    # `gen_ai.system` "autogen" names the framework: read, not an unmapped attribute.
    assert document["extra"]["unmapped_attributes"] == []
    assert "autogen" in document["extra"]["emitters"]
    failed = next(result for step in document["steps"] for call in step.get("tool_calls") or ()
                  for result in step["observation"]["results"]
                  if call["arguments"] == {"city": "Atlantis"} and result["source_call_id"] == call["tool_call_id"])
    assert failed["content"] == "unknown city: Atlantis" and failed["extra"]["is_error"] is True
    # AutoGen records the exception and the OpenTelemetry API again as the span ends: one failure, shown once.
    assert [e["message"] for e in failed["extra"]["error"]["exceptions"]] == ["unknown city: Atlantis"]



def semantic_kernel_turns_are_one_session_with_the_agents_tools(document: Json) -> None:
    assert document["extra"]["settlement"]["trace_count"] == 2
    assert document["agent"]["name"] == "weather_agent"
    assert [s["source"] for s in document["steps"]] == ["system", "user", "agent", "agent", "user", "agent", "agent"]
    assert document["extra"]["unmapped_attributes"] == []
    assert "semantic-kernel" in document["extra"]["emitters"]
    # SK records the plugin's functions on the agent span only (no call span carries them).
    assert sorted(d["function"]["name"] for d in document["agent"].get("tool_definitions") or ()) == [
        "weather-get_local_time", "weather-get_weather"]
    call, answered = _calls(document)["weather-get_local_time"]  # the last call of that name: turn two's
    assert call["arguments"] == {"city": "Paris"} and answered["content"] == "14:05"
    failed = next(result for step in document["steps"] for call in step.get("tool_calls") or ()
                  for result in step["observation"]["results"]
                  if call["arguments"] == {"city": "Atlantis"} and result["source_call_id"] == call["tool_call_id"])
    assert failed["content"] == "An error occurred while invoking the function weather-get_local_time: unknown city: " \
        "Atlantis" and failed["extra"]["is_error"] is True
    # SK records the exception and the OpenTelemetry API again as the span ends: one failure, shown once.
    assert [e["message"] for e in failed["extra"]["error"]["exceptions"]] == ["unknown city: Atlantis"]


def agent_framework_turns_are_one_session_and_the_timed_out_call_is_retried(document: Json) -> None:
    # An AgentSession keeping its history locally is no telemetry: a parent span with `session.id` per turn.
    assert document["extra"]["settlement"]["trace_count"] == 2
    assert document["agent"]["name"] == "weather_agent"
    assert [s["source"] for s in document["steps"]] == [
        "system", "user", "agent", "agent", "agent", "user", "agent", "agent"]
    assert document["extra"]["unmapped_attributes"] == []
    assert "agent-framework" in document["extra"]["emitters"]
    assert sorted(d["function"]["name"] for d in document["agent"].get("tool_definitions") or ()) == [
        "get_local_time", "get_weather"]
    # Its span records no result: the content is what the model was shown, from the next call's input.
    failed = document["steps"][2]["observation"]["results"][0]
    assert failed["content"] == "Error: Function failed." and failed["extra"]["is_error"] is True
    assert [e["message"] for e in failed["extra"]["error"]["exceptions"]] == ["weather service timed out"]
    assert document["steps"][3]["observation"]["results"][0]["content"] == "sunny, 21°C"


def dspy_react_loop_is_no_user_step_and_each_tool_shows_what_the_model_saw(document: Json) -> None:
    # Two questions, a trace each, one session; each tool ReAct runs is the call of the step whose fields named it.
    assert document["extra"]["settlement"]["trace_count"] == 2
    # Each call re-renders the question and the loop so far in its user message: only the question's
    # first rendering, and the extract call's (a new instruction: its own system prompt), are user steps; the
    # extract call's re-sends the question and the whole loop before that instruction, history it re-sends
    # (copied context, as the loop's steps it restates). Nothing else is copied.
    copied = [s for s in document["steps"] if s.get("is_copied_context")]
    assert [s["source"] for s in copied] == ["user", "user"], copied
    assert all("[[ ## answer ## ]]" in s["message"] for s in copied), copied
    users = [s["message"] for s in document["steps"] if s["source"] == "user"]
    assert len(users) == 4, users
    assert ["What is the weather in Paris?" in u for u in users] == [True, True, False, False], users
    assert all("[[ ## thought_0 ## ]]" not in u for u in users), users
    assert not [s for s in document["steps"] if s["source"] == "agent" and s.get("llm_call_count") != 1]
    tools = [(c["function_name"], c["arguments"], r["content"], (r.get("extra") or {}).get("is_error", False))
             for s in document["steps"] if s.get("tool_calls")
             for c, r in zip(s["tool_calls"], s["observation"]["results"], strict=True)]
    assert [t[:2] for t in tools] == [("get_weather", {"city": "Paris"}), ("finish", {}),
                                      ("lookup_flight", {"city": "Oslo"}), ("lookup_flight", {"city": "Oslo"}),
                                      ("finish", {})], tools
    assert [t[2] for t in tools if t[0] != "lookup_flight"] == ["sunny, 21°C", "Completed.", "Completed."]
    # The raising tool: flagged, its content what ReAct showed the model (the error), then the retry's result.
    failed, retried = [t for t in tools if t[0] == "lookup_flight"]
    assert failed[3] is True and failed[2].startswith("Execution error in lookup_flight:"), failed
    assert failed[2].rstrip().endswith("ConnectionError: flight search timed out for Oslo"), failed
    assert retried[2:] == ("SK4411, departing 09:40", False)


CHECKS: dict[str, Callable[[Json], None]] = {
    "openai-agents_openinference": openai_agents_turns_are_one_agent_and_the_handoff_starts_the_booking_agent,
    "openai-agents_logfire_no-session": openai_agents_turns_are_one_agent_and_the_handoff_starts_the_booking_agent,
    "openai-agents_openllmetry": openai_agents_turns_are_one_agent_and_the_handoff_starts_the_booking_agent,
    "openai-agents_openinference_chat-memory-limits":
        openai_agents_memory_turns_are_asked_once_and_a_run_ending_in_max_turns_says_so,
    "smolagents_openinference": smolagents_managed_agent_answers_its_call_and_tool_messages_are_no_user_steps,
    "smolagents_openinference_code-agent-no-session":
        smolagents_code_agent_tools_have_their_arguments_and_the_code_is_not_repeated,
    "smolagents_openinference_max-steps-two-runs":
        smolagents_max_steps_answer_is_asked_once_and_a_continued_run_repeats_nothing,
    "agno_openinference_team": agno_team_members_are_subagents_answering_their_delegation_calls,
    "google-adk_native": adk_transfer_starts_the_sub_agent_and_merged_tool_spans_are_no_steps,
    "crewai_openinference_no-session": crewai_crew_is_the_agent_and_each_task_a_subagent,
    "autogen_native": autogen_runs_are_one_session_and_a_failed_tool_is_one_error,
    "semantic-kernel_native": semantic_kernel_turns_are_one_session_with_the_agents_tools,
    "agent-framework_native": agent_framework_turns_are_one_session_and_the_timed_out_call_is_retried,
    "dspy_openinference": dspy_react_loop_is_no_user_step_and_each_tool_shows_what_the_model_saw,
}


async def test_agent_frameworks_captures_have_the_structure_that_happened(start_service: ServiceFactory) -> None:
    # One service for all of them (an agent each): starting one is most of a capture's cost.
    service = await start_service()
    failures = []
    for name, check in CHECKS.items():
        try:
            check(await _trajectory(service, name))
        except AssertionError as error:
            failures.append(f"{name}: {check.__name__}: {error}")
    assert not failures, "\n".join(failures)
