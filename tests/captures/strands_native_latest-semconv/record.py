"""Re-record: `strands_native` with OTEL_SEMCONV_STABILITY_OPT_IN=gen_ai_latest_experimental.

    python3 -m venv /tmp/cap-strands && /tmp/cap-strands/bin/pip install \
        'strands-agents[openai]==1.62.0' opentelemetry-exporter-otlp-proto-http
    /tmp/cap-strands/bin/python tests/captures/strands_native_latest-semconv/record.py

The same run as `strands_native` (see its record.py), with the current GenAI conventions
(`gen_ai.input.messages` / `gen_ai.output.messages`). (The versions the capture was recorded with
are in meta.json.)
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

from tests.captures.strands_native.record import run


def main() -> None:
    run(Path(__file__).parent, latest_semconv=True)


if __name__ == "__main__":
    main()
