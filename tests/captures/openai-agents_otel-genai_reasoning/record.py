"""Re-record: openai-agents (Responses API) on a reasoning model, traced by OpenTelemetry's own GenAI instrumentation.

    python3 -m venv /tmp/cap-openai-agents_otel-genai_reasoning && \
        /tmp/cap-openai-agents_otel-genai_reasoning/bin/pip install \
        openai-agents==0.24.0 openai==3.63.0 opentelemetry-instrumentation-openai-agents-v2==0.1.0 \
        opentelemetry-util-genai==1.3b0 opentelemetry-sdk==1.45.2 opentelemetry-exporter-otlp-proto-http==1.45.2
    /tmp/cap-openai-agents_otel-genai_reasoning/bin/python tests/captures/openai-agents_otel-genai_reasoning/record.py

(The newest of each on PyPI when first recorded; openai 3.63.0 came with openai-agents then, and is pinned for the
re-recording. The versions are in meta.json.)

The tracing is `openai-agents_otel-genai`'s (`recording/openai_agents_travel.otel_genai_tracing`, whose docstring
there says why): `opentelemetry-instrumentation-openai-agents-v2`, a processor of the SDK's own tracing, records every
model call from the SDK's response spans, content on the spans (`span_only`); each turn under an application span
carrying `gen_ai.conversation.id`, since the instrumentation records no session.

What differs is the model: `o4-mini` with `ModelSettings(reasoning=Reasoning(effort="medium", summary="auto"))`, as
the SDK's docs set up a reasoning model. Every answer opens with a `reasoning` item holding a `summary_text`
(distinct on each call, so that each step's reasoning can be told from the others') and reports reasoning tokens in
`usage.output_tokens_details.reasoning_tokens` (part of `output_tokens`). The SDK keeps the reasoning items in the
`SQLiteSession` and re-sends them as input items of every later call, as the API expects of a reasoning model's
tool loop.

One travel desk holding the tools (no handoff), two turns of one session named by the RunConfig's `group_id`, as
`run_turns` runs them. Turn 1 (`Runner.run`): `book_hotel` and `get_weather` in parallel; `book_hotel` raises once
(the SDK sends the model its failure_error_function's text), is called again, and the desk answers. Turn 2
(`Runner.run_streamed`): one weather call and the answer. Five calls, each answer's items: reasoning, then the
function calls or the text. Every function call is scripted with the two ids the real Responses API gives it
(`with_api_call_ids`): its `call_id` (`call_…`, which the `function_call_output` the SDK sends back names) and its
item's own `id` (`fc_…`).
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

from tests.captures.recording.openai_agents_travel import (
    OTEL_GENAI_PACKAGES,
    otel_genai_tracing,
    run_turns,
    travel_desk,
    with_api_call_ids,
)
from tests.captures.recording.session import Recording

SESSION = "oa-otel-genai-reasoning-1"
MODEL = "o4-mini"
# The versions meta.json records: the shared set, and the API and exporter beside it.
PACKAGES = [*OTEL_GENAI_PACKAGES, "opentelemetry-api", "opentelemetry-exporter-otlp-proto-http"]
# Each answer's reasoning summary, reasoning tokens (of its output tokens) and output tokens, as o4-mini reports
# them: far more tokens spent reasoning than the summary shows.
REPLIES = with_api_call_ids([
    {"reasoning": "The guest wants a room and the forecast: both are independent, so book_hotel and get_weather "
                  "for Oslo can run at once.",
     "tool_calls": [{"name": "book_hotel", "arguments": {"city": "Oslo", "nights": 2}},
                    {"name": "get_weather", "arguments": {"city": "Oslo"}}],
     "reasoning_tokens": 192, "output_tokens": 236},
    {"reasoning": "The booking timed out but the weather came back (rainy, 9°C). A timeout is worth one retry of "
                  "book_hotel before telling the guest.",
     "tool_calls": [{"name": "book_hotel", "arguments": {"city": "Oslo", "nights": 2}}],
     "reasoning_tokens": 128, "output_tokens": 150},
    {"reasoning": "The retry booked Hotel Nord, ref OSL-42. Confirm it with the reference and turn the rain into "
                  "advice: an umbrella.",
     "text": "Booked Hotel Nord in Oslo for 2 nights (ref OSL-42). Expect rain, 9°C: pack an umbrella.",
     "reasoning_tokens": 96, "output_tokens": 121},
    {"reasoning": "Warmer than Oslo's 9°C? I know Oslo's weather from the first turn; Bergen's needs a lookup.",
     "tool_calls": [{"name": "get_weather", "arguments": {"city": "Bergen"}}],
     "reasoning_tokens": 64, "output_tokens": 80},
    {"reasoning": "Bergen is windy at 7°C, two degrees under Oslo's 9°C: the answer is no.",
     "text": "No: Bergen is windy at 7°C, colder than Oslo's 9°C.",
     "reasoning_tokens": 80, "output_tokens": 95},
], SESSION)


def main() -> None:
    with Recording(Path(__file__).parent, REPLIES, framework="openai-agents",
                   instrumentation="opentelemetry-instrumentation-openai-agents-v2", packages=PACKAGES,
                   session_id=SESSION,
                   notes="o4-mini with ModelSettings(reasoning=Reasoning(effort='medium', summary='auto')): every "
                         "answer a reasoning item (summary_text) before its function calls or text, reasoning tokens "
                         "in usage.output_tokens_details, the reasoning items re-sent as input items; one agent; two "
                         "turns (run, run_streamed) of one SQLiteSession with the RunConfig's group_id, neither "
                         "recorded by the instrumentation, so each turn under an application span carrying "
                         "gen_ai.conversation.id; two parallel tool calls, one raising once (the "
                         "failure_error_function's text sent to the model) and called again"
                         "; function_call item ids (fc_) distinct from their call_ids (call_)") as rec:
        provider, turn = otel_genai_tracing(rec, SESSION)
        from agents import ModelSettings
        from openai.types.shared import Reasoning

        reasoning = ModelSettings(reasoning=Reasoning(effort="medium", summary="auto"))
        run_turns(travel_desk(handoff=False, model=MODEL, model_settings=reasoning), SESSION, turn)
        rec.flush(provider)


if __name__ == "__main__":
    main()
