"""Re-record: `haystack_native`'s Agent run (OpenAIChatGenerator, two tools) traced by OpenLLMetry's bare
instrumentors, Haystack and OpenAI, with Haystack's own tracer auto-enabled beside them.

    python3 -m venv /tmp/cap-haystack_openllmetry && /tmp/cap-haystack_openllmetry/bin/pip install \
        haystack-ai==2.31.0 opentelemetry-instrumentation-haystack==0.62.4 \
        opentelemetry-instrumentation-openai==0.62.4 \
        opentelemetry-sdk==1.45.2 opentelemetry-exporter-otlp-proto-http==1.45.2
    /tmp/cap-haystack_openllmetry/bin/python tests/captures/haystack_openllmetry_no-session/record.py

OpenLLMetry traces Haystack with two instrumentors, set up as their READMEs show (`…Instrumentor().instrument()`,
here with the tracer provider): `opentelemetry-instrumentation-haystack` wraps `OpenAIChatGenerator.run` (a
`haystack.openai.chat` span: `llm.request.type`, `gen_ai.system` and whatever it could read of the generator's
arguments and result) and `Pipeline.run` (a `haystack_pipeline.workflow` span);
`opentelemetry-instrumentation-openai` traces the OpenAI client call the generator makes under it (an
`openai.chat` span, GenAI attributes: the messages, tool calls, tool results, tokens). Nothing traces the tools:
Haystack's Agent runs them through its ToolInvoker (`raise_on_tool_invocation_failure=False`, so the failure goes
back to the model as a tool message).

The instrumentor 0.62.4 does not instrument Haystack 3 (`instrument()` raises: it wraps
`haystack.components.generators.openai.OpenAIGenerator`, which Haystack 3 removed), hence the last Haystack 2.
The tracer provider is made global before Haystack is imported, as OpenTelemetry's Python setup does: Haystack 2
then enables its own OpenTelemetry tracer (`auto_enable_tracing`, content tracing at its default, off), so
`haystack.agent.run` > `haystack.component.run` spans frame the calls, and each turn is one trace instead of one
trace per LLM call.

No session id: the bare instrumentors write no OpenLLMetry association properties (only traceloop-sdk's
`set_association_properties` does, and the LangChain instrumentor from a run's metadata), and Haystack has no
session of its own. The application runs the conversation inside one span of its own (no session attribute), so
the trace is the session. Two turns (the second re-sends the first's messages): two parallel tool calls, one of
which raises, then the answer; then, streamed (`stream_options.include_usage`, Haystack's way to get the
tokens of a stream), a follow-up answered with one tool call. (The versions recorded are in meta.json.)
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

from tests.captures.haystack_native.record import REPLIES, get_forecast, get_weather
from tests.captures.recording.session import Recording

NOTES = ("haystack_native's Agent run under OpenLLMetry's haystack and openai instrumentors, Haystack 2's own tracer "
         "auto-enabled (global provider, content tracing off); no session id, the conversation one application "
         "span: two parallel tool calls, one raising (sent back to the model), then the answer; a streamed "
         "follow-up with one tool call")


def main() -> None:
    os.environ["TRACELOOP_TRACE_CONTENT"] = "true"  # OpenLLMetry's default, said out loud
    with Recording(Path(__file__).parent, REPLIES, framework="haystack", instrumentation="openllmetry",
                   packages=["haystack-ai", "opentelemetry-instrumentation-haystack",
                             "opentelemetry-instrumentation-openai", "opentelemetry-semantic-conventions-ai",
                             "openai", "opentelemetry-sdk"],
                   notes=NOTES) as rec:
        rec.env()
        from opentelemetry import trace
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
        from opentelemetry.instrumentation.haystack import HaystackInstrumentor
        from opentelemetry.instrumentation.openai import OpenAIInstrumentor
        from opentelemetry.sdk.resources import Resource
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import BatchSpanProcessor

        provider = TracerProvider(resource=Resource.create({"service.name": "weather-desk"}))
        provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
        trace.set_tracer_provider(provider)
        HaystackInstrumentor().instrument(tracer_provider=provider)
        OpenAIInstrumentor().instrument(tracer_provider=provider)

        # Imported after the provider is set: Haystack 2 auto-enables its tracer when it is imported.
        from haystack import tracing
        from haystack.components.agents import Agent
        from haystack.components.generators.chat import OpenAIChatGenerator
        from haystack.components.generators.utils import print_streaming_chunk
        from haystack.dataclasses import ChatMessage
        from haystack.tools import tool
        from haystack.utils import Secret

        print("Haystack's own tracer enabled:", tracing.is_tracing_enabled())
        generator = OpenAIChatGenerator(model="gpt-4o", api_key=Secret.from_token("sk-fake"),
                                        api_base_url=rec.base_url)
        agent = Agent(chat_generator=generator, tools=[tool(get_weather), tool(get_forecast)],
                      system_prompt="You are a terse weather assistant.", raise_on_tool_invocation_failure=False)
        history: list[ChatMessage] = []
        with provider.get_tracer("weather-desk").start_as_current_span("weather chat"):
            result = agent.run(messages=[ChatMessage.from_user("Weather in Paris and Atlantis?")])
            history = [m for m in result["messages"] if not m.is_from("system")]
            print(result["last_message"].text)
            result = agent.run(messages=[*history, ChatMessage.from_user("And the next two days in Paris?")],
                               streaming_callback=print_streaming_chunk,
                               generation_kwargs={"stream_options": {"include_usage": True}})
            print(result["last_message"].text)
        rec.flush(provider)


if __name__ == "__main__":
    main()
