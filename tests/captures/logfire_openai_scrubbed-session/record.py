"""Re-record: Logfire 5 `instrument_openai()` with its default scrubbing, which replaces the `session.id` value.

    python3 -m venv /tmp/cap-logfire && /tmp/cap-logfire/bin/pip install \
        logfire==5.4.0 openai==3.57.0 opentelemetry-sdk==1.45.2 opentelemetry-exporter-otlp-proto-http==1.45.2
    /tmp/cap-logfire/bin/python tests/captures/logfire_openai_scrubbed-session/record.py

One turn of the `logfire_openai_streaming` script, scrubbing left on: the turn's `session.id`
arrives as "[Scrubbed due to 'session']", which names no session (every Logfire user's sessions
would be that one), so the trace is a session of its own. (The versions the capture was recorded
with are in meta.json.)
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

from tests.captures.logfire_openai_streaming.record import run


def main() -> None:
    run(True, Path(__file__).parent, None, 1,
        "default scrubbing: session.id arrives as \"[Scrubbed due to 'session']\"; one turn, streamed")


if __name__ == "__main__":
    main()
