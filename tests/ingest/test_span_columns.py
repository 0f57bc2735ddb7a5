"""What ClickHouse makes of an export (ingest/flatten.py, ingest/attribution.py): typed
columns read by the conventions' ranked keys, attribute values kept with their OTLP types
at any depth, events, links and the attribute cap. Raw protobuf requests, so that every
value type is exactly what the test says, sent to a running service over gRPC."""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path
from typing import Any

import grpc
import pytest
from opentelemetry.proto.collector.trace.v1 import trace_service_pb2
from opentelemetry.proto.common.v1 import common_pb2
from opentelemetry.proto.resource.v1 import resource_pb2
from opentelemetry.proto.trace.v1 import trace_pb2

from evalkit.trajectory import same_call
from evalkit.trajectory.mappers import openinference
from evalkit.trajectory.mappers.reader import SpanReader
from evalkit.trajectory.operations import LlmCall
from evalkit.trajectory.read import read_trace_spans
from evalkit.trajectory.span import Span
from tests.conftest import Running, own_workspaces, serve

# One service for the module's tests that make nothing but agents of their own (`own_workspaces`): a service per
# test was ~1 s of each. A test that needs other settings starts its own.
pytestmark = pytest.mark.asyncio(loop_scope="module")


@pytest.fixture
def running(module_running: Running) -> Running:
    return own_workspaces(module_running)


EXPORT = "/opentelemetry.proto.collector.trace.v1.TraceService/Export"
TYPED = ("session_id", "operation", "provider", "model", "is_llm_call", "input_tokens", "output_tokens",
         "cache_read_tokens", "cache_write_tokens", "reasoning_tokens", "reported_cost_usd", "tool_name",
         "tool_call_id")


def any_value(value: Any) -> common_pb2.AnyValue:
    if isinstance(value, bool):
        return common_pb2.AnyValue(bool_value=value)
    if isinstance(value, int):
        return common_pb2.AnyValue(int_value=value)
    if isinstance(value, float):
        return common_pb2.AnyValue(double_value=value)
    if isinstance(value, bytes):
        return common_pb2.AnyValue(bytes_value=value)
    if isinstance(value, list):
        return common_pb2.AnyValue(array_value=common_pb2.ArrayValue(values=[any_value(v) for v in value]))
    if isinstance(value, dict):
        return common_pb2.AnyValue(kvlist_value=common_pb2.KeyValueList(
            values=[common_pb2.KeyValue(key=k, value=any_value(v)) for k, v in value.items()]))
    return common_pb2.AnyValue(string_value=str(value))


def key_values(attributes: dict[str, Any]) -> list[common_pb2.KeyValue]:
    return [common_pb2.KeyValue(key=k, value=any_value(v)) for k, v in attributes.items()]


def span(trace_id: bytes, name: str, attributes: dict[str, Any], **fields: Any) -> trace_pb2.Span:
    return trace_pb2.Span(trace_id=trace_id, span_id=os.urandom(8), name=name, start_time_unix_nano=10**18,
                          end_time_unix_nano=10**18 + 5_000, attributes=key_values(attributes), **fields)


def request(spans: list[trace_pb2.Span], resource: dict[str, Any] | None = None) -> bytes:
    return trace_service_pb2.ExportTraceServiceRequest(resource_spans=[trace_pb2.ResourceSpans(
        resource=resource_pb2.Resource(attributes=key_values(resource or {"service.name": "svc"})),
        scope_spans=[trace_pb2.ScopeSpans(scope=common_pb2.InstrumentationScope(name="lib", version="1.2"),
                                          spans=spans)])]).SerializeToString()


async def send(running: Running, key: str, body: bytes) -> bytes:
    async with grpc.aio.insecure_channel(running.grpc_target) as channel:
        export = channel.unary_unary(EXPORT, request_serializer=lambda b: b, response_deserializer=lambda b: b)
        answer: bytes = await export(body, metadata=(("authorization", f"Bearer {key}"),), timeout=30)
        return answer


def typed_by_name(running: Running, agent_id: str) -> dict[str, dict[str, Any]]:
    rows = running.store.query_dicts(
        f"SELECT name, {', '.join(TYPED)} FROM spans FINAL WHERE agent_id = {{a:String}}", {"a": agent_id})
    return {row.pop("name"): row for row in rows}


