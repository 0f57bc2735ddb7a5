"""Re-record: a sequential CrewAI crew with knowledge (`knowledge_sources`) and memory (`memory=True`), traced by
OpenInference, two kickoffs in one session, the second recalling what the first saved.

    python3 -m venv /tmp/cap-crewai_openinference_knowledge-memory && \
        /tmp/cap-crewai_openinference_knowledge-memory/bin/pip install "crewai[chromadb]==1.15.44" \
        openinference-instrumentation-crewai==1.1.21 openinference-instrumentation-openai==0.1.66 \
        opentelemetry-sdk==1.45.2 opentelemetry-exporter-otlp-proto-http==1.45.2
    /tmp/cap-crewai_openinference_knowledge-memory/bin/python \
        tests/captures/crewai_openinference_knowledge-memory/record.py

Recorded with (pip freeze, the packages that matter; also in meta.json): crewai 1.15.44, chromadb 1.5.9 (CrewAI's
`chromadb` extra: its knowledge store), lancedb 0.41.0 (its memory store), openai 2.54.0,
openinference-instrumentation-crewai 1.1.21, openinference-instrumentation-openai 0.1.66, openinference-instrumentation
0.1.72, opentelemetry-sdk 1.45.2; Python 3.11.7. Each is the newest on PyPI but openai (crewai 1.15.44 requires
`openai<3`) and chromadb (the extra pins `~=1.5.9`).

Why: real crews are given knowledge and memory, and the corpus had neither. `knowledge_sources` (two
`StringKnowledgeSource`s: the company's travel policy and a city guide) are chunked, embedded and kept in ChromaDB;
at each task CrewAI asks the agent's LLM to rewrite the task prompt as a search query (an LLM call of its own,
"The original query is: …"), searches the knowledge with it and appends the chunks found to the task prompt
("Additional Information: …"). `memory=True` is CrewAI 1.15's unified `Memory` (LanceDB, the first agent's LLM for its
analysis): before each task it recalls memories for the task's description (`RecallFlow`, a CrewAI Flow) and appends
them to the task prompt ("# Memories from past conversations: …"); after each task it asks the LLM to extract memory
statements from the task and its result (structured output), then saves them in the background (`EncodingFlow`: an
LLM call per statement for its scope, categories and importance); it also gives every agent its `Search memory` and
`Save to memory` tools. The embedder (`embedder=` on the crew, OpenAI's) is the fake LLM's `POST /v1/embeddings`,
for the knowledge and the memory alike. CrewAI's storage goes to a scratch directory (`CREWAI_STORAGE_DIR`), so each
recording starts with no memory.

Traced as `crewai_openinference_hierarchical` is: one tracer provider exporting OTLP/HTTP (protobuf, batched) to the
recorder, the crewai instrumentor (CHAIN `<crew>.kickoff`, `<flow>.kickoff`; AGENT `<role>._execute_core` per task;
TOOL `<tool>.run`) and the openai one (an LLM span per call, an EMBEDDING span per embeddings request: CrewAI 1.x
calls OpenAI through the OpenAI SDK, its native provider). CrewAI's own usage telemetry and tracing to its servers
are off. CrewAI has no session id: the session is OpenInference's `using_session` around each kickoff, the same crew
kicked off twice in it, each kickoff a turn with its own request (`inputs`, interpolated into the first task).

Turn 1: the researcher's task (its knowledge query rewritten, the policy found) asks for Lisbon's weather and a
currency conversion in one answer (two parallel native tool calls, run in CrewAI's thread pool); the conversion
raises once (CrewAI sends the model "Error executing tool: …"), the researcher asks again, then answers; its memories
are extracted and saved; the writer's task (its LLM streamed, `include_usage`) is given the researcher's output as
context, recalls the memories just saved, and writes the brief. Turn 2: the same crew asked about Lisbon again; the
researcher's task prompt holds turn 1's memories, it converts a new amount and answers; the writer writes again.
Twenty LLM calls: seven of the agents', thirteen of CrewAI's own (four query rewrites, four memory extractions, five
save analyses: the replies to CrewAI's own calls name the prompt they answer, `when`, since the analyses of a task's
statements run in parallel in the background); two traces.
"""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

from tests.captures.recording.session import Recording

MODEL = "gpt-4o-mini"
SESSION = "crew-knowledge-memory-1"
RESEARCHER, WRITER = "Travel researcher", "Trip brief writer"
REQUESTS = ["Plan a 2-day business trip to Lisbon: check the weather and what 500 EUR is in USD.",
            "Back to Lisbon next month for 3 days: what is 800 EUR in USD now?"]
POLICY = ("Acme travel policy. Hotels in Lisbon are capped at 180 EUR a night. Meals are reimbursed up to 60 EUR a "
          "day. Flights under six hours are booked in economy. Expenses are claimed in USD within 30 days.")
