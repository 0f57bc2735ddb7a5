"""Re-record: `haystack_native`'s Agent run (OpenAIChatGenerator, two tools), traced by OpenLIT (`openlit.init()`)
instead of Haystack's own tracer.

    python3 -m venv /tmp/cap-haystack_openlit && /tmp/cap-haystack_openlit/bin/pip install -U pip && \
        /tmp/cap-haystack_openlit/bin/pip install haystack-ai==3.4.1 openlit==1.45.0 openai==2.54.0 httpx==0.29.0 \
        opentelemetry-sdk==1.45.1 opentelemetry-exporter-otlp-proto-http==1.45.1
    /tmp/cap-haystack_openlit/bin/python tests/captures/haystack_openlit/record.py

(openlit 1.45 requires `openai<3`, hence the OpenAI SDK 2 under Haystack 3.) Set up the way OpenLIT's quickstart
shows: `openlit.init(otlp_endpoint=…)` builds the tracer, logger and meter providers (OTLP/HTTP protobuf, batched,
to the recorder), content capture on (its default, said out loud), and instruments every library it finds. Two of
its instrumentations trace this run:

- its Haystack instrumentation (openlit/instrumentation/haystack) wraps `Pipeline.run` and a few components' `run`,
  `OpenAIChatGenerator.run` among them: a `chat openai_chat_generator` span per call, Haystack's provider
  (`gen_ai.provider.name` `haystack`), the component's class and sockets, `gen_ai.prompt` only when the messages
  are passed positionally (the Agent passes them by keyword: none here). It wraps neither the Agent nor its
  ToolInvoker: no agent span, no tool span;
- its OpenAI instrumentation traces the client call the generator makes inside that span (`chat gpt-4o-mini`, the
  GenAI attributes: `gen_ai.input.messages` / `gen_ai.output.messages` JSON, `gen_ai.usage.*`), plus the httpx
  POST span under it and an inference event log record per call.

So each LLM call has two spans, one inside the other. Haystack's own tracing stays off: Haystack 3 moved its
OpenTelemetry tracer to `opentelemetry-haystack` (not installed) and enables none by itself.

The session id the way OpenLIT allows (`trajectory/mappers/openlit.py`, capture `openai-sdk_openlit`): both turns
inside `openlit.using_attributes({"session.id": …})`, which OpenLIT copies onto every span it makes in it. The
scenario (`haystack_native`'s replies and tools): two turns of one conversation (the second re-sends the first's
messages). Turn 1: two parallel `get_weather` calls, the one for Atlantis raising (the Agent's ToolInvoker,
`raise_on_tool_invocation_failure=False`, sends the error back to the model as the tool's result), then the
answer around it. Turn 2, streamed (`streaming_callback`, `stream_options.include_usage`: Haystack's way to get a
stream's tokens): one `get_forecast` call, then the answer. Four LLM calls.

The capture is recorded offline: OpenLIT's pricing table (fetched from GitHub at init) is unreachable, so every
call's `gen_ai.usage.cost` is 0. (The versions the capture was recorded with are in meta.json.)
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

from tests.captures.haystack_native.record import REPLIES, get_forecast, get_weather
from tests.captures.recording.session import Recording

SESSION = "haystack-openlit-weather-1"
PACKAGES = ["haystack-ai", "openlit", "openai", "opentelemetry-sdk", "opentelemetry-exporter-otlp-proto-http",
            "httpx"]
NOTES = ("haystack_native's Agent run under openlit.init(otlp_endpoint=recorder): its Haystack instrumentation's "
         "`chat openai_chat_generator` span around its OpenAI instrumentation's `chat gpt-4o-mini` span for each "
         "call (+ httpx POST spans, + an inference event log record per call, + metrics); no agent or tool span. "
         "Both turns in openlit.using_attributes({'session.id': …}). Turn 1: two parallel get_weather calls, "
         "Atlantis raising (the error sent back to the model), then the answer; turn 2 streamed with "
         "include_usage: one get_forecast call, then the answer. Haystack's own tracing off. Recorded offline: "
         "OpenLIT's pricing table unreachable, so gen_ai.usage.cost is 0 on every call")


def main() -> None:
    with Recording(Path(__file__).parent, REPLIES, framework="haystack", instrumentation="openlit",
                   packages=PACKAGES, session_id=SESSION, notes=NOTES) as rec:
        rec.env()
        import openlit
        from haystack import tracing
        from haystack.components.agents import Agent
        from haystack.components.generators.chat import OpenAIChatGenerator
        from haystack.components.generators.utils import print_streaming_chunk
        from haystack.dataclasses import ChatMessage
        from haystack.tools import tool
        from haystack.utils import Secret
        from opentelemetry import metrics, trace
        from opentelemetry._logs import get_logger_provider

        openlit.init(application_name="weather-desk", environment="dev", otlp_endpoint=rec.otlp_endpoint,
                     capture_message_content=True)
        print("Haystack's own tracer enabled:", tracing.is_tracing_enabled())

        generator = OpenAIChatGenerator(model="gpt-4o-mini", api_key=Secret.from_token("sk-fake"),
                                        api_base_url=rec.base_url)
        agent = Agent(chat_generator=generator, tools=[tool(get_weather), tool(get_forecast)],
                      system_prompt="You are a terse weather assistant.", raise_on_tool_invocation_failure=False)
        with openlit.using_attributes({"session.id": SESSION}):
            result = agent.run(messages=[ChatMessage.from_user("Weather in Paris and Atlantis?")])
            history = [m for m in result["messages"] if not m.is_from("system")]
            print(result["last_message"].text)
            result = agent.run(messages=[*history, ChatMessage.from_user("And the next two days in Paris?")],
                               streaming_callback=print_streaming_chunk,
                               generation_kwargs={"stream_options": {"include_usage": True}})
            print(result["last_message"].text)
        rec.flush(trace.get_tracer_provider(), get_logger_provider(), metrics.get_meter_provider())


if __name__ == "__main__":
    main()
