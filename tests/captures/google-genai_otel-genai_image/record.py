"""Re-record: a Google Gen AI SDK chat (Gemini) shown images, in a hand-written tool loop, traced by OpenTelemetry's own
google-genai instrumentation.

    python3 -m venv /tmp/cap-google-genai_otel-genai_image && \
    /tmp/cap-google-genai_otel-genai_image/bin/pip install \
        google-genai==2.34.0 opentelemetry-instrumentation-google-genai==1.3b0 opentelemetry-util-genai==1.3b0 \
        opentelemetry-sdk==1.45.2 opentelemetry-exporter-otlp-proto-http==1.45.2
    /tmp/cap-google-genai_otel-genai_image/bin/python tests/captures/google-genai_otel-genai_image/record.py

Set up as `google-genai_otel-genai` sets it up: `GoogleGenAiSdkInstrumentor().instrument(tracer_provider=…,
logger_provider=…)`, one `generate_content <model>` span per `Models.generate_content` / `generate_content_stream`
call, content SPAN_AND_EVENT (OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT, read when instrumenting). The
instrumentation has no session of its own: each user turn runs under an application span carrying `session.id`.

What it is about: images. The application is a `client.chats.create` chat (automatic function calling off: the loop
is the application's, answering the model's function calls with `chat.send_message([function_response parts])`).
Turn one's question (`send_message`) is a text part and three images: a small PNG (`types.Part.from_bytes`, a tram
ticket, a data URL under evalkit's 4,096-character inline limit), a larger PNG (a street photo with a film's grain,
so well over that limit: referenced, not inlined) and a JPEG in Cloud Storage (`types.Part.from_uri(file_uri="gs://…",
mime_type="image/jpeg")`, which the API reads itself: only its URI is sent). The model asks for the weather in two
cities at once; the weather service times out for Porto (a raised `TimeoutError`, answered with `{"error": …}` in
its function response); the model asks again, then answers. Turn two (`send_message_stream`, streamed: the chat keeps
the streamed answer one `model` content per chunk and re-sends it so) asks for a map: the model calls `render_map`,
whose function response carries the map as a PNG in the FunctionResponse's own `parts`
(`types.FunctionResponsePart.from_bytes`, the API's newer multimodal function responses); then the answer, streamed
too. Five calls. The fake reports each prompt's tokens by modality as Gemini does (`promptTokensDetails`, TEXT and
IMAGE: 258 tokens an image of at most 384 pixels a side, the gs:// photo's too), so the spans show how the
instrumentation records the images' tokens.

google-genai 2.34.0: the newest the instrumentation instruments (1.3b0, its newest, declares
`google-genai>=1.32.0,<3`; with 3.x, `instrument()` logs a dependency conflict and traces nothing). The pins pull in
opentelemetry-api 1.45.2, opentelemetry-instrumentation 0.66b2 and opentelemetry-semantic-conventions 0.66b2. The
client is pointed at the fake with `http_options={"base_url": …}` (the server's root: the SDK adds
`v1beta/models/…`). (The versions the capture was recorded with are in meta.json.)
"""

from __future__ import annotations

import os
import random
import struct
import sys
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

from tests.captures.recording.session import Recording

SESSION = "otel-genai-photo-trip-1"
MODEL = "gemini-2.5-flash"
SYSTEM = "You are a travel assistant. Use the tools; never guess the weather."
HARBOUR_PHOTO = "gs://evalkit-trip-photos/porto-harbour.jpg"
QUESTIONS = ["Where were these three photos taken, and what is the weather there now?",
             "Show me a map of Porto's riverside so I can find that harbour."]
