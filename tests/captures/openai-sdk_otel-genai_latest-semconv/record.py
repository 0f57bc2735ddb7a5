"""Re-record: `openai-sdk_otel-genai` with OTEL_SEMCONV_STABILITY_OPT_IN=gen_ai_latest_experimental.

    python3 -m venv /tmp/cap-otelgenai-latest && /tmp/cap-otelgenai-latest/bin/pip install \
        openai==3.63.0 opentelemetry-instrumentation-openai-v2==2.4b0 opentelemetry-util-genai==1.1b0 httpx==0.29.0 \
        opentelemetry-sdk==1.45.2 opentelemetry-exporter-otlp-proto-http==1.45.2
    /tmp/cap-otelgenai-latest/bin/python tests/captures/openai-sdk_otel-genai_latest-semconv/record.py

The same conversation as `openai-sdk_otel-genai` (see its record.py), with the current GenAI
conventions: the messages as `gen_ai.input.messages` / `gen_ai.output.messages` on the chat spans
(content mode SPAN_ONLY), each turn an `invoke_agent` span carrying `gen_ai.conversation.id` and each
tool an `execute_tool` span, both from opentelemetry-util-genai's TelemetryHandler. util-genai 1.1b0,
not `openai-sdk_otel-genai`'s 0.4b0: the newest the instrumentation imports (see there). (The versions
the capture was recorded with are in meta.json.)
"""

from __future__ import annotations

import runpy
from pathlib import Path

# The folder's name is no module name: the sibling script is run for its `run`.
run = runpy.run_path(str(Path(__file__).resolve().parents[1] / "openai-sdk_otel-genai" / "record.py"))["run"]


def main() -> None:
    run(Path(__file__).parent, latest_semconv=True)


if __name__ == "__main__":
    main()
