"""Re-record: a DSPy ReAct agent with two tools, two questions in one session, traced by OpenInference.

    python3 -m venv /tmp/cap-dspy && /tmp/cap-dspy/bin/pip install \
        dspy==3.4.1 litellm==1.110.2 openinference-instrumentation-dspy==0.1.48 \
        openinference-instrumentation-litellm==0.1.51 \
        opentelemetry-sdk==1.45.2 opentelemetry-exporter-otlp-proto-http==1.45.2
    /tmp/cap-dspy/bin/python tests/captures/dspy_openinference/record.py

DSPy's ReAct (ChatAdapter) asks the model for `[[ ## next_thought ## ]]`, `[[ ## next_tool_name ## ]]`
and `[[ ## next_tool_args ## ]]` fields in its text: the tool calls are in the answer's text, not
structured tool calls, and each observation comes back inside the next request's user message
(`[[ ## trajectory ## ]]`). The `finish` tool ends the loop; an extract call (ChainOfThought) then
writes the answer. The first question calls a tool; the second calls one that raises (ReAct shows
the model "Execution error in …"), then calls it again. (The versions are in meta.json.)
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

from tests.captures.recording.session import Recording

SESSION = "dspy-oi-trip-1"


def react(thought: str, tool: str, args: dict[str, object]) -> dict[str, str]:
    return {"text": f"[[ ## next_thought ## ]]\n{thought}\n\n[[ ## next_tool_name ## ]]\n{tool}\n\n"
                    f"[[ ## next_tool_args ## ]]\n{json.dumps(args)}\n\n[[ ## completed ## ]]"}


def extract(reasoning: str, answer: str) -> dict[str, str]:
    return {"text": f"[[ ## reasoning ## ]]\n{reasoning}\n\n[[ ## answer ## ]]\n{answer}\n\n[[ ## completed ## ]]"}


REPLIES = [
    react("I should look up the weather in Paris.", "get_weather", {"city": "Paris"}),
    react("I know the weather in Paris.", "finish", {}),
    extract("The tool said Paris is sunny, 21°C.", "Paris is sunny, 21°C."),
    react("I should look up flights to Oslo.", "lookup_flight", {"city": "Oslo"}),
    react("The flight search failed; I will try again.", "lookup_flight", {"city": "Oslo"}),
    react("I have the flight.", "finish", {}),
    extract("The second search found SK4411.", "Fly SK4411 to Oslo, departing 09:40."),
]
WEATHER = {"Paris": "sunny, 21°C"}


def main() -> None:
    with Recording(Path(__file__).parent, REPLIES, framework="dspy", instrumentation="openinference",
                   packages=["dspy", "litellm", "openinference-instrumentation-dspy",
                             "openinference-instrumentation-litellm", "opentelemetry-sdk"],
                   session_id=SESSION,
                   notes="ReAct (ChatAdapter: tool calls in the model's text), two questions in one session; "
                         "a tool raising once, then called again") as rec:
        rec.env()
        os.environ["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"  # offline: litellm's bundled prices
        from openinference.instrumentation import using_session
        from openinference.instrumentation.dspy import DSPyInstrumentor
        from openinference.instrumentation.litellm import LiteLLMInstrumentor
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
        from opentelemetry.sdk.resources import Resource
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import BatchSpanProcessor

        provider = TracerProvider(resource=Resource.create({"service.name": "trip-planner"}))
        provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
        DSPyInstrumentor().instrument(tracer_provider=provider)
        LiteLLMInstrumentor().instrument(tracer_provider=provider)

        import dspy

        dspy.configure_cache(enable_disk_cache=False, enable_memory_cache=False)
        failures = []

        def get_weather(city: str) -> str:
            """The weather in a city."""
            return WEATHER[city]

        def lookup_flight(city: str) -> str:
            """Flights to a city."""
            if not failures:
                failures.append(city)
                raise ConnectionError(f"flight search timed out for {city}")
            return "SK4411, departing 09:40"

        lm = dspy.LM("openai/gpt-4o", api_base=rec.base_url, api_key="sk-fake", cache=False)
        dspy.configure(lm=lm)
        agent = dspy.ReAct("question -> answer", tools=[get_weather, lookup_flight], max_iters=4)
        with using_session(SESSION):
            print(agent(question="What is the weather in Paris?").answer)
            print(agent(question="Find me a flight to Oslo.").answer)
        rec.flush(provider)


if __name__ == "__main__":
    main()
