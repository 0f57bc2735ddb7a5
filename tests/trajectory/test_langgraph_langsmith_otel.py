"""LangGraph traced by the LangSmith SDK's OpenTelemetry export (capture langgraph_langsmith-otel): `gen_ai.prompt`
and `gen_ai.completion` are LangChain's run inputs and outputs (serialised messages, an LLMResult, a tool's
`{"output": <ToolMessage>}`), not GenAI messages (trajectory/mappers/langsmith.py)."""

from __future__ import annotations

import json

from evalkit.trajectory.from_spans import trajectory_from_spans
from evalkit.trajectory.mappers import langsmith, tool_results
from evalkit.trajectory.mappers.reader import SpanReader
from evalkit.trajectory.operations import AgentRun, LlmCall, ToolExecution
from evalkit.trajectory.span import Span
from tests.captures import corpus
from tests.trajectory.span_fixtures import capture_spans

CAPTURE = "langgraph_langsmith-otel"


def _spans(name: str) -> list[Span]:
    return [s for s in capture_spans(CAPTURE) if s.name == name]


def _span(run_type: str, attributes: dict[str, object], name: str = "ChatOpenAI") -> Span:
    return Span(trace_id="6bf92f3577b34da6a3ce929d0e0e4736", span_id="1000000000000001", parent_span_id="",
                name=name, kind=1, start_time_unix_nano=1, end_time_unix_nano=2, status_code=1,
                scope_name=langsmith.SCOPE, attributes={"langsmith.span.kind": run_type, **attributes})


def _map(span: Span) -> object:
    reader = SpanReader(span)
    assert langsmith.detect(span)
    operation = langsmith.map_span(reader, [])
    assert not reader.unused() - {"gen_ai.request.model"}, reader.unused()
    return operation


def test_a_chat_model_runs_messages_are_its_serialised_langchain_messages() -> None:
    call = _map(_spans("ChatOpenAI")[1])  # the retry, after three parallel results
    assert isinstance(call, LlmCall)
    assert [m.role for m in call.input_messages] == ["system", "user", "assistant", "tool", "tool", "tool"]
    assert [(p.call_id, p.name, p.arguments) for p in call.input_messages[2].tool_calls] == [
        ("call_0_0", "get_weather", {"city": "Lisbon"}), ("call_0_1", "get_weather", {"city": "Porto"}),
        ("call_0_2", "convert_currency", {"amount": 200, "source": "EUR", "target": "USD"})]
    assert [(p.call_id, p.text) for m in call.input_messages[3:] for p in m.tool_results] == [
        ("call_0_0", "sunny, 24°C"), ("call_0_1", "cloudy, 18°C"), ("call_0_2", "rate service timed out; try again")]
    (answer,) = call.output_messages
    assert (answer.role, answer.text) == ("assistant", "")
    assert [(p.call_id, p.name) for p in answer.tool_calls] == [("call_1_0", "convert_currency")]
    assert (call.model, call.provider, call.usage.input_tokens, call.usage.output_tokens) == (
        "gpt-4o-mini", "openai", 352, 26)


def test_a_tool_runs_output_is_the_tool_message_toolnode_made() -> None:
    failed, retried = _spans("convert_currency")[:2]
    execution = _map(failed)
    assert isinstance(execution, ToolExecution)
    assert (execution.name, execution.call_id, execution.arguments) == (
        "convert_currency", "call_0_2", {"amount": 200, "source": "EUR", "target": "USD"})
    # The ToolException was handled (`handle_tool_error`): the span is OK, the ToolMessage says `status: "error"`.
    assert execution.error is None
    output = tool_results.unwrap(execution.result)
    assert (output.value, output.call_id, output.is_error) == ("rate service timed out; try again", "call_0_2", True)
    output = tool_results.unwrap(_map(retried).result)  # type: ignore[attr-defined]
    assert (output.value, output.is_error) == ("216.40 USD", False)


def test_create_agents_graph_is_the_agents_run_and_its_nodes_are_nothing() -> None:
    root = _map(_spans("travel_agent")[0])
    assert isinstance(root, AgentRun)
    assert (root.name, root.input_text, root.output_text) == (
        "travel_agent", "What's the weather in Lisbon and Porto, and how much is 200 EUR in USD?",
        "Lisbon is sunny at 24°C and Porto cloudy at 18°C; 200 EUR is 216.40 USD.")
    assert _map(_spans("model")[0]) is None
    assert _map(_spans("tools")[0]) is None


def test_cache_reads_are_read_from_the_usage_metadata_langchain_copies_into_the_run_metadata() -> None:
    usage = {"input_tokens": 352, "output_tokens": 26, "total_tokens": 378,
             "input_token_details": {"cache_read": 128}, "output_token_details": {}}
    call = _map(_span("llm", {"gen_ai.operation.name": "chat", "gen_ai.request.model": "gpt-4o-mini",
                              "gen_ai.usage.input_tokens": 352, "gen_ai.usage.output_tokens": 26,
                              "langsmith.metadata.usage_metadata": json.dumps(usage)}))
    assert isinstance(call, LlmCall)
    # LangChain's input_tokens sum every input token type: the cached ones are within the 352.
    assert (call.usage.input_tokens, call.usage.cache_read_tokens, call.usage.output_tokens) == (352, 128, 26)


def test_a_streamed_answer_and_a_prompt_template_run() -> None:
    chunk = {"lc": 1, "type": "constructor", "id": ["langchain", "schema", "messages", "AIMessageChunk"],
             "kwargs": {"content": "Hi", "type": "AIMessageChunk", "tool_calls": []}}
    call = _map(_span("llm", {"gen_ai.operation.name": "chat", "gen_ai.request.model": "gpt-4o-mini",
                              "gen_ai.prompt": json.dumps({"messages": [[{**chunk, "id": ["HumanMessage"],
                                                                          "kwargs": {"content": "Hello"}}]]}),
                              "gen_ai.completion": json.dumps({"generations": [[{"text": "Hi",
                                                                                 "message": chunk}]]})}))
    assert isinstance(call, LlmCall)
    assert [(m.role, m.text) for m in (*call.input_messages, *call.output_messages)] == [
        ("user", "Hello"), ("assistant", "Hi")]
    # The exporter writes a prompt template's run as `chat` too; it calls no model.
    template = _span("prompt", {"gen_ai.operation.name": "chat", "gen_ai.prompt": "{}", "gen_ai.completion": "{}"},
                     name="ChatPromptTemplate")
    assert _map(template) is None


def test_capture_is_the_conversation_that_happened() -> None:
    capture = corpus.load(CAPTURE)
    document = trajectory_from_spans(capture_spans(CAPTURE), session_id=capture.session_id).document()
    assert corpus.compare(document, corpus.GroundTruth.of(capture.llm_log)) == []
    assert document["agent"]["name"] == "travel_agent"
    assert [s["message"] for s in document["steps"] if s["source"] == "user"] == [
        "What's the weather in Lisbon and Porto, and how much is 200 EUR in USD?", "And in GBP?"]
    flagged = [r["source_call_id"] for s in document["steps"] for r in (s.get("observation") or {}).get("results") or ()
               if (r.get("extra") or {}).get("is_error")]
    assert flagged == ["call_0_2"]
    assert document["extra"]["unmapped_attributes"] == []