IMAGE_TOKENS = 258  # Gemini's count for an image of at most 384 pixels a side
REPLIES = [
    {"tool_calls": [{"name": "get_weather", "arguments": {"city": "Lisbon"}},
                    {"name": "get_weather", "arguments": {"city": "Porto"}}],
     "input_tokens": 3 * IMAGE_TOKENS + 41, "image_tokens": 3 * IMAGE_TOKENS},
    {"text": "The Porto weather service timed out; asking again.",
     "tool_calls": [{"name": "get_weather", "arguments": {"city": "Porto"}}],
     "input_tokens": 3 * IMAGE_TOKENS + 112, "image_tokens": 3 * IMAGE_TOKENS},
    {"text": "The tram ticket and the street are Lisbon (sunny, 24°C); the harbour is Porto (cloudy, 18°C).",
     "input_tokens": 3 * IMAGE_TOKENS + 161, "image_tokens": 3 * IMAGE_TOKENS},
    # Longer than one streamed piece (the fake streams text 16 characters a chunk): the chat keeps each chunk's
    # content, so the next call re-sends this answer as three `model` contents (two texts, then the call).
    {"text": "Drawing the Ribeira for you.",
     "tool_calls": [{"name": "render_map", "arguments": {"area": "Ribeira, Porto"}}],
     "input_tokens": 3 * IMAGE_TOKENS + 214, "image_tokens": 3 * IMAGE_TOKENS, "when": "map"},
    {"text": "Here it is: the harbour is on the Douro's north bank, by the Luís I bridge.",
     "input_tokens": 4 * IMAGE_TOKENS + 251, "image_tokens": 4 * IMAGE_TOKENS},
]
WEATHER = {"Lisbon": "sunny, 24°C", "Porto": "cloudy, 18°C"}
# The pins, then what they pulled in that the spans depend on (the instrumentation's base and conventions).
PACKAGES = ["google-genai", "opentelemetry-instrumentation-google-genai", "opentelemetry-util-genai",
            "opentelemetry-sdk", "opentelemetry-exporter-otlp-proto-http", "opentelemetry-api",
            "opentelemetry-instrumentation", "opentelemetry-semantic-conventions"]

Pixel = tuple[int, int, int]
_timeouts_left = {"Porto": 1}  # Porto's weather service times out on its first request


def png(width: int, height: int, pixel: Callable[[int, int], Pixel]) -> bytes:
    """A truecolour PNG of `pixel(x, y)`: signature, IHDR, one zlib IDAT of filter-0 rows, IEND."""
    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    rows = b"".join(b"\x00" + bytes(c for x in range(width) for c in pixel(x, y)) for y in range(height))
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(rows, 9))
            + chunk(b"IEND", b""))


def tram_ticket() -> bytes:
    """A tram ticket: a yellow card with a black stripe, a data URL well under 4 KB."""
    return png(16, 10, lambda x, y: (20, 20, 20) if 4 <= y < 6 else (250, 210, 40))


