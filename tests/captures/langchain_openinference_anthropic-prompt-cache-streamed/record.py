"""Re-record: the LangChain agent of `langchain_openinference_anthropic-prompt-cache`, its model streaming.

    (the virtualenv of langchain_openinference_anthropic-prompt-cache/record.py)
    /tmp/cap-pc-langchain-anthropic/bin/python \
        tests/captures/langchain_openinference_anthropic-prompt-cache-streamed/record.py

The run is `tests/captures/langchain_anthropic_trip.py`'s scenario with `ChatAnthropic(streaming=True)`:
langchain-anthropic builds a streamed call's usage from Anthropic's `message_delta` event, whose usage is
cumulative (the input and cache counts too). (The versions recorded are in meta.json.)
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

from tests.captures.langchain_anthropic_trip import record

if __name__ == "__main__":
    record(Path(__file__).parent, "lc-oi-anthropic-cache-streamed-1",
           "ChatAnthropic(streaming=True) in create_agent, a system prompt with a cache_control breakpoint: "
           "the first call writes it to the prompt cache, the next two read it; two sequential tool calls",
           streaming=True)
