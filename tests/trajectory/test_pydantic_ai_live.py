"""Spans from a real pydantic-ai run (FunctionModel, no network) through the SDK's in-memory exporter."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import Any

import atif
import pytest
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from pydantic_ai import Agent, RunContext
from pydantic_ai.capabilities.instrumentation import Instrumentation
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ThinkingPart, ToolCallPart
from pydantic_ai.models.function import AgentInfo, FunctionModel
from pydantic_ai.models.instrumented import InstrumentationSettings
from pydantic_ai.usage import RequestUsage
from span_fixtures import readable_to_span

from evalkit.trajectory.from_spans import trajectory_from_spans
from evalkit.trajectory.prices import PriceBook
from evalkit.trajectory.span import Span
from evalkit.trajectory.summary import summarise

PRICES = PriceBook.from_yaml(
    """
rules:
  - provider: function
    model: "function:*"
    input: 1
    output: 4
    cache_read: 0.5
    cache_write: 2
"""
)


@pytest.fixture
def exporter() -> Iterator[tuple[InMemorySpanExporter, TracerProvider]]:
    memory = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(memory))
    yield memory, provider
    provider.shutdown()


def _spans(memory: InMemorySpanExporter) -> list[Span]:
    return [readable_to_span(span) for span in memory.get_finished_spans()]


def _instrumented(provider: TracerProvider, version: int = 5) -> list[Any]:
    return [Instrumentation(settings=InstrumentationSettings(tracer_provider=provider, version=version))]


@pytest.mark.parametrize("version", [5, 6])
def test_tool_call_with_thinking_cache_and_a_failing_tool(
    exporter: tuple[InMemorySpanExporter, TracerProvider], version: int
) -> None:
    memory, provider = exporter

    def script(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        if len(messages) == 1:
            return ModelResponse(
                parts=[
                    ThinkingPart(content="Two cities, two calls."),
                    ToolCallPart(tool_name="get_weather", args={"city": "Paris"}, tool_call_id="call_paris"),
                    ToolCallPart(
                        tool_name="get_weather", args={"city": "Atlantis"}, tool_call_id="call_atlantis"
                    ),
                ],
                usage=RequestUsage(
                    input_tokens=200, output_tokens=30, cache_read_tokens=150, cache_write_tokens=10
                ),
            )
        return ModelResponse(
            parts=[TextPart(content="Paris is sunny; Atlantis is unknown.")],
            usage=RequestUsage(input_tokens=260, output_tokens=12, cache_read_tokens=200),
        )

    agent = Agent(
        FunctionModel(script),
        name="weather",
        instructions="Answer briefly.",
        capabilities=_instrumented(provider, version),
    )

    paris_answered = threading.Event()

    @agent.tool
    def get_weather(ctx: RunContext, city: str) -> str:
        """Weather of a city."""
        if city == "Atlantis":
            # pydantic-ai runs the two calls at once and cancels the other when one raises: Atlantis raises only
            # once Paris has answered, or on a loaded machine Paris's result could be cancelled before it is recorded.
            paris_answered.wait(timeout=10)
            raise RuntimeError("no such city")
        paris_answered.set()
        return f"sunny in {city}"

    with pytest.raises(RuntimeError):
        agent.run_sync("Weather in Paris and Atlantis?")
    spans = _spans(memory)
    result = trajectory_from_spans(spans, prices=PRICES)
    assert result.valid, [str(issue) for issue in result.issues]
    document = result.document()
    atif.Trajectory.model_validate(document)
    steps = document["steps"]
    assert [(s["source"], s["message"]) for s in steps] == [
        ("system", "Answer briefly."),
        ("user", "Weather in Paris and Atlantis?"),
        ("agent", ""),
    ]
    call_step = steps[2]
    assert call_step["reasoning_content"] == "Two cities, two calls."
    assert [c["tool_call_id"] for c in call_step["tool_calls"]] == ["call_paris", "call_atlantis"]
    results = {r["source_call_id"]: r for r in call_step["observation"]["results"]}
    assert results["call_paris"]["content"] == "sunny in Paris"
    failed = results["call_atlantis"]
    assert failed["extra"]["is_error"] is True
    assert failed["extra"]["error"]["exceptions"][0]["type"] == "RuntimeError"
    assert failed["extra"]["error"]["exceptions"][0]["message"] == "no such city"
    # 40 uncached x $1 + 150 cached x $0.5 + 10 written x $2 + 30 out x $4 = 255 per million
    assert call_step["metrics"]["cost_usd"] == 0.000255
    assert document["final_metrics"]["total_cost_usd"] == 0.000255
    # The agent run failed as a whole too; that is not lost.
    assert summarise(result.document()).tool_errors == 1


def test_full_run_priced_and_counted_once(exporter: tuple[InMemorySpanExporter, TracerProvider]) -> None:
    memory, provider = exporter

    def script(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        if len(messages) == 1:
            return ModelResponse(
                parts=[ToolCallPart(tool_name="add", args={"a": 2, "b": 3}, tool_call_id="c1")],
                usage=RequestUsage(input_tokens=100, output_tokens=10),
            )
        return ModelResponse(
            parts=[TextPart(content="5")], usage=RequestUsage(input_tokens=120, output_tokens=2)
        )

    agent = Agent(
        FunctionModel(script), name="calc", system_prompt="You add.", capabilities=_instrumented(provider)
    )

    @agent.tool_plain
    def add(a: int, b: int) -> int:
        return a + b

    assert agent.run_sync("2+3?").output == "5"
    assert agent.run_sync("again: 2+3?", message_history=None).output == "5"
    spans = _spans(memory)
    # Two runs, two traces; the second run re-sends nothing of the first (no history given).
    first_trace = spans[0].trace_id
    result = trajectory_from_spans([s for s in spans if s.trace_id == first_trace], prices=PRICES)
    document = result.document()
    assert result.valid
    assert [(s["source"], s["message"]) for s in document["steps"]] == [
        ("system", "You add."),
        ("user", "2+3?"),
        ("agent", ""),
        ("agent", "5"),
    ]
    assert document["steps"][2]["observation"]["results"][0]["content"] == "5"
    assert document["steps"][2]["tool_calls"][0]["arguments"] == {"a": 2, "b": 3}
    # (100 x 1 + 10 x 4) + (120 x 1 + 2 x 4) = 268 per million
    assert document["final_metrics"]["total_cost_usd"] == 0.000268
    assert document["final_metrics"]["total_prompt_tokens"] == 220
    summary = summarise(result.document())
    assert (summary.llm_calls, summary.tool_calls, summary.prompt_tokens, summary.completion_tokens) == (
        2,
        1,
        220,
        12,
    )
    assert summary.cost_usd == 0.000268


def test_subagent_called_from_a_tool_is_embedded(
    exporter: tuple[InMemorySpanExporter, TracerProvider],
) -> None:
    memory, provider = exporter

    def researcher_script(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        return ModelResponse(
            parts=[TextPart(content="Paris has 2.1M people.")],
            usage=RequestUsage(input_tokens=40, output_tokens=8),
        )

    researcher = Agent(
        FunctionModel(researcher_script), name="researcher", capabilities=_instrumented(provider)
    )

    def lead_script(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        if len(messages) == 1:
            return ModelResponse(
                parts=[
                    ToolCallPart(
                        tool_name="research", args={"question": "population of Paris"}, tool_call_id="r1"
                    )
                ],
                usage=RequestUsage(input_tokens=100, output_tokens=10),
            )
        return ModelResponse(
            parts=[TextPart(content="About 2.1 million.")],
            usage=RequestUsage(input_tokens=130, output_tokens=5),
        )

    lead = Agent(FunctionModel(lead_script), name="lead", capabilities=_instrumented(provider))

    @lead.tool_plain
    async def research(question: str) -> str:
        return (await researcher.run(question)).output

    assert lead.run_sync("How many people live in Paris?").output == "About 2.1 million."
    result = trajectory_from_spans(_spans(memory), prices=PRICES)
    assert result.valid, [str(issue) for issue in result.issues]
    document = result.document()
    atif.Trajectory.model_validate(document)
    assert document["agent"]["name"] == "lead"
    [sub] = document["subagent_trajectories"]
    assert sub["agent"]["name"] == "researcher"
    assert [(s["source"], s["message"]) for s in sub["steps"]] == [
        ("user", "population of Paris"),
        ("agent", "Paris has 2.1M people."),
    ]
    call_step = document["steps"][1]
    [tool_result] = call_step["observation"]["results"]
    assert tool_result["source_call_id"] == "r1"
    assert tool_result["content"] == "Paris has 2.1M people."
    assert tool_result["subagent_trajectory_ref"] == [
        {"trajectory_id": sub["trajectory_id"], "session_id": document["session_id"]}
    ]
    # The lead's steps hold only the lead's calls; totals include the subagent's.
    assert [s["metrics"]["prompt_tokens"] for s in document["steps"] if s["source"] == "agent"] == [100, 130]
    assert document["final_metrics"]["total_prompt_tokens"] == 270
    # lead: 100+40 + 130+20 = 290; researcher: 40 + 32 = 72 -> 362 per million
    assert document["final_metrics"]["total_cost_usd"] == 0.000362
    assert sub["final_metrics"]["total_cost_usd"] == 0.000072
