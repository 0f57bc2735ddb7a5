"""Re-record: a multimodal CrewAI agent (`Agent(multimodal=True)`: CrewAI's `AddImageTool`) traced by OpenInference,
two kickoffs of the same crew in one session, the second streamed.

    python3 -m venv /tmp/cap-crewai_openinference_image && \
        /tmp/cap-crewai_openinference_image/bin/pip install crewai==1.15.44 \
        openinference-instrumentation-crewai==1.1.21 openinference-instrumentation-openai==0.1.66 \
        opentelemetry-sdk==1.45.2 opentelemetry-exporter-otlp-proto-http==1.45.2
    /tmp/cap-crewai_openinference_image/bin/python tests/captures/crewai_openinference_image/record.py

Recorded with (pip freeze, the packages that matter; also in meta.json): crewai 1.15.44 (crewai-core 1.15.44),
openai 2.54.0, openinference-instrumentation-crewai 1.1.21, openinference-instrumentation-openai 0.1.66,
openinference-instrumentation 0.1.72, openinference-semantic-conventions 0.1.42, opentelemetry-sdk 1.45.2,
opentelemetry-exporter-otlp-proto-http 1.45.2, pydantic 2.12.5; Python 3.11.7. Each is the newest on PyPI but openai:
crewai 1.15.44 requires `openai<3` (3.63.0 is the newest), so 2.54.0.

Why: images under CrewAI. CrewAI's multimodal docs: `Agent(multimodal=True)` gives the agent CrewAI's `AddImageTool`
(`Add image to content`, offered as `add_image_to_content`), whose result is a user message of the tool's `action`
text and an `image_url` part. CrewAI 1.15 adds it only for an LLM it does not list as seeing images
(`Crew._prepare_tools`: `not agent.llm.supports_multimodal()`; the OpenAI provider's list is prefixes such as
`gpt-4o`, `gpt-4.1`, `gpt-5`), so the LLM is `gpt-4.5-preview`, a vision model with function calling that the list
misses (through CrewAI's native OpenAI provider, the OpenAI SDK, as the committed CrewAI captures call it). The tool
loop is native function calling, and there CrewAI sends the model a tool's result as `str()` of what it returned
(`format_native_tool_output_for_agent`): the AddImageTool's message dict as its Python repr, a text tool message. The
model is sent no image at all (the fake LLM's log shows it); the TOOL span records the dict as JSON
(`output.mime_type` application/json).

Traced as `crewai_openinference_mcp` is: one tracer provider exporting OTLP/HTTP (protobuf, batched) to the recorder,
the crewai instrumentor (CHAIN `<crew>.kickoff`, AGENT `<role>._execute_core` per task, TOOL `<tool>.run`) and the
openai one (an LLM span per call). CrewAI's own usage telemetry and tracing to its servers are off. CrewAI has no
session id: the session is OpenInference's `using_session` around each kickoff, the same crew kicked off twice in it;
the second kickoff streamed as CrewAI's streaming docs show (`crew.stream = True`, the CrewStreamingOutput iterated,
then `.result`).

Turn 1: a question with an `https://` photo's URL in the task; the agent adds the image (`add_image_to_content` with
the URL and a question), then asks for the weather and the opening hours in one answer (two parallel native tool
calls, run in CrewAI's thread pool); get_weather raises once (CrewAI sends the model "Error executing tool: …"), the
agent asks again, then answers. Turn 2 (streamed): the task holds a small PNG as a `data:` URL (an 8x8 picture made
here with zlib and struct); the agent adds it with no question (CrewAI's default action), then answers. Six LLM
calls, three traces.
"""

from __future__ import annotations

import base64
import os
import struct
import sys
import zlib
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

from tests.captures.recording.session import Recording

MODEL = "gpt-4.5-preview"
SESSION = "crew-image-1"
ROLE = "Travel photo analyst"
ADD_IMAGE = "add_image_to_content"  # "Add image to content" as CrewAI offers it (`sanitize_tool_name`)
PHOTO_URL = "https://upload.wikimedia.org/wikipedia/commons/thumb/7/7e/Oslo_Opera_House.jpg/640px-Oslo_Opera_House.jpg"


