"""Re-record: the OpenAI Python SDK's Responses API on a reasoning model (o4-mini), traced by OpenLIT.

    python3 -m venv /tmp/cap-openai-sdk_openlit_reasoning
    /tmp/cap-openai-sdk_openlit_reasoning/bin/pip install openlit==1.45.0 openai==2.54.0 httpx==0.29.0 \
        pydantic==2.14.4 opentelemetry-api==1.45.1 opentelemetry-sdk==1.45.1 \
        opentelemetry-exporter-otlp-proto-http==1.45.1 opentelemetry-instrumentation-httpx==0.66b1
    /tmp/cap-openai-sdk_openlit_reasoning/bin/python tests/captures/openai-sdk_openlit_reasoning/record.py

(openlit 1.45.0, the newest, requires `openai>=1.92.0,<3.0.0`: openai 2.54.0 is the newest it installs with, not
3.63.0.) Why: a reasoning model's tool loop over `client.responses.create` as OpenAI's reasoning guide shows it
(`reasoning={"effort": "medium", "summary": "auto"}`, every output item, reasoning items included, appended to the
input list as the SDK's objects, `input += response.output`, and re-sent with the `function_call_output` items; turn
2's input so holds turn 1's answer as a `ResponseOutputMessage`, on which OpenLIT 1.45's own input formatting raises
once each call has returned, failing both its spans), as OpenLIT's OpenAI instrumentation records it: its
Responses path beside the Chat Completions loop of `openai-sdk_openlit`. Set up as that capture is:
`openlit.init(otlp_endpoint=…)` (tracer, logger and meter providers to the recorder; an inference event log record
per call), each turn an `@openlit.trace` function run under `openlit.using_attributes({"session.id": SESSION})`
and `openlit.agent_context(…)`, the tools `@openlit.trace` functions. Recorded offline: OpenLIT's pricing table
(fetched from GitHub at init) is unreachable, so `gen_ai.usage.cost` is 0 on every call.

Every call reasons first (a reasoning item with a summary, distinct for each call; reasoning tokens in the usage's
`output_tokens_details`). Turn 1, not streamed: the model asks for Tokyo's weather and a currency conversion in
parallel; the conversion times out (the tool raises, the loop sends the model the error text as its output), the
model retries it, then answers. Turn 2, same session and the same input list (turn 1's items re-sent, its reasoning
items too), streamed (`stream=True`, iterated to `response.completed`): two weather calls in parallel, then the
answer. Five calls. Every function call is scripted with the two ids the real Responses API gives it
(`with_api_call_ids`): its `call_id` (`call_…`, which the loop's `function_call_output` names) and its item's own
`id` (`fc_…`); first recorded with one value for both, re-recorded with the same pins for the two. The versions
recorded are in meta.json.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

from tests.captures.recording.openai_agents_travel import with_api_call_ids
from tests.captures.recording.session import Recording

SESSION = "openlit-reasoning-trip-1"
MODEL = "o4-mini"
INSTRUCTIONS = "You are a terse travel assistant. Use the tools; never guess."
REASONING = {"effort": "medium", "summary": "auto"}
REPLIES = with_api_call_ids([
    {"reasoning": "Two independent asks, weather and money: call get_weather and convert_currency together.",
     "tool_calls": [{"name": "get_weather", "arguments": {"city": "Tokyo"}},
                    {"name": "convert_currency", "arguments": {"amount": 200, "from_currency": "EUR",
                                                               "to_currency": "JPY"}}],
     "input_tokens": 212, "output_tokens": 118, "reasoning_tokens": 64},
    {"reasoning": "The weather came back but the exchange-rate service timed out; retry the conversion once.",
     "tool_calls": [{"name": "convert_currency", "arguments": {"amount": 200, "from_currency": "EUR",
                                                               "to_currency": "JPY"}}],
     "input_tokens": 331, "output_tokens": 80, "reasoning_tokens": 48},
    {"reasoning": "Rain at 18°C calls for an umbrella; 200 EUR came to 32,480 JPY. Answer both in one line.",
     "text": "Tokyo has light rain at 18°C, so take an umbrella; 200 EUR is about 32,480 JPY.",
     "input_tokens": 402, "output_tokens": 91, "reasoning_tokens": 56},
    {"reasoning": "Compare tomorrow in Kyoto and Osaka: both forecasts at once, then pick the drier city.",
     "tool_calls": [{"name": "get_weather", "arguments": {"city": "Kyoto"}},
                    {"name": "get_weather", "arguments": {"city": "Osaka"}}],
     "when": "Osaka", "input_tokens": 468, "output_tokens": 97, "reasoning_tokens": 72},
    {"reasoning": "Kyoto is sunny and Osaka has showers, so Kyoto is the drier one.",
     "text": "Kyoto: sunny at 21°C, while Osaka has showers. Go to Kyoto.",
     "input_tokens": 536, "output_tokens": 60, "reasoning_tokens": 40},
], SESSION)
WEATHER = {"Tokyo": "light rain, 18°C", "Kyoto": "sunny, 21°C", "Osaka": "showers, 19°C"}
QUESTIONS = [("I'm in Tokyo with 200 EUR. What's the weather, and how much is that in yen?", False),
             ("Tomorrow, Kyoto or Osaka: which will be drier?", True)]
TOOLS = [
    {"type": "function", "name": "get_weather", "description": "The weather in a city.",
     "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}},
    {"type": "function", "name": "convert_currency", "description": "Convert an amount of money between currencies.",
     "parameters": {"type": "object", "properties": {
         "amount": {"type": "number"}, "from_currency": {"type": "string"}, "to_currency": {"type": "string"}},
         "required": ["amount", "from_currency", "to_currency"]}},
]
# As installed (pip freeze): the OpenAI SDK's output items are pydantic models; openlit.init() instruments httpx.
PACKAGES = ["openlit", "openai", "httpx", "pydantic", "opentelemetry-api", "opentelemetry-sdk",
            "opentelemetry-exporter-otlp-proto-http", "opentelemetry-instrumentation-httpx"]


def main() -> None:
    notes = ("openlit.init(otlp_endpoint=recorder): its OpenAI instrumentation's Responses spans (+ httpx POST spans, "
             "+ an inference event log record per call, + metrics); o4-mini with reasoning={effort: medium, summary: "
             "auto}, every call a reasoning item (distinct summary) and reasoning tokens; each turn an @openlit.trace "
             "function under openlit.using_attributes({'session.id': …}) and agent_context; tools @openlit.trace "
             "functions. The loop re-sends every output item (reasoning items included) with the function_call_output "
             "items. Turn 1 not streamed: get_weather and convert_currency in parallel, the conversion raising once "
             "(its error text sent as the output), retried, then the answer; turn 2 (the same input list) streamed: "
             "two get_weather calls in parallel, then the answer. Recorded offline: OpenLIT's pricing table "
             "unreachable, so gen_ai.usage.cost is 0 on every call; function_call item ids (fc_) distinct from "
             "their call_ids (call_)")
    with Recording(Path(__file__).parent, REPLIES, framework="openai-sdk", instrumentation="openlit",
                   packages=PACKAGES, session_id=SESSION, notes=notes) as rec:
        rec.env()
        import openai
        import openlit
        from opentelemetry import metrics, trace
        from opentelemetry._logs import get_logger_provider

        openlit.init(application_name="travel-assistant", environment="dev", otlp_endpoint=rec.otlp_endpoint)
        client = openai.OpenAI()
        failures = {"convert_currency": 1}

        @openlit.trace
        def get_weather(city: str) -> str:
            return WEATHER[city]

        @openlit.trace
        def convert_currency(amount: float, from_currency: str, to_currency: str) -> str:
            if failures["convert_currency"]:
                failures["convert_currency"] -= 1
                raise TimeoutError("exchange-rate service timed out")
            return f"{amount} {from_currency} = {round(amount * 162.4):,} {to_currency}"

        functions: dict[str, Any] = {"get_weather": get_weather, "convert_currency": convert_currency}

        def ask(items: list[Any], stream: bool) -> Any:
            """One Responses call on the input list so far: its Response, streamed or not."""
            request: dict[str, Any] = {"model": MODEL, "instructions": INSTRUCTIONS, "reasoning": REASONING,
                                       "tools": TOOLS, "input": items}
            if not stream:
                return client.responses.create(**request)
            completed = None
            for event in client.responses.create(stream=True, **request):
                if event.type == "response.completed":
                    completed = event.response
            assert completed is not None, "the stream ended without response.completed"
            return completed

        def run_tool(call: Any) -> dict[str, Any]:
            try:
                output = functions[call.name](**json.loads(call.arguments))
            except Exception as exc:  # the model is told, and tries again or something else
                output = f"Error: {exc}"
            return {"type": "function_call_output", "call_id": call.call_id, "output": output}

        @openlit.trace
        def chat_turn(items: list[Any], question: str, stream: bool) -> str:
            items.append({"role": "user", "content": question})
            while True:
                answer = ask(items, stream)
                # As OpenAI's reasoning guide shows: every output item back into the input, reasoning items too,
                # so that the model keeps its reasoning across the tool calls.
                items += answer.output
                calls = [item for item in answer.output if item.type == "function_call"]
                if not calls:
                    return str(answer.output_text)
                items += [run_tool(call) for call in calls]

        items: list[Any] = []
        for question, stream in QUESTIONS:
            with openlit.using_attributes({"session.id": SESSION}), openlit.agent_context("travel_assistant"):
                print(chat_turn(items, question, stream))
        rec.flush(trace.get_tracer_provider(), get_logger_provider(), metrics.get_meter_provider())


if __name__ == "__main__":
    main()
