"""Re-record: a LangChain 1.x `create_agent` on `ChatAnthropic` with extended thinking, its graph checkpointed
(`MemorySaver`, a `thread_id`), traced by OpenInference.

    python3 -m venv /tmp/cap-langgraph_openinference_anthropic-thinking && \
        /tmp/cap-langgraph_openinference_anthropic-thinking/bin/pip install \
        langchain==1.5.2 langchain-core==1.8.3 langgraph==1.2.24 langgraph-prebuilt==1.1.3 \
        langgraph-checkpoint==4.3.2 langchain-anthropic==1.7.10 anthropic==2.17.0 \
        openinference-instrumentation-langchain==0.1.80 openinference-instrumentation==0.1.72 \
        opentelemetry-sdk==1.45.2 opentelemetry-exporter-otlp-proto-http==1.45.2
    /tmp/cap-langgraph_openinference_anthropic-thinking/bin/python \
        tests/captures/langgraph_openinference_anthropic-thinking/record.py

Why: a reasoning model under LangGraph. `ChatAnthropic(thinking={"type": "enabled", "budget_tokens": …})` (as
langchain-anthropic's docs show for extended thinking) answers every call with a `thinking` block (its text and
signature) before its text and tool uses; LangChain keeps the blocks in the AIMessage's content and re-sends them
in the history of the next call, as Anthropic requires during a tool loop. Each call's thinking is distinct here,
so a trajectory can be checked to give each step its own reasoning and never the re-sent copies. Each answer's
usage counts its thinking tokens within `output_tokens` and again as `output_tokens_details.thinking_tokens` (as the
API reports them, and anthropic 2.17's `Usage` reads them), which langchain-anthropic gives LangChain as
`output_token_details.reasoning`.

Built as LangChain's docs show: `create_agent(model, tools, system_prompt=…, name=…, checkpointer=MemorySaver())`
run with `config={"configurable": {"thread_id": …}}` ("Short-term memory"). The session is that thread id alone:
OpenInference's LangChain tracer records a run's `metadata.thread_id` as `session.id` (`_tracer._metadata`), and
LangGraph copies the configurable thread id into every run's metadata; no `using_session` here. The booking tool
raises a `ToolException` once, handled as LangChain's tools docs show (`StructuredTool.from_function(...,
handle_tool_error=True)`: the exception's text is the ToolMessage the model is sent, with `status="error"`).

Turn 1 (`invoke`): the model thinks, says it will look, and calls book_hotel and get_weather in parallel; book_hotel
raises once; the model thinks and calls book_hotel again; then thinks and answers. Turn 2, same thread, streamed
(`stream(…, stream_mode="messages")`: LangGraph's message streaming makes ChatAnthropic stream, `thinking_delta`
and `signature_delta` events included): the model thinks and calls convert_currency, then thinks and answers. Five
LLM calls. (The versions the capture was recorded with are in meta.json.)
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

from tests.captures.recording.session import Recording

SESSION = "lg-oi-anthropic-thinking-1"
MODEL = "claude-sonnet-4-5"
REPLIES = [
    # turn 1: text and two tool uses in parallel, after the model's thinking
    {"reasoning": "The user wants a hotel in Oslo for two nights and the weather there. Both are independent, so I "
                  "can call book_hotel and get_weather at once.",
     "text": "I'll book the hotel and check the weather in Oslo.", "output_tokens": 164, "reasoning_tokens": 97,
     "tool_calls": [{"name": "book_hotel", "arguments": {"city": "Oslo", "nights": 2}},
                    {"name": "get_weather", "arguments": {"city": "Oslo"}}]},
    # book_hotel raised: try it again
    {"reasoning": "The booking service timed out, but the weather came back: rainy, 9°C. A timeout is transient, "
                  "so I will retry book_hotel once with the same arguments.",
     "output_tokens": 131, "reasoning_tokens": 88,
     "tool_calls": [{"name": "book_hotel", "arguments": {"city": "Oslo", "nights": 2}}]},
    {"reasoning": "The retry booked Hotel Nord, ref OSL-42. I have everything: summarise the booking and the "
                  "weather, and suggest an umbrella.",
     "output_tokens": 149, "reasoning_tokens": 76,
     "text": "Booked Hotel Nord in Oslo for 2 nights (ref OSL-42). Oslo is rainy at 9°C: pack an umbrella."},
    # turn 2 (streamed)
    {"reasoning": "Two nights at 1500 NOK is 3000 NOK. I should not guess the exchange rate: use convert_currency.",
     "output_tokens": 118, "reasoning_tokens": 81,
     "tool_calls": [{"name": "convert_currency", "arguments": {"amount": 3000, "currency": "NOK"}}]},
    {"reasoning": "convert_currency says 3000 NOK is 256 EUR. Answer with both figures.",
     "output_tokens": 83, "reasoning_tokens": 47,
     "text": "Two nights at 1500 NOK come to 3000 NOK, about 256 EUR."},
]
QUESTIONS = ["Book me a hotel in Oslo for 2 nights, and what's the weather there?",
             "How much is that in euros, at 1500 NOK a night?"]
PACKAGES = ["langchain", "langchain-core", "langgraph", "langgraph-prebuilt", "langgraph-checkpoint",
            "langchain-anthropic", "anthropic", "openinference-instrumentation-langchain",
            "openinference-instrumentation", "opentelemetry-sdk", "opentelemetry-exporter-otlp-proto-http"]
NOTES = ("create_agent (name travel_agent) on ChatAnthropic with extended thinking (budget_tokens 2048): every call "
         "answers a thinking block first (its thinking tokens in usage.output_tokens_details), re-sent in the next "
         "call's history; MemorySaver, thread_id the session "
         "(no using_session). Turn 1 invoke: text and book_hotel + get_weather in parallel, book_hotel raising a "
         "ToolException once (handle_tool_error=True sends its text), retried, answered; turn 2 "
         "stream_mode='messages' (the model streams): convert_currency, answered")


def run() -> None:
    from langchain.agents import create_agent
    from langchain_anthropic import ChatAnthropic
    from langchain_core.tools import StructuredTool, ToolException, tool
    from langgraph.checkpoint.memory import MemorySaver

    model = ChatAnthropic(model_name=MODEL, max_tokens=4096, timeout=30, stop=None,  # type: ignore[call-arg]
                          thinking={"type": "enabled", "budget_tokens": 2048})
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

        provider = TracerProvider(resource=Resource.create({"service.name": "travel-thinking"}))
        provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
        LangChainInstrumentor().instrument(tracer_provider=provider)
        run()
        rec.flush(provider)


if __name__ == "__main__":
    main()
