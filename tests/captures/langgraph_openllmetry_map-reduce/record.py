"""Re-record: the LangGraph map-reduce graph of `langgraph_openinference_map-reduce` (a planner node fanning out with
`Send` to three parallel research branches, a node combining their findings) on `ChatOpenAI` (Chat Completions),
checkpointed (`InMemorySaver`, a `thread_id`), traced instead by OpenLLMetry (opentelemetry-instrumentation-langchain).

    python3 -m venv /tmp/cap-langgraph_openllmetry_map-reduce && \
        /tmp/cap-langgraph_openllmetry_map-reduce/bin/pip install \
        langgraph==1.2.24 langgraph-checkpoint==4.3.2 langgraph-prebuilt==1.1.3 langchain-core==1.8.3 \
        langchain-protocol==0.0.20 langchain-openai==1.8.1 openai==3.63.0 \
        opentelemetry-instrumentation-langchain==0.62.4 opentelemetry-semantic-conventions-ai==0.5.1 \
        opentelemetry-sdk==1.45.2 opentelemetry-exporter-otlp-proto-http==1.45.2
    /tmp/cap-langgraph_openllmetry_map-reduce/bin/python tests/captures/langgraph_openllmetry_map-reduce/record.py

The newest release of each, but langchain-core: 1.8.4 needs langchain-protocol >= 0.0.22, which the package index
here does not have (0.0.20 is its newest): 1.8.3, as the other LangGraph captures.

Why: LangGraph's map-reduce pattern ("Map-reduce" in the Graph API docs: a conditional edge returning `Send`s, a
reducer collecting the branches' writes), whose branches run concurrently, each a model call of its own on a
conversation of its own, none re-sending another's: the same graph, scenario and scripted replies as
`langgraph_openinference_map-reduce`, so that the two LangChain tracers' records of one run can be read side by side.

OpenLLMetry's LangChain instrumentation is set up as its README shows (`LangchainInstrumentor().instrument(
tracer_provider=…)`); the session is given as the other OpenLLMetry LangGraph captures give it: run metadata
(`config["metadata"]["session_id"]`, the thread id), which the instrumentation records as
`traceloop.association.properties.session_id` (it records the configurable `thread_id` LangGraph copies into a run's
metadata as `traceloop.association.properties.thread_id`, which names no session in any convention evalkit reads).

The graph (`trip_researcher`): the `plan` node asks the model (its own system prompt, then the thread's messages)
for the question's subtopics, a JSON list; a conditional edge sends each subtopic to the `research` node (a `Send`
with the subtopic and the question: the branch's own state); `research` asks the model about its subtopic (its own
system prompt and a human message naming the subtopic), offering two tools, and runs the tool calls the model makes
until it answers (LangChain's tool-calling loop: `tool.invoke(tool_call)` gives the ToolMessage); its finding goes to
`findings` (a reducer adding the branches' lists; the planner empties it for each turn); `combine` asks the model to
combine the findings (its system prompt, the thread's messages, then the findings as a human message) and its answer
is the thread's next message. `get_forecast` raises a `ToolException` once, handled as LangChain's tools docs show
(`StructuredTool.from_function(..., handle_tool_error=True)`: the exception's text is the ToolMessage the model is
sent, `status="error"`).

The branches run at once, so the fake LLM matches each reply to its request (`when`: a text of the request's last
message): each branch's answers are its own whatever order the requests come in.

Turn 1 (`invoke`): the planner answers three subtopics; the weather branch calls get_forecast and get_sunset in
parallel, get_forecast raising once, calls get_forecast again, answers; the food and getting-around branches answer
at once; `combine` answers. Turn 2, same thread, streamed (`stream(…, stream_mode="messages")`, which makes every
model call stream; `ChatOpenAI(stream_usage=True)` so the streamed calls report tokens): the planner, seeing turn 1's
question and answer, answers two subtopics; both branches answer; `combine` answers. Eleven LLM calls. (The versions
the capture was recorded with are in meta.json.)
"""

