"""The Anthropic trip scenario the two `anthropic-sdk_openinference*` captures record.

A hand-written tool loop on the Anthropic SDK, traced by OpenInference. Two user turns of one session
(`using_session`), each its own trace under an application AGENT span, the second re-sending the first's
history. A system prompt; turn one is answered by two parallel tool uses (with text), made with
`messages.create`; turn two runs with `messages.stream`, and its tool raises: the loop sends the model a
`tool_result` with `is_error: true` and the error text. The tools are OpenInference TOOL spans
(`OITracer.tool`: `input.value` the arguments, `output.value` the result, the exception recorded and the
status error on the failing one). Imported by the capture folders' `record.py` inside the recording
virtualenv (their docstrings say which), never by the tests.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.captures.recording.session import Recording

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


def record(capture_dir: Path, session_id: str, notes: str, *, global_provider: bool = False) -> None:
    """Run the scenario, OpenInference's anthropic instrumentation on; `global_provider`: the tracer provider
    made the global one too, as Phoenix's `register()` does (the SDK's own tracing then reports every call)."""
    with Recording(capture_dir, REPLIES, framework="anthropic-sdk", instrumentation="openinference",
                   packages=["anthropic", "openinference-instrumentation-anthropic", "openinference-instrumentation",
                             "opentelemetry-sdk"],
                   session_id=session_id, notes=notes) as rec:
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
        if global_provider:
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
            with using_session(session_id), tracer.start_as_current_span(
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
