"""Sessions from hand-built OTLP requests: split traces, arrival order, missing parents, big values, prices."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from tests.trajectory_service.conftest import (
    Service,
    assert_schema_and_atif_valid,
    chat,
    kv,
    root,
    running_service,
    shared_svc,
    span,
)

# One service for the module's tests (each sends to agents of its own; one that needs other settings starts its
# own): a service per test was ~1 s of each.
pytestmark = pytest.mark.asyncio(loop_scope="module")


@pytest.fixture
def svc(module_service: Service) -> Service:
    return shared_svc(module_service)


async def test_session_split_across_traces_arriving_out_of_order(svc: Service) -> None:
    agent, key = await svc.new_agent()
    # Trace 2 first, children before roots; the roots carry the session id and come last.
    await svc.send(key, [chat(2, 21, 20, 10.0, user="second question", text="second answer")])
    await svc.send(key, [chat(1, 11, 10, 1.0, user="first question", text="first answer")])
    await svc.send(key, [root(2, 20, "s-split", 9.5, 11.0), root(1, 10, "s-split", 0.5, 2.0)])
    reply = await svc.trajectory(agent, "s-split")
    assert reply.status == 200, reply.text
    document = reply.body
    assert reply.headers["X-Evalkit-Trajectory-Status"] == "valid"
    assert [(s["source"], s["message"]) for s in document["steps"]] == [
        ("user", "first question"), ("agent", "first answer"), ("user", "second question"), ("agent", "second answer")]
    assert document["final_metrics"]["total_prompt_tokens"] == 200
    # test-model: $1 in, $4 out per million -> 2 x (100 x 1 + 10 x 4) = 280 per million
    assert document["final_metrics"]["total_cost_usd"] == 0.00028
    assert document["extra"]["settlement"]["trace_count"] == 2
    assert_schema_and_atif_valid(document)


async def test_missing_parent_is_kept_and_the_session_stays_partial(svc: Service) -> None:
    agent, key = await svc.new_agent()
    # Span 11's parent (12) never arrives.
    await svc.send(key, [chat(1, 11, 12, 1.0, text="orphaned answer"), root(1, 10, "s-orphan", 0.5, 2.0)])
    reply = await svc.trajectory(agent, "s-orphan")
    assert reply.status == 200, reply.text
    assert reply.headers["X-Evalkit-Trajectory-Status"] == "partial"
    settlement = reply.body["extra"]["settlement"]
    assert settlement["missing_parents"] == 1 and settlement["settled"] is False
    assert any("parent" in reason for reason in settlement["reasons"])
    assert [s["message"] for s in reply.body["steps"] if s["source"] == "agent"] == ["orphaned answer"]
    assert any("parent never arrived" in w for w in reply.body["extra"]["warnings"])
    assert_schema_and_atif_valid(reply.body)


async def test_a_10_mb_attribute_is_kept_and_the_trajectory_builds(svc: Service) -> None:
    agent, key = await svc.new_agent()
    big = "x" * (10 * 1024 * 1024)
    await svc.send(key, [chat(1, 11, 10, 1.0, text="done", **{"app.big_context": big}),
                         root(1, 10, "s-big", 0.5, 2.0)])
    detail = await svc.get(f"/api/agents/{agent}/sessions/s-big")
    assert detail.status == 200, detail.text[:500]
    chat_span = next(s for s in detail.body["spans"] if s["span_id"] == f"{11:016x}")
    assert chat_span["attributes"]["app.big_context"] == big
    assert chat_span["truncated"] is None
    assert "app.big_context" in detail.body["summary"]["unmapped_attributes"]
    reply = await svc.trajectory(agent, "s-big")
    assert reply.status == 200
    assert reply.body["steps"][-1]["message"] == "done"
    assert_schema_and_atif_valid(reply.body)


async def test_a_model_nobody_prices_is_null_and_flagged_never_zero(svc: Service) -> None:
    agent, key = await svc.new_agent()
    await svc.send(key, [chat(1, 11, 10, 1.0, model="mystery-model-9000"), root(1, 10, "s-unpriced", 0.5, 2.0)])
    reply = await svc.trajectory(agent, "s-unpriced")
    step = next(s for s in reply.body["steps"] if s["source"] == "agent")
    assert "cost_usd" not in step["metrics"]
    assert step["metrics"]["extra"]["price_source"] == "unpriced"
    assert "mystery-model-9000" in step["metrics"]["extra"]["unpriced_reason"]
    assert "total_cost_usd" not in reply.body["final_metrics"]
    assert reply.body["final_metrics"]["extra"]["unpriced_steps"] == ["steps[1]"]
    assert_schema_and_atif_valid(reply.body)
    listed = (await svc.get(f"/api/agents/{agent}/sessions")).body["sessions"]
    assert listed[0]["cost_usd"] is None and listed[0]["cost_priced"] is False
    assert listed[0]["unpriced"] == ["mystery-model-9000 (openai): no price"]


async def test_a_prefixed_dated_model_id_is_priced_as_its_model(svc: Service) -> None:
    import genai_prices

    agent, key = await svc.new_agent()
    await svc.send(key, [chat(1, 11, 10, 1.0, model="openai/gpt-4o-2024-08-06", inputs=1000, outputs=100),
                         root(1, 10, "s-prefixed", 0.5, 2.0)])
    expected = float(genai_prices.calc_price(genai_prices.Usage(input_tokens=1000, output_tokens=100),
                                             "gpt-4o-2024-08-06", provider_id="openai").total_price)
    assert expected > 0
    reply = await svc.trajectory(agent, "s-prefixed")
    step = next(s for s in reply.body["steps"] if s["source"] == "agent")
    assert step["metrics"]["cost_usd"] == expected
    assert step["metrics"]["extra"]["price_source"].startswith("genai-prices@")
    assert reply.body["final_metrics"]["total_cost_usd"] == expected
    listed = (await svc.get(f"/api/agents/{agent}/sessions")).body["sessions"]
    assert listed[0]["cost_usd"] == expected


async def test_unknown_session_is_a_helpful_404(svc: Service) -> None:
    agent, _ = await svc.new_agent()
    reply = await svc.trajectory(agent, "nope")
    assert reply.status == 404
    assert "no session 'nope'" in reply.body["error"]["message"]
    assert "evalkit sessions list" in reply.body["error"]["message"]
    assert (await svc.get(f"/api/agents/{agent}/sessions/nope")).status == 404


async def test_past_the_span_limit_413_says_how_to_page(tmp_path: Path) -> None:
    # A service of its own, with that limit (started in this module's event loop, as the shared one is).
    async with running_service(tmp_path / "svc", session_span_limit=5) as svc:
        agent, key = await svc.new_agent()
        await svc.send(key, [root(1, 10, "s-long", 0.0, 20.0)] + [chat(1, 11 + i, 10, 1.0 + i) for i in range(6)])
        reply = await svc.get(f"/api/agents/{agent}/sessions/s-long")
        assert reply.status == 413
        assert reply.body["error"]["span_count"] == 7 and reply.body["error"]["limit"] == 5
        assert "?limit=" in reply.body["error"]["message"] and "offset=" in reply.body["error"]["message"]
        first = await svc.get(f"/api/agents/{agent}/sessions/s-long?limit=4&offset=0")
        assert first.status == 200 and len(first.body["spans"]) == 4
        assert first.body["summary"]["span_count"] == 7 and first.body["summary"]["mapped_over"] == "page"
        assert first.body["next"] == "?limit=4&offset=4"
        second = await svc.get(f"/api/agents/{agent}/sessions/s-long?limit=4&offset=4")
        assert len(second.body["spans"]) == 3 and "next" not in second.body
        ids = {s["span_id"] for s in first.body["spans"]} | {s["span_id"] for s in second.body["spans"]}
        assert len(ids) == 7
        assert (await svc.get(f"/api/agents/{agent}/sessions/s-long?limit=6")).status == 400
        assert (await svc.trajectory(agent, "s-long")).status == 413


async def test_session_detail_has_typed_attributes_and_a_summary(svc: Service) -> None:
    agent, key = await svc.new_agent()
    await svc.send(key, [chat(1, 11, 10, 1.0, **{"app.blob": b"\x00\x01binary", "app.flag": True}),
                         span(1, 12, 10, "execute_tool lookup", 1.6, 1.7, error=True,
                              **{"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "lookup"}),
                         root(1, 10, "s-detail", 0.5, 2.0)])
    reply = await svc.get(f"/api/agents/{agent}/sessions/s-detail")
    assert reply.status == 200
    summary = reply.body["summary"]
    assert summary["span_count"] == 3 and summary["spans_by_kind"] == {"INTERNAL": 3}
    assert summary["spans_by_operation"] == {"invoke_agent": 1, "chat": 1, "execute_tool": 1}
    assert summary["llm_calls"] == 1 and summary["errors"] == 1
    assert summary["mapping_version"] == "built-in" and summary["mapped_over"] == "session"
    assert "app.flag" in summary["unmapped_attributes"]
    chat_span = next(s for s in reply.body["spans"] if s["name"] == "chat test-model")
    assert chat_span["attributes"]["gen_ai.usage.input_tokens"] == 100
    assert chat_span["attributes"]["app.flag"] is True
    assert chat_span["attributes"]["app.blob"] == {"bytes_base64": "AAFiaW5hcnk="}
    assert chat_span["typed"]["model"] == "test-model" and chat_span["typed"]["is_llm_call"] is True


async def test_a_key_of_another_workspace_sees_nothing(svc: Service) -> None:
    agent, key = await svc.new_agent("bot", "acme")
    _, other_key = await svc.new_agent("spy", "rival")
    await svc.send(key, [chat(1, 11, 10, 1.0), root(1, 10, "s-private", 0.5, 2.0)])
    assert (await svc.trajectory(agent, "s-private", token=key)).status == 200
    for path in ("/sessions", "/sessions/s-private", "/sessions/s-private/trajectory", "/trajectories.jsonl",
                 "/mapping"):
        reply = await svc.get(f"/api/agents/{agent}{path}", token=other_key)
        assert reply.status == 404, (path, reply.text)
        assert "s-private" not in reply.text
    assert (await svc.get(f"/api/agents/{agent}/sessions", token=None)).status == 401


async def test_messages_from_linked_log_records_reach_the_trajectory(svc: Service) -> None:
    # The event form: the chat span carries no messages, log records linked to it do. The settle
    # check counts a session's log records and the trajectory asks for them only when there are some;
    # the count is part of what a kept document is kept for.
    import json

    from opentelemetry.proto.collector.logs.v1 import logs_service_pb2
    from opentelemetry.proto.common.v1 import common_pb2
    from opentelemetry.proto.logs.v1 import logs_pb2

    from tests.trajectory_service.conftest import BASE_NS, http, kv

    agent, key = await svc.new_agent()
    bare = span(1, 11, 10, "chat test-model", 1.0, 1.5, gen_ai__operation__name="chat",
                gen_ai__request__model="test-model", gen_ai__usage__input_tokens=100, gen_ai__usage__output_tokens=10)
    await svc.send(key, [bare, root(1, 10, "s-logs", 0.5, 2.0)])
    before = await svc.trajectory(agent, "s-logs")  # settled (quiet period 0): its document is kept
    assert before.headers["X-Evalkit-Trajectory-Status"] == "valid"
    assert [s["source"] for s in before.body["steps"]] == ["agent"]

    def record(at_s: float, event: str, body: common_pb2.AnyValue) -> logs_pb2.LogRecord:
        return logs_pb2.LogRecord(
            time_unix_nano=BASE_NS + int(at_s * 1e9), trace_id=(1).to_bytes(16, "big"), span_id=(11).to_bytes(8, "big"),
            body=body, attributes=[kv("event.name", event)])

    # Bodies as the event conventions write them: a map, and a JSON string of one.
    question = common_pb2.AnyValue(
        kvlist_value=common_pb2.KeyValueList(values=[kv("content", "what do the logs say?")]))
    answer = common_pb2.AnyValue(
        string_value=json.dumps({"message": {"role": "assistant", "content": "they say hello"}}))
    request = logs_service_pb2.ExportLogsServiceRequest(resource_logs=[logs_pb2.ResourceLogs(scope_logs=[
        logs_pb2.ScopeLogs(log_records=[record(1.1, "gen_ai.user.message", question),
                                        record(1.4, "gen_ai.choice", answer)])])])
    reply = await asyncio.to_thread(http, "POST", svc.running.otlp_http + "/v1/logs", None, key,
                                    request.SerializeToString(), "application/x-protobuf")
    assert reply.status == 200, reply.text
    # No span arrived since, but log records did: the kept document is not served again.
    document = (await svc.trajectory(agent, "s-logs")).body
    assert [(s["source"], s["message"]) for s in document["steps"]] == [
        ("user", "what do the logs say?"), ("agent", "they say hello")]
    assert_schema_and_atif_valid(document)


async def test_a_key_sent_twice_under_two_types_reads_back_as_its_last_value(svc: Service) -> None:
    # OTLP forbids duplicate keys, and the Codex CLI's tool spans send `thread.id` twice: an int, then the thread's id
    # as a string. Its session and trajectory read back (they answered 500: the stored type was the int's), the value
    # the last one sent, as a collector's last-wins map keeps it.
    agent, key = await svc.new_agent()
    tool = span(1, 12, 10, "execute_tool get_weather", 1.6, 1.7, **{"gen_ai.operation.name": "execute_tool"})
    tool.attributes.extend([kv("thread.id", 7), kv("thread.id", "01a25304-8846-7f3e")])
    await svc.send(key, [chat(1, 11, 10, 1.0, text="done"), tool, root(1, 10, "s-twice", 0.5, 2.0)])
    detail = await svc.get(f"/api/agents/{agent}/sessions/s-twice")
    assert detail.status == 200, detail.text[:500]
    tool_span = next(s for s in detail.body["spans"] if s["span_id"] == f"{12:016x}")
    assert tool_span["attributes"]["thread.id"] == "01a25304-8846-7f3e"
    reply = await svc.trajectory(agent, "s-twice")
    assert reply.status == 200, reply.text[:500]
    assert next(s["message"] for s in reply.body["steps"] if s["source"] == "agent") == "done"
    assert_schema_and_atif_valid(reply.body)