# No `from __future__ import annotations`: LangGraph reads the state classes' and nodes' annotations at run time,
# and those classes are made inside `run` (the framework imported only there).
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

from tests.captures.recording.session import Recording

SESSION = "lg-ll-map-reduce-1"
QUESTIONS = ["I'm spending a weekend in Lisbon. What should I plan for?",
             "And what if it rains on Saturday?"]
REPLIES: list[dict[str, Any]] = [
    # turn 1: the planner
    {"when": "weekend in Lisbon. What should I plan", "text": '["weather", "food", "getting around"]'},
    # the weather branch: two tools in parallel, get_forecast raising once, then again, then its finding
    {"when": "Subtopic: weather", "tool_calls": [{"name": "get_forecast", "arguments": {"city": "Lisbon",
                                                                                          "day": "Saturday"}},
                                                 {"name": "get_sunset", "arguments": {"city": "Lisbon"}}]},
    {"when": "Sunset in Lisbon", "tool_calls": [{"name": "get_forecast", "arguments": {"city": "Lisbon",
                                                                                        "day": "Saturday"}}]},
    {"when": "sunny, 27C", "text": "Saturday in Lisbon looks sunny at 27°C, with sunset at 20:45: keep the "
                                   "afternoon for the viewpoints."},
    {"when": "Subtopic: food", "text": "Try pastéis de nata at Manteigaria and grilled sardines in Alfama."},
    {"when": "Subtopic: getting around", "text": "Buy a Viva Viagem card: tram 28 and the metro cover the centre."},
    # the reduce
    {"when": "- weather: Saturday", "text": "For your Lisbon weekend: Saturday is sunny (27°C, sunset 20:45), "
                                               "so save the afternoon for the viewpoints; eat pastéis de nata at "
                                               "Manteigaria and sardines in Alfama; get a Viva Viagem card for tram "
                                               "28 and the metro."},
    # turn 2 (streamed): the planner sees turn 1's question and answer
    {"when": "rains on Saturday", "text": '["indoor sights", "rainy-day food"]'},
    {"when": "Subtopic: indoor sights", "text": "The Gulbenkian Museum and the Oceanário fill a rainy Saturday."},
    {"when": "Subtopic: rainy-day food", "text": "Time Out Market is covered: lunch there."},
    {"when": "- indoor sights:", "text": "If it rains on Saturday, spend it at the Gulbenkian Museum and "
                                               "the Oceanário, and have lunch at the covered Time Out Market."},
]
PACKAGES = ["langgraph", "langgraph-checkpoint", "langgraph-prebuilt", "langchain-core", "langchain-protocol",
            "langchain-openai", "openai", "opentelemetry-instrumentation-langchain",
            "opentelemetry-semantic-conventions-ai", "opentelemetry-sdk", "opentelemetry-exporter-otlp-proto-http"]
NOTES = ("a StateGraph map-reduce (trip_researcher): plan asks the model for subtopics, a conditional edge Sends each "
         "to research (parallel branches, each its own model conversation, tools offered), combine asks the model to "
         "combine the findings (a reducer). InMemorySaver, thread_id; OpenLLMetry's LangchainInstrumentor, the session "
         "the thread id as run metadata (config metadata session_id). Turn 1 invoke: "
         "three branches, the weather one calling get_forecast and get_sunset in parallel, get_forecast raising a "
         "ToolException once (handle_tool_error=True sends its text), retried; turn 2 stream_mode='messages' "
         "(stream_usage=True): two branches. Replies matched to requests by their last message (when)")


