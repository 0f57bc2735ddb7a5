"""`run_traced`: record an AutoGen AgentChat run traced by OpenInference's AgentChat instrumentor.

The `autogen-agentchat_openinference*` captures' `record.py` scripts hold their scenario (an `async` function of
the fake LLM's base URL that builds the agents and runs them); this module does the rest, the same for all:

    with Recording(capture_dir, REPLIES, framework="autogen-agentchat", instrumentation="openinference",
                   packages=PACKAGES, session_id=SESSION, notes=notes) as rec:
        run_traced(rec, scenario, service_name="autogen-weather")

It points the clients and exporters at the Recording (`rec.env()`), builds a tracer provider (resource
`service.name`, a batch span processor, OTLP/HTTP protobuf to the recorder), instruments AgentChat with it as
the instrumentor's README shows (`AutogenAgentChatInstrumentor().instrument(tracer_provider=…)`, no global
provider, so autogen-core's own tracing stays off), runs `scenario(rec.base_url)`, then flushes the provider.

Standard library only, like the rest of `recording/` (the framework is imported inside `run_traced`).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine
from typing import Any

from .session import Recording

PACKAGES = ["autogen-agentchat", "autogen-core", "autogen-ext", "openai",
            "openinference-instrumentation-autogen-agentchat", "openinference-instrumentation", "opentelemetry-sdk"]


def run_traced(rec: Recording, scenario: Callable[[str], Coroutine[Any, Any, None]], *, service_name: str) -> None:
    """Run `scenario(base_url)` under `rec`, AgentChat instrumented with a provider exporting to the recorder."""
    rec.env()
    from openinference.instrumentation.autogen_agentchat import AutogenAgentChatInstrumentor
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor

    provider = TracerProvider(resource=Resource.create({"service.name": service_name}))
    provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter(endpoint=rec.otlp_endpoint + "/v1/traces")))
    AutogenAgentChatInstrumentor().instrument(tracer_provider=provider)
    asyncio.run(scenario(rec.base_url))
    rec.flush(provider)
