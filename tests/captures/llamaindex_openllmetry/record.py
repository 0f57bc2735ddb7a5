"""Re-record: a LlamaIndex 0.14 FunctionAgent (llama-index-llms-openai), two turns sharing one chat `Memory`, traced
by OpenLLMetry through the Traceloop SDK (opentelemetry-instrumentation-llamaindex + -openai).

    python3 -m venv /tmp/cap-llamaindex_openllmetry && /tmp/cap-llamaindex_openllmetry/bin/pip install -U pip && \
        /tmp/cap-llamaindex_openllmetry/bin/pip install llama-index-core==0.14.25 llama-index-llms-openai==0.8.3 \
        traceloop-sdk==0.62.4 opentelemetry-instrumentation-llamaindex==0.62.4 \
        opentelemetry-instrumentation-openai==0.62.4 openai==2.54.0 \
        opentelemetry-sdk==1.45.1 opentelemetry-exporter-otlp-proto-http==1.45.1
    /tmp/cap-llamaindex_openllmetry/bin/python tests/captures/llamaindex_openllmetry/record.py

(The pip bundled with Python 3.11's venv gives up resolving traceloop-sdk's open-ended requirements: upgrade it.)

Set up the way LlamaIndex's OpenLLMetry page shows, `Traceloop.init(…)`, plus the instrumentation's own README line,
`LlamaIndexInstrumentor().instrument()`. `Traceloop.init` alone leaves LlamaIndex uninstrumented here: it enables
its LlamaIndex instrumentor only when the `llama-index` distribution is installed (`is_package_installed`), and the
latest llama-index-llms-openai (0.8) cannot be installed with it (`llama-index` 0.14.25 pins `<0.8`), so only
llama-index-core is; the run is then five `openai.chat` traces and nothing else. The bare instrumentor alone is not
enough either: it makes no span for a call of llama-index's `OpenAI` class (it leaves those to
opentelemetry-instrumentation-openai, which `Traceloop.init` sets up), and only the Traceloop SDK's span processor
copies association properties onto spans, OpenLLMetry's documented way to tie traces to a session
(`Traceloop.set_association_properties({"session_id": …})`). `api_endpoint` is the recorder (`http://` →
OTLP/HTTP protobuf to `{api_endpoint}/v1/traces`, batched, through the global tracer provider init sets, which the
LlamaIndex instrumentor then uses too); metrics off (`TRACELOOP_METRICS_ENABLED=false`; logging is off by default),
content tracing on (the default).

The run: one FunctionAgent over two function tools, the conversation carried across two `agent.run` calls by one
LlamaIndex `Memory` (`Memory.from_defaults(session_id=…)`, passed to each run as its docs show). Not by one
`Context`: llama-index-workflows 2.26 serializes a context it continues and skips its "known unserializable"
`memory` key, so the second run starts with an empty chat history. Turn 1, not streamed: the model calls both tools
in parallel; the exchange rate tool raises the first time (LlamaIndex shows the model the exception text as the tool
output, flagged is_error); the model calls it again, it answers, then the model answers. Turn 2, streamed (the
agent's `streaming` switched on, its events consumed from `handler.stream_events()`; the LLM asks for usage in the
stream, `stream_options={"include_usage": True}`, which llama-index drops from calls that do not stream): a weather
call, then the answer. (The versions recorded are in meta.json.)
"""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

from tests.captures.recording.session import Recording

SESSION = "li-ll-trip-1"
REPLIES = [
    {"tool_calls": [{"name": "get_weather", "arguments": {"city": "Oslo"}},
                    {"name": "get_exchange_rate", "arguments": {"base": "EUR", "quote": "NOK"}}]},
    {"tool_calls": [{"name": "get_exchange_rate", "arguments": {"base": "EUR", "quote": "NOK"}}]},
    {"text": "Oslo is rainy at 9°C, and 1 EUR buys 11.52 NOK."},
    {"tool_calls": [{"name": "get_weather", "arguments": {"city": "Bergen"}}], "when": "Bergen"},
    {"text": "Bergen is windy at 7°C: pack a raincoat."},
]
WEATHER = {"Oslo": "rainy, 9°C", "Bergen": "windy, 7°C"}
QUESTIONS = [("What's the weather in Oslo, and how many NOK is one EUR?", False),
             ("And the weather in Bergen?", True)]
PACKAGES = ["llama-index-core", "llama-index-llms-openai", "traceloop-sdk", "opentelemetry-instrumentation-llamaindex",
            "opentelemetry-instrumentation-openai", "openai", "opentelemetry-sdk",
            "opentelemetry-exporter-otlp-proto-http"]
NOTES = ("Traceloop.init with the recorder as api_endpoint; a FunctionAgent, two turns sharing one Memory, the session "
         "an association property; turn 1 parallel tool calls, one raising once (the error shown to the model), "
         "then called again; turn 2 streamed with include_usage")


def run(rec: Recording) -> None:
    from llama_index.core.agent.workflow import AgentStream, FunctionAgent
    from llama_index.core.memory import Memory
    from llama_index.llms.openai import OpenAI
    from traceloop.sdk import Traceloop

    failures = {"get_exchange_rate": 1}  # the rate service times out once

    def get_weather(city: str) -> str:
        """The weather in a city."""
        return WEATHER[city]

    def get_exchange_rate(base: str, quote: str) -> str:
        """How many units of the quote currency one unit of the base currency buys."""
        if failures["get_exchange_rate"]:
            failures["get_exchange_rate"] -= 1
            raise TimeoutError(f"the rate service timed out for {base}/{quote}; try again")
        return f"1 {base} = 11.52 {quote}"

    llm = OpenAI(model="gpt-4o", api_base=rec.base_url, api_key="sk-fake",
                 additional_kwargs={"stream_options": {"include_usage": True}})
    agent = FunctionAgent(name="travel_agent", tools=[get_weather, get_exchange_rate], llm=llm,
                          system_prompt="You are a terse travel assistant. Use tools.", streaming=False)

    async def main() -> None:
        Traceloop.set_association_properties({"session_id": SESSION})
        memory = Memory.from_defaults(session_id=SESSION)  # the conversation: turn 2 is sent turn 1's messages
        for question, streamed in QUESTIONS:
            agent.streaming = streamed
            handler = agent.run(user_msg=question, memory=memory)
            if streamed:
                async for event in handler.stream_events():
                    if isinstance(event, AgentStream):
                        print(event.delta, end="", flush=True)
                print()
            print(await handler)

    asyncio.run(main())


def main() -> None:
    with Recording(Path(__file__).parent, REPLIES, framework="llamaindex", instrumentation="openllmetry",
                   packages=PACKAGES, session_id=SESSION, notes=NOTES) as rec:
        rec.env()
        os.environ["TRACELOOP_METRICS_ENABLED"] = "false"  # read by init: no metrics exporter
        from opentelemetry import trace
        from opentelemetry.instrumentation.llamaindex import LlamaIndexInstrumentor
        from traceloop.sdk import Traceloop

        Traceloop.init(app_name="travel-agent", api_endpoint=rec.otlp_endpoint, disable_batch=False,
                       telemetry_enabled=False)
        LlamaIndexInstrumentor().instrument()  # what init skips without the `llama-index` distribution
        run(rec)
        rec.flush(trace.get_tracer_provider())


if __name__ == "__main__":
    main()
