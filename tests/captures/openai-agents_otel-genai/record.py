"""Re-record: openai-agents (Responses API) with a handoff, traced by OpenTelemetry's own GenAI instrumentation.

    python3 -m venv /tmp/cap-oa-otel-genai && /tmp/cap-oa-otel-genai/bin/pip install \
        openai-agents==0.24.0 openai==3.63.0 opentelemetry-instrumentation-openai-agents-v2==0.1.0 \
        opentelemetry-util-genai==1.3b0 opentelemetry-sdk==1.45.2 opentelemetry-exporter-otlp-proto-http==1.45.2
    /tmp/cap-oa-otel-genai/bin/python tests/captures/openai-agents_otel-genai/record.py

`opentelemetry-instrumentation-openai-agents-v2` (the contrib repository's, scope
`opentelemetry.instrumentation.openai_agents`) is a tracing processor of openai-agents' own tracing: it
records every model call itself (the SDK's response spans, as `chat <model>` spans carrying
`gen_ai.input.messages` / `gen_ai.output.messages`), so `opentelemetry-instrumentation-openai-v2` is not
installed (it would report each call a second time). Content goes on the spans
(`OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=span_only`, a value its README lists; its event
capture is switched off in 0.1.0). It documents no `OTEL_SEMCONV_STABILITY_OPT_IN`: it always writes the
latest conventions. The instrumentor adds its processor beside the SDK's own exporter to OpenAI's
backend, which the fake key could not send to: that exporter is dropped first (`set_trace_processors([])`).

Two turns of one session, kept by an `SQLiteSession` and named by the RunConfig's `group_id`, as the SDK's
docs show. The instrumentation records neither (nor any session or conversation id: it writes
`gen_ai.conversation.id` only from an agent span's `conversation_id`, which openai-agents 0.24 has not), so
each turn also runs under an application span carrying `gen_ai.conversation.id`, the GenAI conventions'
session key. Turn 1 (`Runner.run`): the travel desk hands off to the booking agent
(`transfer_to_booking_agent`), which calls `book_hotel` and `get_weather` in parallel; `book_hotel` raises
once (the SDK sends the model its failure_error_function's text), is called again and the agent answers.
Turn 2 (`Runner.run_streamed`, the same session, from the travel desk again): another handoff, one
weather call and the answer. Every function call is scripted with the two ids the real Responses API gives it
(`with_api_call_ids`): its `call_id` (`call_…`, which the `function_call_output` the SDK sends back names) and
its item's own `id` (`fc_…`). (The versions the capture was recorded with are in meta.json.)
The tools, agents, turns and replies, and the tracing setup, are `recording/openai_agents_travel.py`'s,
shared with `openai-agents_otel-genai_chat-completions` and `openai-agents_openlit`.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

from tests.captures.recording.openai_agents_travel import (
    HANDOFF_REPLIES,
    OTEL_GENAI_PACKAGES,
    otel_genai_tracing,
    run_turns,
    travel_desk,
    with_api_call_ids,
)
from tests.captures.recording.session import Recording

SESSION = "oa-otel-genai-travel-1"


def main() -> None:
    with Recording(Path(__file__).parent, with_api_call_ids(HANDOFF_REPLIES, SESSION), framework="openai-agents",
                   instrumentation="opentelemetry-instrumentation-openai-agents-v2", packages=OTEL_GENAI_PACKAGES,
                   session_id=SESSION,
                   notes="two turns (run, run_streamed) of one SQLiteSession with the RunConfig's group_id, neither "
                         "recorded by the instrumentation, so each turn under an application span carrying "
                         "gen_ai.conversation.id; a handoff to a booking agent; two parallel tool calls, one "
                         "raising once (the failure_error_function's text sent to the model) and called again"
                         "; function_call item ids (fc_) distinct from their call_ids (call_)") as rec:
        provider, turn = otel_genai_tracing(rec, SESSION)
        run_turns(travel_desk(handoff=True), SESSION, turn)
        rec.flush(provider)


if __name__ == "__main__":
    main()
