"""The trajectory's span read (`read_spans_to_map`) gives what the full read gives, less what it leaves out."""

from __future__ import annotations

import asyncio
import dataclasses

import pytest
from opentelemetry.proto.collector.trace.v1 import trace_service_pb2
from opentelemetry.proto.common.v1 import common_pb2
from opentelemetry.proto.resource.v1 import resource_pb2
from opentelemetry.proto.trace.v1 import trace_pb2

from evalkit.trajectory.read import read_spans_to_map, read_spans_to_map_settling, read_trace_spans, session_window
from tests.trajectory_service.conftest import BASE_NS, Service, chat, http, kv, root, shared_svc, span

# One service for the module's tests (each sends to agents of its own): a service per test was ~1 s of each.
pytestmark = pytest.mark.asyncio(loop_scope="module")


@pytest.fixture
def svc(module_service: Service) -> Service:
    return shared_svc(module_service)


def _event(name: str, at_s: float, **attributes: object) -> trace_pb2.Span.Event:
    return trace_pb2.Span.Event(name=name, time_unix_nano=BASE_NS + int(at_s * 1e9),
                                attributes=[kv(k.replace("__", "."), v) for k, v in attributes.items()])


async def test_spans_to_map_equal_the_full_read_less_links_truncation_and_other_resource_attributes(
    svc: Service,
) -> None:
    agent, key = await svc.new_agent()
    with_events = chat(1, 11, 10, 1.0, text='quote " backslash \\ slash / tab \t and ünïcødé ✓')
    with_events.events.extend([
        _event("exception", 1.2, exception__type="ValueError", exception__message="bad\nline"),
        _event("gen_ai.choice", 1.3, index=0, score=0.5, ok=True, raw=b"\x00\x01"),
        _event("empty", 1.4),
    ])
    with_events.links.append(trace_pb2.Span.Link(trace_id=(9).to_bytes(16, "big"), span_id=(9).to_bytes(8, "big"),
                                                 attributes=[kv("link.kind", "follows")]))
    tool = span(1, 12, 10, "execute_tool search", 1.5, 1.6, error=True, gen_ai__operation__name="execute_tool",
                gen_ai__tool__name="search", count=3, ratio=0.25)
    spans = [with_events, tool, root(1, 10, "s-read", 0.5, 2.0)]
    request = trace_service_pb2.ExportTraceServiceRequest(resource_spans=[trace_pb2.ResourceSpans(
        resource=resource_pb2.Resource(attributes=[kv("service.name", "agent-svc"), kv("host.name", "h1"),
                                                   kv("process.pid", 42)]),
        scope_spans=[trace_pb2.ScopeSpans(scope=common_pb2.InstrumentationScope(name="tests", version="1.2"),
                                          spans=spans)])])
    reply = await asyncio.to_thread(http, "POST", svc.running.otlp_http + "/v1/traces", None, key,
                                    request.SerializeToString(), "application/x-protobuf")
    assert reply.status == 200, reply.text

    store = svc.running.store
    window = session_window(store, agent, "s-read")
    assert window is not None
    full = read_trace_spans(store, agent, window.trace_ids)
    to_map = read_spans_to_map(store, agent, window.trace_ids)
    assert [s.span_id for s in to_map] == [s.span_id for s in full]
    assert any(s.events for s in full) and any(s.links for s in full)
    for whole, mapped in zip(full, to_map, strict=True):
        expected = dataclasses.replace(
            whole, links=(), truncated={},
            resource_attributes={k: v for k, v in whole.resource_attributes.items() if k == "service.name"})
        assert mapped == expected
        assert mapped.resource_attributes == {"service.name": "agent-svc"}
        assert list(mapped.attributes) == list(whole.attributes)  # same order too
        for mapped_event, whole_event in zip(mapped.events, whole.events, strict=True):
            assert list(mapped_event.attributes) == list(whole_event.attributes)
            assert {k: type(v) for k, v in mapped_event.attributes.items()} == {
                k: type(v) for k, v in whole_event.attributes.items()}


async def test_a_span_without_service_name_reads_no_resource_attributes(svc: Service) -> None:
    agent, key = await svc.new_agent()
    request = trace_service_pb2.ExportTraceServiceRequest(resource_spans=[trace_pb2.ResourceSpans(
        resource=resource_pb2.Resource(attributes=[kv("host.name", "h1")]),
        scope_spans=[trace_pb2.ScopeSpans(spans=[root(1, 10, "s-nosvc", 0.5, 2.0)])])])
    reply = await asyncio.to_thread(http, "POST", svc.running.otlp_http + "/v1/traces", None, key,
                                    request.SerializeToString(), "application/x-protobuf")
    assert reply.status == 200, reply.text
    window = session_window(svc.running.store, agent, "s-nosvc")
    assert window is not None
    (mapped,) = read_spans_to_map(svc.running.store, agent, window.trace_ids)
    assert mapped.resource_attributes == {}


async def test_every_read_gives_the_spans_by_start_then_span_id_across_traces(svc: Service) -> None:
    """The store keeps spans by (trace, span id); the reads give them by start time, then span id
    (the ordering is done after the query for the unpaged reads, by the query for paged ones)."""
    agent, key = await svc.new_agent()
    # Trace 2 starts first; inside trace 1 span 30 starts before span 20; 21 and 22 start together.
    spans = [root(2, 5, "s-order", 0.1, 3.0), root(1, 10, "s-order", 0.5, 3.0),
             span(1, 30, 10, "late id, early start", 0.6, 0.7), span(1, 20, 10, "early id, late start", 0.9, 1.0),
             span(2, 22, 5, "tie b", 1.2, 1.3), span(1, 21, 10, "tie a", 1.2, 1.3),
             span(2, 6, 5, "last", 2.0, 2.1)]
    await svc.send(key, spans)
    store = svc.running.store
    window = session_window(store, agent, "s-order")
    assert window is not None
    expected = [f"{n:016x}" for n in (5, 10, 30, 20, 21, 22, 6)]
    assert [s.span_id for s in read_trace_spans(store, agent, window.trace_ids)] == expected
    assert [s.span_id for s in read_spans_to_map(store, agent, window.trace_ids)] == expected
    mapped, facts, _ = read_spans_to_map_settling(store, agent, window.trace_ids)
    assert [s.span_id for s in mapped] == expected
    assert facts.span_ids == expected  # the facts are the spans' own, in the same order
    assert facts.trace_ids == [s.trace_id for s in mapped]
    assert [s.span_id for s in read_trace_spans(store, agent, window.trace_ids, limit=3, offset=2)] == expected[2:5]
