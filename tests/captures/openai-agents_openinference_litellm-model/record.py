"""Re-record: openai-agents running a Claude model through LiteLLM (`LitellmModel`), traced by OpenInference's
openai-agents instrumentor alone (`OpenAIAgentsInstrumentor().instrument(tracer_provider=…)`, as the SDK's own
tracing guide for OpenInference shows it; no LiteLLM instrumentor).

    python3 -m venv /tmp/cap-openai-agents_openinference_litellm && \
        /tmp/cap-openai-agents_openinference_litellm/bin/pip install \
        "openai-agents[litellm]==0.25.0" litellm==1.110.2 openai==3.63.0 \
        openinference-instrumentation-openai-agents==2.6.0 openinference-instrumentation==0.1.72 \
        opentelemetry-sdk==1.45.2 opentelemetry-exporter-otlp-proto-http==1.45.2
    /tmp/cap-openai-agents_openinference_litellm/bin/python \
        tests/captures/openai-agents_openinference_litellm-model/record.py

`openai-agents_openinference_litellm`'s scenario, agents and replies (its record script's `REPLIES`, `travel_desk`),
without the prompt cache: a travel desk handing hotel bookings to a booking agent, both on
`anthropic/claude-sonnet-4-5` (LiteLLM speaking Anthropic's Messages API to the fake LLM), parallel tool calls, one
raising once, turn 1 `Runner.run`, turn 2 `Runner.run_streamed`, `include_usage=True`; an `SQLiteSession`, the
RunConfig's `group_id`, `using_session`. Seven calls. (Uncached: the SDK's generation span records no cache tokens of a
call not streamed, only of a streamed one, in its Response's usage.)

Why: the SDK's instrumentor alone is how most users trace the Agents SDK, whatever model runs it; every call of a model
that is not OpenAI's Responses API is then only the SDK's `generation` span: its Chat Completions messages, its usage
as the SDK counts it, and, for a streamed call, the SDK's `Response` built from the stream as `output.value` (no output
messages). Each call must still be one step with its text and tool calls, its results on its calls, the handoff a
subagent, each question once. (The versions the capture was recorded with are in meta.json.)
"""

from __future__ import annotations

import importlib.util
import os
import sys
from pathlib import Path
from types import ModuleType

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

from tests.captures.recording.openai_agents_travel import run_turns
from tests.captures.recording.session import Recording

SESSION = "oa-oi-litellm-model-1"


def both_instrumented() -> ModuleType:
    """`openai-agents_openinference_litellm`'s record script: the scenario this capture shares."""
    path = Path(__file__).parents[1] / "openai-agents_openinference_litellm" / "record.py"
    spec = importlib.util.spec_from_file_location("openai_agents_openinference_litellm_record", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def main() -> None:
    scenario = both_instrumented()
    replies = [{key: value for key, value in reply.items() if not key.startswith("cache_")}
               for reply in scenario.REPLIES]
    with Recording(Path(__file__).parent, replies, framework="openai-agents", instrumentation="openinference",
                   packages=["openai-agents", "litellm", "openai", "openinference-instrumentation-openai-agents",
                             "openinference-instrumentation", "opentelemetry-sdk",
                             "opentelemetry-exporter-otlp-proto-http"],
                   session_id=SESSION,
                   notes="openai-agents_openinference_litellm's scenario (both agents on LitellmModel("
                         "'anthropic/claude-sonnet-4-5'), a handoff each turn, parallel tool calls, one raising once, "
                         "turn 1 run, turn 2 run_streamed, include_usage; no prompt cache) "
                         "traced by OpenInference's openai-agents instrumentor alone: each call only the SDK's "
                         "generation span; SQLiteSession, RunConfig group_id, using_session") as rec:
        rec.env()
        os.environ["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"  # offline: LiteLLM's bundled prices
        from openinference.instrumentation import using_session
        from openinference.instrumentation.openai_agents import OpenAIAgentsInstrumentor
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
        from opentelemetry.sdk.resources import Resource
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import BatchSpanProcessor

        provider = TracerProvider(resource=Resource.create({"service.name": "travel-desk"}))
        provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
        OpenAIAgentsInstrumentor().instrument(tracer_provider=provider)  # replaces the SDK's own exporter
        run_turns(scenario.travel_desk(rec, cache=False), SESSION, lambda: using_session(SESSION))
        rec.flush(provider)


if __name__ == "__main__":
    main()
