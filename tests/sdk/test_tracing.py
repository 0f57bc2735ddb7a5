"""The root span of a task call, nesting of the task's own spans, and routing by trace to each experiment."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from opentelemetry import trace
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from evalkit.sdk.binding import BoundTask, TaskCall
from evalkit.sdk.tracing import ROOT_SPAN_NAME, RunTracer, evalkit_provider


def call_in_root(tracer: RunTracer, task: Any, session_id: str, case_id: str = "c1") -> None:
    bound = BoundTask(task)
    call = TaskCall(input={"q": "hi"}, files=[], model=None, metadata={})

    async def go() -> None:
        with tracer.root_span(session_id=session_id, case_id=case_id, repetition=2, experiment_id="7",
                              input={"q": "hi"}) as span:
            outcome = await bound.invoke(call, None)
            tracer.record_outcome(span, status=outcome.status, answer=outcome.answer, output=outcome.output,
                                  error=outcome.error)

    asyncio.run(go())
    tracer.flush()


def child_task(input: Any) -> str:
    # The task's own instrumentation: the global tracer, the ambient context.
    with trace.get_tracer("my.agent").start_as_current_span("chat gpt-x"):
        with trace.get_tracer("my.agent").start_as_current_span("execute_tool lookup"):
            pass
    return "hello"


def test_root_span_carries_the_run_and_the_tasks_spans_nest_under_it() -> None:
    exporter = InMemorySpanExporter()
    tracer = RunTracer.to_exporter(exporter)
    assert trace.get_tracer_provider() is evalkit_provider()  # no caller provider: evalkit's is global
    # An outer span of the caller must not become the root's parent.
    with trace.get_tracer("caller").start_as_current_span("caller-outer"):
        call_in_root(tracer, child_task, "sess-1")
    spans = {s.name: s for s in exporter.get_finished_spans()}
    assert set(spans) == {ROOT_SPAN_NAME, "chat gpt-x", "execute_tool lookup"}  # caller-outer: not routed here
    root = spans[ROOT_SPAN_NAME]
    assert root.parent is None
    attrs = dict(root.attributes or {})
    assert attrs["session.id"] == "sess-1" and attrs["evalkit.case_id"] == "c1"
    assert attrs["evalkit.repetition"] == 2 and attrs["evalkit.experiment_id"] == "7"
    assert json.loads(str(attrs["evalkit.input"])) == {"q": "hi"} and attrs["evalkit.output"] == "hello"
    chat = spans["chat gpt-x"]
    assert chat.parent is not None and chat.parent.span_id == root.context.span_id
    tool = spans["execute_tool lookup"]
    assert tool.parent is not None and tool.parent.span_id == chat.context.span_id
    assert {s.context.trace_id for s in spans.values()} == {root.context.trace_id}
    tracer.close()


def test_async_task_spans_nest_and_errors_mark_the_root() -> None:
    exporter = InMemorySpanExporter()
    tracer = RunTracer.to_exporter(exporter)

    async def failing(input: Any) -> str:
        with trace.get_tracer("my.agent").start_as_current_span("chat"):
            await asyncio.sleep(0)
        raise RuntimeError("model overloaded")

    call_in_root(tracer, failing, "sess-2")
    spans = {s.name: s for s in exporter.get_finished_spans()}
    root = spans[ROOT_SPAN_NAME]
    assert spans["chat"].parent is not None and spans["chat"].parent.span_id == root.context.span_id
    assert root.status.status_code == trace.StatusCode.ERROR
    assert root.status.description == "RuntimeError: model overloaded"
    assert (root.attributes or {})["evalkit.status"] == "failed"
    tracer.close()


def test_two_experiments_in_one_process_each_get_their_own_spans() -> None:
    first, second = InMemorySpanExporter(), InMemorySpanExporter()
    a, b = RunTracer.to_exporter(first), RunTracer.to_exporter(second)
    call_in_root(a, child_task, "sess-a")
    call_in_root(b, child_task, "sess-b")
    assert {(s.attributes or {}).get("session.id") for s in first.get_finished_spans()} == {"sess-a", None}
    assert {(s.attributes or {}).get("session.id") for s in second.get_finished_spans()} == {"sess-b", None}
    assert len(first.get_finished_spans()) == len(second.get_finished_spans()) == 3
    a.close()
    b.close()