async def test_typed_columns_follow_the_ranked_keys_and_value_rules(running: Running) -> None:
    agent_id, key = await asyncio.to_thread(running.new_agent)
    trace = os.urandom(16)
    body = request([
        # The response model outranks the request model; int, double and string token counts.
        span(trace, "ranked", {"gen_ai.request.model": "gpt-4o", "gen_ai.response.model": "gpt-4o-2024-08-06",
                               "gen_ai.provider.name": "openai", "gen_ai.operation.name": "chat",
                               "gen_ai.usage.input_tokens": 120, "gen_ai.usage.output_tokens": 12.9,
                               "gen_ai.usage.cache_read.input_tokens": " 40 ", "llm.cost.total": 0.25,
                               "session.id": "s-1"}),
        # Unusable values fall through to the next key: a non-integer string, a bool, an empty
        # string; a string is never a cost; negative counts are 0.
        span(trace, "fallthrough", {"gen_ai.usage.input_tokens": "4.5", "gen_ai.usage.prompt_tokens": 33,
                                    "gen_ai.usage.output_tokens": True, "llm.token_count.completion": 8,
                                    "gen_ai.response.model": "", "llm.model_name": "claude-x",
                                    "llm.cost.total": "0.5", "gen_ai.usage.cost": 2,
                                    "gen_ai.usage.reasoning.output_tokens": -3,
                                    "gen_ai.conversation.id": 77}),
        # OpenInference: the span kind names the operation.
        span(trace, "oi", {"openinference.span.kind": "llm", "llm.model_name": "m1", "llm.provider": "p1"}),
        span(trace, "oi tool", {"openinference.span.kind": "TOOL", "tool.name": "search", "tool.id": "call_9"}),
        # Vercel AI SDK: the span name does; a declared operation wins over the name.
        span(trace, "ai.generateText.doGenerate", {"ai.model.id": "gpt-4.1", "ai.usage.promptTokens": 5}),
        span(trace, "ai.toolCall", {"ai.toolCall.name": "weather", "ai.toolCall.id": "tc-1"}),
        span(trace, "ai.streamText.doStream", {"gen_ai.operation.name": "invoke_agent"}),
        # Langfuse and MLflow span types.
        span(trace, "lf", {"langfuse.observation.type": "generation", "langfuse.observation.model.name": "lf-m"}),
        span(trace, "mlflow", {"mlflow.spanType": '"CHAT_MODEL"', "mlflow.llm.model": "ml-m"}),
        # Usage and cost as one JSON attribute, as the real SDKs write them (tests/captures/langfuse-sdk_openai,
        # mlflow_openai): Langfuse's own keys (`input` uncached, so cache reads are added back; `output` without
        # reasoning, so the reasoning tokens are added back: langgraph_langfuse_openai-reasoning), the OpenAI usage
        # object its client sends (nested cache and reasoning counts), MLflow's JSON-quoted model and tokenUsage.
        span(trace, "lf own", {"langfuse.observation.type": "generation", "langfuse.observation.model.name": "m",
                               "langfuse.observation.usage_details": '{"input": 10, "input_cached_tokens": 90, '
                                                                     '"output": 5, "output_reasoning_tokens": 2}',
                               "langfuse.observation.cost_details": '{"input": 0.1, "total": 0.25}'}),
        span(trace, "lf openai", {"langfuse.observation.type": "generation", "langfuse.observation.model.name": "m",
                                  "langfuse.observation.usage_details":
                                      '{"prompt_tokens": 100, "completion_tokens": 7, "prompt_tokens_details": '
                                      '{"cached_tokens": 60}, "completion_tokens_details": {"reasoning_tokens": 3}}'}),
        span(trace, "mlflow usage", {"mlflow.spanType": '"CHAT_MODEL"', "mlflow.llm.model": '"gpt-4o"',
                                     "mlflow.llm.provider": '"openai"',
                                     "mlflow.chat.tokenUsage": '{"input_tokens": 87, "output_tokens": 9, '
                                                               '"total_tokens": 96}',
                                     "mlflow.llm.cost": '{"input_cost": 0.1, "total_cost": 0.3}'}),
        span(trace, "flat wins", {"gen_ai.operation.name": "chat", "gen_ai.usage.input_tokens": 4,
                                  "mlflow.chat.tokenUsage": '{"input_tokens": 87, "output_tokens": 9}'}),
        span(trace, "plain", {"foo": "bar"}),
    ])
    await send(running, key, body)
    typed = await asyncio.to_thread(typed_by_name, running, agent_id)
    assert typed["ranked"] == {
        "session_id": "s-1", "operation": "chat", "provider": "openai", "model": "gpt-4o-2024-08-06",
        "is_llm_call": True, "input_tokens": 120, "output_tokens": 12, "cache_read_tokens": 40,
        "cache_write_tokens": 0, "reasoning_tokens": 0, "reported_cost_usd": 0.25, "tool_name": "",
        "tool_call_id": ""}
    fallthrough = typed["fallthrough"]
    assert (fallthrough["input_tokens"], fallthrough["output_tokens"], fallthrough["model"]) == (33, 8, "claude-x")
    assert fallthrough["reported_cost_usd"] == 2.0
    assert fallthrough["reasoning_tokens"] == 0
    assert fallthrough["session_id"] == "77"
    assert fallthrough["is_llm_call"] is False
    assert typed["oi"]["operation"] == "chat" and typed["oi"]["is_llm_call"] is True
    assert (typed["oi"]["model"], typed["oi"]["provider"]) == ("m1", "p1")
    assert typed["oi tool"]["operation"] == "execute_tool"
    assert (typed["oi tool"]["tool_name"], typed["oi tool"]["tool_call_id"]) == ("search", "call_9")
    vercel = typed["ai.generateText.doGenerate"]
    assert (vercel["operation"], vercel["is_llm_call"], vercel["model"], vercel["input_tokens"]) == (
        "chat", True, "gpt-4.1", 5)
    assert typed["ai.toolCall"]["operation"] == "execute_tool"
    assert (typed["ai.toolCall"]["tool_name"], typed["ai.toolCall"]["tool_call_id"]) == ("weather", "tc-1")
    assert typed["ai.streamText.doStream"]["operation"] == "invoke_agent"
    assert typed["ai.streamText.doStream"]["is_llm_call"] is False
    assert (typed["lf"]["operation"], typed["lf"]["is_llm_call"], typed["lf"]["model"]) == ("chat", True, "lf-m")
    assert (typed["mlflow"]["is_llm_call"], typed["mlflow"]["model"]) == (True, "ml-m")
    figures = ("input_tokens", "output_tokens", "cache_read_tokens", "reasoning_tokens", "reported_cost_usd")
    assert tuple(typed["lf own"][c] for c in figures) == (100, 7, 90, 2, 0.25)
    assert tuple(typed["lf openai"][c] for c in figures) == (100, 7, 60, 3, None)
    assert tuple(typed["mlflow usage"][c] for c in figures) == (87, 9, 0, 0, 0.3)
    assert (typed["mlflow usage"]["model"], typed["mlflow usage"]["provider"]) == ("gpt-4o", "openai")
    # A flat key outranks the JSON object, figure by figure.
    assert (typed["flat wins"]["input_tokens"], typed["flat wins"]["output_tokens"]) == (4, 9)
    assert typed["plain"] == {column: ("" if column not in ("is_llm_call", "reported_cost_usd") and not
                                       column.endswith("tokens") else None if column == "reported_cost_usd"
                                       else False if column == "is_llm_call" else 0) for column in TYPED}



