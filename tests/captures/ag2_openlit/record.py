"""Re-record: two AG2 Classic `ConversableAgent`s (an assistant and a tool-executing user proxy), traced by OpenLIT.

    python3 -m venv /tmp/cap-ag2_openlit && /tmp/cap-ag2_openlit/bin/pip install -U pip && \
        /tmp/cap-ag2_openlit/bin/pip install 'ag2[openai]==0.14.0' openlit==1.45.0 openai==2.54.0 httpx==0.29.0 \
        opentelemetry-sdk==1.45.1 opentelemetry-exporter-otlp-proto-http==1.45.1
    /tmp/cap-ag2_openlit/bin/python tests/captures/ag2_openlit/record.py

Why ag2 0.14, not the latest (1.2): OpenLIT 1.45's ag2 instrumentation wraps `autogen.agentchat.conversable_agent`
(`ConversableAgent.__init__`, `run`, `generate_reply`, `receive`, `send`) and `autogen.agentchat.groupchat`, AG2
Classic's module; the `ag2` 1.x wheel holds only the new `ag2` package (`Agent`, no `ConversableAgent`, no
`autogen`: the `ag2_native` capture), where `openlit.init()` finds the `ag2` module and its wrappers fail to import.
0.14.0 is the last `ag2` with `ConversableAgent` (and OpenLIT reads the version of the distribution `ag2`). openlit
1.45 requires `openai<3`.

Set up the way OpenLIT's quickstart shows: `openlit.init(otlp_endpoint=…)` (content capture on) builds the tracer,
logger and meter providers, all to the endpoint (the recorder), and instruments every library it finds: its ag2
instrumentation (a span per `ConversableAgent.__init__` (`create_agent <agent>`) and one per `send`, `receive` and
`generate_reply` (each `execute_task <agent>`, operation `create_agent` / `chat`), nested as AG2 nests the calls, and
its OpenAI instrumentation under it (one `chat <model>` span per `chat.completions.create`, an inference event log
record), plus the httpx client spans it bundles. The capture shows which spans each makes and whether a call appears
twice.

OpenLIT has no session API of its own: its docs (sdk/features/custom-attributes) attach request context to every
auto-instrumented span with `openlit.using_attributes(...)` (1.45 takes a dict), so both chats run inside
`using_attributes({"session.id": SESSION})`, as in the `openai-sdk_openlit` capture. (`ConversableAgent.run`, the one
entry OpenLIT wraps as a run, starts the chat in a thread of its own and returns at once: its span would end before
the chat and the thread would not carry the session; `initiate_chat`, AG2's documented way, runs in the caller's.)

The assistant (`llm_config` an `LLMConfig` on the fake LLM, no cache) holds two tools registered with
`register_for_llm`, the user proxy (`human_input_mode="NEVER"`, no code execution) executes them
(`register_for_execution`) and ends the chat on an answer with no tool calls. Chat one (`user_proxy.initiate_chat`):
the model calls get_weather and convert_currency in parallel, convert_currency times out (AG2 sends the model
"Error: <exception>" as the tool message), the model calls it again, then answers. Chat two continues it
(`initiate_chat(…, clear_history=False)`, AG2's way of resuming a conversation), streamed: AG2 takes streaming from
the agent's `llm_config` and has no per-call switch, so the assistant's client is rebuilt from its config with
`stream=True` (as AG2 rebuilds it itself when its tools change, `update_tool_signature`); one tool call, then the
answer. Five LLM calls.

Recorded offline: OpenLIT's pricing table (fetched from GitHub at init) is unreachable, so any `gen_ai.usage.cost` it
writes is 0. (The versions the capture was recorded with are in meta.json.)
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated, Any

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

from tests.captures.recording.session import Recording

SESSION = "ag2-openlit-trip-1"
MODEL = "gpt-4o-mini"
REPLIES = [
    {"tool_calls": [{"name": "get_weather", "arguments": {"city": "Lisbon"}},
                    {"name": "convert_currency", "arguments": {"amount": 300, "from_currency": "EUR",
                                                               "to_currency": "USD"}}]},
    {"tool_calls": [{"name": "convert_currency", "arguments": {"amount": 300, "from_currency": "EUR",
                                                               "to_currency": "USD"}}], "when": "timed out"},
    {"text": "Lisbon is sunny at 24°C; 300 EUR is about 327 USD."},
    {"tool_calls": [{"name": "get_weather", "arguments": {"city": "Porto"}}], "when": "Porto"},
    {"text": "Porto will be cloudy at 19°C tomorrow: bring a light jacket."},
]
WEATHER = {"Lisbon": "sunny, 24°C", "Porto": "cloudy, 19°C"}
QUESTIONS = ["I'm in Lisbon with 300 EUR. What's the weather, and how much is that in US dollars?",
             "And tomorrow in Porto?"]
PACKAGES = ["ag2", "openlit", "openai", "httpx", "opentelemetry-sdk", "opentelemetry-exporter-otlp-proto-http"]


def main() -> None:
    notes = ("openlit.init(otlp_endpoint=recorder): its ag2 instrumentation (create_agent spans; an execute_task span "
             "per ConversableAgent send, receive and generate_reply, operation chat, nested as AG2 nests them) and "
             "OpenAI one (chat spans, + an inference event log record per call) (+ httpx POST spans, + metrics); both "
             "chats under openlit.using_attributes({'session.id': …}). An assistant with get_weather and "
             "convert_currency (register_for_llm), a user proxy executing them (register_for_execution). Chat one: "
             "both in parallel, convert_currency timing out once (AG2's 'Error: …' tool message), called again, the "
             "answer; chat two (initiate_chat(…, clear_history=False), the assistant's client rebuilt with "
             "stream=True): one tool call, the answer. Recorded offline: OpenLIT's pricing table unreachable")
    with Recording(Path(__file__).parent, REPLIES, framework="ag2", instrumentation="openlit",
                   packages=PACKAGES, session_id=SESSION, notes=notes) as rec:
        rec.env()
        import openlit
        from opentelemetry import metrics, trace
        from opentelemetry._logs import get_logger_provider

        openlit.init(application_name="travel-assistant", environment="dev", otlp_endpoint=rec.otlp_endpoint)

        from autogen import ConversableAgent, LLMConfig, OpenAIWrapper

        failures = {"convert_currency": 1}
        llm_config = LLMConfig({"model": MODEL, "api_key": "sk-fake", "base_url": rec.base_url}, cache_seed=None)
        assistant = ConversableAgent(
            "travel_assistant", llm_config=llm_config,
            system_message="You are a terse travel assistant. Use the tools; answer in one sentence.")
        user_proxy = ConversableAgent(
            "traveller", llm_config=False, human_input_mode="NEVER", code_execution_config=False,
            is_termination_msg=lambda message: not message.get("tool_calls"))

        @user_proxy.register_for_execution()
        @assistant.register_for_llm(description="The weather in a city.")
        def get_weather(city: Annotated[str, "the city"]) -> str:
            return WEATHER[city]

        @user_proxy.register_for_execution()
        @assistant.register_for_llm(description="Convert an amount of money between currencies.")
        def convert_currency(amount: Annotated[float, "how much money"],
                             from_currency: Annotated[str, "the currency it is in (ISO code)"],
                             to_currency: Annotated[str, "the currency wanted (ISO code)"]) -> str:
            if failures["convert_currency"]:
                failures["convert_currency"] -= 1
                raise TimeoutError("exchange-rate service timed out")
            return f"{amount:g} {from_currency} = {round(amount * 1.09):,} {to_currency}"

        def streamed(config: Any) -> Any:
            """The assistant's config with every entry streamed."""
            copy = config.deepcopy()
            for entry in copy.config_list:
                entry.stream = True
            return copy

        with openlit.using_attributes({"session.id": SESSION}):
            first = user_proxy.initiate_chat(assistant, message=QUESTIONS[0])
            assistant.llm_config = streamed(assistant.llm_config)
            assistant.client = OpenAIWrapper(**assistant.llm_config)
            second = user_proxy.initiate_chat(assistant, message=QUESTIONS[1], clear_history=False)
        print(first.summary, second.summary, sep="\n")
        rec.flush(trace.get_tracer_provider(), get_logger_provider(), metrics.get_meter_provider())


if __name__ == "__main__":
    main()
