"""A pydantic-ai tool returning structured data (as in the pydantic-ai_openai_streamed capture): its result is
the compact JSON text the model was shown, as the tool span records it, not a re-rendering of it."""

from __future__ import annotations

from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from pydantic_ai import Agent
from pydantic_ai.capabilities.instrumentation import Instrumentation
from pydantic_ai.messages import ModelMessage, ModelRequest, ModelResponse, TextPart, ToolCallPart, ToolReturnPart
from pydantic_ai.models.function import AgentInfo, FunctionModel
from pydantic_ai.models.instrumented import InstrumentationSettings
from pydantic_ai.usage import RequestUsage
from span_fixtures import readable_to_span

from evalkit.trajectory.from_spans import trajectory_from_spans


def test_a_structured_tool_result_is_the_text_the_model_was_shown() -> None:
    memory = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(memory))
    shown: list[str] = []

    def script(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        if len(messages) == 1:
            return ModelResponse(
                parts=[ToolCallPart(tool_name="find_hotels", args={"city": "Madrid"}, tool_call_id="c1")],
                usage=RequestUsage(input_tokens=100, output_tokens=10),
            )
        last = messages[-1]
        assert isinstance(last, ModelRequest)
        # What an adapter with no structured tool results (OpenAI chat, Anthropic) sends the model.
        shown.extend(p.model_response_str() for p in last.parts if isinstance(p, ToolReturnPart))
        return ModelResponse(parts=[TextPart(content="Hotel Sol.")], usage=RequestUsage(input_tokens=120,
                                                                                       output_tokens=3))

    agent = Agent(FunctionModel(script), name="hotels",
                  capabilities=[Instrumentation(settings=InstrumentationSettings(tracer_provider=provider))])

    @agent.tool_plain
    def find_hotels(city: str) -> list[dict[str, object]]:
        """Hotels in a city."""
        return [{"name": "Hotel Sol", "per_night_eur": 95}, {"name": "Casa Prado", "per_night_eur": 120}]

    agent.run_sync("A hotel in Madrid?")
    provider.shutdown()
    result = trajectory_from_spans([readable_to_span(s) for s in memory.get_finished_spans()])
    assert result.valid, [str(issue) for issue in result.issues]
    (call_step,) = [s for s in result.document()["steps"] if s.get("tool_calls")]
    (observed,) = call_step["observation"]["results"]
    assert shown == ['[{"name":"Hotel Sol","per_night_eur":95},{"name":"Casa Prado","per_night_eur":120}]']
    assert observed["content"] == shown[0]
