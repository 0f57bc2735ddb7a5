"""Re-record: a smolagents ToolCallingAgent given images, with a tool returning one, traced by OpenInference.

    python3 -m venv /tmp/cap-smolagents_openinference_image && \
        /tmp/cap-smolagents_openinference_image/bin/pip install \
        smolagents==1.26.0 openai==3.63.0 pillow==13.0.0 openinference-instrumentation-smolagents==0.1.43 \
        openinference-instrumentation==0.1.72 opentelemetry-sdk==1.45.2 opentelemetry-exporter-otlp-proto-http==1.45.2
    /tmp/cap-smolagents_openinference_image/bin/python tests/captures/smolagents_openinference_image/record.py

Run one is `agent.run(task, images=[postcard, stamp])`: two PNGs made here with PIL, the postcard's data URL over
the 4,096 characters a trajectory inlines (and under the 32,000 past which OpenInference redacts it), the stamp's
154. smolagents puts them in the task's memory step (`TaskStep.task_images`) and, as it does for every action
step of a run given images, in each action step's `observations_images` too (`_run_stream`): each step's memory then
re-sends them after its tool calls, as a user message of images the client merges with the step's `Observation:`.
The agent calls get_weather twice in parallel, then lookup_flight, which raises (a timeout) the first time and is
asked again, then render_map, a tool of `output_type="image"`: ToolCallingAgent keeps its AgentImage in
`agent.state["image.png"]` and tells the model only "Stored 'image.png' in memory."; a step callback shows the model
the map, as smolagents' vision browser example shows its screenshots (the step's `observations_images` set to the
image), so the next call is sent the map after the render_map call. Then `final_answer`. Run two continues the same
memory (`reset=False`), streamed (`stream_outputs`, turned on for it), and answers from the map. The session is
OpenInference's `using_session` around both runs. (The versions the capture was recorded with are in meta.json.)
"""

from __future__ import annotations

import random
import sys
from pathlib import Path
from typing import Any, ClassVar

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

from tests.captures.recording.session import Recording

SESSION = "smol-oi-image-1"
REPLIES = [
    # Run one, step 1: both cities at once.
    {"tool_calls": [{"name": "get_weather", "arguments": {"city": "Paris"}},
                    {"name": "get_weather", "arguments": {"city": "Oslo"}}]},
    # Step 2: the flight search times out.
    {"tool_calls": [{"name": "lookup_flight", "arguments": {"origin": "Oslo", "destination": "Paris"}}]},
    # Step 3: the retry.
    {"tool_calls": [{"name": "lookup_flight", "arguments": {"origin": "Oslo", "destination": "Paris"}}]},
    # Step 4: the map, an image.
    {"tool_calls": [{"name": "render_map", "arguments": {"city": "Paris"}}]},
    # Step 5: the answer.
    {"tool_calls": [{"name": "final_answer", "arguments": {
        "answer": "The postcard shows the Eiffel Tower, so it came from Paris: sunny, 21°C (Oslo: rainy, 9°C). "
                  "Flight SK 4711 leaves Oslo at 09:10; the map of Paris is attached."}}]},
    # Run two (streamed): answered from the map in memory.
    {"tool_calls": [{"name": "final_answer", "arguments": {
        "answer": "The blue line across the map is the Seine, running west to east."}}]},
]
WEATHER = {"Paris": "sunny, 21°C", "Oslo": "rainy, 9°C"}


def _noisy(image: Any, seed: int, spread: int) -> Any:
    """Pixel noise, seeded: a PNG that compresses poorly, so that its data URL is over the inline limit."""
    rng = random.Random(seed)
    pixels = image.load()
    for x in range(image.width):
        for y in range(image.height):
            pixels[x, y] = tuple(max(0, min(255, channel + rng.randint(-spread, spread))) for channel in pixels[x, y])
    return image


def postcard() -> Any:
    """A tower under a blue sky: 80x56, a PNG data URL of 14,594 characters as smolagents encodes it."""
    from PIL import Image, ImageDraw

    image = Image.new("RGB", (80, 56), (135, 190, 235))
    draw = ImageDraw.Draw(image)
    draw.rectangle((0, 40, 80, 56), fill=(70, 120, 60))
    draw.polygon([(40, 6), (30, 44), (50, 44)], fill=(90, 80, 70))
    return _noisy(image, 52, 24)


