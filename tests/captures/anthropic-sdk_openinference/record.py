"""Re-record: the Anthropic Python SDK in a hand-written tool loop, traced by OpenInference.

    python3 -m venv /tmp/cap-anthropic-oi && /tmp/cap-anthropic-oi/bin/pip install \
        anthropic==2.17.0 openinference-instrumentation-anthropic==3.1.0 openinference-instrumentation==0.1.72 \
        opentelemetry-sdk==1.45.2 opentelemetry-exporter-otlp-proto-http==1.45.2
    /tmp/cap-anthropic-oi/bin/python tests/captures/anthropic-sdk_openinference/record.py

The run is `tests/captures/anthropic_trip.py`'s scenario. The SDK's own tracing (anthropic 2.x, on by
default, metadata only) uses the global tracer provider; like the other OpenInference captures this
application passes its provider to the instrumentor only, so the SDK's spans go to the no-op global
provider and only OpenInference's are exported. (The versions recorded are in meta.json.)
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

from tests.captures.anthropic_trip import record

if __name__ == "__main__":
    record(Path(__file__).parent, "oi-anthropic-trip-1",
           "two turns of one session (two traces), a system prompt, two parallel tool uses with text "
           "(messages.create), then messages.stream with a raising tool sent back as is_error; tools are "
           "OITracer.tool spans. The SDK's own tracing (anthropic 2.17, on by default) uses the global tracer "
           "provider, which this app does not set: none of its spans are exported")