def street_photo() -> bytes:
    """A street of tiled façades under a blue sky, with a film's grain: so that it stays over 4 KB."""
    grain = random.Random(11)
    width, height = 80, 60

    def pixel(x: int, y: int) -> Pixel:
        r, g, b = (110, 170, 230) if y < 18 else (40, 90, 170) if (x // 5 + y // 5) % 2 else (235, 235, 225)
        noise = grain.randrange(-14, 1)
        return (max(r + noise, 0), max(g + noise, 0), max(b + noise, 0))
    return png(width, height, pixel)


def river_map(area: str) -> bytes:
    """A map of an area: the river across the bottom third, a bridge, the bank above."""
    width, height = 48, 32
    seed = sum(map(ord, area)) % 7

    def pixel(x: int, y: int) -> Pixel:
        if 20 + seed // 3 <= x < 23 + seed // 3:
            return (120, 120, 120)  # the bridge
        return (70, 130, 200) if y >= 21 else (236, 228, 210)
    return png(width, height, pixel)


def get_weather(city: str) -> str:
    """The current weather in a city."""
    if _timeouts_left.get(city):
        _timeouts_left[city] -= 1
        raise TimeoutError(f"the weather service did not answer for {city} within 5 s")
    return WEATHER[city]


def main() -> None:
    # Read by the instrumentation's handler: before `instrument()`.
    os.environ["OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"] = "SPAN_AND_EVENT"
    notes = ("a chats.create chat with a hand-written tool loop (automatic function calling off), each turn under an "
             "application span carrying session.id: send_message of a text, a small PNG and a ~5 KB PNG "
             "(Part.from_bytes) and a gs:// JPEG (Part.from_uri); two parallel get_weather calls, Porto's raising "
             "TimeoutError once (answered with {\"error\": …}), asked again, then the answer; send_message_stream "
             "asking for a map: render_map's function response carries a PNG in its parts (FunctionResponsePart), "
             "then the answer. The fake reports promptTokensDetails (TEXT, IMAGE). Content SPAN_AND_EVENT")
    with Recording(Path(__file__).parent, REPLIES, framework="google-genai",
                   instrumentation="opentelemetry-instrumentation-google-genai", packages=PACKAGES,
                   session_id=SESSION, notes=notes) as rec:
        rec.env()
        from google import genai
        from google.genai import types
        from opentelemetry.exporter.otlp.proto.http._log_exporter import OTLPLogExporter
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
        from opentelemetry.instrumentation.google_genai import GoogleGenAiSdkInstrumentor
        from opentelemetry.sdk._logs import LoggerProvider
        from opentelemetry.sdk._logs.export import BatchLogRecordProcessor
        from opentelemetry.sdk.resources import Resource
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import BatchSpanProcessor

        resource = Resource.create({"service.name": "photo-trip"})
        tracer_provider = TracerProvider(resource=resource)
        tracer_provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
        logger_provider = LoggerProvider(resource=resource)
        logger_provider.add_log_record_processor(BatchLogRecordProcessor(OTLPLogExporter()))
        GoogleGenAiSdkInstrumentor().instrument(tracer_provider=tracer_provider, logger_provider=logger_provider)
        tracer = tracer_provider.get_tracer("photo-trip")

        client = genai.Client(api_key="fake", http_options=types.HttpOptions(
            base_url=rec.base_url.removesuffix("/v1") + "/"))
        chat = client.chats.create(model=MODEL, config=types.GenerateContentConfig(
            system_instruction=SYSTEM,
            tools=[types.Tool(function_declarations=[
                types.FunctionDeclaration(
                    name="get_weather", description="The current weather in a city",
                    parameters_json_schema={"type": "object", "properties": {"city": {"type": "string"}},
                                            "required": ["city"]}),
                types.FunctionDeclaration(
                    name="render_map", description="A map of an area, as an image",
                    parameters_json_schema={"type": "object", "properties": {"area": {"type": "string"}},
                                            "required": ["area"]})])],
            automatic_function_calling=types.AutomaticFunctionCallingConfig(disable=True)))

        def send(message: Any, streamed: bool) -> list[types.FunctionCall]:
            """The model's function calls in answer to `message`, its text printed."""
            if not streamed:
                response = chat.send_message(message)
                print(response.text or "")
                return list(response.function_calls or ())
            calls: list[types.FunctionCall] = []
            for chunk in chat.send_message_stream(message):
                print(chunk.text or "", end="", flush=True)
                calls.extend(chunk.function_calls or ())
            print()
            return calls

        def answer(call: types.FunctionCall) -> types.Part:
            args = dict(call.args or {})
            if call.name == "render_map":
                # The map itself in the function response's parts, beside what it shows.
                return types.Part(function_response=types.FunctionResponse(
                    id=call.id, name=call.name, response={"result": f"a 1 km map of {args['area']}"},
                    parts=[types.FunctionResponsePart.from_bytes(data=river_map(args["area"]),
                                                                 mime_type="image/png")]))
            try:
                result: dict[str, Any] = {"result": get_weather(**args)}
            except TimeoutError as exc:
                result = {"error": str(exc)}
            return types.Part(function_response=types.FunctionResponse(id=call.id, name=call.name, response=result))

        first = [types.Part.from_text(text=QUESTIONS[0]),
                 types.Part.from_bytes(data=tram_ticket(), mime_type="image/png"),
                 types.Part.from_bytes(data=street_photo(), mime_type="image/png"),
                 types.Part.from_uri(file_uri=HARBOUR_PHOTO, mime_type="image/jpeg")]
        for streamed, question in ((False, first), (True, QUESTIONS[1])):
            with tracer.start_as_current_span("photo-trip turn", attributes={"session.id": SESSION}):
                message: Any = question
                while calls := send(message, streamed):
                    message = [answer(call) for call in calls]
        rec.flush(tracer_provider, logger_provider)


if __name__ == "__main__":
    main()
