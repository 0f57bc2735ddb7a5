"""Re-record: LangChain's Deep Agents (`create_deep_agent` with a declarative subagent), traced by OpenLLMetry
(opentelemetry-instrumentation-langchain).

    python3 -m venv /tmp/cap-deepagents_openllmetry && \
        /tmp/cap-deepagents_openllmetry/bin/pip install \
        deepagents==0.7.32 langchain==1.5.2 langchain-core==1.8.3 langgraph==1.2.24 langgraph-prebuilt==1.1.3 \
        langgraph-checkpoint==4.3.2 langchain-openai==1.8.1 openai==3.63.0 \
        opentelemetry-instrumentation-langchain==0.62.4 opentelemetry-semantic-conventions-ai==0.5.1 \
        opentelemetry-sdk==1.45.2 opentelemetry-exporter-otlp-proto-http==1.45.2
    /tmp/cap-deepagents_openllmetry/bin/python tests/captures/deepagents_openllmetry/record.py

The scenario of `deepagents_openinference` (its scripted replies, questions and tools), traced by OpenLLMetry's
LangChain instrumentation set up as `langgraph_openllmetry_subgraph` does (`LangchainInstrumentor().instrument(…)`
on the SDK's tracer provider); the session is the run's metadata `session_id`, which the instrumentation records
as `traceloop.association.properties.session_id` on every span of the run, the same id as LangGraph's `thread_id`.

A deep agent as its README shows: `create_deep_agent(model="openai:gpt-4o", tools=[convert_currency],
system_prompt=…, subagents=[{name, description, system_prompt, tools}], checkpointer=InMemorySaver())`, run with
`config={"configurable": {"thread_id": …}}` (LangGraph's persistence). An `openai:` model string is Deep Agents'
default path, which its OpenAI provider profile sends through the Responses API (`use_responses_api=True`), so the
calls here are Responses calls made by `langchain-openai`. Deep Agents gives the main agent its virtual filesystem
(`ls`, `read_file`, `write_file`, … on the default `StateBackend`: files live in the graph's state) and the `task`
tool, which runs a subagent inside the tool call on a fresh context (the task's description its one user message)
and returns a `Command` whose ToolMessage is the subagent's last answer. Since 0.7 it no longer adds the
`write_todos` planning tool by default (its Codex profile adds it back as `TodoListMiddleware`); passed here as
`middleware=[TodoListMiddleware()]`, as LangChain's middleware docs show. The subagent's tool errors are handled as
LangChain's agents docs show ("Tool error handling"): a `@wrap_tool_call` middleware (a subagent spec's
`middleware`) turns an exception into the ToolMessage the model is sent.

Turn 1 (`invoke`): the main agent writes its todos, delegates the research to the `travel-researcher` subagent
with `task`; the subagent calls search_hotels and get_weather in parallel, search_hotels raising TimeoutError once
(the middleware's error text is its result), calls search_hotels again, answers; the main agent writes the notes
to `/trip/oslo.md` with `write_file`, answers. Turn 2, same thread, streamed (`stream(…, stream_mode="messages")`):
the main agent calls its own convert_currency tool, answers. Nine LLM calls (two over the usual handful, to keep
the other capture's scenario call for call). The function calls are scripted with the ids the real API gives, an
item id (`fc_…`) beside the `call_id` (`call_…`) the output names, the same as `deepagents_openinference`'s
(re-recorded with the same pins for the ids). (The versions the capture was recorded with are in meta.json.)
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

from tests.captures.recording.session import Recording

SESSION = "deepagents-ll-1"
NOTES_PATH = "/trip/oslo.md"
RESEARCH = "Find a hotel in Oslo for 2 nights and check the weather there. Give the hotel's name and nightly price."
FINDINGS = "Hotel Nord has a room for 2 nights at 1500 NOK a night. Oslo is rainy, 9°C."
# Each function call with the two ids the real Responses API gives it: its item's own id (`fc_…`) and the
# `call_id` (`call_…`) that the `function_call_output` answering it names.
REPLIES = [
    # turn 1: the main agent plans, then delegates the research
    {"tool_calls": [{"name": "write_todos", "arguments": {"todos": [
        {"content": "Research a hotel and the weather in Oslo", "status": "in_progress"},
        {"content": f"Save the trip notes to {NOTES_PATH}", "status": "pending"}]},
        "id": "call_Dp4todos0001", "item_id": "fc_6801todos0001"}]},
    {"tool_calls": [{"name": "task", "arguments": {"description": RESEARCH, "subagent_type": "travel-researcher"},
                     "id": "call_Dp4task00001", "item_id": "fc_6801task00001"}]},
    # the subagent: two tools in parallel, search_hotels raising once, then again, then its answer
    {"tool_calls": [{"name": "search_hotels", "arguments": {"city": "Oslo", "nights": 2},
                     "id": "call_Dp4hotels001", "item_id": "fc_6801hotels001"},
                    {"name": "get_weather", "arguments": {"city": "Oslo"},
                     "id": "call_Dp4weather01", "item_id": "fc_6801weather01"}]},
    {"tool_calls": [{"name": "search_hotels", "arguments": {"city": "Oslo", "nights": 2},
                     "id": "call_Dp4hotels002", "item_id": "fc_6801hotels002"}]},
    {"text": FINDINGS},
    # back with the main agent: it saves the notes, then answers
    {"tool_calls": [{"name": "write_file", "arguments": {
        "file_path": NOTES_PATH, "content": f"# Oslo, 2 nights\n\n{FINDINGS}\n"},
        "id": "call_Dp4write0001", "item_id": "fc_6801write0001"}]},
    {"text": f"Hotel Nord has a room for your 2 nights at 1500 NOK a night; expect rain at 9°C. I saved the notes "
             f"to {NOTES_PATH}."},
    # turn 2 (streamed): the main agent converts with its own tool, then answers
    {"tool_calls": [{"name": "convert_currency", "arguments": {"amount": 3000, "source": "NOK", "target": "EUR"},
                     "id": "call_Dp4convert01", "item_id": "fc_6801convert01"}]},
    {"text": "The 2 nights come to 3000 NOK, about 256 EUR."},
]
QUESTIONS = ["Plan my weekend in Oslo: find a hotel for 2 nights, check the weather, and save the notes.",
             "How much is the hotel in euros?"]
WEATHER = {"Oslo": "rainy, 9°C"}
PACKAGES = ["deepagents", "langchain", "langchain-core", "langgraph", "langgraph-prebuilt", "langgraph-checkpoint",
            "langchain-openai", "openai", "opentelemetry-instrumentation-langchain",
            "opentelemetry-semantic-conventions-ai", "opentelemetry-sdk", "opentelemetry-exporter-otlp-proto-http"]
NOTES = ("Deep Agents' create_deep_agent (model 'openai:gpt-4o': the Responses API, its OpenAI provider profile's "
         "default) with tools=[convert_currency], TodoListMiddleware (write_todos; no longer a default since 0.7), "
         "the StateBackend virtual filesystem, and a declarative subagent travel-researcher (search_hotels, "
         "get_weather, a @wrap_tool_call middleware sending the model a tool's error text) run by the task tool; "
         "InMemorySaver, thread_id. Turn 1 invoke: write_todos, task (the subagent calls search_hotels and "
         "get_weather in parallel, search_hotels raising once, retried, answers), write_file, answer; turn 2 "
         "stream_mode='messages': convert_currency, answer. OpenLLMetry's LangchainInstrumentor; the run's metadata "
         "session_id (traceloop.association.properties.session_id), the thread id. function_call item ids (fc_) "
         "distinct from their call_ids (call_)")


def run() -> None:
    from deepagents import create_deep_agent
    from langchain.agents.middleware import TodoListMiddleware, wrap_tool_call
    from langchain_core.messages import ToolMessage
    from langchain_core.tools import tool
    from langgraph.checkpoint.memory import InMemorySaver

    failures = {"search_hotels": 1}

    @tool
    def search_hotels(city: str, nights: int) -> str:
        """Find a hotel room and its nightly price."""
        if failures["search_hotels"]:
            failures["search_hotels"] -= 1
            raise TimeoutError("the hotel search did not answer in time")
        return f"Hotel Nord, {city}: a room for {nights} nights at 1500 NOK a night"

    @tool
    def get_weather(city: str) -> str:
        """The weather in a city."""
        return WEATHER[city]

    @tool
    def convert_currency(amount: float, source: str, target: str) -> str:
        """Convert an amount between currencies."""
        rates = {("NOK", "EUR"): 1 / 11.7}
        return f"{amount:g} {source} = {amount * rates[(source, target)]:.0f} {target}"

    @wrap_tool_call
    def handle_tool_errors(request: Any, handler: Any) -> Any:
        """Send the model the tool's error instead of failing the run (LangChain's documented middleware)."""
        try:
            return handler(request)
        except Exception as e:  # every tool error goes back to the model, as the docs show
            return ToolMessage(content=f"Tool error: Please check your input and try again. ({e})",
                               tool_call_id=request.tool_call["id"])

    researcher = {
        "name": "travel-researcher",
        "description": "Researches hotels and the weather at a destination.",
        "system_prompt": "You research hotels and the weather. Answer with the hotel, its price and the weather.",
        "tools": [search_hotels, get_weather],
        "middleware": [handle_tool_errors],
    }
    agent = create_deep_agent(
        model="openai:gpt-4o", tools=[convert_currency], middleware=[TodoListMiddleware()],
        system_prompt="You are a travel planner. Plan with write_todos, delegate research to the travel-researcher "
                      "subagent, and keep notes in files.",
        subagents=[researcher], checkpointer=InMemorySaver())
    # OpenLLMetry turns run metadata into traceloop.association.properties.*
    config: Any = {"configurable": {"thread_id": SESSION}, "metadata": {"session_id": SESSION}}
    first = agent.invoke({"messages": [{"role": "user", "content": QUESTIONS[0]}]}, config)
    print(first["messages"][-1].text)
    print(first["files"] if "files" in first else "(no files)")
    for chunk, _metadata in agent.stream({"messages": [{"role": "user", "content": QUESTIONS[1]}]}, config,
                                         stream_mode="messages"):
        print(type(chunk).__name__, str(chunk.content)[:80])


def main() -> None:
    with Recording(Path(__file__).parent, REPLIES, framework="deepagents", instrumentation="openllmetry",
                   packages=PACKAGES, session_id=SESSION, notes=NOTES) as rec:
        rec.env()
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
        from opentelemetry.instrumentation.langchain import LangchainInstrumentor
        from opentelemetry.sdk.resources import Resource
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import BatchSpanProcessor

        provider = TracerProvider(resource=Resource.create({"service.name": "travel-deep-agent"}))
        provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
        LangchainInstrumentor().instrument(tracer_provider=provider)
        run()
        rec.flush(provider)


if __name__ == "__main__":
    main()