async def test_haystack_calls_are_read_from_the_first_reply_s_meta(running: Running) -> None:
    """Haystack names no model or usage in attributes (trajectory/mappers/haystack.py): a chat generator's replies
    hold them. Each span is a trace of its own here, as Haystack's component spans share one name."""
    agent_id, key = await asyncio.to_thread(running.new_agent)
    reply = {"role": "assistant", "content": [{"text": "Paris."}], "name": None,
             "meta": {"model": "gpt-4o-mini", "finish_reason": "stop",
                      "usage": {"prompt_tokens": 100, "completion_tokens": 9,
                                "prompt_tokens_details": {"cached_tokens": 64}}}}
    spans = {
        "agent step": span(os.urandom(16), "haystack.agent.step.llm",
                           {"haystack.agent.step.llm.output": json.dumps({"replies": [reply]})}),
        # Without HAYSTACK_CONTENT_TRACING_ENABLED an agent step's LLM span has no attributes: still a call.
        "no content": span(os.urandom(16), "haystack.agent.step.llm", {}),
        "generator": span(os.urandom(16), "haystack.component.run", {
            "haystack.component.type": "OpenAIChatGenerator",
            "haystack.component.output": json.dumps({"replies": [reply]})}),
        "retriever": span(os.urandom(16), "haystack.component.run", {
            "haystack.component.type": "InMemoryBM25Retriever",
            "haystack.component.output": json.dumps({"documents": [{"content": "x", "meta": {"model": "no"}}]})}),
        "tool": span(os.urandom(16), "haystack.agent.step.tool", {"haystack.tool.name": "get_weather"}),
        # Another emitter's attribute of the same name is not read.
        "not haystack": span(os.urandom(16), "chat", {"haystack.component.output": json.dumps({"replies": [reply]})}),
    }
    await send(running, key, request(list(spans.values())))
    sql = f"SELECT trace_id, {', '.join(TYPED)} FROM spans FINAL WHERE agent_id = {{a:String}}"
    rows = await asyncio.to_thread(running.store.query_dicts, sql, {"a": agent_id})
    typed = {name: next(r for r in rows if r["trace_id"] == spans[name].trace_id.hex()) for name in spans}
    columns = ("operation", "is_llm_call", "model", "input_tokens", "output_tokens", "cache_read_tokens")
    assert tuple(typed["agent step"][c] for c in columns) == ("chat", True, "gpt-4o-mini", 100, 9, 64)
    assert tuple(typed["generator"][c] for c in columns) == ("chat", True, "gpt-4o-mini", 100, 9, 64)
    assert tuple(typed["no content"][c] for c in columns) == ("chat", True, "", 0, 0, 0)
    assert tuple(typed["retriever"][c] for c in columns) == ("", False, "", 0, 0, 0)
    assert (typed["tool"]["operation"], typed["tool"]["tool_name"], typed["tool"]["is_llm_call"]) == (
        "execute_tool", "get_weather", False)
    assert tuple(typed["not haystack"][c] for c in columns) == ("", False, "", 0, 0, 0)

