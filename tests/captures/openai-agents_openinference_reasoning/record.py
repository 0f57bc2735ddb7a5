"""Re-record: openai-agents (Responses API) on a reasoning model, traced by OpenInference.

    python3 -m venv /tmp/cap-openai-agents_openinference_reasoning
    /tmp/cap-openai-agents_openinference_reasoning/bin/pip install \
        openai-agents==0.24.0 openai==3.63.0 openinference-instrumentation-openai-agents==2.6.0 \
        openinference-instrumentation==0.1.72 opentelemetry-sdk==1.45.2 opentelemetry-exporter-otlp-proto-http==1.45.2
    /tmp/cap-openai-agents_openinference_reasoning/bin/python \
        tests/captures/openai-agents_openinference_reasoning/record.py

The newest releases of each (openai is the version pip resolved). One travel desk agent on `o4-mini` with
`ModelSettings(reasoning=Reasoning(effort="medium", summary="auto"))`, as the SDK's docs set a reasoning model up,
holding `book_hotel` (raising `TimeoutError` the first time it is called: the SDK sends the model its
failure_error_function's text) and `get_weather` (the tools, agent and turns are `recording/openai_agents_travel.py`'s,
its `handoff=False` desk). The instrumentor set up as its README shows, the session named by `using_session` around
each turn (as `openai-agents_openinference` does; the instrumentation reads no `group_id`), the history kept by the
SDK's `SQLiteSession` with the RunConfig's `group_id` (`run_turns`):

1. `Runner.run`: "Book me a hotel in Oslo for 2 nights, and what's the weather there?" The model reasons, then calls
   both tools in parallel; `book_hotel` fails; it reasons again and calls `book_hotel` again; it reasons and answers.
2. `Runner.run_streamed`: "Is Bergen warmer?" The SDK re-sends turn 1's items from the session, reasoning items
   among them; the model reasons (streamed as `response.reasoning_summary_text.delta` events), asks Bergen's weather,
   reasons and answers.

Every call answers with a `reasoning` item (its own `summary_text`) before its text or function calls, and reports
the reasoning tokens within its output tokens (`usage.output_tokens_details.reasoning_tokens`). Why: a reasoning
model's thinking belongs to its step (`reasoning_content`), never shown as the step's text nor as a step of its own,
nor repeated when the SDK re-sends it as history; the request's effort is the step's `reasoning_effort`. Every
function call is scripted with the two ids the real Responses API gives it (`with_api_call_ids`): its `call_id`
(`call_…`, which the `function_call_output` the SDK sends back names) and its item's own `id` (`fc_…`); first
recorded with one value for both, re-recorded with the same pins for the two.
(The versions the capture was recorded with are in meta.json.)
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

from tests.captures.recording.openai_agents_travel import run_turns, travel_desk, with_api_call_ids
from tests.captures.recording.session import Recording

SESSION = "oa-oi-reasoning-1"
MODEL = "o4-mini"
REPLIES = with_api_call_ids([
    {"reasoning": "The user wants a booking and the weather in Oslo. The two lookups do not depend on each other, "
                  "so I will call book_hotel and get_weather together.",
     "tool_calls": [{"name": "book_hotel", "arguments": {"city": "Oslo", "nights": 2}},
                    {"name": "get_weather", "arguments": {"city": "Oslo"}}],
     "output_tokens": 214, "reasoning_tokens": 192},
    {"reasoning": "The booking service timed out while the weather came back. A timeout is transient: retry the "
                  "same booking once before telling the user.",
     "tool_calls": [{"name": "book_hotel", "arguments": {"city": "Oslo", "nights": 2}}],
     "output_tokens": 150, "reasoning_tokens": 128},
    {"reasoning": "The retry booked Hotel Nord (ref OSL-42). Combine the confirmation with the rainy 9°C forecast "
                  "and suggest an umbrella.",
     "text": "Booked Hotel Nord in Oslo for 2 nights (ref OSL-42). Expect rain, 9°C: pack an umbrella.",
     "output_tokens": 118, "reasoning_tokens": 96},
    {"reasoning": "To compare I need Bergen's weather; Oslo's 9°C is already in the conversation.",
     "tool_calls": [{"name": "get_weather", "arguments": {"city": "Bergen"}}],
     "output_tokens": 86, "reasoning_tokens": 64},
    {"reasoning": "Bergen is 7°C and windy against Oslo's 9°C, so Bergen is colder: the answer is no.",
     "text": "No: Bergen is windy at 7°C, colder than Oslo's 9°C.",
     "output_tokens": 93, "reasoning_tokens": 80},
], SESSION)
PACKAGES = ["openai-agents", "openai", "openinference-instrumentation-openai-agents", "openinference-instrumentation",
            "opentelemetry-sdk", "opentelemetry-exporter-otlp-proto-http"]


def main() -> None:
    with Recording(Path(__file__).parent, REPLIES, framework="openai-agents", instrumentation="openinference",
                   packages=PACKAGES, session_id=SESSION,
                   notes="o4-mini with ModelSettings(reasoning=Reasoning(effort='medium', summary='auto')): every "
                         "call answers with a reasoning item (summary_text) first and reports reasoning tokens; two "
                         "turns of one SQLiteSession under using_session (Runner.run, then Runner.run_streamed with "
                         "reasoning summary deltas), the second re-sending the first's reasoning items; two parallel "
                         "tool calls, book_hotel raising once (the failure_error_function's text sent) and called "
                         "again; function_call item ids (fc_) distinct from their call_ids (call_)") as rec:
        rec.env()
        from agents import ModelSettings
        from openai.types.shared import Reasoning
        from openinference.instrumentation import using_session
        from openinference.instrumentation.openai_agents import OpenAIAgentsInstrumentor
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
        from opentelemetry.sdk.resources import Resource
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import BatchSpanProcessor

        provider = TracerProvider(resource=Resource.create({"service.name": "travel-desk"}))
        provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
        OpenAIAgentsInstrumentor().instrument(tracer_provider=provider)  # replaces the SDK's own exporter

        desk = travel_desk(handoff=False, model=MODEL,
                           model_settings=ModelSettings(reasoning=Reasoning(effort="medium", summary="auto")))
        run_turns(desk, SESSION, lambda: using_session(SESSION))
        rec.flush(provider)


if __name__ == "__main__":
    main()
