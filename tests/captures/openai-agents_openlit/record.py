"""Re-record: openai-agents (Responses API) with a handoff, traced by OpenLIT (`openlit.init()`).

    python3 -m venv /tmp/cap-openai-agents_openlit && /tmp/cap-openai-agents_openlit/bin/pip install \
        openai-agents==0.20.0 openlit==1.45.0 openai==2.54.0 \
        opentelemetry-sdk==1.45.1 opentelemetry-exporter-otlp-proto-http==1.45.1
    /tmp/cap-openai-agents_openlit/bin/python tests/captures/openai-agents_openlit/record.py

openlit 1.45 requires `openai<3` and openai-agents 0.21+ requires `openai>=3`: openai-agents 0.20.0 is the
newest the two install with (pip's own choice for `pip install openai-agents openlit`).

Set up the way OpenLIT's quickstart shows: `openlit.init(otlp_endpoint=…)` (content capture is on by default)
builds the tracer, logger and meter providers, all exporting OTLP/HTTP to the endpoint (the recorder), and
instruments every library it finds. Two of its instrumentations see this run:
- `openai_agents`: a tracing processor of openai-agents' own tracing (`set_trace_processors([processor])`: the
  SDK's exporter to OpenAI's backend is replaced), writing GenAI spans for the trace (`invoke_workflow …`),
  agent runs (`invoke_agent <agent>`), function tools (`execute_tool <tool>`) and handoffs (`invoke_agent <to
  agent>` with `gen_ai.agent.source`), each carrying the trace's `group_id` as `gen_ai.conversation.id`, and a
  `create_agent <agent>` span per `Agent(...)` (each a trace of its own); it skips the SDK's
  response/generation spans, leaving the model calls to
- `openai`: the OpenAI client's instrumentation, one `chat <model>` span per `responses.create` (under the
  SDK's turn span, whose context the processor attaches) and a `gen_ai.client.inference.operation.details`
  log record per call
(and the httpx client instrumentation it bundles: a `POST` span under each call).

The conversation is named the SDK's way: an `SQLiteSession` keeps the history, the RunConfig's `group_id`
names the thread (OpenLIT records it as `gen_ai.conversation.id`). Recorded offline: OpenLIT's pricing table
(fetched from GitHub at init) is unreachable, so every call's `gen_ai.usage.cost` is 0.

Turn 1 (`Runner.run`): the travel desk hands off to the booking agent (`transfer_to_booking_agent`), which
calls `book_hotel` and `get_weather` in parallel; `book_hotel` raises once (the SDK sends the model its default
failure_error_function's text), is called again and the agent answers. Turn 2 (`Runner.run_streamed`, the same
session, from the travel desk again): another handoff, one weather call and the answer. Seven LLM calls; as
recorded, no span of OpenLIT's holds turn 2's three streamed calls (the corpus test's KNOWN_GAPS says why). The
function calls are scripted with the two ids the real API gives (`with_api_call_ids`): the item's own id (`fc_…`)
beside the `call_id` (`call_…`) the output names (re-recorded with the same pins for the ids). (The versions the
capture was recorded with are in meta.json.)
The tools, agents, turns and replies are `recording/openai_agents_travel.py`'s, shared with the
`openai-agents_otel-genai*` captures.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

from tests.captures.recording.openai_agents_travel import HANDOFF_REPLIES, run_turns, travel_desk, with_api_call_ids
from tests.captures.recording.session import Recording

SESSION = "oa-openlit-travel-1"
PACKAGES = ["openai-agents", "openlit", "openai", "opentelemetry-sdk", "opentelemetry-exporter-otlp-proto-http"]


def main() -> None:
    notes = ("openlit.init(otlp_endpoint=recorder): its openai_agents tracing processor (workflow, agent, tool and "
             "handoff spans, the group_id as gen_ai.conversation.id) and its OpenAI client instrumentation (a chat "
             "span per responses.create, + an inference event log record, + httpx POST spans, + metrics); two turns "
             "(run, run_streamed) of one SQLiteSession with the RunConfig's group_id; a handoff to a booking agent "
             "each turn; two parallel tool calls, one raising once (the failure_error_function's text sent to the "
             "model) and called again. Recorded offline: gen_ai.usage.cost is 0 on every call; function_call item ids "
             "(fc_) distinct from their call_ids (call_)")
    with Recording(Path(__file__).parent, with_api_call_ids(HANDOFF_REPLIES, SESSION), framework="openai-agents",
                   instrumentation="openlit", packages=PACKAGES, session_id=SESSION, notes=notes) as rec:
        rec.env()
        import openlit
        from opentelemetry import metrics, trace
        from opentelemetry._logs import get_logger_provider

        openlit.init(application_name="travel-desk", environment="dev", otlp_endpoint=rec.otlp_endpoint)
        run_turns(travel_desk(handoff=True), SESSION)
        rec.flush(trace.get_tracer_provider(), get_logger_provider(), metrics.get_meter_provider())


if __name__ == "__main__":
    main()
