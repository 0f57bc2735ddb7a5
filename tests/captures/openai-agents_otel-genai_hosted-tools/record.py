"""Re-record: openai-agents (Responses API) with the hosted `WebSearchTool` beside a function tool, traced by
OpenTelemetry's own GenAI instrumentation.

    python3 -m venv /tmp/cap-openai-agents_otel-genai_hosted-tools
    /tmp/cap-openai-agents_otel-genai_hosted-tools/bin/pip install \
        openai-agents==0.25.0 openai==3.63.0 opentelemetry-instrumentation-openai-agents-v2==0.1.0 \
        opentelemetry-util-genai==1.3b0 opentelemetry-sdk==1.45.2 opentelemetry-api==1.45.2 \
        opentelemetry-exporter-otlp-proto-http==1.45.2
    /tmp/cap-openai-agents_otel-genai_hosted-tools/bin/python \
        tests/captures/openai-agents_otel-genai_hosted-tools/record.py

Why: a search the API runs itself, as `opentelemetry-instrumentation-openai-agents-v2` records it, beside the
OpenInference recording of the very same run (`openai-agents_openinference_hosted-tools`). The scenario is that
capture's: its questions and scripted replies, read from its record.py, the call ids made anew from this capture's
session id (`with_api_call_ids`). A trip planner with `WebSearchTool()` (the answer holds a `web_search_call` item,
`action: {"type": "search", "query": …}` and its `status`, and no result of it is ever sent back) and the function
tool `book_hotel`, which raises `TimeoutError` the first time (the SDK sends the model its failure_error_function's
text). Turn 1 (`Runner.run`): a web search and `book_hotel` in parallel in one answer, `book_hotel` again after its
failure, then an answer with a `url_citation` annotation on its text. Turn 2 (`Runner.run_streamed`): another search
and the answer citing it in the same response. Four calls; every function call scripted with the two ids the real
Responses API gives it (`call_…`, `fc_…`).

The tracing is `openai-agents_otel-genai`'s (`recording/openai_agents_travel.otel_genai_tracing`, whose docstring
there says why): a processor of the SDK's own tracing writing the GenAI conventions, content on the spans
(`OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=span_only`), the SDK's exporter to OpenAI's backend dropped. One
session: the history kept by an `SQLiteSession` (the SDK re-sends turn 1's items, the search's among them), the
trace grouped by the RunConfig's `group_id`, and, since the instrumentation records no session, both turns under an
application span carrying `gen_ai.conversation.id` (the session id). The newest openai-agents and instrumentation
packages at the time of recording; the versions recorded are in meta.json.
"""

from __future__ import annotations

import asyncio
import importlib.util
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

from tests.captures.recording.openai_agents_travel import OTEL_GENAI_PACKAGES, otel_genai_tracing, with_api_call_ids
from tests.captures.recording.session import Recording

SESSION = "oa-otel-genai-hosted-tools-1"
# The OpenInference capture's script, loaded from its path (its folder name is no Python identifier's): the scenario.
_SAME_RUN = Path(__file__).resolve().parents[1] / "openai-agents_openinference_hosted-tools" / "record.py"


def _scenario() -> Any:
    spec = importlib.util.spec_from_file_location("openai_agents_openinference_hosted_tools_record", _SAME_RUN)
    assert spec is not None and spec.loader is not None
    scenario = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(scenario)
    return scenario


def main() -> None:
    scenario = _scenario()
    with Recording(Path(__file__).parent, with_api_call_ids(scenario.REPLIES, SESSION), framework="openai-agents",
                   instrumentation="opentelemetry-instrumentation-openai-agents-v2",
                   packages=[*OTEL_GENAI_PACKAGES, "opentelemetry-api", "opentelemetry-exporter-otlp-proto-http"],
                   session_id=SESSION,
                   notes="openai-agents_openinference_hosted-tools' run: Responses API; hosted WebSearchTool beside a "
                         "function tool: turn 1 (run) a web search and book_hotel in parallel, book_hotel raising "
                         "once and called again, an answer with a url_citation; turn 2 (run_streamed) a web search "
                         "and the answer citing it in one response; SQLiteSession memory, RunConfig group_id, neither "
                         "recorded by the instrumentation, so each turn under an application span carrying "
                         "gen_ai.conversation.id; content on the spans (span_only); function_call item ids (fc_) "
                         "distinct from their call_ids (call_)") as rec:
        provider, turn = otel_genai_tracing(rec, SESSION)
        from agents import Agent, RunConfig, Runner, SQLiteSession, WebSearchTool, function_tool

        failures = {"book_hotel": 1}

        @function_tool
        def book_hotel(city: str, nights: int) -> str:
            """Book a hotel room."""
            if failures["book_hotel"]:
                failures["book_hotel"] -= 1
                raise TimeoutError("the booking service did not answer in time")
            return f"Booked Hotel Nord in {city}, {nights} nights, ref OSL-42"

        planner = Agent(name="Trip planner", model="gpt-4o",
                        instructions="You plan trips: search the web for what is on, and book hotels.",
                        tools=[WebSearchTool(), book_hotel])
        memory = SQLiteSession(SESSION)
        config = RunConfig(group_id=SESSION)

        async def run() -> None:
            with turn():
                first = await Runner.run(planner, scenario.QUESTIONS[0], session=memory, run_config=config)
            with turn():
                second = Runner.run_streamed(planner, scenario.QUESTIONS[1], session=memory, run_config=config)
                async for _event in second.stream_events():
                    pass
            print(first.final_output, second.final_output, sep="\n")

        asyncio.run(run())
        rec.flush(provider)


if __name__ == "__main__":
    main()