GUIDE = ("Lisbon city guide. Trams 28 and 12 climb to the Alfama district. The Baixa district holds most business "
         "hotels. Pack comfortable shoes: Lisbon is built on seven hills.")
# Each statement CrewAI's memory extraction is answered with; the analysis call of each names it (`when`), since
# CrewAI analyses a task's statements in parallel, in the background.
MEMORIES_1 = ["Lisbon was sunny at 24°C during the trip research.",
              "500 EUR converted to 545 USD at a rate of 1.09."]
MEMORIES_2 = ["The Lisbon trip brief recommends a Baixa hotel under the 180 EUR cap."]
MEMORIES_3 = ["800 EUR converted to 880 USD at a rate of 1.10."]
MEMORIES_4 = ["The second Lisbon brief budgets 880 USD for three days."]


def analysis(statement: str, scope: str, categories: list[str], importance: float) -> dict[str, object]:
    """CrewAI's save analysis of one extracted statement (its `MemoryAnalysis`, structured output)."""
    import json
    return {"when": statement.replace("°", "\\u00b0"),
            "text": json.dumps({"suggested_scope": scope, "categories": categories, "importance": importance,
                                "extracted_metadata": {"entities": ["Lisbon"], "dates": [], "topics": categories}}),
            "input_tokens": 240, "output_tokens": 38}


def extraction(task_text: str, statements: list[str]) -> dict[str, object]:
    """CrewAI's extraction of memory statements from a task and its result (its `ExtractedMemories`)."""
    import json
    return {"when": task_text, "text": json.dumps({"memories": statements}), "input_tokens": 310, "output_tokens": 40}


REPLIES: list[dict[str, object]] = [
    # turn 1, the researcher's task: the knowledge query rewritten, then the tool loop
    {"when": "The original query is: Plan a 2-day", "text": "Lisbon business trip policy weather currency",
     "input_tokens": 190, "output_tokens": 8},
    {"when": "Plan a 2-day business trip to Lisbon",
     "tool_calls": [{"name": "get_weather", "arguments": {"city": "Lisbon"}},
                    {"name": "convert_currency", "arguments": {"amount": 500, "source": "EUR", "target": "USD"}}],
     "input_tokens": 820, "output_tokens": 44},
    {"when": "Error executing tool",
     "tool_calls": [{"name": "convert_currency", "arguments": {"amount": 500, "source": "EUR", "target": "USD"}}],
     "input_tokens": 905, "output_tokens": 22},
    {"when": "545.0 USD",
     "text": "Thought: I now know the final answer\nFinal Answer: Lisbon is sunny, 24°C; 500 EUR is 545 USD. "
             "Policy: hotels up to 180 EUR a night, meals 60 EUR a day.",
     "input_tokens": 948, "output_tokens": 41},
    extraction("Agent: Travel researcher", MEMORIES_1),
    *(analysis(m, "/trips/lisbon", ["travel", "weather" if "sunny" in m else "currency"], 0.6) for m in MEMORIES_1),
    # turn 1, the writer's task (streamed): the knowledge query rewritten, then the brief
    {"when": "The original query is: Write", "text": "Lisbon trip brief hotel district policy",
     "input_tokens": 260, "output_tokens": 7},
    {"when": "Write a short trip brief",
     "text": "Thought: I now know the final answer\nFinal Answer: Lisbon, 2 days: sunny, 24°C. Budget 545 USD; stay "
             "in a Baixa hotel under 180 EUR a night; pack comfortable shoes.",
     "input_tokens": 1010, "output_tokens": 46},
    extraction("Agent: Trip brief writer", MEMORIES_2),
    *(analysis(m, "/trips/lisbon", ["travel", "hotels"], 0.5) for m in MEMORIES_2),
    # turn 2, the researcher's task: its prompt holds turn 1's memories
    {"when": "The original query is: Back to Lisbon", "text": "Lisbon EUR USD exchange rate policy",
     "input_tokens": 330, "output_tokens": 7},
    {"when": "Back to Lisbon next month",
     "tool_calls": [{"name": "convert_currency", "arguments": {"amount": 800, "source": "EUR", "target": "USD"}}],
     "input_tokens": 1090, "output_tokens": 21},
    {"when": "880.0 USD",
     "text": "Thought: I now know the final answer\nFinal Answer: 800 EUR is 880 USD now (it was 545 USD for 500 "
             "EUR last time); Lisbon was sunny, 24°C.",
     "input_tokens": 1130, "output_tokens": 38},
    extraction("Agent: Travel researcher", MEMORIES_3),
    *(analysis(m, "/trips/lisbon", ["travel", "currency"], 0.6) for m in MEMORIES_3),
    # turn 2, the writer's task (streamed)
    {"when": "The original query is: Write", "text": "Lisbon three day trip brief budget",
     "input_tokens": 300, "output_tokens": 6},
    {"when": "Write a short trip brief",
     "text": "Thought: I now know the final answer\nFinal Answer: Lisbon, 3 days: budget 880 USD; Baixa hotel under "
             "180 EUR a night; meals up to 60 EUR a day.",
     "input_tokens": 1180, "output_tokens": 40},
    extraction("Agent: Trip brief writer", MEMORIES_4),
    *(analysis(m, "/trips/lisbon", ["travel", "budget"], 0.5) for m in MEMORIES_4),
]
WEATHER = {"Lisbon": "sunny, 24°C"}
RATES = {("EUR", "USD"): 1.09}
PACKAGES = ["crewai", "openai", "chromadb", "lancedb", "openinference-instrumentation-crewai",
            "openinference-instrumentation-openai", "openinference-instrumentation",
            "openinference-semantic-conventions", "opentelemetry-sdk", "opentelemetry-exporter-otlp-proto-http"]


