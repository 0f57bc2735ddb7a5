"""Re-record: as `anthropic-sdk_openinference`, but with the tracer provider made global.

    python3 -m venv /tmp/cap-anthropic-oi && /tmp/cap-anthropic-oi/bin/pip install \
        anthropic==2.17.0 openinference-instrumentation-anthropic==3.1.0 openinference-instrumentation==0.1.72 \
        opentelemetry-sdk==1.45.2 opentelemetry-exporter-otlp-proto-http==1.45.2
    /tmp/cap-anthropic-oi/bin/python tests/captures/anthropic-sdk_openinference_global-provider/record.py

The run is `tests/captures/anthropic_trip.py`'s scenario, in the usual setup (Phoenix's `register()` sets
the global provider by default): the Anthropic SDK's own tracing (anthropic 2.x, on by default, metadata
only) then reports every call too. Its `anthropic.messages.create` span is a child of OpenInference's
`messages.create` span for a call made with `create`, and a sibling of OpenInference's `messages.stream`
span for a call made with `stream`. Each call must still be one step. (The versions are in meta.json.)
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

from tests.captures.anthropic_trip import record

if __name__ == "__main__":
    record(Path(__file__).parent, "oi-anthropic-trip-global-1",
           "as anthropic-sdk_openinference, with trace.set_tracer_provider(provider): the SDK's own "
           "anthropic.messages.create spans report every call too (a child of OpenInference's messages.create "
           "span, a sibling of its messages.stream span)", global_provider=True)
