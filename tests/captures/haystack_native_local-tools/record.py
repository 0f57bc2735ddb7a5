"""Re-record: `haystack_native`'s run with its tools defined inside a function (closures, as in a notebook cell
or a factory): Haystack cannot serialise such a tool, so every tag holding one falls back to Python's `repr`.

    python3 -m venv /tmp/cap-haystack && /tmp/cap-haystack/bin/pip install \
        haystack-ai==3.4.1 opentelemetry-haystack==2.0.0 \
        opentelemetry-sdk==1.45.2 opentelemetry-exporter-otlp-proto-http==1.45.2
    /tmp/cap-haystack/bin/python tests/captures/haystack_native_local-tools/record.py

What that costs: `haystack.agent.step.llm.input` (the generator's messages and tools) and `haystack.agent.tools`
are `repr` text, not JSON, so no call records its input; the run's question and instructions are still in
`haystack.agent.input` / `.output` (JSON: messages only), and each result in its tool span. The run is
`haystack_native`'s (see its record.py). (The versions the capture was recorded with are in meta.json.)
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

from tests.captures.haystack_native.record import closures, run


def main() -> None:
    run(Path(__file__).parent, "haystack-weather-local-1", closures(),
        notes="tools defined in a function (their tags are repr text); ")


if __name__ == "__main__":
    main()
