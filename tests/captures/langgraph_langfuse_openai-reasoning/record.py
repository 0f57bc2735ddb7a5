"""Re-record: a LangChain 1.x `create_agent` on `ChatOpenAI` with the Responses API and a reasoning model (o4-mini,
reasoning summaries on), traced by Langfuse's LangChain integration inside the application's own Langfuse span,
the session set with `propagate_attributes`.

    python3 -m venv /tmp/cap-langgraph_langfuse && /tmp/cap-langgraph_langfuse/bin/pip install \
        'langfuse==5.2.0' 'langchain==1.5.2' 'langgraph==1.2.24' 'langchain-openai==1.8.1'
    /tmp/cap-langgraph_langfuse/bin/python tests/captures/langgraph_langfuse_openai-reasoning/record.py

Set up as Langfuse's docs show for an application that traces its own request and a native integration inside it:
each turn is a `langfuse.start_as_current_observation(as_type="span", name="trip-request", input=…)` span, inside
it `propagate_attributes(session_id=…, user_id=…)` (the v3+ way to give every observation the session), and the
agent invoked with `config={"callbacks": [CallbackHandler()]}`; the span's output set to the answer. The exporter
posts OTLP/HTTP protobuf, gzip-compressed, to `{LANGFUSE_HOST}/api/public/otel/v1/traces`; the host is the recorder.

Why: what Langfuse's handler makes of a reasoning model's usage and answer. LangChain gives the handler the
message's `usage_metadata` (`input_tokens` counting cached ones, `output_tokens` counting reasoning ones, the parts in
`input_token_details.cache_read` and `output_token_details.reasoning`); the handler writes Langfuse's usage keys:
`input` and `output` with every detail's count taken off them, the details as `input_cache_read` and
`output_reasoning`. And langchain-openai keeps each Responses `reasoning` item (its summary) as a content block of
the AIMessage, which the handler writes as the generation's output. The calls after the first read the prompt cache.

Turn 1 (`invoke`): the model reasons, says it will look, and calls book_hotel and get_weather in parallel;
book_hotel raises a ToolException once (`handle_tool_error=True`: the model is sent its text, the ToolMessage
`status="error"`); the model reasons and calls book_hotel again; then reasons and answers. Turn 2 on the same thread,
streamed (`stream_mode="messages"`): the model reasons and calls convert_currency, then reasons and answers. Every
function call is scripted with the two ids the real Responses API gives it (`call_…` and its item's `fc_…`).
(The versions the capture was recorded with are in meta.json.)
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

from tests.captures.recording.openai_agents_travel import with_api_call_ids
from tests.captures.recording.session import Recording

SESSION = "lf-lc-reasoning-trip-1"
MODEL = "o4-mini"
REPLIES = with_api_call_ids([
    # turn 1: text and two function calls in parallel, after the model's reasoning
    {"reasoning": "**Planning the Oslo trip**\n\nThe user wants a hotel in Oslo for two nights and the weather "
                  "there. The two lookups are independent, so I can call book_hotel and get_weather together.",
     "text": "I'll book the hotel and check the weather in Oslo.", "output_tokens": 172, "reasoning_tokens": 128,
     "tool_calls": [{"name": "book_hotel", "arguments": {"city": "Oslo", "nights": 2}},
                    {"name": "get_weather", "arguments": {"city": "Oslo"}}]},
    # book_hotel raised: try it again
    {"reasoning": "**Retrying the booking**\n\nThe booking service timed out, but the weather came back: rainy, "
                  "9°C. A timeout is transient, so I will call book_hotel once more.",
     "output_tokens": 140, "reasoning_tokens": 112, "cache_read_tokens": 256,
     "tool_calls": [{"name": "book_hotel", "arguments": {"city": "Oslo", "nights": 2}}]},
    {"reasoning": "**Summarising the booking**\n\nThe retry booked Hotel Nord, ref OSL-42. Give the booking and the "
                  "weather, and suggest an umbrella.",
     "output_tokens": 150, "reasoning_tokens": 64, "cache_read_tokens": 384,
     "text": "Booked Hotel Nord in Oslo for 2 nights (ref OSL-42). Oslo is rainy at 9°C: pack an umbrella."},
    # turn 2 (streamed)
    {"reasoning": "**Working out the cost**\n\nTwo nights at 1500 NOK is 3000 NOK. convert_currency will give the "
                  "rate.",
     "output_tokens": 121, "reasoning_tokens": 96, "cache_read_tokens": 512, "when": "euros",
     "tool_calls": [{"name": "convert_currency", "arguments": {"amount": 3000, "currency": "NOK"}}]},
    {"reasoning": "**Answering in euros**\n\nconvert_currency says 3000 NOK is 256 EUR. Give both figures.",
     "output_tokens": 79, "reasoning_tokens": 48, "cache_read_tokens": 512,
     "text": "Two nights at 1500 NOK come to 3000 NOK, about 256 EUR."},
], SESSION)
QUESTIONS = ["Book me a hotel in Oslo for 2 nights, and what's the weather there?",
             "How much is that in euros, at 1500 NOK a night?"]
PACKAGES = ["langfuse", "langchain", "langchain-core", "langgraph", "langgraph-prebuilt", "langgraph-checkpoint",
            "langchain-openai", "openai", "opentelemetry-sdk"]
NOTES = ("create_agent (name travel_agent) on ChatOpenAI(model='o4-mini', use_responses_api=True, "
         "reasoning={'effort': 'medium', 'summary': 'auto'}), InMemorySaver thread; each turn in the application's "
         "start_as_current_observation span 'trip-request' with propagate_attributes(session_id, user_id), Langfuse's "
         "LangChain CallbackHandler in config callbacks. Turn 1 invoke: text and book_hotel + get_weather in "
         "parallel, book_hotel raising a ToolException once (handle_tool_error=True), retried, answered; turn 2 "
         "stream_mode='messages': convert_currency, answered; calls after the first read the prompt cache; "
         "reasoning tokens in every answer; exports gzip-compressed as the SDK sends them")


def run() -> None:
    from langchain.agents import create_agent
    from langchain_core.tools import StructuredTool, ToolException, tool
    from langchain_openai import ChatOpenAI
    from langfuse import get_client, propagate_attributes
    from langfuse.langchain import CallbackHandler
    from langgraph.checkpoint.memory import InMemorySaver

    model = ChatOpenAI(model=MODEL, use_responses_api=True, reasoning={"effort": "medium", "summary": "auto"},
                       stream_usage=True, timeout=30)
    failures = {"book_hotel": 1}

    def book_hotel(city: str, nights: int) -> str:
        """Book a hotel room."""
        if failures["book_hotel"]:
            failures["book_hotel"] -= 1
            raise ToolException("the booking service did not answer in time")
        return f"Booked Hotel Nord in {city}, {nights} nights, ref OSL-42"

    @tool
    def get_weather(city: str) -> str:
        """The weather in a city."""
        return {"Oslo": "rainy, 9°C"}[city]

    @tool
    def convert_currency(amount: float, currency: str) -> str:
        """Convert an amount to EUR."""
        return f"{amount:g} {currency} is {amount / 11.7:.0f} EUR"

    booking = StructuredTool.from_function(func=book_hotel, handle_tool_error=True)
    agent = create_agent(model, tools=[booking, get_weather, convert_currency], name="travel_agent",
                         system_prompt="You are a travel agent. Book hotels, check the weather, convert costs to EUR.",
                         checkpointer=InMemorySaver())
    langfuse = get_client()
    handler = CallbackHandler()
    config: Any = {"callbacks": [handler], "configurable": {"thread_id": SESSION}}
    with langfuse.start_as_current_observation(as_type="span", name="trip-request",
                                               input={"question": QUESTIONS[0]}) as request:
        with propagate_attributes(session_id=SESSION, user_id="user-7"):
            first = agent.invoke({"messages": [{"role": "user", "content": QUESTIONS[0]}]}, config)
        request.update(output={"answer": first["messages"][-1].text})
    with langfuse.start_as_current_observation(as_type="span", name="trip-request",
                                               input={"question": QUESTIONS[1]}) as request:
        with propagate_attributes(session_id=SESSION, user_id="user-7"):
            answer = ""
            for chunk, _metadata in agent.stream({"messages": [{"role": "user", "content": QUESTIONS[1]}]}, config,
                                                 stream_mode="messages"):
                if chunk.type == "AIMessageChunk":
                    answer += chunk.text
        request.update(output={"answer": answer})
    langfuse.shutdown()  # flushes the SDK's batch span processor


def main() -> None:
    with Recording(Path(__file__).parent, REPLIES, framework="langgraph", instrumentation="langfuse (CallbackHandler)",
                   packages=PACKAGES, session_id=SESSION, notes=NOTES) as rec:
        rec.env()
        os.environ.update({"LANGFUSE_BASE_URL": rec.otlp_endpoint, "LANGFUSE_HOST": rec.otlp_endpoint,
                           "LANGFUSE_PUBLIC_KEY": "pk-lf-fake", "LANGFUSE_SECRET_KEY": "sk-lf-fake"})
        run()


if __name__ == "__main__":
    main()
