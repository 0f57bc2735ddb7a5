"""Re-record: openai-agents running a Claude model through LiteLLM (`LitellmModel`), traced the way Phoenix sets it up:
`phoenix.otel.register(auto_instrument=True)`, which instruments every OpenInference instrumentor installed, here
both openai-agents' and LiteLLM's, on one tracer provider.

    python3 -m venv /tmp/cap-openai-agents_openinference_litellm && \
        /tmp/cap-openai-agents_openinference_litellm/bin/pip install \
        "openai-agents[litellm]==0.25.0" litellm==1.110.2 openai==3.63.0 \
        openinference-instrumentation-openai-agents==2.6.0 openinference-instrumentation-litellm==0.1.51 \
        openinference-instrumentation==0.1.72 arize-phoenix-otel==0.17.2 opentelemetry-sdk==1.45.2 \
        opentelemetry-exporter-otlp-proto-http==1.45.2
    /tmp/cap-openai-agents_openinference_litellm/bin/python \
        tests/captures/openai-agents_openinference_litellm/record.py

The travel desk's handoff scenario (`recording/openai_agents_travel.py`: `QUESTIONS`, `HANDOFF_REPLIES`, its tools)
with both agents on `LitellmModel(model="anthropic/claude-sonnet-4-5", base_url=…)`: LiteLLM speaks Anthropic's
Messages API to the fake LLM. A travel desk (triage) hands hotel bookings to a booking agent, whose long standing
instructions (the hotel policy) LiteLLM marks for Anthropic's prompt cache (`cache_control_injection_points` on the
system message, through the model settings' `extra_args`): its first call of the session writes the cache, the later
ones read it. Turn 1 `Runner.run`: the handoff, `book_hotel` and `get_weather` in parallel, `book_hotel` raising
`TimeoutError` once (the SDK sends the model its failure_error_function's text) and called again, the answer; turn 2
`Runner.run_streamed`: the handoff, `get_weather`, the answer. The history is kept by an `SQLiteSession`, the thread
named by the RunConfig's `group_id`, each turn under OpenInference's `using_session` (all the session id); both
agents' model settings `include_usage=True`, as the SDK's docs ask for a LiteLLM model's usage (LiteLLM streams none
otherwise). Seven calls. LiteLLM prices each call from its bundled price map (`LITELLM_LOCAL_MODEL_COST_MAP`).

Why: this is how a Phoenix user runs the Agents SDK on a non-OpenAI model, and it reports every model call twice in
one trace: openai-agents' generation span (the SDK's view: its Chat Completions messages, its usage) and LiteLLM's
`completion` span inside it (the provider's view). Each call must be one step with its messages, its tool calls and
results, its tokens (Anthropic's cache reads and writes) and cost once, priced as the Claude model it is; the handoff
a subagent as the corpus's other openai-agents handoffs; each question once; and the session list must count each
call once. (The versions the capture was recorded with are in meta.json.)
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

from tests.captures.recording.openai_agents_travel import HANDOFF_REPLIES, run_turns, travel_tools
from tests.captures.recording.session import Recording

SESSION = "oa-oi-litellm-1"
MODEL = "anthropic/claude-sonnet-4-5"
# The booking agent's standing instructions: long enough for Anthropic to cache (1,024 tokens and up for Sonnet).
HOTEL_POLICY = "You book hotels and check the weather.\n\nHotel policy:\n" + "\n".join(
    f"{n}. {rule}" for n, rule in enumerate([
        "Book only hotels on the company's preferred list unless none has a room.",
        "Never book more than the nights asked for; ask before extending a stay.",
        "Nightly caps: NOK 1,800 in Oslo, NOK 1,500 elsewhere in Norway, EUR 220 in the euro area.",
        "Breakfast must be included; if it is not, say so in your answer.",
        "Prefer hotels within 15 minutes' walk of the meeting address.",
        "Give the booking reference in your answer, as the booking service returns it.",
        "When the booking service fails, try once more before you report the failure.",
        "Check the weather at the destination and tell the traveller what to pack.",
    ] * 12, start=1))
# Prompt tokens as Anthropic counts them (every prompt token, cache reads and writes among them): the booking agent's
# first call of the session writes its instructions to the cache, its later calls read them.
CACHED = 1_236
TOKENS = [
    {"input_tokens": 212, "output_tokens": 14},
    {"input_tokens": 1_528, "output_tokens": 71, "cache_write_tokens": CACHED},
    {"input_tokens": 1_642, "output_tokens": 38, "cache_read_tokens": CACHED},
    {"input_tokens": 1_731, "output_tokens": 29, "cache_read_tokens": CACHED},
    {"input_tokens": 318, "output_tokens": 14},
    {"input_tokens": 1_869, "output_tokens": 33, "cache_read_tokens": CACHED},
    {"input_tokens": 1_944, "output_tokens": 21, "cache_read_tokens": CACHED},
]
REPLIES = [{**reply, **tokens} for reply, tokens in zip(HANDOFF_REPLIES, TOKENS, strict=True)]


def main() -> None:
    with Recording(Path(__file__).parent, REPLIES, framework="openai-agents", instrumentation="openinference",
                   packages=["openai-agents", "litellm", "openai", "openinference-instrumentation-openai-agents",
                             "openinference-instrumentation-litellm", "openinference-instrumentation",
                             "arize-phoenix-otel", "opentelemetry-sdk", "opentelemetry-exporter-otlp-proto-http"],
                   session_id=SESSION,
                   notes="both agents on LitellmModel('anthropic/claude-sonnet-4-5') (LiteLLM speaking Anthropic's "
                         "Messages API); phoenix.otel.register(auto_instrument=True): OpenInference's openai-agents "
                         "and LiteLLM instrumentors on one tracer provider, each call reported twice (the SDK's "
                         "generation span, LiteLLM's completion span); a triage agent handing off to a booking agent "
                         "each turn, parallel tool calls, one raising once and called again, the booking agent's "
                         "instructions cached (cache_control_injection_points: a write, then reads); turn 1 run, "
                         "turn 2 run_streamed; SQLiteSession, RunConfig group_id, using_session") as rec:
        rec.env()
        os.environ["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"  # offline: LiteLLM's bundled prices
        from openinference.instrumentation import using_session
        from phoenix.otel import register

        provider = register(project_name="travel-desk", endpoint=rec.otlp_endpoint + "/v1/traces",
                            protocol="http/protobuf", batch=True, auto_instrument=True)
        run_turns(travel_desk(rec), SESSION, lambda: using_session(SESSION))
        rec.flush(provider)


def travel_desk(rec: Recording, *, cache: bool = True) -> Any:
    """The travel desk handing hotel bookings to the booking agent, both on Claude through LiteLLM (the fake LLM's
    Anthropic endpoint), the booking agent's instructions cached (`cache`); `openai-agents_openinference_litellm-model`
    records the same, uncached."""
    from agents import Agent, ModelSettings
    from agents.extensions.models.litellm_model import LitellmModel

    def claude() -> LitellmModel:
        return LitellmModel(model=MODEL, base_url=rec.base_url.removesuffix("/v1"), api_key="sk-ant-fake")

    # `include_usage`: LiteLLM streams no usage otherwise (the SDK's docs ask for it to track a LiteLLM model's).
    cached = {"cache_control_injection_points": [{"location": "message", "role": "system"}]} if cache else None
    booking = Agent(name="Booking agent", model=claude(), instructions=HOTEL_POLICY, tools=travel_tools(),
                    model_settings=ModelSettings(include_usage=True, extra_args=cached))
    return Agent(name="Travel desk", model=claude(), instructions="You answer travel questions; hand hotel bookings "
                 "to the booking agent.", handoffs=[booking], model_settings=ModelSettings(include_usage=True))


if __name__ == "__main__":
    main()