async def test_failed_is_what_the_trajectory_flags_as_a_failure(running: Running) -> None:
    """`failed` (trajectory/tables.py, migration 212), which the session list counts as errors: an error status, an
    exception event, `error.type`, an emitter's flag on a tool span left OK, or a tool result whose framework
    wrapper says the tool failed; a tool's own result that merely says "error" is not."""
    agent_id, key = await asyncio.to_thread(running.new_agent)

    def tool_message(status: str, padding: str = "") -> str:
        return json.dumps({"type": "tool", "data": {"content": "quote service unavailable" + padding,
                                                    "type": "tool", "tool_call_id": "call_1", "status": status}})

    lc_constructor = {"lc": 1, "type": "constructor", "id": ["langchain", "schema", "messages", "ToolMessage"],
                      "kwargs": {"content": "no such city", "type": "tool", "tool_call_id": "call_2",
                                 "status": "error"}}
    oi_tool = {"openinference.span.kind": "TOOL"}
    failed = {
        "status": span(os.urandom(16), "chat", {}, status=trace_pb2.Status(code=trace_pb2.Status.STATUS_CODE_ERROR)),
        "exception": span(os.urandom(16), "chat", {}, events=[trace_pb2.Span.Event(
            time_unix_nano=10**18 + 1, name="exception", attributes=key_values({"exception.type": "KeyError"}))]),
        "error.type": span(os.urandom(16), "chat", {"error.type": "timeout"}),
        "haystack": span(os.urandom(16), "haystack.agent.step.tool", {"haystack.tool.error": True}),
        "strands": span(os.urandom(16), "execute_tool x", {"gen_ai.operation.name": "execute_tool",
                                                           "gen_ai.tool.status": "error"}),
        "langchain": span(os.urandom(16), "lookup", {**oi_tool, "output.value": tool_message("error")}),
        # Over the payload threshold (1 KiB): kept in `payloads`, read there.
        "langchain long": span(os.urandom(16), "lookup",
                               {**oi_tool, "output.value": tool_message("error", "." * 2000)}),
        "openllmetry": span(os.urandom(16), "execute_tool lookup", {
            "traceloop.span.kind": "tool", "traceloop.entity.output": json.dumps({"output": lc_constructor,
                                                                                 "kwargs": {"tags": []}})}),
        "llamaindex": span(os.urandom(16), "lookup", {**oi_tool, "output.value": json.dumps(
            {"blocks": [{"text": "boom"}], "tool_name": "lookup", "raw_output": "boom", "is_error": True})}),
    }
    succeeded = {
        "ok": span(os.urandom(16), "chat", {}),
        "tool ok": span(os.urandom(16), "lookup", {**oi_tool, "output.value": tool_message("success")}),
        # A tool whose own result says "error" ran; the model reads the result.
        "own status": span(os.urandom(16), "lookup", {**oi_tool, "output.value": json.dumps({"status": "error"})}),
        # A wrapper read only from a tool span's output.
        "not a tool": span(os.urandom(16), "chain", {"openinference.span.kind": "CHAIN",
                                                     "output.value": tool_message("error")}),
        "haystack ok": span(os.urandom(16), "haystack.agent.step.tool", {"haystack.tool.error": False}),
    }
    spans = {**failed, **succeeded}
    await send(running, key, request(list(spans.values())))
    rows = await asyncio.to_thread(running.store.query_dicts, "SELECT trace_id, failed FROM spans FINAL "
                                   "WHERE agent_id = {a:String}", {"a": agent_id})
    flagged = {r["trace_id"]: bool(r["failed"]) for r in rows}
    assert {name: flagged[s.trace_id.hex()] for name, s in spans.items()} == {
        **{name: True for name in failed}, **{name: False for name in succeeded}}


