"""Re-record: `strands_native_interrupt` with OTEL_SEMCONV_STABILITY_OPT_IN=gen_ai_latest_experimental.

    python3 -m venv /tmp/cap-strands_native_interrupt_latest-semconv && \
        /tmp/cap-strands_native_interrupt_latest-semconv/bin/pip install \
        'strands-agents[openai]==1.65.0' openai==3.63.0 opentelemetry-sdk==1.45.1 \
        opentelemetry-exporter-otlp-proto-http==1.45.1
    /tmp/cap-strands_native_interrupt_latest-semconv/bin/python \
        tests/captures/strands_native_interrupt_latest-semconv/record.py

The same run as `strands_native_interrupt` (see its record.py: Strands' interrupts, a `BeforeToolCallEvent` hook's
and a tool's own `tool_context.interrupt`, approved, denied and answered over five `agent(...)` invocations in two
turns, the second streamed), with the current GenAI conventions: the messages are `gen_ai.input.messages` /
`gen_ai.output.messages` (on the span and on a `gen_ai.client.inference.operation.details` event), not span events.
Under them Strands writes a tool result in a message's history as a `tool_call_response` part whose `response` is
the result's Bedrock content blocks (`[{"text": …}]`: telemetry/tracer.py `_map_content_blocks_to_otel_parts`);
the denied `rent_car`, which no tool span ran, has its result only there. (The versions the capture was recorded
with are in meta.json.)
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

# The default-conventions capture's script, loaded from its path (its folder name is no Python identifier's).
_SAME_RUN = Path(__file__).resolve().parents[1] / "strands_native_interrupt" / "record.py"


def main() -> None:
    spec = importlib.util.spec_from_file_location("strands_native_interrupt_record", _SAME_RUN)
    assert spec is not None and spec.loader is not None
    record = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(record)
    record.run(Path(__file__).parent, latest_semconv=True)


if __name__ == "__main__":
    main()
