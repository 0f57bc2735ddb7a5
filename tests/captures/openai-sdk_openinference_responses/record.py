"""Re-record: the OpenAI Python SDK's Responses API in a hand-written tool loop, traced by OpenInference.

    python3 -m venv /tmp/cap-openai-sdk_openinference_responses
    /tmp/cap-openai-sdk_openinference_responses/bin/pip install \
        openai==3.63.0 openinference-instrumentation-openai==0.1.66 openinference-instrumentation==0.1.72 \
        openinference-semantic-conventions==0.1.42 opentelemetry-sdk==1.45.2 \
        opentelemetry-exporter-otlp-proto-http==1.45.2
    /tmp/cap-openai-sdk_openinference_responses/bin/python \
        tests/captures/openai-sdk_openinference_responses/record.py

Why: the Responses API as OpenInference's openai instrumentation records it (each output item an output message of
its own; a call chained by `previous_response_id` recording only its new input items), beside the Chat Completions
loop of `openai-sdk_openinference`. A loop over `client.responses.create` as the SDK's docs show it:
`instructions=` the system prompt, the model's `function_call` items answered by `function_call_output` items. Two
user turns of one session (`using_session`), each its own trace under an application AGENT span, the tools
OpenInference TOOL spans (`OITracer.tool`). Turn 1 keeps the conversation on the client: every call re-sends the
whole input list (the question, the model's output items, the outputs). Its first answer is two parallel function
calls, of which `book_hotel` raises once: the loop sends the model the error text as that call's output, and the
model calls it again. Turn 2 keeps it on the server: each call names the previous response (`previous_response_id`)
and its input holds only the new items (the question, then the one function call's output), and is streamed
(`stream=True`, iterated to `response.completed`). Five calls in all. The function calls are scripted with the
ids the real API gives, an item id (`fc_…`) beside the `call_id` (`call_…`) the output names. The newest openai and
openinference-instrumentation-openai at the time of first recording (re-recorded with the same pins for the ids);
the versions recorded are in meta.json.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

from tests.captures.recording.session import Recording

SESSION = "oi-openai-responses-trip-1"
MODEL = "gpt-4o"
INSTRUCTIONS = "You are a terse travel assistant. Use the tools; never guess."
QUESTIONS = ["Book me a hotel in Oslo for 2 nights, and what's the weather there?", "Is Bergen warmer?"]
# Each function call with the two ids the real API gives it: its item's own id (`fc_…`) and the `call_id`
# (`call_…`) that the `function_call_output` answering it names.
REPLIES = [
    {"tool_calls": [{"name": "book_hotel", "arguments": {"city": "Oslo", "nights": 2},
                     "id": "call_Hk2bookOslo01", "item_id": "fc_67f0bookOslo01"},
                    {"name": "get_weather", "arguments": {"city": "Oslo"},
                     "id": "call_Hk2wthrOslo01", "item_id": "fc_67f0wthrOslo01"}]},
    {"tool_calls": [{"name": "book_hotel", "arguments": {"city": "Oslo", "nights": 2},
                     "id": "call_Hk2bookOslo02", "item_id": "fc_67f0bookOslo02"}]},
    {"text": "Booked Hotel Nord in Oslo for 2 nights (ref OSL-42). Expect rain, 9°C: pack an umbrella."},
    {"tool_calls": [{"name": "get_weather", "arguments": {"city": "Bergen"},
                     "id": "call_Hk2wthrBrgn01", "item_id": "fc_67f0wthrBrgn01"}]},
    {"text": "No: Bergen is windy at 7°C, colder than Oslo's 9°C."},
]
WEATHER = {"Oslo": "rainy, 9°C", "Bergen": "windy, 7°C"}
TOOLS = [
    {"type": "function", "name": "get_weather", "description": "The weather in a city",
     "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}},
    {"type": "function", "name": "book_hotel", "description": "Book a hotel room",
     "parameters": {"type": "object", "properties": {"city": {"type": "string"}, "nights": {"type": "integer"}},
                    "required": ["city", "nights"]}},
]


def main() -> None:
    with Recording(Path(__file__).parent, REPLIES, framework="openai-sdk", instrumentation="openinference",
                   packages=["openai", "openinference-instrumentation-openai", "openinference-instrumentation",
                             "openinference-semantic-conventions", "opentelemetry-sdk",
                             "opentelemetry-exporter-otlp-proto-http"],
                   session_id=SESSION,
                   notes="Responses API; two turns of one session (two traces); turn 1 re-sends the whole input "
                         "list: two parallel function calls, book_hotel raising once (its error text sent as "
                         "the output) and called again; turn 2 chained by previous_response_id (input only the "
                         "new items) and streamed; tools are OITracer.tool spans; function_call item ids (fc_) "
                         "distinct from their call_ids (call_)") as rec:
        rec.env()
        import openai
        from openinference.instrumentation import OITracer, TraceConfig, using_session
        from openinference.instrumentation.openai import OpenAIInstrumentor
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
        from opentelemetry.sdk.resources import Resource
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import BatchSpanProcessor

        provider = TracerProvider(resource=Resource.create({"service.name": "trip-bot"}))
        provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
        OpenAIInstrumentor().instrument(tracer_provider=provider)
        tracer = OITracer(provider.get_tracer("trip-bot"), config=TraceConfig())
        failures = {"book_hotel": 1}

        @tracer.tool(name="get_weather")
        def get_weather(city: str) -> str:
            return WEATHER[city]

        @tracer.tool(name="book_hotel")
        def book_hotel(city: str, nights: int) -> str:
            if failures["book_hotel"]:
                failures["book_hotel"] -= 1
                raise TimeoutError("the booking service did not answer in time")
            return f"Booked Hotel Nord in {city}, {nights} nights, ref OSL-42"

        functions: dict[str, Any] = {"get_weather": get_weather, "book_hotel": book_hotel}
        client = openai.OpenAI()

        def ask(streamed: bool, **request: Any) -> Any:
            if not streamed:
                return client.responses.create(model=MODEL, instructions=INSTRUCTIONS, tools=TOOLS, **request)
            completed = None
            for event in client.responses.create(model=MODEL, instructions=INSTRUCTIONS, tools=TOOLS, stream=True,
                                                 **request):
                if event.type == "response.completed":
                    completed = event.response
            assert completed is not None, "the stream ended without response.completed"
            return completed

        def run_tool(call: Any) -> dict[str, Any]:
            try:
                output = functions[call.name](**json.loads(call.arguments))
            except Exception as exc:  # the model is told, as a real loop would
                output = f"{type(exc).__name__}: {exc}"
            return {"type": "function_call_output", "call_id": call.call_id, "output": output}

        def turn(question: str, previous: str | None) -> Any:
            """Answer `question`: on the client (previous None: every call re-sends the input list so far), or
            on the server (every call chained to the response before it, its input only the new items)."""
            items: list[Any] = [{"role": "user", "content": question}]
            while True:
                if previous is None:
                    answer = ask(False, input=items)
                    items += [item.model_dump(exclude_none=True) for item in answer.output]
                else:
                    answer = ask(True, input=items, previous_response_id=previous)
                    items, previous = [], answer.id
                calls = [item for item in answer.output if item.type == "function_call"]
                if not calls:
                    return answer
                items += [run_tool(call) for call in calls]

        last = None
        for question in QUESTIONS:
            with using_session(SESSION), tracer.start_as_current_span(
                    "trip-bot", openinference_span_kind="agent") as agent:
                agent.set_input(question)
                last = turn(question, None if last is None else last.id)
                agent.set_output(last.output_text)
        rec.flush(provider)


if __name__ == "__main__":
    main()
