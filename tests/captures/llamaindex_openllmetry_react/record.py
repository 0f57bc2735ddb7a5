"""Re-record: a LlamaIndex 0.14 ReActAgent (llama-index-llms-openai) traced by OpenLLMetry through the Traceloop SDK
(opentelemetry-instrumentation-llamaindex + -openai), two turns of one session.

    python3 -m venv /tmp/cap-llamaindex_openllmetry_react && \
        /tmp/cap-llamaindex_openllmetry_react/bin/pip install -U pip && \
        /tmp/cap-llamaindex_openllmetry_react/bin/pip install llama-index-core==0.14.25 \
        llama-index-llms-openai==0.8.3 llama-index-workflows==2.26.1 traceloop-sdk==0.62.4 \
        opentelemetry-instrumentation-llamaindex==0.62.4 opentelemetry-instrumentation-openai==0.62.4 \
        openai==2.54.0 opentelemetry-sdk==1.45.1 opentelemetry-exporter-otlp-proto-http==1.45.1
    /tmp/cap-llamaindex_openllmetry_react/bin/python tests/captures/llamaindex_openllmetry_react/record.py

(The newest releases of each, resolved by pip: llama-index-llms-openai 0.8.3 holds openai below 3, traceloop-sdk 0.62.4
the OpenTelemetry SDK at 1.45.1. The pip bundled with Python 3.11's venv gives up resolving traceloop-sdk's
open-ended requirements: upgrade it.)

The same scenario as `llamaindex_openinference_react`, traced as `llamaindex_openllmetry` is: `Traceloop.init(…)` as
LlamaIndex's OpenLLMetry page shows, plus the instrumentation's own README line `LlamaIndexInstrumentor().instrument()`
(`Traceloop.init` enables its LlamaIndex instrumentor only when the `llama-index` meta-package is installed, which
cannot be with llama-index-llms-openai 0.8), the session an association property
(`Traceloop.set_association_properties({"session_id": …})`, OpenLLMetry's documented way to tie traces to a session,
which only the Traceloop SDK's span processor copies onto spans). Each call of llama-index's `OpenAI` class is an
`openai.chat` span of opentelemetry-instrumentation-openai; the LlamaIndex instrumentation makes the workflow's and its
steps' spans. Metrics off (`TRACELOOP_METRICS_ENABLED=false`), content tracing on (the default).

`ReActAgent` is LlamaIndex's text-format agent: its system prompt lists the tools, the model answers
`Thought: … Action: <tool> Action Input: {…}` in its text (no native tool calls), ReActAgent parses that into a
ToolSelection with an id of its own (a uuid4), runs the tool, and sends the model its whole reasoning so far again on
the next call: each earlier answer re-formatted as an assistant message (`Action Input: ` the parsed dict's Python
repr) and each tool's output as a user message `Observation: …`. When it answers (`Thought: … Answer: …`), the turn's
reasoning is put into the memory as one assistant message and the answer loses everything up to `Answer:`.

The run: two `agent.run` turns continuing one workflow `Context`, as LlamaIndex's docs show for a multi-turn agent,
and one LlamaIndex `Memory` passed to both: llama-index-workflows 2.26 serializes a context it continues and skips its
"known unserializable" `memory` key, so with the context alone turn 2 would be sent its question and nothing of turn 1.
Turn 1, not streamed: the weather in Oslo, then the stock quote, whose tool raises the first time (LlamaIndex shows the
model the exception text as the Observation, the ToolOutput flagged is_error), called again, then the answer. Turn 2,
streamed (`streaming=True`, events consumed from `handler.stream_events()`, usage asked for with
`stream_options.include_usage`): the weather in Paris, then the answer. No parallel calls: ReActAgent runs one action
per LLM call. (The versions recorded are in meta.json.)
"""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

from tests.captures.recording.session import Recording

SESSION = "li-ll-react-1"


def action(thought: str, tool: str, arguments: str) -> dict[str, str]:
    """A ReAct step as the model writes it: the action in its text, the arguments JSON."""
    return {"text": f"Thought: {thought}\nAction: {tool}\nAction Input: {arguments}"}


def answer(thought: str, text: str, when: str = "") -> dict[str, str]:
    return {"text": f"Thought: {thought}\nAnswer: {text}", "when": when}


REPLIES = [
    action("I need the weather in Oslo first.", "get_weather", '{"city": "Oslo"}'),
    action("Now the ACME quote.", "lookup_stock", '{"ticker": "ACME"}'),
    action("The quote service failed; I will try once more.", "lookup_stock", '{"ticker": "ACME"}'),
    answer("I have both.", "Oslo is rainy (9°C) and ACME last traded at 41.20 USD."),
    {**action("The user wants Paris too.", "get_weather", '{"city": "Paris"}'), "when": "Paris"},
    answer("I know the weather in Paris.", "Paris is sunny (21°C).", when="Observation"),
]
QUESTIONS = [("What's the weather in Oslo, and the last ACME quote?", False), ("And in Paris?", True)]
WEATHER = {"Oslo": "rainy, 9°C", "Paris": "sunny, 21°C"}
PACKAGES = ["llama-index-core", "llama-index-llms-openai", "llama-index-workflows", "traceloop-sdk",
            "opentelemetry-instrumentation-llamaindex", "opentelemetry-instrumentation-openai", "openai",
            "opentelemetry-sdk", "opentelemetry-exporter-otlp-proto-http"]
NOTES = ("Traceloop.init with the recorder as api_endpoint plus LlamaIndexInstrumentor().instrument(); a ReActAgent "
         "(the model writes Thought/Action/Action Input in its text, no native tool calls), two turns continuing one "
         "Context and one Memory, the session an association property; turn 1: a tool, then a tool raising once (the "
         "error shown as the Observation) called again, then the answer; turn 2 streamed with include_usage")


def run(rec: Recording) -> None:
    from llama_index.core.agent.workflow import AgentStream, ReActAgent
    from llama_index.core.memory import Memory
    from llama_index.core.workflow import Context
    from llama_index.llms.openai import OpenAI
    from traceloop.sdk import Traceloop

    failures = {"lookup_stock": 1}  # the quote service fails once

    def get_weather(city: str) -> str:
        """The weather in a city."""
        return WEATHER[city]

    def lookup_stock(ticker: str) -> str:
        """The last quote of a stock ticker."""
        if failures["lookup_stock"]:
            failures["lookup_stock"] -= 1
            raise RuntimeError(f"quote service unavailable for {ticker}; try again")
        return f"{ticker} last traded at 41.20 USD"

    llm = OpenAI(model="gpt-4o", api_base=rec.base_url, api_key="sk-fake",
                 additional_kwargs={"stream_options": {"include_usage": True}})
    agent = ReActAgent(name="travel_agent", tools=[get_weather, lookup_stock], llm=llm,
                       system_prompt="You are a travel assistant. Use tools.", streaming=False)

    async def main() -> None:
        Traceloop.set_association_properties({"session_id": SESSION})
        ctx = Context(agent)
        memory = Memory.from_defaults(session_id=SESSION)
        for question, streamed in QUESTIONS:
            agent.streaming = streamed
            handler = agent.run(user_msg=question, ctx=ctx, memory=memory)
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
