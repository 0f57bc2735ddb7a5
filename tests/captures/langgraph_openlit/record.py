"""Re-record: a LangGraph prebuilt ReAct agent (`create_react_agent`) on `ChatOpenAI`, traced by OpenLIT.

    python3 -m venv /tmp/cap-langgraph_openlit && /tmp/cap-langgraph_openlit/bin/pip install -U pip && \
        /tmp/cap-langgraph_openlit/bin/pip install openlit==1.45.0 langgraph==1.2.24 langgraph-prebuilt==1.1.3 \
        langgraph-checkpoint==4.3.2 langchain-core==1.8.3 langchain-openai==1.8.1 openai==2.54.0 \
        opentelemetry-sdk==1.45.1 opentelemetry-exporter-otlp-proto-http==1.45.1
    /tmp/cap-langgraph_openlit/bin/python tests/captures/langgraph_openlit/record.py

Set up the way OpenLIT's quickstart shows: `openlit.init(otlp_endpoint=…)` (content capture on by default) builds
the tracer, logger and meter providers, all to the endpoint (the recorder), and instruments every library it
finds. Here that is its LangGraph instrumentation (wrapped `Pregel.invoke` / `stream` and the graph's nodes), its
LangChain one (a callback handler added to every callback manager: `chat <model>` spans, `execute_tool` spans),
and its OpenAI one under them (whose own chat spans the LangChain handler means to suppress while it owns the
call: the capture shows whether the same call is reported twice), plus the HTTP client instrumentations it bundles.

The session is LangGraph's own: an `InMemorySaver` checkpointer and `config={"configurable": {"thread_id": …}}`, as
LangGraph's persistence docs show; OpenLIT copies the thread id onto its spans as `gen_ai.conversation.id` (the
LangChain handler from the callback metadata, the graph wrapper from the config). No `openlit.using_attributes`.

The agent is `create_react_agent` (prebuilt) with two tools and `ToolNode(handle_tool_errors=True)`: langgraph-
prebuilt 1.1's default handler re-raises anything but an invocation error, so the error text reaching the model
is ToolNode's documented error handling, not the default. Turn 1 (`invoke`): the model calls get_weather and
convert_currency in parallel; the conversion raises once (ToolNode sends the model its error text as the tool
message), the model retries it, then answers. Turn 2, same thread, streamed (`stream(…, stream_mode="messages")`,
`ChatOpenAI(stream_usage=True)` so the streamed calls report tokens): one tool call, then the answer. Five LLM
calls.

Recorded offline: OpenLIT's pricing table (fetched from GitHub at init) is unreachable, so any
`gen_ai.usage.cost` it writes is 0. (The versions the capture was recorded with are in meta.json.)
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

from tests.captures.recording.session import Recording

SESSION = "lg-openlit-trip-1"
MODEL = "gpt-4o-mini"
REPLIES = [
    {"tool_calls": [{"name": "get_weather", "arguments": {"city": "Tokyo"}},
                    {"name": "convert_currency", "arguments": {"amount": 200, "from_currency": "EUR",
                                                               "to_currency": "JPY"}}],
     "input_tokens": 214, "output_tokens": 52},
    {"tool_calls": [{"name": "convert_currency", "arguments": {"amount": 200, "from_currency": "EUR",
                                                               "to_currency": "JPY"}}],
     "input_tokens": 301, "output_tokens": 24},
    {"text": "Tokyo has light rain at 18°C, so take an umbrella; 200 EUR is about 32,480 JPY.",
     "input_tokens": 345, "output_tokens": 27},
    {"tool_calls": [{"name": "get_weather", "arguments": {"city": "Kyoto"}}], "when": "Kyoto",
     "input_tokens": 392, "output_tokens": 15},
    {"text": "Kyoto will be sunny at 21°C tomorrow: no umbrella needed.", "input_tokens": 426, "output_tokens": 16},
]
WEATHER = {"Tokyo": "light rain, 18°C", "Kyoto": "sunny, 21°C"}
QUESTIONS = ["I'm in Tokyo with 200 EUR. What's the weather, and how much is that in yen?",
             "And tomorrow in Kyoto, will I need an umbrella?"]
PACKAGES = ["openlit", "langgraph", "langgraph-prebuilt", "langgraph-checkpoint", "langchain-core",
            "langchain-openai", "openai", "opentelemetry-sdk", "opentelemetry-exporter-otlp-proto-http"]


def main() -> None:
    notes = ("openlit.init(otlp_endpoint=recorder): its LangGraph, LangChain and OpenAI instrumentations (+ HTTP "
             "client spans, + log records, + metrics). create_react_agent (ToolNode handle_tool_errors=True), an "
             "InMemorySaver checkpointer, thread_id in the config (OpenLIT's gen_ai.conversation.id). Turn 1 invoke: "
             "get_weather and convert_currency in parallel, the conversion raising once (ToolNode's error text sent "
             "as the tool message), retried, then the answer; turn 2 stream_mode='messages' (stream_usage=True): one "
             "tool call, then the answer. Recorded offline: OpenLIT's pricing table unreachable")
    with Recording(Path(__file__).parent, REPLIES, framework="langgraph", instrumentation="openlit",
                   packages=PACKAGES, session_id=SESSION, notes=notes) as rec:
        rec.env()
        import openlit
        from opentelemetry import metrics, trace
        from opentelemetry._logs import get_logger_provider

        openlit.init(application_name="travel-assistant", environment="dev", otlp_endpoint=rec.otlp_endpoint)

        from langchain_core.tools import tool
        from langchain_openai import ChatOpenAI
        from langgraph.checkpoint.memory import InMemorySaver
        from langgraph.prebuilt import ToolNode, create_react_agent

        failures = {"convert_currency": 1}

        @tool
        def get_weather(city: str) -> str:
            """The weather in a city."""
            return WEATHER[city]

        @tool
        def convert_currency(amount: float, from_currency: str, to_currency: str) -> str:
            """Convert an amount of money between currencies."""
            if failures["convert_currency"]:
                failures["convert_currency"] -= 1
                raise TimeoutError("exchange-rate service timed out")
            return f"{amount:g} {from_currency} = {round(amount * 162.4):,} {to_currency}"

        model = ChatOpenAI(model=MODEL, base_url=rec.base_url, api_key="sk-fake", stream_usage=True)
        agent = create_react_agent(model, ToolNode([get_weather, convert_currency], handle_tool_errors=True),
                                   prompt="You are a terse travel assistant.", checkpointer=InMemorySaver(),
                                   name="travel_assistant")
        config = {"configurable": {"thread_id": SESSION}}

        answer = agent.invoke({"messages": [{"role": "user", "content": QUESTIONS[0]}]}, config=config)
        print(answer["messages"][-1].content)
        for chunk, _metadata in agent.stream({"messages": [{"role": "user", "content": QUESTIONS[1]}]},
                                             config=config, stream_mode="messages"):
            if chunk.type == "AIMessageChunk":  # the model's tokens as they come (the tools' messages too come)
                print(chunk.content, end="", flush=True)
        print()
        rec.flush(trace.get_tracer_provider(), get_logger_provider(), metrics.get_meter_provider())


if __name__ == "__main__":
    main()
