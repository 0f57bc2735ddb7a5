"""Re-record: pydantic-ai agents on an OpenAI chat model, instrumented by pydantic-ai itself.

    python3 -m venv /tmp/cap-pai && /tmp/cap-pai/bin/pip install \
        'pydantic-ai-slim[openai]==2.68.0' openai==3.57.0 \
        opentelemetry-sdk==1.45.2 opentelemetry-exporter-otlp-proto-http==1.45.2
    /tmp/cap-pai/bin/python tests/captures/pydantic-ai_openai_turns-and-nested-run/record.py

Three runs of one conversation (`conversation_id`), each its own trace, none given the others'
message history: the same question twice (independent runs asking the same thing), then a run
whose tool runs a nested agent. pydantic-ai gives the nested run a conversation id of its own (a
fresh UUID7: it was given none) and puts it on the nested run's spans. (The versions the capture
was recorded with are in meta.json.)
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

from tests.captures.recording.session import Recording

SESSION = "pai-conversation-1"
REPLIES = [
    {"text": "2 + 2 = 4."},
    {"text": "Still 4."},
    {"tool_calls": [{"name": "research", "arguments": {"topic": "the Eiffel Tower"}}]},
    {"text": "The Eiffel Tower opened in 1889.", "when": "Research"},
    {"text": "It opened in 1889."},
]


def main() -> None:
    with Recording(Path(__file__).parent, REPLIES, framework="pydantic-ai", instrumentation="pydantic-ai",
                   packages=["pydantic-ai-slim", "openai", "opentelemetry-sdk"], session_id=SESSION,
                   notes="three independent runs of one conversation: one question asked twice; a tool running "
                         "a nested agent, which gets a conversation id of its own") as rec:
        rec.env()
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
        from opentelemetry.sdk.resources import Resource
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import BatchSpanProcessor
        from pydantic_ai import Agent
        from pydantic_ai.capabilities.instrumentation import Instrumentation
        from pydantic_ai.models.instrumented import InstrumentationSettings
        from pydantic_ai.models.openai import OpenAIChatModel
        from pydantic_ai.providers.openai import OpenAIProvider

        provider = TracerProvider(resource=Resource.create({"service.name": "pai-helper"}))
        provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
        settings = InstrumentationSettings(tracer_provider=provider)
        model = OpenAIChatModel("gpt-4o", provider=OpenAIProvider(base_url=rec.base_url, api_key="sk-fake"))

        researcher = Agent(model, name="researcher", instructions="Research the topic; answer in one line.",
                           capabilities=[Instrumentation(settings=settings)])
        helper = Agent(model, name="helper", instructions="You are a terse helper.",
                       capabilities=[Instrumentation(settings=settings)])

        @helper.tool_plain
        async def research(topic: str) -> str:
            """Ask the researcher about a topic."""
            return (await researcher.run(f"Research {topic}: when did it open?")).output

        helper.run_sync("What is 2 + 2?", conversation_id=SESSION)
        helper.run_sync("What is 2 + 2?", conversation_id=SESSION)
        helper.run_sync("When did the Eiffel Tower open?", conversation_id=SESSION)
        rec.flush(provider)


if __name__ == "__main__":
    main()
