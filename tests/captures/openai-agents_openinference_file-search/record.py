"""Re-record: openai-agents (Responses API) with the hosted `FileSearchTool` over a vector store beside a function tool,
traced by OpenInference.

    python3 -m venv /tmp/cap-openai-agents_openinference_file-search && \
        /tmp/cap-openai-agents_openinference_file-search/bin/pip install \
        openai-agents==0.25.0 openai==3.63.0 openinference-instrumentation-openai-agents==2.6.0 \
        openinference-instrumentation==0.1.72 opentelemetry-sdk==1.45.2 opentelemetry-exporter-otlp-proto-http==1.45.2
    /tmp/cap-openai-agents_openinference_file-search/bin/python \
        tests/captures/openai-agents_openinference_file-search/record.py

A travel desk answering from the company's travel policy with two tools: `FileSearchTool(vector_store_ids=[…],
include_search_results=True)`, which the API runs itself over the vector store (the model's answer holds a
`file_search_call` item, its `queries` and `status`, and, because the request includes `file_search_call.results`,
its `results`: each chunk found, its file id, filename, score, text and attributes; the model reads them within the
same answer, nothing is sent back), and the function tool `book_hotel`, which raises `TimeoutError` the first time
(the SDK sends the model its failure_error_function's text). Two turns of one conversation, kept by an `SQLiteSession`
(the SDK re-sends the stored items, the file search's with its results among them), grouped by the RunConfig's
`group_id` and under OpenInference's `using_session` (both the session id): turn 1 `Runner.run`, the model searching
the policy and calling `book_hotel` within its cap in the same answer (the function call after the search, as the API
runs a hosted tool mid-answer), calling it again after its failure, then answering with a `file_citation` annotation
on its text; turn 2 `Runner.run_streamed`, a search of two queries and the answer citing the file it found in the same
response. Four calls. Every function call is scripted with the two ids the real Responses API gives it
(`with_api_call_ids`). Why: what the API ran itself must be a tool call of the step that made it, its queries the
arguments, and what it found (the documents, as any retrieval's) readable on it, never a step of its own nor a
result copied from the re-sent history; the file citations must stay with the answer. (The versions the capture was
recorded with are in meta.json.)
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

from tests.captures.recording.openai_agents_travel import with_api_call_ids
from tests.captures.recording.session import Recording

SESSION = "oa-oi-file-search-1"
VECTOR_STORE = "vs_travel_policy_2026"
POLICY = {"file_id": "file-7Qk2TravelPolicy2026", "filename": "travel-policy-2026.pdf"}
FAQ = {"file_id": "file-3HxeExpensesFaq", "filename": "expenses-faq.md"}
REPLIES = with_api_call_ids([
    {"file_search": [{"queries": ["hotel nightly rate cap Oslo"], "results": [
        {**POLICY, "score": 0.9271, "attributes": {"section": "4.2", "year": 2026},
         "text": "4.2 Hotels. The nightly rate may not exceed NOK 1,800 in Oslo and NOK 1,500 elsewhere in Norway, "
                 "breakfast included."},
        {**FAQ, "score": 0.7114, "attributes": {"section": "Booking"},
         "text": "Book hotels through the travel desk; a rate above the policy cap needs your manager's approval."}]}],
     "tool_calls": [{"name": "book_hotel", "arguments": {"city": "Oslo", "nights": 2, "max_rate": 1800}}]},
    {"tool_calls": [{"name": "book_hotel", "arguments": {"city": "Oslo", "nights": 2, "max_rate": 1800}}]},
    {"text": "Booked Hotel Nord in Oslo for 2 nights at NOK 1,650 a night (ref OSL-42), within the policy's "
             "cap of NOK 1,800 a night in Oslo.",
     "citations": [{"cited": "within the policy's cap of NOK 1,800 a night in Oslo", **POLICY}]},
    {"file_search": [{"queries": ["airport train reimbursement", "ground transport to the airport"], "results": [
        {**FAQ, "score": 0.8843, "attributes": {"section": "Ground transport"},
         "text": "The Flytoget airport train is reimbursed in full; taxis only when no train runs. Keep the receipt."},
        {**POLICY, "score": 0.6408, "attributes": {"section": "5.1", "year": 2026},
         "text": "5.1 Ground transport. Use public transport where it is reasonable."}]}],
     "text": "Yes: the Flytoget airport train is reimbursed in full, so keep the receipt.",
     "citations": [{"cited": "the Flytoget airport train is reimbursed in full", **FAQ}]},
], SESSION)
QUESTIONS = ["Book me a hotel in Oslo for 2 nights within our travel policy.",
             "Can I expense the airport train?"]


def main() -> None:
    with Recording(Path(__file__).parent, REPLIES, framework="openai-agents", instrumentation="openinference",
                   packages=["openai-agents", "openai", "openinference-instrumentation-openai-agents",
                             "openinference-instrumentation", "opentelemetry-sdk",
                             "opentelemetry-exporter-otlp-proto-http"],
                   session_id=SESSION,
                   notes="Responses API; hosted FileSearchTool (vector_store_ids, include_search_results=True: each "
                         "file_search_call carries its results) beside a function tool: turn 1 (run) a file search "
                         "and book_hotel in one answer, book_hotel raising once and called again, an answer with a "
                         "file_citation; turn 2 (run_streamed) a file search of two queries and the answer citing it "
                         "in one response; SQLiteSession memory, RunConfig group_id, OpenInference using_session; "
                         "function_call item ids (fc_) distinct from their call_ids (call_)") as rec:
        rec.env()
        from agents import Agent, FileSearchTool, RunConfig, Runner, SQLiteSession, function_tool
        from openinference.instrumentation import using_session
        from openinference.instrumentation.openai_agents import OpenAIAgentsInstrumentor
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
        from opentelemetry.sdk.resources import Resource
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import BatchSpanProcessor

        provider = TracerProvider(resource=Resource.create({"service.name": "travel-desk"}))
        provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
        OpenAIAgentsInstrumentor().instrument(tracer_provider=provider)  # replaces the SDK's own exporter

        failures = {"book_hotel": 1}

        @function_tool
        def book_hotel(city: str, nights: int, max_rate: int) -> str:
            """Book a hotel room at no more than `max_rate` NOK a night."""
            if failures["book_hotel"]:
                failures["book_hotel"] -= 1
                raise TimeoutError("the booking service did not answer in time")
            return f"Booked Hotel Nord in {city}, {nights} nights at NOK 1,650 (cap {max_rate}), ref OSL-42"

        desk = Agent(name="Travel desk", model="gpt-4o",
                     instructions="You book business trips. Check the travel policy's files before you answer, and "
                                  "cite them.",
                     tools=[FileSearchTool(vector_store_ids=[VECTOR_STORE], max_num_results=2,
                                           include_search_results=True), book_hotel])
        memory = SQLiteSession(SESSION)
        config = RunConfig(group_id=SESSION)

        async def run() -> None:
            with using_session(SESSION):
                first = await Runner.run(desk, QUESTIONS[0], session=memory, run_config=config)
                second = Runner.run_streamed(desk, QUESTIONS[1], session=memory, run_config=config)
                async for _event in second.stream_events():
                    pass
            print(first.final_output, second.final_output, sep="\n")

        asyncio.run(run())
        rec.flush(provider)


if __name__ == "__main__":
    main()
