"""Re-record: as `anthropic-sdk_openinference`, but with the tracer provider made global.

    python3 -m venv /tmp/cap-anthropic-oi && /tmp/cap-anthropic-oi/bin/pip install \
        anthropic==2.17.0 openinference-instrumentation-anthropic==3.1.0 openinference-instrumentation==0.1.72 \
        opentelemetry-sdk==1.45.2 opentelemetry-exporter-otlp-proto-http==1.45.2
    /tmp/cap-anthropic-oi/bin/python tests/captures/anthropic-sdk_openinference_global-provider/record.py

The usual setup (Phoenix's `register()` sets the global provider by default): the Anthropic SDK's
own tracing (anthropic 2.x, on by default, metadata only) then reports every call too. Its
`anthropic.messages.create` span is a child of OpenInference's `messages.create` span for a
call made with `create`, and a sibling of OpenInference's `messages.stream` span for a call made
with `stream`. Each call must still be one step. (The versions are in meta.json.)
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

from tests.captures.recording.session import Recording

SESSION = "oi-anthropic-trip-global-1"
MODEL = "claude-sonnet-4-5"
SYSTEM = "You are a terse travel assistant. Use the tools; never guess a number."
QUESTIONS = ["What is the weather in Lisbon and in Porto?",
             "And how many escudos is 100 EUR today?"]
REPLIES = [
    {"text": "Checking both cities.",
     "tool_calls": [{"name": "get_weather", "arguments": {"city": "Lisbon"}},
                    {"name": "get_weather", "arguments": {"city": "Porto"}}]},
    {"text": "Lisbon is sunny at 24°C; Porto is cloudy at 18°C."},
    {"tool_calls": [{"name": "convert_currency", "arguments": {"amount": 100, "source": "EUR", "target": "PTE"}}]},
    {"text": "I could not convert to escudos: the rate service does not know PTE (replaced by the euro in 2002)."},
]
WEATHER = {"Lisbon": "sunny, 24°C", "Porto": "cloudy, 18°C"}
RATES = {("EUR", "USD"): 1.08}
TOOLS = [
    {"name": "get_weather", "description": "The weather in a city",
     "input_schema": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}},
    {"name": "convert_currency", "description": "Convert an amount between currencies",
     "input_schema": {"type": "object", "properties": {"amount": {"type": "number"}, "source": {"type": "string"},
                                                       "target": {"type": "string"}},
                      "required": ["amount", "source", "target"]}},
]


def main() -> None:
    with Recording(Path(__file__).parent, REPLIES, framework="anthropic-sdk", instrumentation="openinference",
                   packages=["anthropic", "openinference-instrumentation-anthropic", "openinference-instrumentation",
                             "opentelemetry-sdk"],
                   session_id=SESSION,
                   notes="as anthropic-sdk_openinference, with trace.set_tracer_provider(provider): the SDK's "
                         "own anthropic.messages.create spans report every call too (a child of OpenInference's "
                         "messages.create span, a sibling of its messages.stream span)") as rec:
        rec.env()
        import anthropic
        from openinference.instrumentation import OITracer, TraceConfig, using_session
        from openinference.instrumentation.anthropic import AnthropicInstrumentor
        from opentelemetry import trace
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
        from opentelemetry.sdk.resources import Resource
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import BatchSpanProcessor

        provider = TracerProvider(resource=Resource.create({"service.name": "trip-bot"}))
        provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
        trace.set_tracer_provider(provider)
        AnthropicInstrumentor().instrument(tracer_provider=provider)
        tracer = OITracer(provider.get_tracer("trip-bot"), config=TraceConfig())

        @tracer.tool(name="get_weather")
        def get_weather(city: str) -> str:
            return WEATHER[city]

        @tracer.tool(name="convert_currency")
        def convert_currency(amount: float, source: str, target: str) -> str:
            rate = RATES.get((source, target))
            if rate is None:
                raise ValueError(f"no exchange rate for {source} -> {target}")
            return f"{amount * rate:.2f} {target}"

        functions: dict[str, Any] = {"get_weather": get_weather, "convert_currency": convert_currency}
        client = anthropic.Anthropic()

        def ask(**request: Any) -> Any:
            if not request.pop("streamed"):
                return client.messages.create(**request)
            with client.messages.stream(**request) as stream:
                for _ in stream.text_stream:
                    pass
                return stream.get_final_message()

        def run_tool(block: Any) -> dict[str, Any]:
            try:
                return {"type": "tool_result", "tool_use_id": block.id,
                        "content": functions[block.name](**block.input)}
            except Exception as exc:  # the model is told, as a real loop would
                return {"type": "tool_result", "tool_use_id": block.id, "is_error": True,
                        "content": f"{type(exc).__name__}: {exc}"}

        messages: list[dict[str, Any]] = []
        for turn, question in enumerate(QUESTIONS):
            messages.append({"role": "user", "content": question})
            with using_session(SESSION), tracer.start_as_current_span(
                    "trip-bot", openinference_span_kind="agent") as agent:
                agent.set_input(question)
                while True:
                    answer = ask(model=MODEL, max_tokens=512, system=SYSTEM, messages=messages, tools=TOOLS,
                                 streamed=turn == 1)
                    messages.append({"role": "assistant",
                                     "content": [b.model_dump(exclude_none=True) for b in answer.content]})
                    uses = [b for b in answer.content if b.type == "tool_use"]
                    if not uses:
                        break
                    messages.append({"role": "user", "content": [run_tool(b) for b in uses]})
                agent.set_output("".join(b.text for b in answer.content if b.type == "text"))
        rec.flush(provider)


if __name__ == "__main__":
    main()
