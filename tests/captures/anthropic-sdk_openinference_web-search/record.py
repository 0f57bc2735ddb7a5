"""Re-record: the Anthropic Python SDK with Anthropic's web search server tool, traced by OpenInference.

    python3 -m venv /tmp/cap-anthropic-sdk_openinference_web-search && \
        /tmp/cap-anthropic-sdk_openinference_web-search/bin/pip install \
        anthropic==2.17.0 openinference-instrumentation-anthropic==3.1.0 openinference-instrumentation==0.1.72 \
        openinference-semantic-conventions==0.1.42 opentelemetry-sdk==1.45.2 \
        opentelemetry-exporter-otlp-proto-http==1.45.2
    /tmp/cap-anthropic-sdk_openinference_web-search/bin/python \
        tests/captures/anthropic-sdk_openinference_web-search/record.py

Anthropic's server tools as its docs show them: the request's `tools` hold `{"type": "web_search_20250305", "name":
"web_search", "max_uses": 3}` beside two client tools. The API runs the search itself, within the answer: the answer
holds a `server_tool_use` block (the query), a `web_search_tool_result` block (the `web_search_result` items found:
url, title, encrypted_content, page_age), then its text split around each cited passage, a cited passage's block
carrying its `web_search_result_location` citations (url, title, cited_text, encrypted_index), and
`usage.server_tool_use.web_search_requests` counts the searches. The loop re-sends every block of an answer unchanged as
the next request's assistant message (the docs: the encrypted content and indices must come back for citations to
stay valid).

Two user turns of one session (`using_session`), each its own trace under an application AGENT span, the client tools
`OITracer.tool` TOOL spans. Turn one (`messages.create`): the model searches for a jazz concert, answers with a cited
passage and calls `book_tickets` and `get_weather` in parallel; `book_tickets` raises (the box office times out) and
the loop sends the model a `tool_result` with `is_error: true`; the model says it retries and calls `book_tickets`
again, which books; then it answers. Turn two (`messages.stream`, read to the end: the search's query arrives as
`input_json_delta`, each `web_search_tool_result` whole in its `content_block_start`, each citation a
`citations_delta`): the model searches twice (the concert's end, the last ferry) and answers citing both. Four model
calls, three searches. As in the other OpenInference captures the application's tracer provider is passed to the
instrumentor only, so the SDK's own tracing (on by default) goes to the no-op global provider.
These are the newest releases on PyPI (anthropic 2.17.0, openinference-instrumentation-anthropic 3.1.0); the versions
recorded are in meta.json.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

from tests.captures.recording.session import Recording

MODEL = "claude-sonnet-4-5"
SESSION_ID = "oi-anthropic-web-search-1"
SYSTEM = "You are a terse city-break assistant. Search the web for what is on; use the tools to book and for weather."
QUESTIONS = ["Is there a jazz concert in Lisbon this Saturday? If so book 2 tickets, and what's the weather?",
             "Can I get a ferry back to Cacilhas after it?"]
HOT_CLUBE = {"url": "https://hcp.pt/agenda", "title": "Agenda | Hot Clube de Portugal", "page_age": "2 days ago"}
JAZZ_EM_AGOSTO = {"url": "https://gulbenkian.pt/jazzemagosto", "title": "Jazz em Agosto | Gulbenkian",
                  "page_age": "3 weeks ago"}
TRANSTEJO = {"url": "https://ttsl.pt/horarios/cais-do-sodre-cacilhas", "title": "Cais do Sodré - Cacilhas | Transtejo",
             "page_age": "1 month ago"}
REPLIES = [
    {"web_search": [{"query": "Lisbon jazz concert this Saturday", "results": [HOT_CLUBE, JAZZ_EM_AGOSTO]}],
     "text": "Yes: the Lisbon Jazz Quartet plays Hot Clube de Portugal on Saturday at 22:00. Booking and checking the "
             "weather.",
     "citations": [{**HOT_CLUBE, "cited": "the Lisbon Jazz Quartet plays Hot Clube de Portugal on Saturday at 22:00",
                    "cited_text": "Sat 22:00 - Lisbon Jazz Quartet. Tickets 15 EUR at the door or online."}],
     "tool_calls": [{"name": "book_tickets", "arguments": {"event": "Lisbon Jazz Quartet, Hot Clube", "count": 2}},
                    {"name": "get_weather", "arguments": {"city": "Lisbon"}}]},
    {"text": "The box office timed out; trying again.",
     "tool_calls": [{"name": "book_tickets", "arguments": {"event": "Lisbon Jazz Quartet, Hot Clube", "count": 2}}]},
    {"text": "Booked 2 tickets for the Lisbon Jazz Quartet at Hot Clube, Saturday 22:00 (ref HCP-7). Saturday: clear, "
             "19°C."},
    {"web_search": [{"query": "Hot Clube de Portugal Saturday concert end time", "results": [HOT_CLUBE]},
                    {"query": "last ferry Cais do Sodré to Cacilhas Saturday night", "results": [TRANSTEJO]}],
     "text": "Yes. The concert ends around 00:30 and the last ferry to Cacilhas leaves Cais do Sodré at 01:40, a "
             "10-minute walk away.",
     "citations": [{**HOT_CLUBE, "cited": "The concert ends around 00:30",
                    "cited_text": "Two sets, 22:00 and 23:30; doors close at 00:30."},
                   {**TRANSTEJO, "cited": "the last ferry to Cacilhas leaves Cais do Sodré at 01:40",
                    "cited_text": "Saturdays: last departure from Cais do Sodré 01:40."}]},
]
WEATHER = {"Lisbon": "clear, 19°C"}
TOOLS = [
    {"type": "web_search_20250305", "name": "web_search", "max_uses": 3},
    {"name": "get_weather", "description": "The weather in a city",
     "input_schema": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}},
    {"name": "book_tickets", "description": "Book tickets for an event",
     "input_schema": {"type": "object", "properties": {"event": {"type": "string"}, "count": {"type": "integer"}},
                      "required": ["event", "count"]}},
]
PACKAGES = ["anthropic", "openinference-instrumentation-anthropic", "openinference-instrumentation",
            "openinference-semantic-conventions", "opentelemetry-sdk", "opentelemetry-exporter-otlp-proto-http"]
NOTES = ("Anthropic's web_search server tool (web_search_20250305, max_uses 3) beside two client tools: each search a "
         "server_tool_use block and its web_search_tool_result (web_search_result items) in the answer, the text split "
         "around each cited passage with its web_search_result_location citations, usage.server_tool_use."
         "web_search_requests; every answer's blocks re-sent unchanged as the next request's assistant message. Two "
         "turns of one session (two traces, an application AGENT span each, OITracer.tool spans): turn one "
         "messages.create, a search and a cited answer with book_tickets and get_weather in parallel, book_tickets "
         "raising (sent back as an is_error tool_result), then retried with text, then the answer; turn two "
         "messages.stream (input_json_delta for the query, web_search_tool_result whole in content_block_start, "
         "citations_delta), two searches and an answer citing both. The SDK's own tracing uses the global tracer "
         "provider, which this app does not set: none of its spans are exported")


def main() -> None:
    with Recording(Path(__file__).parent, REPLIES, framework="anthropic-sdk", instrumentation="openinference",
                   packages=PACKAGES, session_id=SESSION_ID, notes=NOTES) as rec:
        rec.env()
        import anthropic
        from openinference.instrumentation import OITracer, TraceConfig, using_session
        from openinference.instrumentation.anthropic import AnthropicInstrumentor
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
        from opentelemetry.sdk.resources import Resource
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import BatchSpanProcessor

        provider = TracerProvider(resource=Resource.create({"service.name": "city-break-bot"}))
        provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
        AnthropicInstrumentor().instrument(tracer_provider=provider)
        tracer = OITracer(provider.get_tracer("city-break-bot"), config=TraceConfig())
        failures = {"book_tickets": 1}

        @tracer.tool(name="get_weather")
        def get_weather(city: str) -> str:
            return WEATHER[city]

        @tracer.tool(name="book_tickets")
        def book_tickets(event: str, count: int) -> str:
            if failures["book_tickets"]:
                failures["book_tickets"] -= 1
                raise TimeoutError("the box office did not answer in time")
            return f"Booked {count} tickets for {event}, ref HCP-7"

        functions: dict[str, Any] = {"get_weather": get_weather, "book_tickets": book_tickets}
        client = anthropic.Anthropic()

        def ask(streamed: bool, **request: Any) -> Any:
            if not streamed:
                return client.messages.create(**request)
            with client.messages.stream(**request) as stream:
                for event in stream:  # input_json_delta, text_delta, citations_delta
                    if event.type == "citation":
                        print("cited:", event.citation.url)
                return stream.get_final_message()

        def run_tool(block: Any) -> dict[str, Any]:
            try:
                return {"type": "tool_result", "tool_use_id": block.id,
                        "content": functions[block.name](**block.input)}
            except Exception as exc:  # the model is told, as a real loop would
                return {"type": "tool_result", "tool_use_id": block.id, "is_error": True,
                        "content": f"{type(exc).__name__}: {exc}"}

        messages: list[dict[str, Any]] = []
        for turn, question in enumerate(QUESTIONS):
            messages.append({"role": "user", "content": question})
            with using_session(SESSION_ID), tracer.start_as_current_span(
                    "city-break-bot", openinference_span_kind="agent") as agent:
                agent.set_input(question)
                while True:
                    answer = ask(turn == 1, model=MODEL, max_tokens=1024, system=SYSTEM, messages=messages,
                                 tools=TOOLS)
                    # Every block back, the search results' encrypted content and the citations' indices with them.
                    messages.append({"role": "assistant",
                                     "content": [b.model_dump(exclude_none=True) for b in answer.content]})
                    # Only the client tools are the loop's to run: the API ran the searches (server_tool_use).
                    uses = [b for b in answer.content if b.type == "tool_use"]
                    if not uses:
                        break
                    messages.append({"role": "user", "content": [run_tool(b) for b in uses]})
                agent.set_output("".join(b.text for b in answer.content if b.type == "text"))
        rec.flush(provider)


if __name__ == "__main__":
    main()
