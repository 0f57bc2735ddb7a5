"""OpenLIT's smolagents instrumentation (the `smolagents_openlit` capture's trace exports).

An unnamed ToolCallingAgent (streamed calls) with two tools and a managed agent, `hotel_desk`, two runs of one memory
(the second `run(…, reset=False, stream=True)`): parallel calls, then the desk's tool timing out once and asked again.
What each span of OpenLIT's is, and how the calls' inputs hold smolagents' memory:
`trajectory/mappers/openlit_smolagents.py`.
"""

from __future__ import annotations

from typing import Any

from span_fixtures import capture_document, capture_spans

from evalkit.trajectory.mappers import openlit, openlit_smolagents, otel_genai
from evalkit.trajectory.mappers.reader import SpanReader
from evalkit.trajectory.operations import AgentRun, LlmCall, Message, Operation, Part, ToolExecution
from tests.captures import corpus

CAPTURE = "smolagents_openlit"
SESSION = "smol-openlit-trip-1"


def _document() -> dict[str, Any]:
    return capture_document(CAPTURE, SESSION)


def _mapped(prefix: str, scope: str = openlit_smolagents.SCOPE,
            capture: str = CAPTURE) -> list[tuple[SpanReader, Operation | None]]:
    """The spans of one of OpenLIT's scopes whose name starts with `prefix`, each read by OpenLIT's mapper."""
    found = []
    for span in capture_spans(capture):
        if span.scope_name == scope and span.name.startswith(prefix):
            reader = SpanReader(span)
            found.append((reader, openlit.map_span(reader, ())))
    assert found, (scope, prefix)
    return found


def _log() -> list[dict[str, Any]]:
    return corpus.load(CAPTURE).llm_log


def _results(step: dict[str, Any]) -> list[dict[str, Any]]:
    return list((step.get("observation") or {}).get("results") or ())


def test_the_session_is_the_conversation_that_happened() -> None:
    assert corpus.compare(_document(), corpus.GroundTruth.of(_log())) == []


def test_a_step_span_is_no_agent_and_the_managed_agent_is_the_one_subagent() -> None:
    """`invoke_agent <agent> step_<n>` (smolagents' `_step_stream`) wraps one model call and its tools: not a run of
    its own (each was a subagent with the history copied into it, a "Delegated to subagent" placeholder in its
    agent); the managed agent's run, inside the manager's `execute_tool hotel_desk` span, is the subagent."""
    steps = _mapped("invoke_agent")
    step_spans = [(reader, operation) for reader, operation in steps if "step_number" in str(reader.span.attributes)]
    assert len(step_spans) == 7  # one per LLM call
    for reader, operation in step_spans:
        assert operation is None
        assert reader.unused() == set()  # its restated usage, observations and failure read, and dropped
    runs = sorted((operation for _, operation in steps if operation is not None),
                  key=lambda run: run.span.start_time_unix_nano)
    assert all(isinstance(run, AgentRun) for run in runs)
    assert [run.name for run in runs if isinstance(run, AgentRun)] == [
        "travel-assistant", "travel-assistant", "hotel_desk"]
    document = _document()
    assert [s["source"] for s in document["steps"]] == ["system", "user", "agent", "agent", "user", "agent", "agent"]
    (desk,) = document["subagent_trajectories"]
    assert desk["agent"]["name"] == "hotel_desk" and not desk.get("subagent_trajectories")
    assert [s["source"] for s in desk["steps"]] == ["system", "user", "agent", "agent", "agent"]
    handed = _results(document["steps"][5])
    assert [(r["source_call_id"], r["subagent_trajectory_ref"][0]["trajectory_id"].split(":")[0]) for r in handed] == [
        ("call_2_0", "hotel_desk")]
    assert not [s for s in document["steps"] if "Delegated to subagent" in str(s.get("message"))]


def test_an_unnamed_agent_is_the_application_not_its_class_nor_another_agent() -> None:
    """smolagents names an unnamed agent's spans after its class (`invoke_agent ToolCallingAgent`): no name; the
    session's agent is then the application's (`service.name`), not the managed agent's name found on a span."""
    assert openlit_smolagents.agent_name("ToolCallingAgent") is None
    assert openlit_smolagents.agent_name("CodeAgent") is None
    assert openlit_smolagents.agent_name("hotel_desk") == "hotel_desk"
    assert _document()["agent"]["name"] == "travel-assistant"


