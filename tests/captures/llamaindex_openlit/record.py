"""Re-record: a LlamaIndex 0.14 FunctionAgent (llama-index-llms-openai), two turns sharing one chat `Memory`, traced
by OpenLIT (`openlit.init()`: its LlamaIndex and OpenAI instrumentations).

    python3 -m venv /tmp/cap-llamaindex_openlit && /tmp/cap-llamaindex_openlit/bin/pip install -U pip && \
        /tmp/cap-llamaindex_openlit/bin/pip install llama-index==0.14.25 llama-index-core==0.14.25 \
        llama-index-llms-openai==0.7.10 openlit==1.45.0 openai==2.54.0 httpx==0.29.0 \
        opentelemetry-sdk==1.45.1 opentelemetry-exporter-otlp-proto-http==1.45.1
    /tmp/cap-llamaindex_openlit/bin/python tests/captures/llamaindex_openlit/record.py

The `llama-index` distribution (LlamaIndex's documented install, which pins llama-index-llms-openai below 0.8), not
llama-index-core alone: OpenLIT's LlamaIndexInstrumentor declares `llama-index >= 0.10.0` as what it instruments
and reads that distribution's version, so with only llama-index-core installed `openlit.init` skips it ("no
installed version was found"). Installed, it still records nothing of this run: it wraps methods of LlamaIndex's
base `LLM` class (`LLM.chat`, `achat`, `astream_chat`, …), which llama-index-llms-openai's `OpenAI` overrides, and
query engines, retrievers, readers, indexes and embeddings; no agent, workflow step or tool. What is recorded is its
OpenAI instrumentation's: one `chat gpt-4o` span per call (each the root of its own trace, nothing LlamaIndex's
around it), with an httpx `POST` span under it, and a `gen_ai.client.inference.operation.details` log record per
call, plus metrics. No call is recorded twice.

Set up the way OpenLIT's quickstart shows: `openlit.init(otlp_endpoint=…)` (OTLP/HTTP protobuf to the recorder,
batched; content capture on, the default). OpenLIT has no session API of its own: each turn runs inside
`openlit.using_attributes({"session.id": SESSION})`, its documented way of putting request context on every span
(as in the `openai-sdk_openlit` capture), which copies `session.id` onto each call's span. Recorded offline:
OpenLIT's pricing table (fetched from GitHub at init) is unreachable, so every call's `gen_ai.usage.cost` is 0.

The run: one FunctionAgent over two function tools, the conversation carried across two `agent.run` calls by one
LlamaIndex `Memory` (`Memory.from_defaults(session_id=…)`, passed to each run as its docs show; not one `Context`,
whose serialization drops the memory between runs, see `llamaindex_openllmetry`). Turn 1, not streamed: the model
calls both tools in parallel; the exchange rate tool raises the first time (LlamaIndex shows the model the
exception text as the tool output); the model calls it again, it answers, then the model answers. Turn 2, streamed
(the agent's `streaming` on, its events read from `handler.stream_events()`; usage asked for in the stream,
`stream_options={"include_usage": True}`, which llama-index drops from calls that do not stream): a weather call,
then the answer. Five LLM calls. (The versions recorded are in meta.json.)
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

from tests.captures.recording.session import Recording

SESSION = "li-openlit-trip-1"
REPLIES = [
    {"tool_calls": [{"name": "get_weather", "arguments": {"city": "Lisbon"}},
                    {"name": "get_exchange_rate", "arguments": {"base": "GBP", "quote": "EUR"}}]},
    {"tool_calls": [{"name": "get_exchange_rate", "arguments": {"base": "GBP", "quote": "EUR"}}]},
    {"text": "Lisbon is sunny at 24°C, and 1 GBP buys 1.17 EUR."},
    {"tool_calls": [{"name": "get_weather", "arguments": {"city": "Porto"}}], "when": "Porto"},
    {"text": "Porto is cloudy at 19°C: bring a light jacket."},
]
WEATHER = {"Lisbon": "sunny, 24°C", "Porto": "cloudy, 19°C"}
QUESTIONS = [("What's the weather in Lisbon, and how many EUR is one GBP?", False),
             ("And the weather in Porto?", True)]
PACKAGES = ["llama-index", "llama-index-core", "llama-index-llms-openai", "openlit", "openai", "httpx",
            "opentelemetry-sdk", "opentelemetry-exporter-otlp-proto-http"]
NOTES = ("openlit.init(otlp_endpoint=recorder): its LlamaIndex instrumentation (enabled by the llama-index "
         "distribution) records nothing of a FunctionAgent run (it wraps the base LLM class's methods, which the "
         "OpenAI LLM overrides); its OpenAI instrumentation one chat span per call, each a trace of its own (+ httpx "
         "POST spans, + an inference event log record per call, + metrics); each turn under "
         "openlit.using_attributes({'session.id': …}); a FunctionAgent, two turns sharing one Memory; turn 1 parallel "
         "tool calls, one raising once (the error shown to the model), then called again; turn 2 streamed with "
         "include_usage. Recorded offline: gen_ai.usage.cost 0 on every call (OpenLIT's pricing table unreachable)")


def run(rec: Recording) -> None:
    import openlit
    from llama_index.core.agent.workflow import AgentStream, FunctionAgent
    from llama_index.core.memory import Memory
    from llama_index.llms.openai import OpenAI

    failures = {"get_exchange_rate": 1}  # the rate service times out once

    def get_weather(city: str) -> str:
        """The weather in a city."""
        return WEATHER[city]

    def get_exchange_rate(base: str, quote: str) -> str:
        """How many units of the quote currency one unit of the base currency buys."""
        if failures["get_exchange_rate"]:
            failures["get_exchange_rate"] -= 1
            raise TimeoutError(f"the rate service timed out for {base}/{quote}; try again")
        return f"1 {base} = 1.17 {quote}"

    llm = OpenAI(model="gpt-4o", api_base=rec.base_url, api_key="sk-fake",
                 additional_kwargs={"stream_options": {"include_usage": True}})
    agent = FunctionAgent(name="travel_agent", tools=[get_weather, get_exchange_rate], llm=llm,
                          system_prompt="You are a terse travel assistant. Use tools.", streaming=False)

    async def main() -> None:
        memory = Memory.from_defaults(session_id=SESSION)  # the conversation: turn 2 is sent turn 1's messages
        for question, streamed in QUESTIONS:
            agent.streaming = streamed
            with openlit.using_attributes({"session.id": SESSION}):
                handler = agent.run(user_msg=question, memory=memory)
                if streamed:
                    async for event in handler.stream_events():
                        if isinstance(event, AgentStream):
                            print(event.delta, end="", flush=True)
                    print()
                print(await handler)

    asyncio.run(main())


def main() -> None:
    with Recording(Path(__file__).parent, REPLIES, framework="llamaindex", instrumentation="openlit",
                   packages=PACKAGES, session_id=SESSION, notes=NOTES) as rec:
        rec.env()
        import openlit
        from opentelemetry import metrics, trace
        from opentelemetry._logs import get_logger_provider

        openlit.init(application_name="travel-agent", environment="dev", otlp_endpoint=rec.otlp_endpoint)
        run(rec)
        rec.flush(trace.get_tracer_provider(), get_logger_provider(), metrics.get_meter_provider())


if __name__ == "__main__":
    main()