async def test_call_response_id_is_the_response_id_the_trajectory_tells_reports_of_one_call_by(
        running: Running) -> None:
    """`call_response_id` (trajectory/tables.py, migration 213), by which the session list counts once a call two
    instrumentations report: the id attribute, else the id OpenInference's client instrumentations' output starts
    with (in either map), as the trajectory reads it (`same_call.response_id`)."""
    agent_id, key = await asyncio.to_thread(running.new_agent)
    llm = {"openinference.span.kind": "LLM", "llm.model_name": "claude-sonnet-4-5", "llm.token_count.prompt": 10}
    attributes = {
        "output": {**llm, "output.value": json.dumps({"id": "msg_1", "content": [], "role": "assistant"})},
        "compact output": {**llm, "output.value": '{"id":"msg_2","content":[]}'},
        # Over the payload threshold (1 KiB): kept in `payloads`, read there.
        "long output": {**llm, "output.value": json.dumps({"id": "msg_3", "content": "." * 2000})},
        "attribute first": {**llm, "llm.response.id": "r-4", "output.value": json.dumps({"id": "msg_4"})},
        "id not first": {**llm, "output.value": json.dumps({"model": "m", "id": "msg_5"})},
        "langchain": {**llm, "output.value": json.dumps({"generations": [[{"text": "hi"}]], "llm_output": None})},
        "not a call": {"openinference.span.kind": "CHAIN", "output.value": json.dumps({"id": "run_6"})},
    }
    await send(running, key, request([span(os.urandom(16), name, a) for name, a in attributes.items()]))
    rows = await asyncio.to_thread(running.store.query_dicts, "SELECT name, call_response_id FROM spans FINAL "
                                   "WHERE agent_id = {a:String}", {"a": agent_id})
    stored = {r["name"]: r["call_response_id"] for r in rows}
    assert stored == {"output": "msg_1", "compact output": "msg_2", "long output": "msg_3",
                      "attribute first": "r-4", "id not first": "", "langchain": "", "not a call": ""}
    for name, a in attributes.items():
        call = openinference.map_span(SpanReader(Span("0" * 32, "0" * 16, "", name, 1, 0, 1, 1, attributes=a)), [])
        assert (same_call.response_id(call) or "" if isinstance(call, LlmCall) else "") == stored[name], name


