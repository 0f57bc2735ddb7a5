"""Re-record: openai-agents (Responses API) continuing the conversation the API keeps, traced by OpenTelemetry's
own GenAI instrumentation.

    python3 -m venv /tmp/cap-openai-agents_otel-genai_server-conversation
    /tmp/cap-openai-agents_otel-genai_server-conversation/bin/pip install \
        openai-agents==0.24.0 openai==3.63.0 opentelemetry-instrumentation-openai-agents-v2==0.1.0 \
        opentelemetry-util-genai==1.3b0 opentelemetry-sdk==1.45.2 opentelemetry-exporter-otlp-proto-http==1.45.2
    /tmp/cap-openai-agents_otel-genai_server-conversation/bin/python \
        tests/captures/openai-agents_otel-genai_server-conversation/record.py

All the newest on PyPI when recorded (no pin conflict); `pip freeze` also shows, pulled in by them,
opentelemetry-api==1.45.2, opentelemetry-instrumentation==0.66b2, opentelemetry-semantic-conventions==0.66b2,
opentelemetry-proto==1.45.2.

The scenario of `openai-agents_openinference_server-conversation` (its replies and questions), traced as
`openai-agents_otel-genai` is (`recording/openai_agents_travel.py`'s `otel_genai_tracing`: the instrumentor a
processor of the SDK's own tracing, content on the spans, the SDK's exporter to OpenAI dropped). One travel desk
agent (`book_hotel`, raising `TimeoutError` the first time, and `get_weather`), four turns in one trace: the
SDK's docs group a conversation's runs so, `with trace(workflow_name, group_id=thread_id)`. The instrumentation
records neither the `group_id` nor any session id (it writes `gen_ai.conversation.id` only from an agent span's
`conversation_id`, which openai-agents 0.24 has not), so the conversation runs under one application span
carrying `gen_ai.conversation.id`, the GenAI conventions' session key, as in `openai-agents_otel-genai`.

1. `Runner.run`, no server state: two parallel tool calls, `book_hotel` failing (the SDK sends the model its
   failure_error_function's text), an answer around it offering Bergen's weather.
2. "Yes, please.": `Runner.run_streamed(..., previous_response_id=first.last_response_id)`. The API holds turn 1,
   so the SDK sends only the new items (the reply, then the function call's output, each call chained to the one
   before); the answer offers to retry the booking.
3. "Yes, please." again, chained the same way (`previous_response_id=second.last_response_id`): `book_hotel`
   called again, succeeding, and the answer.
4. `Runner.run(..., conversation_id=…)` on a conversation made by the Conversations API (`conversations.create()`):
   a new trip's question, the SDK naming the conversation (`conversation=`) and sending only the new item.

Why: with server-side state an LLM call's input is not the history but what the model is shown anew; the
trajectory must still hold each question (the second "Yes, please." too), every step, each tool result on its
call, nothing of an earlier turn twice; and this shows what the instrumentation records of that state.
Every function call is scripted with the two ids the real Responses API gives it (`with_api_call_ids`): its
`call_id` (`call_…`, which the `function_call_output` the SDK sends back names) and its item's own `id` (`fc_…`);
with server state the output is sent without its call, so only the `call_id` ties the two.
(The versions the capture was recorded with are in meta.json.)
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

from tests.captures.recording.openai_agents_travel import (
    OTEL_GENAI_PACKAGES,
    otel_genai_tracing,
    travel_desk,
    with_api_call_ids,
)
from tests.captures.recording.session import Recording

SESSION = "oa-otel-genai-server-conversation-1"
REPLIES = with_api_call_ids([
    {"tool_calls": [{"name": "book_hotel", "arguments": {"city": "Oslo", "nights": 2}},
                    {"name": "get_weather", "arguments": {"city": "Oslo"}}]},
    {"text": "The booking failed, so nothing is booked yet. Oslo is rainy, 9°C. "
             "Shall I check Bergen too?"},
    {"tool_calls": [{"name": "get_weather", "arguments": {"city": "Bergen"}}]},
    {"text": "Bergen is windy at 7°C. Shall I try the Oslo booking again?"},
    {"tool_calls": [{"name": "book_hotel", "arguments": {"city": "Oslo", "nights": 2}}]},
    {"text": "Booked Hotel Nord in Oslo for 2 nights (ref OSL-42)."},
    {"text": "Pack layers: Paris in spring runs from 8°C to 20°C."},
], SESSION)
QUESTIONS = ["Book me a hotel in Oslo for 2 nights, and what's the weather there?", "Yes, please.", "Yes, please.",
             "New trip: any tips for Paris in spring?"]


def main() -> None:
    with Recording(Path(__file__).parent, REPLIES, framework="openai-agents",
                   instrumentation="opentelemetry-instrumentation-openai-agents-v2",
                   packages=[*OTEL_GENAI_PACKAGES, "opentelemetry-exporter-otlp-proto-http"], session_id=SESSION,
                   notes="four turns in one trace (trace(group_id=…)) under one application span carrying "
                         "gen_ai.conversation.id (the instrumentation records no session), on server-side "
                         "conversation state: Runner.run (parallel tool calls, book_hotel raising once); 'Yes, "
                         "please.' by Runner.run_streamed with previous_response_id=first.last_response_id; 'Yes, "
                         "please.' again chained the same way (book_hotel called again); Runner.run with "
                         "conversation_id from conversations.create(). With server state the SDK sends only the "
                         "new items; function_call item ids (fc_) distinct from their call_ids (call_)") as rec:
        provider, conversation_span = otel_genai_tracing(rec, SESSION)
        from agents import Runner, trace
        from openai import AsyncOpenAI

        desk = travel_desk(handoff=False)

        async def run() -> None:
            with conversation_span(), trace("Travel desk conversation", group_id=SESSION):
                first = await Runner.run(desk, QUESTIONS[0])
                second = Runner.run_streamed(desk, QUESTIONS[1], previous_response_id=first.last_response_id)
                async for _event in second.stream_events():
                    pass
                third = await Runner.run(desk, QUESTIONS[2], previous_response_id=second.last_response_id)
                conversation = await AsyncOpenAI().conversations.create()
                fourth = await Runner.run(desk, QUESTIONS[3], conversation_id=conversation.id)
            print(first.final_output, second.final_output, third.final_output, fourth.final_output, sep="\n")

        asyncio.run(run())
        rec.flush(provider)


if __name__ == "__main__":
    main()
