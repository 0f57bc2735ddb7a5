"""The support-agent scenario the two `langchain_openinference_anthropic-prompt-cache*` captures record.

A LangChain 1.x agent (create_agent, ChatAnthropic) whose long system prompt carries an Anthropic cache
breakpoint (`cache_control: {"type": "ephemeral"}` on its text block), as a user of prompt caching writes it,
traced by OpenInference. Three calls: the first writes the system prompt to the cache (1500 of its 1800 prompt
tokens), the next two read it (1500 of 1900, then of 2050); a tool call between each. Imported by the capture
folders' `record.py` inside the recording virtualenv (their docstrings say which), never by the tests.
"""

from __future__ import annotations

from pathlib import Path

from tests.captures.recording.session import Recording

MODEL = "claude-sonnet-4-5"
PACKAGES = ["langchain", "langchain-core", "langgraph", "langchain-anthropic", "anthropic",
            "openinference-instrumentation-langchain", "opentelemetry-sdk"]
REPLIES = [
    {"tool_calls": [{"name": "lookup_order", "arguments": {"order_id": "A-1042"}}],
     "input_tokens": 1800, "cache_write_tokens": 1500, "output_tokens": 42},
    {"tool_calls": [{"name": "refund_policy", "arguments": {"category": "electronics"}}],
     "input_tokens": 1900, "cache_read_tokens": 1500, "output_tokens": 38},
    {"text": "Order A-1042 (headphones) arrived damaged on 3 March; electronics can be refunded within "
             "30 days, so I have started a full refund.",
     "input_tokens": 2050, "cache_read_tokens": 1500, "output_tokens": 51},
]
POLICY = "\n".join(f"{n}. Policy clause {n}: be accurate, cite the order, never promise what tools did not confirm."
                   for n in range(1, 61))
SYSTEM = f"You are the support agent of Acme Audio. Use the tools before answering.\n\n{POLICY}"


def run(streaming: bool) -> None:
    from langchain.agents import create_agent
    from langchain_anthropic import ChatAnthropic
    from langchain_core.messages import SystemMessage
    from langchain_core.tools import tool

    model = ChatAnthropic(model_name=MODEL, max_tokens=1024, timeout=30, stop=None,  # type: ignore[call-arg]
                          streaming=streaming)

    @tool
    def lookup_order(order_id: str) -> str:
        """Look an order up by its id."""
        return f"Order {order_id}: wireless headphones, delivered 3 March, reported damaged on arrival."

    @tool
    def refund_policy(category: str) -> str:
        """The refund policy of a product category."""
        return f"{category}: full refund within 30 days of delivery when damaged on arrival."

    # The system prompt is long and the same on every call: a cache breakpoint after it.
    system = SystemMessage(content=[{"type": "text", "text": SYSTEM, "cache_control": {"type": "ephemeral"}}])
    agent = create_agent(model, tools=[lookup_order, refund_policy], system_prompt=system, name="support_agent")
    agent.invoke({"messages": [{"role": "user", "content": "My order A-1042 arrived broken. Can I get a refund?"}]})


def record(capture_dir: Path, session: str, notes: str, *, streaming: bool) -> None:
    from openinference.instrumentation import using_session

    with Recording(capture_dir, REPLIES, framework="langchain", instrumentation="openinference",
                   packages=PACKAGES, session_id=session, notes=notes) as rec:
        rec.env()
        from openinference.instrumentation.langchain import LangChainInstrumentor
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
        from opentelemetry.sdk.resources import Resource
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import BatchSpanProcessor

        provider = TracerProvider(resource=Resource.create({"service.name": "support-agent"}))
        provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
        LangChainInstrumentor().instrument(tracer_provider=provider)
        with using_session(session):
            run(streaming)
        rec.flush(provider)
