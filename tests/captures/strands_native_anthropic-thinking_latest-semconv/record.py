"""Re-record: `strands_native_anthropic-thinking` with OTEL_SEMCONV_STABILITY_OPT_IN=gen_ai_latest_experimental.

    python3 -m venv /tmp/cap-strands_native_anthropic-thinking && \
        /tmp/cap-strands_native_anthropic-thinking/bin/pip install \
        'strands-agents[anthropic]==1.62.0' anthropic==0.125.0 \
        opentelemetry-sdk==1.45.1 opentelemetry-exporter-otlp-proto-http==1.45.1
    /tmp/cap-strands_native_anthropic-thinking/bin/python \
        tests/captures/strands_native_anthropic-thinking_latest-semconv/record.py

The same run as `strands_native_anthropic-thinking` (see its record.py), with the current GenAI conventions
(`gen_ai.input.messages` / `gen_ai.output.messages` on a `gen_ai.client.inference.operation.details` event), where
Strands writes a thinking block as a part of its own: `{"type": "reasoningContent", "content": {"reasoningText":
{"text", "signature"}}}` (telemetry/tracer.py `_map_content_blocks_to_otel_parts`: a block it has no GenAI part for
becomes `{"type": <its key>, "content": <its body>}`). (The versions the capture was recorded with are in meta.json.)
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

# The default-conventions capture's folder name is no Python identifier: its script is loaded from its path.
_SAME_RUN = Path(__file__).resolve().parents[1] / "strands_native_anthropic-thinking" / "record.py"


def main() -> None:
    spec = importlib.util.spec_from_file_location("strands_anthropic_thinking_record", _SAME_RUN)
    assert spec is not None and spec.loader is not None
    record = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(record)
    record.run(Path(__file__).parent, latest_semconv=True)


if __name__ == "__main__":
    main()
