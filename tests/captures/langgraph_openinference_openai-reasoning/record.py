"""Re-record: a LangChain 1.x `create_agent` on `ChatOpenAI` with the Responses API and a reasoning model
(o4-mini, reasoning summaries on), its graph checkpointed (`MemorySaver`, a `thread_id`), traced by OpenInference.

    python3 -m venv /tmp/cap-langgraph_openinference_openai-reasoning && \
        /tmp/cap-langgraph_openinference_openai-reasoning/bin/pip install \
        langchain==1.5.2 langchain-core==1.8.3 langgraph==1.2.24 langgraph-prebuilt==1.1.3 \
        langgraph-checkpoint==4.3.2 langchain-openai==1.8.1 openai==3.63.0 \
        openinference-instrumentation-langchain==0.1.80 openinference-instrumentation==0.1.72 \
        opentelemetry-sdk==1.45.2 opentelemetry-exporter-otlp-proto-http==1.45.2
    /tmp/cap-langgraph_openinference_openai-reasoning/bin/python \
        tests/captures/langgraph_openinference_openai-reasoning/record.py

Why: an OpenAI reasoning model under LangGraph. `ChatOpenAI(model="o4-mini", use_responses_api=True,
reasoning={"effort": "medium", "summary": "auto"})` (as langchain-openai's docs show for reasoning output) answers
every call with a Responses `reasoning` item (its summary) before its message and function calls; langchain-openai
(output_version "responses/v1", its default for the Responses API) keeps the item as a content block of the
AIMessage (`{"type": "reasoning", "id": "rs_…", "summary": [{"type": "summary_text", "text": …}]}`) and re-sends it
as an input item of the next call. Each call's reasoning is distinct here, so a trajectory can be checked to give
each step its own reasoning and never the re-sent copies. Each answer's usage counts its reasoning tokens within
`output_tokens` and again as `output_tokens_details.reasoning_tokens` (as the API reports them), which
langchain-openai gives LangChain as `output_token_details.reasoning`.

Built as LangChain's docs show: `create_agent(model, tools, system_prompt=…, name=…, checkpointer=MemorySaver())`
run with `config={"configurable": {"thread_id": …}}` ("Short-term memory"). The session is that thread id alone:
OpenInference's LangChain tracer records a run's `metadata.thread_id` as `session.id`, and LangGraph copies the
configurable thread id into every run's metadata; no `using_session` here. The booking tool raises a
`ToolException` once, handled as LangChain's tools docs show (`StructuredTool.from_function(...,
handle_tool_error=True)`: the exception's text is the ToolMessage the model is sent, with `status="error"`).

Turn 1 (`invoke`): the model reasons, says it will look, and calls book_hotel and get_weather in parallel;
book_hotel raises once; the model reasons and calls book_hotel again; then reasons and answers. Turn 2, same thread,
streamed (`stream(…, stream_mode="messages")`: LangGraph's message streaming makes ChatOpenAI stream, the reasoning
summary's `response.reasoning_summary_text.delta` events included): the model reasons and calls convert_currency,
then reasons and answers. Five LLM calls. Every function call is scripted with the two ids the real Responses API
gives it (`with_api_call_ids`): its `call_id` (`call_…`, which the `function_call_output` sent back names) and its
item's own `id` (`fc_…`); first recorded with one value for both, re-recorded with the same pins for the two. (The
versions the capture was recorded with are in meta.json.)
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

from tests.captures.recording.openai_agents_travel import with_api_call_ids
from tests.captures.recording.session import Recording

SESSION = "lg-oi-openai-reasoning-1"
MODEL = "o4-mini"
REPLIES = with_api_call_ids([
    # turn 1: text and two function calls in parallel, after the model's reasoning
    {"reasoning": "**Planning the Oslo trip**\n\nThe user wants a hotel in Oslo for two nights and the weather "
                  "there. The two lookups do not depend on each other, so I can call book_hotel and get_weather "
                  "together.",
     "text": "I'll book the hotel and check the weather in Oslo.", "output_tokens": 172, "reasoning_tokens": 128,
     "tool_calls": [{"name": "book_hotel", "arguments": {"city": "Oslo", "nights": 2}},
                    {"name": "get_weather", "arguments": {"city": "Oslo"}}]},
    # book_hotel raised: try it again
    {"reasoning": "**Retrying the booking**\n\nThe booking service did not answer in time, but the weather came "
                  "back: rainy, 9°C. A timeout is transient, so I will call book_hotel once more with the same "
                  "arguments.",
     "output_tokens": 140, "reasoning_tokens": 112,
     "tool_calls": [{"name": "book_hotel", "arguments": {"city": "Oslo", "nights": 2}}]},
    {"reasoning": "**Summarising the booking**\n\nThe retry booked Hotel Nord, ref OSL-42. I can now give the "
                  "booking and the weather, and suggest an umbrella.",
     "output_tokens": 150, "reasoning_tokens": 64,
     "text": "Booked Hotel Nord in Oslo for 2 nights (ref OSL-42). Oslo is rainy at 9°C: pack an umbrella."},
    # turn 2 (streamed)
    {"reasoning": "**Working out the cost**\n\nTwo nights at 1500 NOK is 3000 NOK. I should not guess the exchange "
                  "rate: convert_currency will give it.",
     "output_tokens": 121, "reasoning_tokens": 96,
     "tool_calls": [{"name": "convert_currency", "arguments": {"amount": 3000, "currency": "NOK"}}]},
    {"reasoning": "**Answering in euros**\n\nconvert_currency says 3000 NOK is 256 EUR. Give both figures.",
     "output_tokens": 79, "reasoning_tokens": 48,
     "text": "Two nights at 1500 NOK come to 3000 NOK, about 256 EUR."},
], SESSION)
QUESTIONS = ["Book me a hotel in Oslo for 2 nights, and what's the weather there?",
             "How much is that in euros, at 1500 NOK a night?"]
PACKAGES = ["langchain", "langchain-core", "langgraph", "langgraph-prebuilt", "langgraph-checkpoint",
            "langchain-openai", "openai", "openinference-instrumentation-langchain",
            "openinference-instrumentation", "opentelemetry-sdk", "opentelemetry-exporter-otlp-proto-http"]
NOTES = ("create_agent (name travel_agent) on ChatOpenAI(model='o4-mini', use_responses_api=True, "
         "reasoning={'effort': 'medium', 'summary': 'auto'}): every call answers a reasoning item (its summary) "
         "first, its reasoning tokens in usage.output_tokens_details, kept by langchain-openai as a content block "
         "and re-sent as an input item of the next call; MemorySaver, thread_id the session (no using_session). "
         "Turn 1 invoke: text and book_hotel + get_weather in parallel, book_hotel raising a ToolException once "
         "(handle_tool_error=True sends its text), retried, answered; turn 2 stream_mode='messages' (the model "
         "streams): convert_currency, answered; function_call item ids (fc_) distinct from their call_ids (call_)")


def run() -> None:
    from langchain.agents import create_agent
    from langchain_core.tools import StructuredTool, ToolException, tool
    from langchain_openai import ChatOpenAI
    from langgraph.checkpoint.memory import MemorySaver

    model = ChatOpenAI(model=MODEL, use_responses_api=True, reasoning={"effort": "medium", "summary": "auto"},
                       timeout=30)
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
                         checkpointer=MemorySaver())
    config: Any = {"configurable": {"thread_id": SESSION}}
    first = agent.invoke({"messages": [{"role": "user", "content": QUESTIONS[0]}]}, config)
    print(first["messages"][-1].text)
    for chunk, _metadata in agent.stream({"messages": [{"role": "user", "content": QUESTIONS[1]}]}, config,
                                         stream_mode="messages"):
        print(type(chunk).__name__, str(chunk.content)[:80])


def main() -> None:
    with Recording(Path(__file__).parent, REPLIES, framework="langgraph", instrumentation="openinference",
                   packages=PACKAGES, session_id=SESSION, notes=NOTES) as rec:
        rec.env()
        from openinference.instrumentation.langchain import LangChainInstrumentor
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
        from opentelemetry.sdk.resources import Resource
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import BatchSpanProcessor

        provider = TracerProvider(resource=Resource.create({"service.name": "travel-reasoning"}))
        provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
        LangChainInstrumentor().instrument(tracer_provider=provider)
        run()
        rec.flush(provider)


if __name__ == "__main__":
    main()
