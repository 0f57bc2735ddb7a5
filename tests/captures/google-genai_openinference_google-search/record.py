"""Re-record: a Google Gen AI SDK chat (Gemini) grounded with Google Search, and with function tools, traced by
OpenInference.

    python3 -m venv /tmp/cap-google-genai_openinference_google-search && \
        /tmp/cap-google-genai_openinference_google-search/bin/pip install \
        google-genai==3.6.1 openinference-instrumentation-google-genai==1.4.14 openinference-instrumentation==0.1.72 \
        openinference-semantic-conventions==0.1.42 opentelemetry-sdk==1.45.2 \
        opentelemetry-exporter-otlp-proto-http==1.45.2
    /tmp/cap-google-genai_openinference_google-search/bin/python \
        tests/captures/google-genai_openinference_google-search/record.py

Gemini's Google Search grounding (`types.Tool(google_search=types.GoogleSearch())`): the API searches the web itself
while it answers, and says so in the candidate's `groundingMetadata`, not in its content: `webSearchQueries` (what it
searched for), `groundingChunks` (the pages it used: a grounding redirect `uri` and the page's domain as `title`),
`groundingSupports` (each passage of the answer's text, by its UTF-8 byte offsets and text, and the indices of the
chunks that support it) and `searchEntryPoint` (the Search Suggestions HTML the API's terms ask an application to
show). The fake LLM answers so (`Reply.web_searches`, `Reply.citations`), streamed or not (streamed, the metadata in
the last chunk, as the API sends it).

Two instrumentations were tried with this run. OpenInference's (this capture) writes a call's output messages from
the candidate's content alone, so the search is in no message, but `output.value` is the whole response: the
SDK's `model_dump_json` for a call, and for a stream the chunks merged (its accumulator keeps every key it does not
know, `grounding_metadata` among them), so the queries, pages, supports and entry point are all on the span.
OpenTelemetry's `opentelemetry-instrumentation-google-genai` 1.3b0 (google-genai 2.34.0, the newest it instruments)
writes `gen_ai.output.messages` from the candidate's content parts alone and records no response dump, so a grounded
answer is its text and nothing else: the search, what it found and the citations are in no span or log record. The
run with it is described in meta.json's notes.

`GoogleGenAIInstrumentor().instrument(tracer_provider=…)` as its README sets it up; the session OpenInference's own
(`using_session`), no application span (each call a trace of its own). The application is one
`client.chats.create` chat over three turns. The Gemini API refuses `google_search` beside function declarations in
one gemini-2.5 request (combining them is Gemini 3's, behind `include_server_side_tool_invocations`, whose answers
hold `toolCall` / `toolResponse` parts instead), so the chat's turns name their tools per message
(`send_message(…, config=…)`, the system instruction in both configs): turn one (`send_message`), Google Search
only: a grounded answer, two queries, three pages, two cited passages (one cited by two pages); turn two
(`send_message`), two Python functions with automatic function calling (the SDK runs them, no tool spans): two
parallel calls, the weather service timing out once (sent back as `{"error": …}`), the model asking again, then the
answer; turn three (`send_message_stream`, streamed), Google Search again: a grounded answer citing one query's two
pages, the metadata in the stream's last chunk.

google-genai 3.6.1 and openinference-instrumentation-google-genai 1.4.14, the newest of both. The client is pointed at
the fake with `http_options={"base_url": …, "api_version": "v1beta"}` (google-genai 3 defaults to `v1`, which the
fake does not serve). (The versions the capture was recorded with are in meta.json.)
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

from tests.captures.recording.session import Recording

SESSION = "oi-genai-grounded-1"
MODEL = "gemini-2.5-flash"
SYSTEM = "You are a concise Lisbon travel assistant. Ground what changes from year to year in a web search."
QUESTIONS = ["When is the Lisbon Book Fair this year, and what is on?",
             "Will the weather suit the fair on Saturday, and when does it open?",
             "Is there a ferry across the Tagus back from Cacilhas on Saturday night?"]
_REDIRECT = "https://vertexaisearch.cloud.google.com/grounding-api-redirect/"
FAIR = [{"url": _REDIRECT + "AUZIYQE1feira", "title": "feiradolivrodelisboa.pt"},
        {"url": _REDIRECT + "AUZIYQG7visit", "title": "visitlisboa.com"},
        {"url": _REDIRECT + "AUZIYQH2apel", "title": "apel.pt"}]
FERRY = [{"url": _REDIRECT + "AUZIYQK9ttsl", "title": "ttsl.pt"},
         {"url": _REDIRECT + "AUZIYQM4lisb", "title": "lisbonlisboaportugal.com"}]
# A dash and a cedilla before the cited passages: the supports' byte offsets are not their character offsets.
FAIR_ANSWER = ("The Feira do Livro de Lisboa — Portugal's largest book fair — runs from 28 May to 15 June in Parque "
               "Eduardo VII. Over 350 publishers have stalls, and the Praça Laranja stage hosts author talks every "
               "evening.")
FERRY_ANSWER = ("Yes — Transtejo ferries leave Cacilhas for Cais do Sodré every 20 to 30 minutes on Saturday nights, "
                "the last one at 01:40. The crossing takes about 10 minutes and costs €1.45 with a Navegante card.")
REPLIES = [
    {"text": FAIR_ANSWER,
     "web_search": [{"query": "Feira do Livro de Lisboa 2026 dates", "results": FAIR[:2]},
                    {"query": "Lisbon Book Fair programme", "results": FAIR[1:]}],
     "citations": [{"cited": "runs from 28 May to 15 June in Parque Eduardo VII", "urls": [FAIR[0]["url"],
                                                                                           FAIR[1]["url"]]},
                   {"cited": "the Praça Laranja stage hosts author talks every evening", "url": FAIR[2]["url"]}]},
    {"tool_calls": [{"name": "get_weather", "arguments": {"city": "Lisbon", "day": "Saturday"}},
                    {"name": "get_opening_hours", "arguments": {"venue": "Feira do Livro de Lisboa",
                                                                "day": "Saturday"}}]},
    {"text": "The weather service timed out; asking again.",
     "tool_calls": [{"name": "get_weather", "arguments": {"city": "Lisbon", "day": "Saturday"}}]},
    {"text": "Saturday looks good: sunny and 24°C. The fair is open from 11:00 to 23:00."},
    {"text": FERRY_ANSWER, "when": "ferry",
     "web_search": [{"query": "Cacilhas Cais do Sodré ferry Saturday night timetable", "results": FERRY}],
     "citations": [{"cited": "the last one at 01:40", "url": FERRY[0]["url"]},
                   {"cited": "costs €1.45 with a Navegante card", "urls": [FERRY[0]["url"], FERRY[1]["url"]]}]},
]
WEATHER = {("Lisbon", "Saturday"): "sunny, 24°C"}
OPENING_HOURS = {("Feira do Livro de Lisboa", "Saturday"): "11:00-23:00"}
PACKAGES = ["google-genai", "openinference-instrumentation-google-genai", "openinference-instrumentation",
            "openinference-semantic-conventions", "opentelemetry-sdk", "opentelemetry-exporter-otlp-proto-http"]
OTEL_TRIAL = ("opentelemetry-instrumentation-google-genai 1.3b0 (with google-genai 2.34.0, opentelemetry-util-genai "
              "1.3b0, content SPAN_AND_EVENT) was run with this script's chat and replies: its spans' and log "
              "records' gen_ai.output.messages hold the grounded answers' text alone, and nothing else of the "
              "response is recorded: no query, page, support or entry point in any span or log record, so it was not "
              "committed")

_timeouts_left = {"get_weather": 1}  # the weather service times out on its first request


def get_weather(city: str, day: str) -> str:
    """The weather forecast for a city on a day of this week."""
    if _timeouts_left["get_weather"]:
        _timeouts_left["get_weather"] -= 1
        raise TimeoutError("the weather service did not answer within 5 s")
    return WEATHER[(city, day)]


def get_opening_hours(venue: str, day: str) -> str:
    """A venue's opening hours on a day of this week, HH:MM-HH:MM."""
    return OPENING_HOURS[(venue, day)]


