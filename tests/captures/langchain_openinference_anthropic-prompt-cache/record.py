"""Re-record: a LangChain 1.x agent (create_agent, ChatAnthropic), its system prompt cached, traced by OpenInference.

    python3 -m venv /tmp/cap-pc-langchain-anthropic && /tmp/cap-pc-langchain-anthropic/bin/pip install \
        langchain==1.5.2 langchain-core==1.8.3 langgraph==1.2.24 langchain-anthropic==1.7.10 anthropic==2.17.0 \
        openinference-instrumentation-langchain==0.1.80 opentelemetry-sdk==1.45.2 \
        opentelemetry-exporter-otlp-proto-http==1.45.2
    /tmp/cap-pc-langchain-anthropic/bin/python \
        tests/captures/langchain_openinference_anthropic-prompt-cache/record.py

The run is `tests/captures/langchain_anthropic_trip.py`'s scenario, the model not streaming. (The versions
recorded are in meta.json.)
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

from tests.captures.langchain_anthropic_trip import record

if __name__ == "__main__":
    record(Path(__file__).parent, "lc-oi-anthropic-cache-1",
           "ChatAnthropic in create_agent, a system prompt with a cache_control breakpoint: the first call "
           "writes it to the prompt cache, the next two read it; two sequential tool calls", streaming=False)