def main() -> None:
    notes = ("a sequential crew of two agents with knowledge_sources (two StringKnowledgeSources in ChromaDB) and "
             "memory=True (CrewAI 1.15's unified Memory, LanceDB), the embedder the fake's /v1/embeddings: per task "
             "a knowledge-query rewrite call, the knowledge found and the memories recalled appended to the task "
             "prompt, then a memory extraction call and an analysis call per statement saved in the background; "
             "turn 1's researcher two parallel native tool calls, convert_currency raising once and asked again; "
             "the writer's LLM streamed; two kickoffs of the same crew in one OpenInference using_session, the "
             "second recalling the first's memories")
    here = Path(__file__).resolve().parent
    with Recording(here, REPLIES, framework="crewai", instrumentation="openinference", packages=PACKAGES,
                   session_id=SESSION, notes=notes) as rec, tempfile.TemporaryDirectory() as storage:
        rec.env()
        os.environ["CREWAI_DISABLE_TELEMETRY"] = "true"  # CrewAI's own usage telemetry (to its servers)
        os.environ["CREWAI_TRACING_ENABLED"] = "false"
        os.environ["CREWAI_STORAGE_DIR"] = storage  # no memory or knowledge kept from an earlier recording
        from openinference.instrumentation import using_session
        from openinference.instrumentation.crewai import CrewAIInstrumentor
        from openinference.instrumentation.openai import OpenAIInstrumentor
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
        from opentelemetry.sdk.resources import Resource
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import BatchSpanProcessor

        provider = TracerProvider(resource=Resource.create({"service.name": "trip-brief-crew"}))
        provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
        CrewAIInstrumentor().instrument(tracer_provider=provider)
        OpenAIInstrumentor().instrument(tracer_provider=provider)

        from crewai import LLM, Agent, Crew, Process, Task
        from crewai.knowledge.source.string_knowledge_source import StringKnowledgeSource
        from crewai.tools import tool

        failures = {"convert_currency": 1}  # raises once: CrewAI sends the model "Error executing tool: …"

        @tool("get_weather")
        def get_weather(city: str) -> str:
            """The current weather in a city."""
            return WEATHER[city]

        @tool("convert_currency")
        def convert_currency(amount: float, source: str, target: str) -> str:
            """Convert an amount between currencies at today's rate."""
            if failures["convert_currency"]:
                failures["convert_currency"] -= 1
                raise ConnectionError("exchange-rate service unavailable")
            rate = RATES[(source, target)] if amount < 800 else 1.10
            return f"{round(amount * rate, 2)} {target}"

        researcher = Agent(role=RESEARCHER, goal="Research business trips: weather, money and the travel policy",
                           backstory="A travel desk analyst at Acme.", tools=[get_weather, convert_currency],
                           llm=LLM(model=MODEL))
        writer = Agent(role=WRITER, goal="Write short trip briefs within the travel policy",
                       backstory="Acme's travel desk writer.", llm=LLM(model=MODEL, stream=True))
        research = Task(description="{request}", expected_output="The weather and the amount in USD.",
                        agent=researcher)
        brief = Task(description="Write a short trip brief for the traveller from the research.",
                     expected_output="Three lines.", agent=writer, context=[research])
        crew = Crew(agents=[researcher, writer], tasks=[research, brief], process=Process.sequential,
                    knowledge_sources=[StringKnowledgeSource(content=POLICY), StringKnowledgeSource(content=GUIDE)],
                    memory=True,
                    embedder={"provider": "openai", "config": {"model_name": "text-embedding-3-small",
                                                               "api_key": "sk-fake", "api_base": rec.base_url}})
        for request in REQUESTS:
            with using_session(SESSION):
                print(crew.kickoff(inputs={"request": request}))
        rec.flush(provider)


if __name__ == "__main__":
    main()