def run() -> None:
    import json
    from typing import Annotated, TypedDict

    from langchain_core.messages import BaseMessage, HumanMessage, SystemMessage
    from langchain_core.tools import StructuredTool, ToolException, tool
    from langchain_openai import ChatOpenAI
    from langgraph.checkpoint.memory import InMemorySaver
    from langgraph.graph import END, START, MessagesState, StateGraph
    from langgraph.types import Send

    model = ChatOpenAI(model="gpt-4o", stream_usage=True, timeout=30)
    failures = {"get_forecast": 1}

    def get_forecast(city: str, day: str) -> str:
        """The weather forecast for a city on a day."""
        if failures["get_forecast"]:
            failures["get_forecast"] -= 1
            raise ToolException("the forecast service timed out")
        return f"{city} on {day}: sunny, 27C"

    @tool
    def get_sunset(city: str) -> str:
        """Today's sunset time in a city."""
        return f"Sunset in {city} at 20:45"

    tools = [StructuredTool.from_function(func=get_forecast, handle_tool_error=True), get_sunset]
    tools_by_name = {t.name: t for t in tools}
    researcher = model.bind_tools(tools)

    def collect_findings(current: list[str], update: list[str] | None) -> list[str]:
        """The branches' findings added up; the planner's None starts a turn's afresh."""
        return [] if update is None else current + update

    class TripState(MessagesState):
        subtopics: list[str]
        findings: Annotated[list[str], collect_findings]

    class ResearchTask(TypedDict):
        subtopic: str
        question: str

    def plan(state: TripState) -> dict[str, Any]:
        answer = model.invoke([SystemMessage("You plan travel research. Answer with a JSON list of the subtopics "
                                             "to research for the traveller's last question."), *state["messages"]])
        return {"subtopics": json.loads(answer.text), "findings": None}

    def fan_out(state: TripState) -> list[Send]:
        question = state["messages"][-1].text
        return [Send("research", {"subtopic": subtopic, "question": question}) for subtopic in state["subtopics"]]

    def research(task: ResearchTask) -> dict[str, Any]:
        messages: list[BaseMessage] = [
            SystemMessage("You research one subtopic of a trip. Use the tools when they help. Answer in one "
                          "sentence."),
            HumanMessage(f"Subtopic: {task['subtopic']}\nTraveller's question: {task['question']}")]
        while True:
            answer = researcher.invoke(messages)
            messages.append(answer)
            if not answer.tool_calls:
                return {"findings": [f"{task['subtopic']}: {answer.text}"]}
            messages.extend(tools_by_name[call["name"]].invoke(call) for call in answer.tool_calls)

    def combine(state: TripState) -> dict[str, Any]:
        findings = "\n".join(f"- {finding}" for finding in state["findings"])
        answer = model.invoke([SystemMessage("You answer travellers from research findings, in a few sentences."),
                               *state["messages"],
                               HumanMessage(f"Combine these findings into one answer:\n{findings}")])
        return {"messages": [answer]}

    graph = StateGraph(TripState)
    graph.add_node("plan", plan)
    graph.add_node("research", research)
    graph.add_node("combine", combine)
    graph.add_edge(START, "plan")
    graph.add_conditional_edges("plan", fan_out, ["research"])
    graph.add_edge("research", "combine")
    graph.add_edge("combine", END)
    app = graph.compile(checkpointer=InMemorySaver(), name="trip_researcher")

    # OpenLLMetry records run metadata as association properties: `session_id` is the one naming the session.
    config: Any = {"configurable": {"thread_id": SESSION}, "metadata": {"session_id": SESSION}}
    first = app.invoke({"messages": [HumanMessage(QUESTIONS[0])]}, config)
    print(first["messages"][-1].text)
    for chunk, metadata in app.stream({"messages": [HumanMessage(QUESTIONS[1])]}, config, stream_mode="messages"):
        print(metadata.get("langgraph_node"), type(chunk).__name__, str(chunk.content)[:80])


def main() -> None:
    with Recording(Path(__file__).parent, REPLIES, framework="langgraph", instrumentation="openllmetry",
                   packages=PACKAGES, session_id=SESSION, notes=NOTES) as rec:
        rec.env()
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
        from opentelemetry.instrumentation.langchain import LangchainInstrumentor
        from opentelemetry.sdk.resources import Resource
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import BatchSpanProcessor

        provider = TracerProvider(resource=Resource.create({"service.name": "trip-researcher"}))
        provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
        LangchainInstrumentor().instrument(tracer_provider=provider)
        run()
        rec.flush(provider)


if __name__ == "__main__":
    main()
