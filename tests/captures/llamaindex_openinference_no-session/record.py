"""Re-record: a LlamaIndex 0.14 FunctionAgent (llama-index-llms-openai) traced by OpenInference,
with no session id (as LlamaIndex users usually run it).

    python3 -m venv /tmp/cap-llamaindex && /tmp/cap-llamaindex/bin/pip install \
        llama-index-core==0.14.25 llama-index-llms-openai==0.8.3 \
        openinference-instrumentation-llama-index==4.6.1 \
        opentelemetry-sdk==1.45.2 opentelemetry-exporter-otlp-proto-http==1.45.2
    /tmp/cap-llamaindex/bin/python tests/captures/llamaindex_openinference_no-session/record.py

Not streamed (LlamaIndex streams without asking for usage, so a streamed run has no tokens to
compare). The run is `../llamaindex_openinference/record.py`'s, with no session id: two parallel
weather calls, a stock lookup that raises (LlamaIndex shows the model the exception text as the
tool output, flagged is_error), then the answer. (Versions in meta.json.)
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

from tests.captures.llamaindex_openinference.record import main

if __name__ == "__main__":
    main(Path(__file__).parent, session_id=None)
