"""Re-record: a LangChain 1.x `create_agent` answering with structured output (`response_format`): a pydantic
schema through `ToolStrategy` (turn 1), then through `ProviderStrategy` (turn 2, streamed), on `ChatOpenAI`,
checkpointed (`MemorySaver`, one `thread_id`), traced by OpenInference.

    python3 -m venv /tmp/cap-langgraph_openinference_structured-output && \
        /tmp/cap-langgraph_openinference_structured-output/bin/pip install \
        langchain==1.5.2 langchain-core==1.8.3 langgraph==1.2.24 langgraph-prebuilt==1.1.3 \
        langgraph-checkpoint==4.3.2 langchain-openai==1.8.1 openai==3.63.0 \
        openinference-instrumentation-langchain==0.1.80 openinference-instrumentation==0.1.72 \
        openinference-semantic-conventions==0.1.42 \
        opentelemetry-sdk==1.45.2 opentelemetry-exporter-otlp-proto-http==1.45.2
    /tmp/cap-langgraph_openinference_structured-output/bin/python \
        tests/captures/langgraph_openinference_structured-output/record.py

Why: an agent whose answer is an object, not text. LangChain v1's "Structured output" docs: `create_agent(...,
response_format=ToolStrategy(Schema))` binds the schema as one more tool (named for the schema, here `TripPlan`);
the model ends the run by calling it, LangChain parses the arguments into the schema (the run's
`structured_response`) and answers the call itself with a ToolMessage ("Returning structured response: …", no tool
runs); arguments that do not validate are answered with `handle_errors`' message ("Error: <the validation error>\n
Please fix your mistakes.") and the model is asked again. `ProviderStrategy(Schema)` instead binds the provider's
JSON-schema response format (`response_format={"type": "json_schema", …}`): the model's text is the JSON, parsed into
`structured_response`. A trajectory should show the object as what the agent answered, the schema's call and
LangChain's answers to it as what they are (not a question of the user's, not a tool the agent ran), and the tokens.

Built as the docs show: `create_agent(model, tools, system_prompt=…, response_format=…, name=…,
checkpointer=MemorySaver())` run with `config={"configurable": {"thread_id": …}}`; the session is that thread id
(the tracer records a run's `metadata.thread_id` as `session.id`), no `using_session`. A graph's response format is
fixed when it is built, so turn 2 is a second `create_agent` (the same name, model, tools and checkpointer) on the
same thread, continuing its conversation. get_weather raises a `ToolException` once, handled as LangChain's tools
docs show (`StructuredTool.from_function(..., handle_tool_error=True)`: the exception's text is the ToolMessage).

Turn 1 (`invoke`, `ToolStrategy(TripPlan)`, `handle_errors=True` its default): text and get_weather + find_hotel in
parallel; get_weather raises once; the model calls it again; then calls TripPlan with `nights` "two" (no integer:
LangChain answers with the validation error); then TripPlan right (LangChain's "Returning structured response: …").
Turn 2, same thread, streamed (`stream(…, stream_mode="messages")`; langchain-openai streams a call bound to a
`response_format` through the SDK's `beta.chat.completions.stream` helper; `stream_usage=True` as langchain-openai
defaults to on OpenAI's own URL), `ProviderStrategy(CostSummary)`: the model calls convert_currency, then answers the
JSON. Six LLM calls, two traces. Installed then (pip freeze, the packages that matter; also in meta.json): langchain
1.5.2, langchain-core 1.8.3, langgraph 1.2.24, langgraph-prebuilt 1.1.3, langgraph-checkpoint 4.3.2, langchain-openai
1.8.1, openai 3.63.0, openinference-instrumentation-langchain 0.1.80, openinference-instrumentation 0.1.72,
openinference-semantic-conventions 0.1.42, opentelemetry-sdk and -exporter-otlp-proto-http 1.45.2 (each the newest).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

from tests.captures.recording.session import Recording

SESSION = "lg-oi-structured-1"
MODEL = "gpt-4o"
QUESTIONS = ["Plan 2 nights in Oslo for me: check the weather and find a hotel.",
             "What do the 2 nights cost in total, in NOK and in euros?"]
_PLAN = {"city": "Oslo", "weather": "rainy, 9°C", "hotel": "Hotel Nord", "nightly_price_nok": 1500}
REPLIES = [
    # turn 1 (ToolStrategy): text and two calls in parallel; get_weather raises once
    {"text": "I'll check Oslo's weather and look for a hotel.",
     "tool_calls": [{"name": "get_weather", "arguments": {"city": "Oslo"}},
                    {"name": "find_hotel", "arguments": {"city": "Oslo", "nights": 2}}],
     "input_tokens": 236, "output_tokens": 41},
    {"tool_calls": [{"name": "get_weather", "arguments": {"city": "Oslo"}}], "input_tokens": 318, "output_tokens": 15},
    # the schema's tool with arguments that do not validate (nights no integer): LangChain's retry message
    {"tool_calls": [{"name": "TripPlan", "arguments": {**_PLAN, "nights": "two"}}],
     "input_tokens": 352, "output_tokens": 44},
    {"tool_calls": [{"name": "TripPlan", "arguments": {**_PLAN, "nights": 2}}],
     "input_tokens": 431, "output_tokens": 43},
    # turn 2 (ProviderStrategy, streamed): a tool, then the JSON the response format asks for
    {"tool_calls": [{"name": "convert_currency", "arguments": {"amount": 3000, "currency": "NOK"}}],
     "input_tokens": 498, "output_tokens": 19},
    {"text": json.dumps({"total_nok": 3000, "total_eur": 256, "summary": "2 nights at Hotel Nord, 1500 NOK a night"}),
     "input_tokens": 540, "output_tokens": 31},
]
PACKAGES = ["langchain", "langchain-core", "langgraph", "langgraph-prebuilt", "langgraph-checkpoint",
            "langchain-openai", "openai", "openinference-instrumentation-langchain", "openinference-instrumentation",
            "openinference-semantic-conventions", "opentelemetry-sdk", "opentelemetry-exporter-otlp-proto-http"]
NOTES = ("create_agent (name trip_agent) on ChatOpenAI(model='gpt-4o', stream_usage=True) (Chat Completions), "
         "MemorySaver, thread_id the session (no using_session). Turn 1 invoke with response_format="
         "ToolStrategy(TripPlan) (handle_errors=True): text and get_weather + find_hotel in parallel, get_weather "
         "raising a ToolException once (handle_tool_error=True sends its text), called again; TripPlan called with "
         "nights 'two' (LangChain answers the validation error, 'Please fix your mistakes.'), then right (LangChain "
         "answers 'Returning structured response: …'; structured_response the TripPlan). Turn 2 a second create_agent "
         "(same name, tools, checkpointer, thread) with response_format=ProviderStrategy(CostSummary), "
         "stream_mode='messages' (beta.chat.completions.stream): convert_currency, then the JSON answer "
         "(structured_response the CostSummary). 6 LLM calls, 2 traces")


def run() -> None:
    from langchain.agents import create_agent
    from langchain.agents.structured_output import ProviderStrategy, ToolStrategy
    from langchain_core.tools import StructuredTool, ToolException, tool
    from langchain_openai import ChatOpenAI
    from langgraph.checkpoint.memory import MemorySaver
    from pydantic import BaseModel, Field

    class TripPlan(BaseModel):
        """A trip plan: where, how long, the weather and the hotel."""

        city: str
        nights: int = Field(description="how many nights")
        weather: str
        hotel: str
        nightly_price_nok: int

    class CostSummary(BaseModel):
        """What a stay costs."""

        total_nok: int
        total_eur: int
        summary: str

    failures = {"get_weather": 1}

    def get_weather(city: str) -> str:
        """The weather in a city now."""
        if failures["get_weather"]:
            failures["get_weather"] -= 1
            raise ToolException("the weather service did not answer in time")
        return {"Oslo": "rainy, 9°C"}[city]

    @tool
    def find_hotel(city: str, nights: int) -> str:
        """Find a hotel room in a city."""
        return f"Hotel Nord, {city}: a room free for {nights} nights, 1500 NOK a night"

    @tool
    def convert_currency(amount: float, currency: str) -> str:
        """Convert an amount to EUR."""
        return f"{amount:g} {currency} is {amount / 11.7:.0f} EUR"

    # stream_usage=True: what langchain-openai defaults to on OpenAI's own URL (off for any other, as here).
    model = ChatOpenAI(model=MODEL, timeout=30, stream_usage=True)
    tools = [StructuredTool.from_function(func=get_weather, handle_tool_error=True), find_hotel, convert_currency]
    prompt = "You are a travel assistant. Use the tools for the weather, hotels and converting costs to EUR."
    memory = MemorySaver()
    config: Any = {"configurable": {"thread_id": SESSION}}

    planner = create_agent(model, tools=tools, system_prompt=prompt, name="trip_agent", checkpointer=memory,
                           response_format=ToolStrategy(TripPlan))
    first = planner.invoke({"messages": [{"role": "user", "content": QUESTIONS[0]}]}, config)
    print(repr(first["structured_response"]))

    costing = create_agent(model, tools=tools, system_prompt=prompt, name="trip_agent", checkpointer=memory,
                           response_format=ProviderStrategy(CostSummary))
    for chunk, _metadata in costing.stream({"messages": [{"role": "user", "content": QUESTIONS[1]}]}, config,
                                           stream_mode="messages"):
        print(type(chunk).__name__, str(chunk.content)[:80])
    print(repr(costing.get_state(config).values.get("structured_response")))


def main() -> None:
    with Recording(Path(__file__).parent, REPLIES, framework="langgraph", instrumentation="openinference",
                   packages=PACKAGES, session_id=SESSION, notes=NOTES) as rec:
        rec.env()
        from openinference.instrumentation.langchain import LangChainInstrumentor
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
        from opentelemetry.sdk.resources import Resource
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import BatchSpanProcessor

        provider = TracerProvider(resource=Resource.create({"service.name": "trip-structured-output"}))
        provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
        LangChainInstrumentor().instrument(tracer_provider=provider)
        run()
        rec.flush(provider)


if __name__ == "__main__":
    main()
