"""A run whose task recorded nothing of an agent's: the trajectory says what the SDK's run span saw.

Real spans: the SDK's own tracer (`RunTracer`) around a task, exported in memory, mapped as the service maps them.
"""

from __future__ import annotations

import asyncio
from typing import Any

from opentelemetry import trace
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from span_fixtures import readable_to_span

from evalkit.sdk import tracing
from evalkit.sdk.binding import BoundTask, TaskCall
from evalkit.sdk.tracing import RunTracer
from evalkit.trajectory.from_spans import trajectory_from_spans
from evalkit.trajectory.mappers import evalkit_sdk
from evalkit.trajectory.summary import summarise


def run_task(task: Any) -> dict[str, Any]:
    exporter = InMemorySpanExporter()
    tracer = RunTracer.to_exporter(exporter)
    call = TaskCall(input={"question": "What is the capital of France?"}, files=[], model=None, metadata={})

    async def go() -> None:
        with tracer.root_span(session_id="s-1", case_id="france", repetition=1, experiment_id="3",
                              input=call.input) as span:
            outcome = await BoundTask(task).invoke(call, None)
            tracer.record_outcome(span, status=outcome.status, answer=outcome.answer, output=outcome.output,
                                  error=outcome.error)

    asyncio.run(go())
    tracer.flush()
    spans = [readable_to_span(span) for span in exporter.get_finished_spans()]
    tracer.close()
    built = trajectory_from_spans(spans)
    assert built.valid, built.issues
    return built.document()


def test_a_task_with_no_instrumentation_shows_what_it_was_asked_and_answered() -> None:
    def plain(input: Any) -> str:
        return "Paris."

    document = run_task(plain)
    steps = document["steps"]
    assert [(s["source"], s["message"]) for s in steps] == [
        ("user", '{"question": "What is the capital of France?"}'), ("agent", "Paris.")]
    assert steps[1]["extra"]["from"] == "evalkit run span" and "error" not in steps[1]["extra"]
    assert summarise(document).errors == 0


def test_a_task_that_failed_before_its_agent_began_says_why() -> None:
    def failing(input: Any) -> str:
        raise ConnectionError("the model endpoint is down")

    document = run_task(failing)
    steps = document["steps"]
    assert [(s["source"], s["message"]) for s in steps] == [
        ("user", '{"question": "What is the capital of France?"}'), ("agent", "")]
    error = steps[1]["extra"]["error"]
    assert error["status"] == "error" and "the model endpoint is down" in error["message"]
    assert error["type"] == "ConnectionError"
    # The session list counts the run span's error; the trajectory's summary now counts it too.
    assert summarise(document).errors == 1


def test_an_instrumented_task_keeps_its_own_steps() -> None:
    def instrumented(input: Any) -> str:
        tracer = trace.get_tracer("my.agent")
        with tracer.start_as_current_span("chat gpt-x", attributes={
                "gen_ai.operation.name": "chat", "gen_ai.request.model": "gpt-x",
                "gen_ai.input.messages": '[{"role": "user", "parts": [{"type": "text", "content": "Capital?"}]}]',
                "gen_ai.output.messages": '[{"role": "assistant", "parts": [{"type": "text", "content": "Paris."}]}]',
        }):
            pass
        return "Paris."

    document = run_task(instrumented)
    assert [(s["source"], s["message"]) for s in document["steps"]] == [("user", "Capital?"), ("agent", "Paris.")]
    assert all(s.get("extra", {}).get("from") != "evalkit run span" for s in document["steps"])


def test_the_run_spans_names_are_the_sdks() -> None:
    assert (evalkit_sdk.RUN_SPAN, evalkit_sdk.SCOPE) == (tracing.ROOT_SPAN_NAME, "evalkit.sdk")
    source = open(tracing.__file__).read()
    assert all(f'"{key}"' in source for key in (evalkit_sdk.SCOPE, evalkit_sdk.INPUT, evalkit_sdk.OUTPUT))