def test_the_made_up_tool_call_ids_are_dropped_and_each_execution_answers_its_call() -> None:
    """OpenLIT gives every `execute_tool` span a uuid4 as `gen_ai.tool.call.id` (smolagents passes no id): read as a
    call id it answered no call, so each execution was a step "without an LLM call requesting it" and the model's
    calls had no results. Without it, each answers the call of its name and arguments, the two parallel ones too."""
    tools = _mapped("execute_tool")
    assert len(tools) == 8
    for reader, execution in tools:
        assert isinstance(execution, ToolExecution) and execution.call_id is None
        assert reader.unused() - set(otel_genai.IDENTITY_KEYS) == set()
    document = _document()
    every_step = [s for t in corpus.all_trajectories(document) for s in t["steps"]]
    assert not [s for s in every_step if s.get("llm_call_count") == 0]
    first = _results(document["steps"][2])
    assert [(r["source_call_id"], r["content"]) for r in first] == [
        ("call_0_0", "light rain, 18°C"), ("call_0_1", "200 EUR = 32,480 JPY")]


def test_the_sent_memory_is_read_as_smolagents_roles() -> None:
    """The calls' inputs are smolagents' memory as its OpenAI client sent it: the restated calls ("Calling
    tools:\\n[…]") in assistant messages, what the tools gave ("Observation:\\n…") merged with the next task in user
    messages. Read as they were, those were copied agent steps and user steps; read back into smolagents' roles, the
    history is each task once, and the second run's task a user step of its own."""
    document = _document()
    every_step = [s for t in corpus.all_trajectories(document) for s in t["steps"]]
    assert not [s for s in every_step if s.get("is_copied_context")]
    users = [s["message"] for s in every_step if s["source"] == "user"]
    assert users[:2] == ["New task:\nI'm in Tokyo with 200 EUR. What's the weather, and how much is that in yen?",
                         "New task:\nCan the hotel desk find me a room in Tokyo for that much a night?"]
    assert len(users) == 3 and users[2].startswith("New task:\nYou're a helpful agent named 'hotel_desk'.")
    # The second run's last call: its input re-sends the first run, each part in its role.
    (call,) = [c for r, c in _mapped("chat", "openlit.instrumentation.openai")
               if isinstance(c, LlmCall) and "call_6_0" in str(r.span.attributes)]
    assert isinstance(call, LlmCall)
    assert [m.role for m in call.input_messages] == ["system", "user", "assistant", "tool", "assistant", "tool",
                                                     "user", "assistant", "tool"]
    assert [(p.call_id, p.name) for p in call.input_messages[2].tool_calls] == [
        ("call_0_0", "get_weather"), ("call_0_1", "convert_currency")]
    assert call.input_messages[6].text == "New task:\nCan the hotel desk find me a room in Tokyo for that much a night?"


def test_the_failed_tool_is_flagged_with_the_error_the_model_was_shown() -> None:
    """find_hotel raised: its span has the exception alone, and smolagents sent the model its error merged into the
    user message after the task (a failed step's calls are not restated). That error text is the call's result."""
    (desk,) = _document()["subagent_trajectories"]
    (failed,) = _results(desk["steps"][2])
    shown = next(m["content"][0]["text"] for m in _log()[4]["request"]["messages"] if m["role"] == "user")
    error = shown[shown.index("Error:\n"):]
    assert failed["source_call_id"] == "call_3_0" and failed["content"] == error
    assert failed["extra"]["is_error"] is True and failed["extra"]["content_from"] == "input history"
    assert error.startswith("Error:\nError executing tool 'find_hotel'") and "hotel search timed out" in error
    assert [r["content"] for r in _results(desk["steps"][3])] == [
        "Hotel Sakura Shinjuku, 14,500 JPY a night (at most 32,480)"]


def test_the_tools_are_defined_as_the_model_was_sent_them() -> None:
    """OpenLIT records each tool's smolagents `inputs` as its parameters; the model was sent JSON schemas. The
    managed agent, which OpenLIT leaves out of the run's tools, is the one the model had beside them."""
    sent = {t["function"]["name"]: t for t in _log()[2]["request"]["tools"]}
    defined = _document()["agent"]["tool_definitions"]
    assert [d["function"]["name"] for d in defined] == ["get_weather", "convert_currency", "final_answer"]
    assert defined == [sent[d["function"]["name"]] for d in defined]
    assert set(sent) - {d["function"]["name"] for d in defined} == {"hotel_desk"}


def test_an_input_that_is_no_smolagents_memory_is_left_as_read() -> None:
    """Only a call whose first user message is smolagents' task ("New task:\\n…") is read as its memory: the same
    messages under another first question (an application quoting such text) are left as they were read."""
    (span,) = [s for s in capture_spans(CAPTURE) if "call_6_0" in str(s.attributes.get("gen_ai.output.messages"))]
    call = otel_genai.map_span(SpanReader(span), ())
    assert isinstance(call, LlmCall)
    memory = call.input_messages
    assert openlit_smolagents.read_sent_memory(memory) != memory
    asked = Message("user", [Part("text", text="Summarise this log:\n" + memory[1].text)])
    quoted = [asked if message is memory[1] else message for message in memory]
    assert openlit_smolagents.read_sent_memory(quoted) == quoted
