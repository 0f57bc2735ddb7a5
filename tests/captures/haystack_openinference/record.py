"""Re-record: `haystack_native`'s Agent run (OpenAIChatGenerator, two tools), traced by OpenInference's Haystack
instrumentor instead of Haystack's own tracer.

    python3 -m venv /tmp/cap-haystack-oi && /tmp/cap-haystack-oi/bin/pip install \
        haystack-ai==3.4.1 openinference-instrumentation-haystack==0.1.46 \
        opentelemetry-sdk==1.45.2 opentelemetry-exporter-otlp-proto-http==1.45.2
    /tmp/cap-haystack-oi/bin/python tests/captures/haystack_openinference/record.py

`HaystackInstrumentor().instrument(tracer_provider=...)` wraps every component's `run`: the Agent's is a CHAIN
span (`Agent.run`, its arguments and result as JSON in `input.value` / `output.value`), the chat generator's an
LLM span (`OpenAIChatGenerator.run`: `llm.input_messages.*`, `llm.output_messages.*` with the tool calls'
names and arguments, `llm.token_count.*`, `llm.model_name`). The session id is OpenInference's
`using_session`, around both turns. Two turns of one conversation (the second re-sends the first's messages):
two parallel tool calls, one of which fails, then the answer; then a follow-up answered with one tool call.
(The versions the capture was recorded with are in meta.json.)
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

from tests.captures.haystack_native.record import REPLIES, get_forecast, get_weather
from tests.captures.recording.session import Recording

SESSION = "haystack-oi-weather-1"


def main() -> None:
    with Recording(Path(__file__).parent, REPLIES, framework="haystack", instrumentation="openinference",
                   packages=["haystack-ai", "openinference-instrumentation-haystack", "openinference-instrumentation",
                             "openai", "opentelemetry-sdk"],
                   session_id=SESSION,
                   notes="haystack_native's Agent run under OpenInference: two turns in one session "
                         "(using_session): two parallel tool calls, one failing, then the answer; a follow-up "
                         "with one tool call") as rec:
        rec.env()
        # Haystack imported before `instrument()`, as a script's imports at its top: the instrumentor wraps the
        # `run` of the component classes imported when it is called, and those a pipeline runs later; an Agent
        # run outside a pipeline, with its classes imported after `instrument()`, is not traced at all.
        from haystack.components.agents import Agent
        from haystack.components.generators.chat import OpenAIChatGenerator
        from haystack.dataclasses import ChatMessage
        from haystack.tools import tool
        from haystack.utils import Secret
        from openinference.instrumentation import using_session
        from openinference.instrumentation.haystack import HaystackInstrumentor
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
        from opentelemetry.sdk.resources import Resource
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import BatchSpanProcessor

        provider = TracerProvider(resource=Resource.create({"service.name": "weather-desk"}))
        provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
        HaystackInstrumentor().instrument(tracer_provider=provider)

        generator = OpenAIChatGenerator(model="gpt-4o-mini", api_key=Secret.from_token("sk-fake"),
                                        api_base_url=rec.base_url)
        agent = Agent(chat_generator=generator, tools=[tool(get_weather), tool(get_forecast)],
                      system_prompt="You are a terse weather assistant.")
        history: list[ChatMessage] = []
        with using_session(SESSION):
            for question in ("Weather in Paris and Atlantis?", "And the next two days in Paris?"):
                result = agent.run(messages=[*history, ChatMessage.from_user(question)])
                history = [m for m in result["messages"] if not m.is_from("system")]
                print(result["last_message"].text)
        rec.flush(provider)


if __name__ == "__main__":
    main()
