"""Re-record: a hand-written tool loop traced by MLflow 3 tracing, exported over OTLP (no tracking server).

    python3 -m venv /tmp/cap-mlflow && /tmp/cap-mlflow/bin/pip install 'mlflow==3.17.2' 'openai==3.63.0' \
        'opentelemetry-exporter-otlp-proto-http==1.45.2'
    /tmp/cap-mlflow/bin/python tests/captures/mlflow_openai/record.py

Built the way MLflow's tracing docs show: `mlflow.openai.autolog()` (each OpenAI call a CHAT_MODEL
span), `@mlflow.trace(span_type=SpanType.AGENT)` on the agent turn, `@mlflow.trace(span_type=SpanType.TOOL)`
on the tool, and `mlflow.update_current_trace(session_id=…, user=…)` so that both turns' traces share
one session. With `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` set, MLflow replaces its tracking-server export by
an OTLP/HTTP exporter (`mlflow/tracing/utils/otlp.py`); the session and user, trace metadata otherwise,
are copied onto each trace's root span as `session.id` / `user.id` for it. The tracking store autolog
still writes to is a throwaway folder.

Turn 1: two tool calls in one answer, the second failing (an unknown city: the loop sends the model
the error text), then the answer. Turn 2, same session, the history resent: a plain answer.
(The versions the capture was recorded with are in meta.json.)
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

from tests.captures.recording.session import Recording

SESSION = "mlflow-weather-1"
REPLIES = [
    {"tool_calls": [{"name": "get_weather", "arguments": {"city": "Paris"}},
                    {"name": "get_weather", "arguments": {"city": "Atlantis"}}]},
    {"text": "Paris is sunny at 21°C; I could not find Atlantis."},
    {"text": "A light jacket is enough for Paris."},
]
WEATHER = {"Paris": "sunny, 21°C"}
TOOLS = [{"type": "function", "function": {
    "name": "get_weather", "description": "The weather in a city.",
    "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}}]


def main() -> None:
    capture_dir = Path(__file__).parent
    notes = ("mlflow.openai.autolog() + @mlflow.trace(AGENT/TOOL) + update_current_trace(session_id); OTLP export "
             "via OTEL_EXPORTER_OTLP_TRACES_ENDPOINT; turn 1: two tool calls in one answer, one failing (an "
             "unknown city), then the answer; turn 2 in the same session: a plain answer over the resent history")
    with Recording(capture_dir, REPLIES, framework="mlflow", instrumentation="mlflow tracing (OTLP export)",
                   packages=["mlflow", "mlflow-tracing", "openai", "opentelemetry-sdk"], session_id=SESSION,
                   notes=notes) as rec:
        rec.env()
        os.environ["MLFLOW_TRACKING_URI"] = Path(tempfile.mkdtemp(prefix="cap-mlflow-")).as_uri()
        import mlflow
        from mlflow.entities import SpanType
        from mlflow.tracing.provider import provider
        from openai import OpenAI
        from opentelemetry import metrics

        mlflow.openai.autolog()
        client = OpenAI()

        @mlflow.trace(span_type=SpanType.TOOL)
        def get_weather(city: str) -> str:
            if city not in WEATHER:
                raise ValueError(f"unknown city: {city}")
            return WEATHER[city]

        @mlflow.trace(span_type=SpanType.AGENT, name="weather-agent")
        def turn(messages: list[dict[str, Any]], question: str) -> str:
            mlflow.update_current_trace(session_id=SESSION, user="user-1")
            messages.append({"role": "user", "content": question})
            while True:
                response = client.chat.completions.create(model="gpt-4o", messages=messages, tools=TOOLS)
                message = response.choices[0].message
                messages.append(message.model_dump(exclude_none=True))
                if not message.tool_calls:
                    return message.content or ""
                for call in message.tool_calls:
                    try:
                        result = get_weather(**json.loads(call.function.arguments))
                    except ValueError as exc:
                        result = f"Error: {exc}"
                    messages.append({"role": "tool", "tool_call_id": call.id, "content": result})

        history: list[dict[str, Any]] = [{"role": "system", "content": "You are a terse weather assistant."}]
        turn(history, "Weather in Paris and Atlantis?")
        turn(history, "What should I wear in Paris?")
        # MLflow's OTLP metrics (span latencies) go out when their provider flushes: before the recorder closes.
        rec.flush(provider.get(), metrics.get_meter_provider())


if __name__ == "__main__":
    main()
