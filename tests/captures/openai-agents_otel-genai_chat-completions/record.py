"""Re-record: openai-agents on the Chat Completions API, traced by OpenTelemetry's own GenAI instrumentation.

    python3 -m venv /tmp/cap-openai-agents_otel-genai_chat-completions && \
        /tmp/cap-openai-agents_otel-genai_chat-completions/bin/pip install \
        openai-agents==0.24.0 openai==3.63.0 opentelemetry-instrumentation-openai-agents-v2==0.1.0 \
        opentelemetry-util-genai==1.3b0 opentelemetry-sdk==1.45.2 opentelemetry-exporter-otlp-proto-http==1.45.2
    /tmp/cap-openai-agents_otel-genai_chat-completions/bin/python \
        tests/captures/openai-agents_otel-genai_chat-completions/record.py

The same instrumentation as `openai-agents_otel-genai` (a tracing processor of openai-agents' own tracing,
`OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=span_only`, the SDK's exporter to OpenAI dropped), on the
SDK's other model path: `set_default_openai_api("chat_completions")`, so every call goes to
`/v1/chat/completions` and the SDK records it as a generation span (its input the Chat Completions messages it
sent, its output the answer's message, or for a streamed call the Responses-shaped `Response` it rebuilt from
the chunks), where the Responses path records response spans. The fake endpoint is not OpenAI's, so the SDK
would not ask a stream for its usage: the agent's `ModelSettings(include_usage=True)` does, as its docs say.

One agent, no handoff. Two turns of one session, kept by an `SQLiteSession` and named by the RunConfig's
`group_id`; the instrumentation records neither (0.1.0 writes `gen_ai.conversation.id` only from an agent span's
`conversation_id`, which openai-agents 0.24 has not), so each turn also runs under an application span carrying
`gen_ai.conversation.id`, the GenAI conventions' session key. Turn 1 (`Runner.run`): the model answers with text
*and* two parallel tool calls in one message (Chat Completions allows content beside tool_calls), `book_hotel`
raises once (the SDK sends the model its failure_error_function's text), is called again and the agent answers.
Turn 2 (`Runner.run_streamed`): text and a weather call streamed in one answer, then the answer.
(The versions the capture was recorded with are in meta.json.)
The tools, agent and turns, and the tracing setup, are `recording/openai_agents_travel.py`'s, shared with
`openai-agents_otel-genai` and `openai-agents_openlit`.
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
)
from tests.captures.recording.session import Recording

SESSION = "oa-otel-genai-chat-1"
REPLIES = [
    {"text": "I'll book the hotel and check the forecast at the same time.",
     "tool_calls": [{"name": "book_hotel", "arguments": {"city": "Oslo", "nights": 2}},
                    {"name": "get_weather", "arguments": {"city": "Oslo"}}]},
    {"tool_calls": [{"name": "book_hotel", "arguments": {"city": "Oslo", "nights": 2}}]},
    {"text": "Booked Hotel Nord in Oslo for 2 nights (ref OSL-42). Expect rain, 9°C: pack an umbrella."},
    {"text": "Let me look at Bergen.", "tool_calls": [{"name": "get_weather", "arguments": {"city": "Bergen"}}]},
    {"text": "No: Bergen is windy at 7°C, colder than Oslo's 9°C."},
]


def main() -> None:
    with Recording(Path(__file__).parent, REPLIES, framework="openai-agents",
                   instrumentation="opentelemetry-instrumentation-openai-agents-v2", packages=OTEL_GENAI_PACKAGES,
                   session_id=SESSION,
                   notes="Chat Completions API (set_default_openai_api); one agent; two turns (run, run_streamed) of "
                         "one SQLiteSession with the RunConfig's group_id, neither recorded by the instrumentation, "
                         "so each turn under an application span carrying gen_ai.conversation.id; an answer with "
                         "text and two parallel tool calls, one raising once (the failure_error_function's text "
                         "sent to the model) and called again; the streamed turn's first answer text and a tool "
                         "call") as rec:
        provider, turn = otel_genai_tracing(rec, SESSION)
        from agents import ModelSettings, set_default_openai_api

        set_default_openai_api("chat_completions")
        run_turns(travel_desk(handoff=False, model_settings=ModelSettings(include_usage=True)), SESSION, turn)
        rec.flush(provider)


if __name__ == "__main__":
    main()
