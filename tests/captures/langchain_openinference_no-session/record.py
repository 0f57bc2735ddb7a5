"""Re-record: a LangChain 1.x agent (create_agent, ChatOpenAI) traced by OpenInference,
with no session id (as LangChain users usually run it).

    python3 -m venv /tmp/cap-langchain && /tmp/cap-langchain/bin/pip install \
        langchain==1.5.2 langgraph==1.2.24 langchain-openai==1.7.4 \
        openinference-instrumentation-langchain==0.1.80 opentelemetry-instrumentation-langchain==0.62.4 \
        opentelemetry-sdk==1.45.2 opentelemetry-exporter-otlp-proto-http==1.45.2
    /tmp/cap-langchain/bin/python tests/captures/langchain_openinference_no-session/record.py

The run is `tests/captures/langchain_trip.py`'s scenario. (The versions recorded are in meta.json.)
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

from tests.captures.langchain_trip import record


def instrument(provider: object) -> None:
    from openinference.instrumentation.langchain import LangChainInstrumentor

    LangChainInstrumentor().instrument(tracer_provider=provider)


def main() -> None:
    record(Path(__file__).parent, "openinference", "openinference-instrumentation-langchain", None, instrument)


if __name__ == "__main__":
    main()
