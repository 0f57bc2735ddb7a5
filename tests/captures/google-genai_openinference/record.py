"""Re-record: a Google Gen AI SDK chat (Gemini) with automatic function calling, traced by OpenInference.

    python3 -m venv /tmp/cap-google-genai_openinference && /tmp/cap-google-genai_openinference/bin/pip install \
        google-genai==3.6.1 openinference-instrumentation-google-genai==1.4.14 openinference-instrumentation==0.1.72 \
        openinference-semantic-conventions==0.1.42 opentelemetry-sdk==1.45.2 \
        opentelemetry-exporter-otlp-proto-http==1.45.2
    /tmp/cap-google-genai_openinference/bin/python tests/captures/google-genai_openinference/record.py

`openinference-instrumentation-google-genai` as its README sets it up (`GoogleGenAIInstrumentor().instrument(
tracer_provider=…)`, the application's provider, not made global): one LLM span, `GenerateContent`, per
`Models.generate_content` and `generate_content_stream` call, its input messages from the call's arguments
(the system instruction first), `input.value` the request the SDK serialised, its output from the response.
The session is OpenInference's own: both turns inside `using_session(…)`, which puts `session.id` on every
span the instrumentation starts; there is no application span, so each call is a trace of its own.

The application is a `client.chats.create` chat with a system instruction and two Python functions as
tools: automatic function calling on (the SDK's default for callables), so the SDK runs the tools itself
and sends their results back in `functionResponse` parts (`{"result": …}`, or `{"error": str(exception)}`
for a tool that raised: google-genai's `_extra_utils.get_function_response_parts`), no ids (the fake
answers as gemini-2.5 does: function calls without ids). google-genai 3.x runs the AFC loop in the chat
(`chats.py`), calling `Models.generate_content` once per model call, so the instrumentation sees every
inner call. No span is made for the tools themselves. Turn one (`send_message`): two parallel calls
(`get_weather` and `get_local_time` for Paris), the weather service timing out once (a raised
`TimeoutError`), then the model asking for the weather again, then the answer. Turn two
(`send_message_stream`, streamed): text and a function call in one answer, then the answer. The chat
keeps a streamed answer as it came, one `model` content per chunk (`chats.py`, `record_history`), so
the last call re-sends the streamed answer as three contents: its text in two pieces, then its call.

google-genai 3.6.1 and openinference-instrumentation-google-genai 1.4.14, the newest of both (the
instrumentation declares no upper bound on google-genai). The client is pointed at the fake with
`http_options={"base_url": …, "api_version": "v1beta"}` (the server's root: the SDK adds
`v1beta/models/…`; google-genai 3 defaults to `v1`, which the fake does not serve). (The versions the
capture was recorded with are in meta.json.)
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

from tests.captures.recording.session import Recording

SESSION = "oi-genai-weather-1"
MODEL = "gemini-2.5-flash"
SYSTEM = "You are a terse weather assistant. Use the tools; never guess."
QUESTIONS = ["What is the weather and the local time in Paris?", "And in Lisbon: do I need an umbrella?"]
REPLIES = [
    {"tool_calls": [{"name": "get_weather", "arguments": {"city": "Paris"}},
                    {"name": "get_local_time", "arguments": {"city": "Paris"}}]},
    {"text": "The weather service timed out; asking again.",
     "tool_calls": [{"name": "get_weather", "arguments": {"city": "Paris"}}]},
    {"text": "Paris: sunny, 21°C, and it is 14:05 there."},
    # Longer than one streamed piece (the fake streams text 16 characters a chunk): the chat keeps each chunk's
    # content, so the next call re-sends this answer as three `model` contents (two texts, then the call).
    {"text": "Let me check Lisbon's forecast.",
     "tool_calls": [{"name": "get_weather", "arguments": {"city": "Lisbon"}}], "when": "Lisbon"},
    {"text": "Lisbon is sunny at 24°C: no umbrella needed."},
]
WEATHER = {"Paris": "sunny, 21°C", "Lisbon": "sunny, 24°C"}
LOCAL_TIME = {"Paris": "14:05", "Lisbon": "13:05"}
PACKAGES = ["google-genai", "openinference-instrumentation-google-genai", "openinference-instrumentation",
            "openinference-semantic-conventions", "opentelemetry-sdk", "opentelemetry-exporter-otlp-proto-http"]

_timeouts_left = {"get_weather": 1}  # the weather service times out on its first request


def get_weather(city: str) -> str:
    """The current weather in a city."""
    if _timeouts_left["get_weather"]:
        _timeouts_left["get_weather"] -= 1
        raise TimeoutError("the weather service did not answer within 5 s")
    return WEATHER[city]


def get_local_time(city: str) -> str:
    """The local time in a city, HH:MM."""
    return LOCAL_TIME[city]


def main() -> None:
    notes = ("a chats.create chat with a system instruction and two Python functions (automatic function calling "
             "on: the SDK runs them, no tool spans), both turns in using_session, no application span (each call "
             "a trace): send_message with two parallel calls, get_weather raising TimeoutError once (sent back as "
             "{\"error\": …}) and asked again, then the answer; send_message_stream with text and a call, then the "
             "answer")
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

        provider = TracerProvider(resource=Resource.create({"service.name": "weather-bot"}))
        provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
        GoogleGenAIInstrumentor().instrument(tracer_provider=provider)

        # google-genai 3 talks to the Gemini API's v1 by default; the fake serves v1beta, as 2.x's default.
        client = genai.Client(api_key="fake", http_options=types.HttpOptions(
            base_url=rec.base_url.removesuffix("/v1") + "/", api_version="v1beta"))
        chat = client.chats.create(model=MODEL, config=types.GenerateContentConfig(
            system_instruction=SYSTEM, tools=[get_weather, get_local_time]))
        with using_session(SESSION):
            print(chat.send_message(QUESTIONS[0]).text)
            for chunk in chat.send_message_stream(QUESTIONS[1]):
                print(chunk.text or "", end="", flush=True)
            print()
        rec.flush(provider)


if __name__ == "__main__":
    main()
