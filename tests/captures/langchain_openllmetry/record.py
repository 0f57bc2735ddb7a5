"""Re-record: a LangChain 1.x agent (create_agent, ChatOpenAI) traced by OpenLLMetry
(opentelemetry-instrumentation-langchain).

    python3 -m venv /tmp/cap-langchain && /tmp/cap-langchain/bin/pip install \
        langchain==1.5.2 langgraph==1.2.24 langchain-openai==1.7.4 \
        openinference-instrumentation-langchain==0.1.80 opentelemetry-instrumentation-langchain==0.62.4 \
        opentelemetry-sdk==1.45.2 opentelemetry-exporter-otlp-proto-http==1.45.2
    /tmp/cap-langchain/bin/python tests/captures/langchain_openllmetry/record.py

The run is `tests/captures/langchain_trip.py`'s scenario. (The versions recorded are in meta.json.)
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

from tests.captures.langchain_trip import record

SESSION = "lc-ll-trip-1"


def instrument(provider: object) -> None:
    from opentelemetry.instrumentation.langchain import LangchainInstrumentor

    LangchainInstrumentor().instrument(tracer_provider=provider)


def main() -> None:
    # OpenLLMetry turns run metadata into traceloop.association.properties.*
    record(Path(__file__).parent, "openllmetry", "opentelemetry-instrumentation-langchain", SESSION, instrument,
           run_session=SESSION)


if __name__ == "__main__":
    main()