def png_data_url(size: int, seed: int) -> str:
    """A `size`x`size` RGB PNG as a data URL: a gradient with deterministic noise, so zlib cannot shrink it much."""
    state = seed
    rows = bytearray()
    for y in range(size):
        rows.append(0)  # filter: none
        for x in range(size):
            state = (state * 1103515245 + 12345) & 0x7FFFFFFF
            noise = state >> 24
            rows += bytes(((x * 255 // size + noise) & 255, (y * 255 // size + noise) & 255, (noise * 3) & 255))

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)

    png = (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", size, size, 8, 2, 0, 0, 0))
           + chunk(b"IDAT", zlib.compress(bytes(rows), 9)) + chunk(b"IEND", b""))
    return "data:image/png;base64," + base64.b64encode(png).decode()


SKETCH = png_data_url(8, seed=5)  # ~300 characters: a data URL the task can hold
REPLIES = [
    # turn 1: the photo added, then the weather and the hours in one answer (get_weather raises), asked again, answered
    {"tool_calls": [{"name": ADD_IMAGE, "arguments": {"image_url": PHOTO_URL, "action": "Which building is this?"}}],
     "input_tokens": 612, "output_tokens": 40},
    {"tool_calls": [{"name": "get_weather", "arguments": {"city": "Oslo"}},
                    {"name": "get_opening_hours", "arguments": {"place": "Oslo Opera House"}}],
     "input_tokens": 1480, "output_tokens": 38},
    {"tool_calls": [{"name": "get_weather", "arguments": {"city": "Oslo"}}], "input_tokens": 1560, "output_tokens": 18},
    {"text": "Thought: I now know the final answer\nFinal Answer: That is the Oslo Opera House, open 10:00-23:00; "
             "Oslo is rainy, 9°C.", "input_tokens": 1602, "output_tokens": 30},
    # turn 2, streamed: the sketch added with no question (CrewAI's default action), then the answer
    {"tool_calls": [{"name": ADD_IMAGE, "arguments": {"image_url": SKETCH}}], "input_tokens": 700, "output_tokens": 60},
    {"text": "Thought: I now know the final answer\nFinal Answer: A small square of noisy colour gradients.",
     "input_tokens": 980, "output_tokens": 20},
]
WEATHER = {"Oslo": "rainy, 9°C"}
PACKAGES = ["crewai", "openai", "openinference-instrumentation-crewai", "openinference-instrumentation-openai",
            "openinference-instrumentation", "openinference-semantic-conventions", "opentelemetry-sdk",
            "opentelemetry-exporter-otlp-proto-http"]
REQUESTS = [f"Which building is in this photo, is it open today, and what is the weather there? {PHOTO_URL}",
            f"Describe my sketch: {SKETCH}"]


def main() -> None:
    notes = ("a multimodal agent (Agent(multimodal=True): CrewAI's AddImageTool, offered since CrewAI does not list "
             "gpt-4.5-preview as seeing images) adding an https photo, then two parallel native tool calls, "
             "get_weather raising once and asked again; a second kickoff of the same crew, streamed (Crew.stream), "
             "adding a small PNG data URL; both in one OpenInference using_session. CrewAI sends the model the "
             "AddImageTool's message dict as its str(), a text tool message: no image is sent")
    here = Path(__file__).resolve().parent
    with Recording(here, REPLIES, framework="crewai", instrumentation="openinference", packages=PACKAGES,
                   session_id=SESSION, notes=notes) as rec:
        rec.env()
        os.environ["CREWAI_DISABLE_TELEMETRY"] = "true"  # CrewAI's own usage telemetry (to its servers)
        os.environ["CREWAI_TRACING_ENABLED"] = "false"
        from openinference.instrumentation import using_session
        from openinference.instrumentation.crewai import CrewAIInstrumentor
        from openinference.instrumentation.openai import OpenAIInstrumentor
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
        from opentelemetry.sdk.resources import Resource
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import BatchSpanProcessor

        provider = TracerProvider(resource=Resource.create({"service.name": "photo-crew"}))
        provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
        CrewAIInstrumentor().instrument(tracer_provider=provider)
        OpenAIInstrumentor().instrument(tracer_provider=provider)

        from crewai import LLM, Agent, Crew, Process, Task
        from crewai.tools import tool

        failures = {"get_weather": 1}  # get_weather raises once: CrewAI sends the model "Error executing tool: …"

        @tool("get_weather")
        def get_weather(city: str) -> str:
            """The current weather in a city."""
            if failures["get_weather"]:
                failures["get_weather"] -= 1
                raise TimeoutError("weather service timed out")
            return WEATHER[city]

        @tool("get_opening_hours")
        def get_opening_hours(place: str) -> str:
            """Today's opening hours of a place."""
            return "10:00-23:00"

        # `multimodal=True` as CrewAI's docs show it: the crew gives the agent the AddImageTool at each task.
        agent = Agent(role=ROLE, goal="Identify places in travellers' photos and check them",
                      backstory="A photographer who knows Europe's landmarks.", multimodal=True,
                      tools=[get_weather, get_opening_hours], llm=LLM(model=MODEL))
        task = Task(description="{request}", expected_output="A short answer for the traveller.", agent=agent)
        crew = Crew(agents=[agent], tasks=[task], process=Process.sequential)
        with using_session(SESSION):
            print(crew.kickoff(inputs={"request": REQUESTS[0]}))
        # The second kickoff streamed, as CrewAI's streaming docs show; the same crew, so the field is set on it.
        crew.stream = True
        with using_session(SESSION):
            streaming = crew.kickoff(inputs={"request": REQUESTS[1]})
            for chunk in streaming:
                print(chunk.content, end="", flush=True)
            print("\n" + streaming.result.raw)
        rec.flush(provider)


if __name__ == "__main__":
    main()
