"""Re-record: a LangChain 1.x agent graph (create_agent, ChatOpenAI) on a LangGraph checkpointer thread, traced by
Langfuse's LangChain integration (`langfuse.langchain.CallbackHandler`, Langfuse Python SDK v3+ on OpenTelemetry).

    python3 -m venv /tmp/cap-langgraph_langfuse && /tmp/cap-langgraph_langfuse/bin/pip install \
        'langfuse==5.2.0' 'langchain==1.5.2' 'langgraph==1.2.24' 'langchain-openai==1.8.1'
    /tmp/cap-langgraph_langfuse/bin/python tests/captures/langgraph_langfuse/record.py

Set up as Langfuse's LangChain/LangGraph guide shows: one `CallbackHandler()` passed in
`config={"callbacks": [handler]}`, and the trace attributes in the run's metadata (`langfuse_session_id`,
`langfuse_user_id`): the handler reads them at the root run and propagates them (`propagate_attributes`) to every
observation, so both turns' traces share one session. The SDK's exporter posts OTLP/HTTP protobuf, gzip-compressed,
to `{LANGFUSE_HOST}/api/public/otel/v1/traces` with basic auth; the host is the recorder.

Why: most Langfuse users trace LangChain/LangGraph this way, not with the `langfuse.openai` wrapper the corpus had
(langfuse-sdk_openai). The handler turns every LangChain run into an observation: the graph and its nodes are
`chain`/`agent` spans, each chat model run a `generation` (LangChain messages as input, the AIMessage as output,
`usage_details` from the message's usage metadata), each tool run a `tool`.

The run: turn 1 asks for the weather in Oslo and Bergen and 300 NOK in EUR; the model calls three tools in parallel
(get_weather x2, convert_currency); the rate service raises once (a plain exception: the agent's `wrap_tool_call`
middleware, as LangChain's docs show, turns it into an error ToolMessage for the model); the model retries it, then
answers. Turn 2 on the same thread ("And in SEK?", the checkpointer's history) is streamed
(`stream_mode="messages"`): one tool call, then the answer. `stream_usage=True` because ChatOpenAI asks for
streamed usage only against OpenAI's own URL (here the fake LLM's). (The versions recorded are in meta.json.)
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

from tests.captures.recording.session import Recording

SESSION = "lf-lc-fjord-trip-1"
MODEL = "gpt-4o-mini"
REPLIES = [
    {"tool_calls": [{"name": "get_weather", "arguments": {"city": "Oslo"}},
                    {"name": "get_weather", "arguments": {"city": "Bergen"}},
                    {"name": "convert_currency", "arguments": {"amount": 300, "source": "NOK", "target": "EUR"}}],
     "input_tokens": 226, "output_tokens": 74},
    {"tool_calls": [{"name": "convert_currency", "arguments": {"amount": 300, "source": "NOK", "target": "EUR"}}],
     "input_tokens": 371, "output_tokens": 27},
    {"text": "Oslo is clear at 12°C and Bergen rainy at 9°C; 300 NOK is 25.80 EUR.",
     "input_tokens": 414, "output_tokens": 28},
    {"tool_calls": [{"name": "convert_currency", "arguments": {"amount": 300, "source": "NOK", "target": "SEK"}}],
     "when": "SEK", "input_tokens": 455, "output_tokens": 26},
    {"text": "300 NOK is 294.60 SEK.", "input_tokens": 499, "output_tokens": 12},
]
WEATHER = {"Oslo": "clear, 12°C", "Bergen": "rainy, 9°C"}
RATES = {("NOK", "EUR"): 0.086, ("NOK", "SEK"): 0.982}


def run(rec: Recording) -> None:
    from langchain.agents import create_agent
    from langchain.agents.middleware import wrap_tool_call
    from langchain_core.messages import ToolMessage
    from langchain_core.tools import tool
    from langchain_openai import ChatOpenAI
    from langfuse import get_client
    from langfuse.langchain import CallbackHandler
    from langgraph.checkpoint.memory import InMemorySaver

    model = ChatOpenAI(model=MODEL, base_url=rec.base_url, api_key="sk-fake", stream_usage=True)
    failures = {"left": 1}

    @tool
    def get_weather(city: str) -> str:
        """The current weather in a city."""
        return WEATHER[city]

    @tool
    def convert_currency(amount: float, source: str, target: str) -> str:
        """Convert an amount between two currencies at today's rate."""
        if failures["left"]:
            failures["left"] -= 1
            raise TimeoutError("rate service timed out")
        return f"{amount * RATES[(source, target)]:.2f} {target}"

    @wrap_tool_call  # type: ignore[arg-type]
    def tool_errors(request: Any, handler: Any) -> Any:
        try:
            return handler(request)
        except Exception as exc:  # the model is told, as LangChain's tool-error middleware example does
            return ToolMessage(content=f"Tool error: {exc}. Try again.", tool_call_id=request.tool_call["id"],
                               status="error")

    agent = create_agent(model, tools=[get_weather, convert_currency], middleware=[tool_errors],
                         system_prompt="You are a travel assistant. Use the tools; retry a tool that fails.",
                         checkpointer=InMemorySaver(), name="fjord_agent")
    handler = CallbackHandler()
    config: dict[str, Any] = {"callbacks": [handler], "configurable": {"thread_id": SESSION},
                              "metadata": {"langfuse_session_id": SESSION, "langfuse_user_id": "user-7"}}
    agent.invoke({"messages": [{"role": "user", "content":
                                "What's the weather in Oslo and Bergen, and how much is 300 NOK in EUR?"}]},
                 config=config)  # type: ignore[arg-type]
    for _chunk, _metadata in agent.stream({"messages": [{"role": "user", "content": "And in SEK?"}]},
                                         config=config, stream_mode="messages"):  # type: ignore[arg-type]
        pass
    get_client().shutdown()  # flushes the SDK's batch span processor


def main() -> None:
    notes = ("create_agent on an InMemorySaver thread, Langfuse's LangChain CallbackHandler in config callbacks, "
             "session and user from metadata langfuse_session_id / langfuse_user_id; turn 1: three parallel tool "
             "calls, the currency tool raising once (wrap_tool_call middleware: an error ToolMessage) and retried; "
             "turn 2 on the same thread streamed (stream_mode=messages): one tool call, then the answer; exports "
             "are gzip-compressed as the SDK sends them")
    with Recording(Path(__file__).parent, REPLIES, framework="langgraph", instrumentation="langfuse (CallbackHandler)",
                   packages=["langfuse", "langchain", "langchain-core", "langgraph", "langgraph-checkpoint",
                             "langchain-openai", "openai", "opentelemetry-sdk"],
                   session_id=SESSION, notes=notes) as rec:
        rec.env()
        os.environ.update({"LANGFUSE_BASE_URL": rec.otlp_endpoint, "LANGFUSE_HOST": rec.otlp_endpoint,
                           "LANGFUSE_PUBLIC_KEY": "pk-lf-fake", "LANGFUSE_SECRET_KEY": "sk-lf-fake"})
        run(rec)


if __name__ == "__main__":
    main()
