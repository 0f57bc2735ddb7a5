"""Re-record: a smolagents ToolCallingAgent managing a second agent, traced by OpenLIT (`openlit.init()`).

    python3 -m venv /tmp/cap-smolagents_openlit && /tmp/cap-smolagents_openlit/bin/pip install -U pip && \
        /tmp/cap-smolagents_openlit/bin/pip install openlit==1.45.0 smolagents==1.26.0 openai==2.54.0 \
        httpx==0.29.0 opentelemetry-sdk==1.45.1 opentelemetry-exporter-otlp-proto-http==1.45.1
    /tmp/cap-smolagents_openlit/bin/python tests/captures/smolagents_openlit/record.py

(openlit 1.45 requires `openai<3`.) Set up the way OpenLIT's quickstart shows: `openlit.init(otlp_endpoint=…)`
(content capture on by default) builds the tracer, logger and meter providers, all to the endpoint (the recorder),
and instruments every library it finds. Here that is its smolagents instrumentation (wrapt wrappers on
`MultiStepAgent.__init__` / `run` / `__call__`, `ToolCallingAgent.execute_tool_call` and `_step_stream`,
`Tool.__call__`: `create_agent`, `invoke_agent` and `execute_tool` spans; the model calls it leaves to the client's
instrumentation) and its OpenAI one under it (one `chat <model>` span per `chat.completions.create` and an inference
event log record), plus the httpx client spans it bundles: the capture shows which spans each makes and whether a call
appears twice (it does not: smolagents' model calls have no span of the smolagents instrumentation's).

OpenLIT has no session API of its own: its docs (sdk/features/custom-attributes) attach request context to every
auto-instrumented span with `openlit.using_attributes(...)` (1.45 takes a dict), so both runs are inside
`using_attributes({"session.id": SESSION})`, as in the `openai-sdk_openlit` capture.

The manager (unnamed, `OpenAIServerModel` against the fake LLM, `stream_outputs=True`: its calls streamed, with
`include_usage`) has two tools and a managed agent, `hotel_desk` (its own ToolCallingAgent, calls not streamed), whose
`find_hotel` tool times out once. Run one (`run`): the model calls get_weather and convert_currency in parallel
(smolagents runs them in a thread pool), then answers with `final_answer`. Run two continues the same memory
(`run(…, reset=False, stream=True)`: the steps come as a generator, iterated to the end): the manager hands the hotel
question to `hotel_desk`, whose find_hotel raises (smolagents sends the model the error as an `Error:` observation);
the desk asks again, answers, and the manager answers. Seven LLM calls.

Recorded offline: OpenLIT's pricing table (fetched from GitHub at init) is unreachable, so any `gen_ai.usage.cost`
it writes is 0. (The versions the capture was recorded with are in meta.json.)
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

from tests.captures.recording.session import Recording

SESSION = "smol-openlit-trip-1"
MODEL = "gpt-4o-mini"
HOTEL_TASK = "Find a hotel room in Tokyo for at most 32,480 JPY a night."
REPLIES = [
    # Run one: the manager.
    {"tool_calls": [{"name": "get_weather", "arguments": {"city": "Tokyo"}},
                    {"name": "convert_currency", "arguments": {"amount": 200, "from_currency": "EUR",
                                                               "to_currency": "JPY"}}]},
    {"tool_calls": [{"name": "final_answer", "arguments": {
        "answer": "Tokyo has light rain at 18°C, so take an umbrella; 200 EUR is about 32,480 JPY."}}]},
    # Run two: the manager hands the hotel to its desk, whose first lookup times out.
    {"tool_calls": [{"name": "hotel_desk", "arguments": {"task": HOTEL_TASK}}], "when": "hotel"},
    {"tool_calls": [{"name": "find_hotel", "arguments": {"city": "Tokyo", "max_price": 32480}}],
     "when": HOTEL_TASK[:30]},
    {"tool_calls": [{"name": "find_hotel", "arguments": {"city": "Tokyo", "max_price": 32480}}],
     "when": "timed out"},
    {"tool_calls": [{"name": "final_answer", "arguments": {
        "answer": "Hotel Sakura Shinjuku has a room at 14,500 JPY a night."}}], "when": "Hotel Sakura"},
    {"tool_calls": [{"name": "final_answer", "arguments": {
        "answer": "The hotel desk found Hotel Sakura Shinjuku at 14,500 JPY a night: well within your budget."}}],
     "when": "hotel_desk"},
]
WEATHER = {"Tokyo": "light rain, 18°C"}
QUESTIONS = ["I'm in Tokyo with 200 EUR. What's the weather, and how much is that in yen?",
             "Can the hotel desk find me a room in Tokyo for that much a night?"]
PACKAGES = ["openlit", "smolagents", "openai", "httpx", "opentelemetry-sdk", "opentelemetry-exporter-otlp-proto-http"]


def main() -> None:
    notes = ("openlit.init(otlp_endpoint=recorder): its smolagents instrumentation (create_agent, invoke_agent run "
             "and step, execute_tool spans) and OpenAI one (chat spans, + an inference event log record per call) "
             "(+ httpx POST spans, + metrics); both runs under openlit.using_attributes({'session.id': …}). An "
             "unnamed ToolCallingAgent (stream_outputs=True) with get_weather, convert_currency and a managed "
             "ToolCallingAgent hotel_desk (find_hotel, raising once). Run one: get_weather and convert_currency in "
             "parallel, then final_answer; run two (reset=False, stream=True): hotel_desk called, its find_hotel "
             "times out (an Error: observation), asked again, the desk's final_answer, the manager's. Recorded "
             "offline: OpenLIT's pricing table unreachable")
    with Recording(Path(__file__).parent, REPLIES, framework="smolagents", instrumentation="openlit",
                   packages=PACKAGES, session_id=SESSION, notes=notes) as rec:
        rec.env()
        import openlit
        from opentelemetry import metrics, trace
        from opentelemetry._logs import get_logger_provider

        openlit.init(application_name="travel-assistant", environment="dev", otlp_endpoint=rec.otlp_endpoint)

        from smolagents import OpenAIServerModel, ToolCallingAgent, tool

        failures = {"find_hotel": 1}

        @tool
        def get_weather(city: str) -> str:
            """The weather in a city.

            Args:
                city: the city
            """
            return WEATHER[city]

        @tool
        def convert_currency(amount: float, from_currency: str, to_currency: str) -> str:
            """Convert an amount of money between currencies.

            Args:
                amount: how much money
                from_currency: the currency it is in (ISO code)
                to_currency: the currency wanted (ISO code)
            """
            return f"{amount:g} {from_currency} = {round(amount * 162.4):,} {to_currency}"

        @tool
        def find_hotel(city: str, max_price: int) -> str:
            """A hotel room in a city for at most a price a night.

            Args:
                city: the city
                max_price: the most a night, in the local currency
            """
            if failures["find_hotel"]:
                failures["find_hotel"] -= 1
                raise TimeoutError("hotel search timed out")
            return f"Hotel Sakura Shinjuku, 14,500 JPY a night (at most {max_price:,})"

        model = OpenAIServerModel(model_id=MODEL, api_base=rec.base_url, api_key="sk-fake")
        hotel_desk = ToolCallingAgent(tools=[find_hotel], model=model, name="hotel_desk",
                                      description="Finds hotel rooms.", max_steps=4)
        manager = ToolCallingAgent(tools=[get_weather, convert_currency], model=model, managed_agents=[hotel_desk],
                                   stream_outputs=True, max_steps=4)

        with openlit.using_attributes({"session.id": SESSION}):
            print(manager.run(QUESTIONS[0]))
            for event in manager.run(QUESTIONS[1], reset=False, stream=True):
                if type(event).__name__ == "FinalAnswerStep":
                    print(event.output)
        rec.flush(trace.get_tracer_provider(), get_logger_provider(), metrics.get_meter_provider())


if __name__ == "__main__":
    main()
