"""Re-record: a DSPy program (a ChainOfThought, then a ReAct agent with two tools) traced by MLflow's DSPy autolog.

    python3 -m venv /tmp/cap-dspy_mlflow && /tmp/cap-dspy_mlflow/bin/pip install \
        dspy==3.4.1 litellm==1.110.2 mlflow==3.18.0 opentelemetry-exporter-otlp-proto-http==1.45.2
    /tmp/cap-dspy_mlflow/bin/python tests/captures/dspy_mlflow/record.py

DSPy's docs trace with `mlflow.dspy.autolog()`: a DSPy callback (`mlflow/dspy/callback.py`) opens a span per
module (`ReAct.forward` AGENT, `Predict.forward` LLM, `ChainOfThought.forward` and the program CHAIN), per LM call
(`LM.__call__` CHAT_MODEL, its request's messages and the completions), per adapter format/parse (PARSER) and per
tool (`Tool.<name>` TOOL; none for ReAct's own `finish`), and turns DSPy's usage tracking on. With
`OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` set MLflow exports the spans over OTLP (no tracking server; the store autolog
still writes to is a throwaway folder). The session is MLflow's documented `mlflow.tracing.context(session_id=…)`
for traces of code one does not instrument oneself: trace metadata, which the OTLP export does not send.

The program a DSPy user writes: a module whose `forward` runs a `dspy.ChainOfThought` (it names the request's topic)
and then a `dspy.ReAct` agent over two tools. ReAct (ChatAdapter) asks for `next_thought`, `next_tool_name`,
`next_tool_args` in the answer's text, re-renders its loop in every request's `[[ ## trajectory ## ]]`, ends with
the `finish` tool and an extract call (a ChainOfThought) that writes the answer. Turn 1: two tool calls, one per
ReAct step. Turn 2, streamed (`dspy.streamify`: each LM call streams through LiteLLM): the flight tool raises (ReAct
shows the model "Execution error in …"), is called again, then the answer. (The versions are in meta.json.)
Why: MLflow is the tracing DSPy's docs recommend; the corpus had DSPy only under OpenInference.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

from tests.captures.recording.session import Recording

SESSION = "dspy-mlflow-trip-1"


def react(thought: str, tool: str, args: dict[str, object]) -> dict[str, str]:
    return {"text": f"[[ ## next_thought ## ]]\n{thought}\n\n[[ ## next_tool_name ## ]]\n{tool}\n\n"
                    f"[[ ## next_tool_args ## ]]\n{json.dumps(args)}\n\n[[ ## completed ## ]]"}


def fields(**values: str) -> dict[str, str]:
    return {"text": "".join(f"[[ ## {name} ## ]]\n{value}\n\n" for name, value in values.items())
                    + "[[ ## completed ## ]]"}


REPLIES = [
    fields(reasoning="The user asks about the weather in two cities.", topic="weather"),
    react("I should look up the weather in Paris first.", "get_weather", {"city": "Paris"}),
    react("Now the weather in Oslo.", "get_weather", {"city": "Oslo"}),
    react("I know the weather in both cities.", "finish", {}),
    fields(reasoning="Paris is sunny, 21°C; Oslo is rainy, 9°C.",
           answer="Paris is sunny at 21°C; Oslo is rainy at 9°C."),
    fields(reasoning="The user wants a flight.", topic="flights"),
    react("I should look up flights to Oslo.", "lookup_flight", {"city": "Oslo"}),
    react("The flight search failed; I will try again.", "lookup_flight", {"city": "Oslo"}),
    react("I have the flight.", "finish", {}),
    fields(reasoning="The second search found SK4411.", answer="Fly SK4411 to Oslo, departing 09:40."),
]
WEATHER = {"Paris": "sunny, 21°C", "Oslo": "rainy, 9°C"}


def main() -> None:
    notes = ("mlflow.dspy.autolog(), OTLP export via OTEL_EXPORTER_OTLP_TRACES_ENDPOINT; a module running a "
             "ChainOfThought (the topic) then a ReAct agent over two tools; turn 1: two tool calls; turn 2 streamed "
             "(dspy.streamify): a tool raising once, then called again; mlflow.tracing.context(session_id=…) "
             "around both turns (trace metadata, not exported)")
    with Recording(Path(__file__).parent, REPLIES, framework="dspy", instrumentation="mlflow tracing (OTLP export)",
                   packages=["dspy", "litellm", "mlflow", "mlflow-tracing", "opentelemetry-sdk"],
                   session_id=SESSION, notes=notes) as rec:
        rec.env()
        os.environ["MLFLOW_TRACKING_URI"] = Path(tempfile.mkdtemp(prefix="cap-dspy-mlflow-")).as_uri()
        os.environ["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"  # offline: litellm's bundled prices
        import dspy
        import mlflow
        from mlflow.tracing.provider import provider
        from opentelemetry import metrics

        mlflow.dspy.autolog()
        dspy.configure_cache(enable_disk_cache=False, enable_memory_cache=False)
        failures: list[str] = []

        def get_weather(city: str) -> str:
            """The weather in a city."""
            return WEATHER[city]

        def lookup_flight(city: str) -> str:
            """Flights to a city."""
            if not failures:
                failures.append(city)
                raise ConnectionError(f"flight search timed out for {city}")
            return "SK4411, departing 09:40"

        class TripDesk(dspy.Module):
            def __init__(self) -> None:
                super().__init__()
                self.triage = dspy.ChainOfThought("question -> topic: str")
                self.agent = dspy.ReAct("question, topic -> answer", tools=[get_weather, lookup_flight],
                                        max_iters=5)

            def forward(self, question: str) -> dspy.Prediction:
                topic = self.triage(question=question).topic
                return self.agent(question=question, topic=topic)

        dspy.configure(lm=dspy.LM("openai/gpt-4o-mini", api_base=rec.base_url, api_key="sk-fake", cache=False))
        desk = TripDesk()
        with mlflow.tracing.context(session_id=SESSION, user="user-1"):
            print(desk(question="What is the weather in Paris and in Oslo?").answer)

            async def streamed(question: str) -> str:
                answer = ""
                async for chunk in dspy.streamify(desk)(question=question):
                    if isinstance(chunk, dspy.Prediction):
                        answer = chunk.answer
                return answer

            print(asyncio.run(streamed("Find me a flight to Oslo.")))
        # MLflow's OTLP metrics (span latencies) go out when their provider flushes: before the recorder closes.
        rec.flush(provider.get(), metrics.get_meter_provider())


if __name__ == "__main__":
    main()