def stamp() -> Any:
    """A red stamp with a white square: 12x12, a data URL of 154 characters (inlined)."""
    from PIL import Image, ImageDraw

    image = Image.new("RGB", (12, 12), (200, 30, 40))
    ImageDraw.Draw(image).rectangle((3, 3, 8, 8), fill=(250, 250, 250))
    return image


def city_map() -> Any:
    """A river across blocks: 64x48, a data URL of 8,678 characters."""
    from PIL import Image, ImageDraw

    rng = random.Random(7)
    image = Image.new("RGB", (64, 48), (240, 236, 220))
    draw = ImageDraw.Draw(image)
    draw.line((0, 30, 20, 26, 40, 32, 64, 22), fill=(60, 110, 200), width=4)
    for _ in range(30):
        x, y = rng.randrange(64), rng.randrange(48)
        draw.rectangle((x, y, x + rng.randint(2, 6), y + rng.randint(2, 6)), fill=(rng.randint(120, 200),) * 3)
    return _noisy(image, 8, 10)


def main() -> None:
    with Recording(Path(__file__).parent, REPLIES, framework="smolagents", instrumentation="openinference",
                   packages=["smolagents", "openai", "pillow", "openinference-instrumentation-smolagents",
                             "openinference-instrumentation", "opentelemetry-sdk",
                             "opentelemetry-exporter-otlp-proto-http"],
                   session_id=SESSION,
                   notes="ToolCallingAgent run with two images (one over the inline limit): parallel get_weather, "
                         "lookup_flight raising once then asked again, render_map (output_type image) shown to the "
                         "model by a step callback (observations_images); smolagents re-attaches the task's images "
                         "to every action step; run two (reset=False, streamed) answers from memory") as rec:
        rec.env()
        from openinference.instrumentation import using_session
        from openinference.instrumentation.smolagents import SmolagentsInstrumentor
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
        from opentelemetry.sdk.resources import Resource
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import BatchSpanProcessor

        provider = TracerProvider(resource=Resource.create({"service.name": "postcard-desk"}))
        provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
        SmolagentsInstrumentor().instrument(tracer_provider=provider)

        from smolagents import ActionStep, OpenAIServerModel, Tool, ToolCallingAgent, tool

        @tool
        def get_weather(city: str) -> str:
            """The weather in a city.

            Args:
                city: the city
            """
            return WEATHER[city]

        searches: list[tuple[str, str]] = []

        @tool
        def lookup_flight(origin: str, destination: str) -> str:
            """The next flight between two cities.

            Args:
                origin: the city to fly from
                destination: the city to fly to
            """
            searches.append((origin, destination))
            if len(searches) == 1:
                raise TimeoutError("flight search timed out")
            return f"SK 4711 {origin} 09:10 -> {destination} 11:45"

        class RenderMap(Tool):
            name = "render_map"
            description = "Draws a map of a city's centre."
            inputs: ClassVar[dict[str, dict[str, str]]] = {"city": {"type": "string", "description": "the city"}}
            output_type = "image"

            def forward(self, city: str) -> Any:
                return city_map()

        stored = "Stored 'image.png' in memory."

        def show_tool_image(memory_step: ActionStep, agent: ToolCallingAgent) -> None:
            # ToolCallingAgent tells the model only where it stored a tool's image: show it the image, as the step's
            # observation images (sent after the step's tool calls).
            if memory_step.observations and stored in memory_step.observations:
                memory_step.observations_images = [agent.state["image.png"].to_raw()]

        model = OpenAIServerModel(model_id="gpt-4o", api_base=rec.base_url, api_key="sk-fake")
        agent = ToolCallingAgent(tools=[get_weather, lookup_flight, RenderMap()], model=model, name="postcard_desk",
                                 description="Reads postcards and plans trips.", max_steps=6,
                                 step_callbacks=[show_tool_image])
        with using_session(SESSION):
            print(agent.run("Where was this postcard sent from? The weather there and in Oslo, a flight from Oslo, "
                            "and a map of the city, please.", images=[postcard(), stamp()]))
            agent.stream_outputs = True  # read at every step: run two's call is streamed
            print(agent.run("Which river is on the map?", reset=False))
        rec.flush(provider)


if __name__ == "__main__":
    main()