def main() -> None:
    notes = ("a chats.create chat over three turns, the tools named per message (gemini-2.5 refuses google_search "
             "beside function declarations in one request), all in using_session, no application span: "
             "send_message with Google Search, a grounded answer (two queries, three pages, two supports); "
             "send_message with two Python functions (automatic function calling, no tool spans), two parallel "
             "calls, get_weather raising TimeoutError once ({\"error\": …}) and asked again, then the answer; "
             "send_message_stream with Google Search, a grounded answer streamed, its groundingMetadata in the last "
             "chunk. " + OTEL_TRIAL)
    with Recording(Path(__file__).parent, REPLIES, framework="google-genai",
                   instrumentation="openinference-instrumentation-google-genai", packages=PACKAGES,
                   session_id=SESSION, notes=notes) as rec:
        rec.env()
        from google import genai
        from google.genai import types
        from openinference.instrumentation import using_session
        from openinference.instrumentation.google_genai import GoogleGenAIInstrumentor
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
        from opentelemetry.sdk.resources import Resource
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import BatchSpanProcessor

        provider = TracerProvider(resource=Resource.create({"service.name": "lisbon-guide"}))
        provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
        GoogleGenAIInstrumentor().instrument(tracer_provider=provider)

        # google-genai 3 talks to the Gemini API's v1 by default; the fake serves v1beta, as 2.x's default.
        client = genai.Client(api_key="fake", http_options=types.HttpOptions(
            base_url=rec.base_url.removesuffix("/v1") + "/", api_version="v1beta"))
        search = types.GenerateContentConfig(system_instruction=SYSTEM,
                                             tools=[types.Tool(google_search=types.GoogleSearch())])
        functions = types.GenerateContentConfig(system_instruction=SYSTEM, tools=[get_weather, get_opening_hours])
        chat = client.chats.create(model=MODEL, config=search)
        with using_session(SESSION):
            grounded = chat.send_message(QUESTIONS[0])
            print(grounded.text)
            metadata = grounded.candidates[0].grounding_metadata if grounded.candidates else None
            print("  searched:", metadata.web_search_queries if metadata else None)
            print(chat.send_message(QUESTIONS[1], config=functions).text)
            for chunk in chat.send_message_stream(QUESTIONS[2], config=search):
                print(chunk.text or "", end="", flush=True)
            print()
        rec.flush(provider)


if __name__ == "__main__":
    main()
