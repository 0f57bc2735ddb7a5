"""Re-record: a LlamaIndex 0.14 FunctionAgent (llama-index-llms-openai) traced by OpenInference.

    python3 -m venv /tmp/cap-llamaindex && /tmp/cap-llamaindex/bin/pip install \
        llama-index-core==0.14.25 llama-index-llms-openai==0.8.3 \
        openinference-instrumentation-llama-index==4.6.1 \
        opentelemetry-sdk==1.45.2 opentelemetry-exporter-otlp-proto-http==1.45.2
    /tmp/cap-llamaindex/bin/python tests/captures/llamaindex_openinference/record.py

Not streamed (LlamaIndex streams without asking for usage, so a streamed run has no tokens to
compare). The run: two parallel weather calls, a stock lookup that raises (LlamaIndex shows the model the
exception text as the tool output, flagged is_error), then the answer. (Versions in meta.json.)
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

from tests.captures.recording.session import Recording

SESSION = "li-oi-trip-1"
REPLIES = [
    {"tool_calls": [{"name": "get_weather", "arguments": {"city": "Oslo"}},
                    {"name": "get_weather", "arguments": {"city": "Paris"}}]},
    {"tool_calls": [{"name": "lookup_stock", "arguments": {"ticker": "ACME"}}]},
    {"text": "Oslo is rainy (9°C) and Paris sunny (21°C); the ACME quote is unavailable right now."},
]
WEATHER = {"Paris": "sunny, 21°C", "Oslo": "rainy, 9°C"}


def run(rec: Recording) -> None:
    from llama_index.core.agent.workflow import FunctionAgent
    from llama_index.llms.openai import OpenAI

    def get_weather(city: str) -> str:
        """The weather in a city."""
        return WEATHER[city]

    def lookup_stock(ticker: str) -> str:
        """The last quote of a stock ticker."""
        raise RuntimeError(f"quote service unavailable for {ticker}; try again later")

    agent = FunctionAgent(tools=[get_weather, lookup_stock], name="travel_agent",
                          llm=OpenAI(model="gpt-4o", api_base=rec.base_url, api_key="sk-fake"),
                          system_prompt="You are a travel assistant. Use tools.", streaming=False)

    async def main() -> None:
        await agent.run(user_msg="Weather in Oslo and Paris, and the ACME quote?")

    asyncio.run(main())


def main(capture_dir: Path = Path(__file__).parent, session_id: str | None = SESSION) -> None:
    """Record into `capture_dir`; `session_id=None` runs it as LlamaIndex users usually do, with none."""
    with Recording(capture_dir, REPLIES, framework="llamaindex", instrumentation="openinference",
                   packages=["llama-index-core", "llama-index-llms-openai",
                             "openinference-instrumentation-llama-index", "opentelemetry-sdk"],
                   session_id=session_id,
                   notes="FunctionAgent: parallel tool calls, a tool that raises (shown to the model)") as rec:
        rec.env()
        from openinference.instrumentation import using_session
        from openinference.instrumentation.llama_index import LlamaIndexInstrumentor
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
        from opentelemetry.sdk.resources import Resource
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import BatchSpanProcessor

        provider = TracerProvider(resource=Resource.create({"service.name": "travel-agent"}))
        provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
        LlamaIndexInstrumentor().instrument(tracer_provider=provider)
        if session_id is None:
            run(rec)
        else:
            with using_session(session_id):
                run(rec)
        rec.flush(provider)


if __name__ == "__main__":
    main()