async def test_the_agents_session_attribute_outranks_the_conventions_when_usable(running: Running) -> None:
    agent_id, key = await asyncio.to_thread(running.new_agent, "named")
    status, body = await asyncio.to_thread(running.call, "PUT", f"/api/agents/{agent_id}/mapping",
                                           {"session_id_attribute": "app.conversation"})
    assert status == 200, body
    trace = os.urandom(16)
    # The first of repeated keys, as a map lookup takes it.
    twice = span(trace, "own twice", {"session.id": "s-x"})
    twice.attributes.extend(key_values({"app.conversation": "first"}) + key_values({"app.conversation": "second"}))
    await send(running, key, request([
        span(trace, "own", {"session.id": "s-conv", "app.conversation": "conv-1"}),
        span(trace, "own int", {"app.conversation": 42, "gen_ai.conversation.id": "g-1"}),
        span(trace, "own bool", {"app.conversation": False}),
        # An empty value is no name: the conventions' keys decide, as for any name.
        span(trace, "own empty", {"app.conversation": "", "session.id": "s-fallback"}),
        span(trace, "own absent", {"gen_ai.conversation.id": "g-2"}),
        span(trace, "own not scalar", {"app.conversation": ["a"], "session.id": "s-list"}),
        twice,
    ]))
    typed = await asyncio.to_thread(typed_by_name, running, agent_id)
    assert {name: row["session_id"] for name, row in typed.items()} == {
        "own": "conv-1", "own int": "42", "own bool": "false", "own empty": "s-fallback", "own absent": "g-2",
        "own not scalar": "s-list", "own twice": "first"}


async def test_values_of_every_type_and_depth_come_back_as_sent(running: Running) -> None:
    agent_id, key = await asyncio.to_thread(running.new_agent)
    trace = os.urandom(16)
    values: dict[str, Any] = {
        "s": "text", "i": -7, "d": 2.5, "b": True, "raw": b"\x00\xffbytes",
        "list": ["a", 1, 2.5, False],
        "nested": [[1, [2, {"deep": [b"\x01", {"deeper": "yes"}]}]], {"k": ["v"]}],
        "kv": {"n": 1, "inner": {"list": [1, 2], "t": "x"}},
        "empty_list": [],
    }
    linked = os.urandom(16), os.urandom(8)
    body = request(
        [span(trace, "typed", values,
              events=[trace_pb2.Span.Event(time_unix_nano=10**18 + 1, name="exception",
                                           attributes=key_values({"exception.type": "ValueError", "n": 3}))],
              links=[trace_pb2.Span.Link(trace_id=linked[0], span_id=linked[1],
                                         attributes=key_values({"why": ["retry", 2]}))])],
        resource={"service.name": "svc", "service.instance": 4, "host.tags": ["a", "b"]})
    await send(running, key, body)
    (stored,) = await asyncio.to_thread(read_trace_spans, running.store, agent_id, [trace.hex()])
    assert stored.attributes == values
    assert stored.resource_attributes == {"service.name": "svc", "service.instance": 4, "host.tags": ["a", "b"]}
    assert stored.scope_name == "lib" and stored.scope_version == "1.2"
    (event,) = stored.events
    assert (event.name, event.time_unix_nano, event.attributes) == (
        "exception", 10**18 + 1, {"exception.type": "ValueError", "n": 3})
    (link,) = stored.links
    assert (link.trace_id, link.span_id, link.attributes) == (linked[0].hex(), linked[1].hex(), {"why": ["retry", 2]})
    service = running.store.query("SELECT service_name FROM spans FINAL WHERE agent_id = {a:String}", {"a": agent_id})
    assert service == [("svc",)]


async def test_the_cap_cuts_between_characters_and_keeps_the_length(tmp_path: Path) -> None:
    async with serve(tmp_path, max_attribute_bytes=10) as running:
        agent_id, key = await asyncio.to_thread(running.new_agent)
        trace = os.urandom(16)
        # 4-byte characters: 10 bytes hold two of them and half of a third, which is dropped.
        await send(running, key, request([span(trace, "big", {"emoji": "😀" * 5, "short": "ok", "n": 12345})]))
        (stored,) = await asyncio.to_thread(read_trace_spans, running.store, agent_id, [trace.hex()])
        assert stored.attributes == {"emoji": "😀😀", "short": "ok", "n": 12345}
        assert stored.truncated == {"emoji": 20}


async def test_a_request_with_nothing_valid_stores_nothing_and_says_why(running: Running) -> None:
    agent_id, key = await asyncio.to_thread(running.new_agent)
    bad = trace_pb2.Span(trace_id=b"short", span_id=os.urandom(8), name="bad", start_time_unix_nano=1,
                         end_time_unix_nano=2)
    answer = trace_service_pb2.ExportTraceServiceResponse.FromString(await send(running, key, request([bad])))
    assert answer.partial_success.rejected_spans == 1
    assert "trace_id must be 16 bytes" in answer.partial_success.error_message
    count = running.store.query("SELECT count() FROM spans WHERE agent_id = {a:String}", {"a": agent_id})
    assert count == [(0,)]
