"""Re-record: images in and out of an openai-agents (Responses API) tool loop, traced by OpenTelemetry's own GenAI
instrumentation.

    python3 -m venv /tmp/cap-openai-agents_otel-genai_image
    /tmp/cap-openai-agents_otel-genai_image/bin/pip install \
        openai-agents==0.25.0 openai==3.63.0 opentelemetry-instrumentation-openai-agents-v2==0.1.0 \
        opentelemetry-util-genai==1.3b0 opentelemetry-sdk==1.45.2 opentelemetry-exporter-otlp-proto-http==1.45.2
    /tmp/cap-openai-agents_otel-genai_image/bin/python tests/captures/openai-agents_otel-genai_image/record.py

Why: multimodal input and a tool's image output as `opentelemetry-instrumentation-openai-agents-v2` records them,
beside the OpenInference recording of the very same run (`openai-agents_openinference_image`) and the text-only
`openai-agents_otel-genai`. The scenario is that capture's: its pictures (`png_data_url`), questions, weather and
scripted replies, read from its record.py, the call ids made anew from this capture's session id
(`with_api_call_ids`). Turn 1 (`Runner.run`) is a list of Responses input items, as the SDK's docs show for images:
one user message holding an `input_text` and two `input_image` parts, a 40x40 PNG (~6,500 characters as a data URL:
over evalkit's inline limit) and an `https://` URL with `detail: "low"`. The model calls `get_weather` twice in
parallel, Oslo's raising `TimeoutError` once (the SDK sends the model its failure_error_function's text), then calls
it again beside `get_map`, a function tool returning a `ToolOutputImage` (a 36x36 PNG data URL, `detail: "low"`),
which the SDK sends as the `function_call_output`'s `input_image`; then it answers. Turn 2
(`Runner.run_streamed`) asks about a third photo, a 112x112 PNG (~50,000 characters as a data URL); the model calls
`get_weather`, then answers. Five calls; every function call scripted with the two ids the real Responses API gives
it (`call_…`, `fc_…`).

The tracing is `openai-agents_otel-genai`'s (`recording/openai_agents_travel.otel_genai_tracing`, whose docstring
there says why): a processor of the SDK's own tracing writing the GenAI conventions, content on the spans
(`OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=span_only`), the SDK's exporter to OpenAI's backend dropped. One
session: the history kept by an `SQLiteSession` (the SDK re-sends turn 1's items, images and the tool's image among
them), the trace grouped by the RunConfig's `group_id`, and, since the instrumentation records no session, both
turns under an application span carrying `gen_ai.conversation.id` (the session id). The newest openai-agents and
instrumentation packages at the time of recording; the versions recorded are in meta.json.
"""

from __future__ import annotations

import asyncio
import importlib.util
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

from tests.captures.recording.openai_agents_travel import OTEL_GENAI_PACKAGES, otel_genai_tracing, with_api_call_ids
from tests.captures.recording.session import Recording

SESSION = "oa-otel-genai-image-trip-1"
# The OpenInference capture's script, loaded from its path (its folder name is no Python identifier's): the scenario.
_SAME_RUN = Path(__file__).resolve().parents[1] / "openai-agents_openinference_image" / "record.py"


def _scenario() -> Any:
    spec = importlib.util.spec_from_file_location("openai_agents_openinference_image_record", _SAME_RUN)
    assert spec is not None and spec.loader is not None
    scenario = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(scenario)
    return scenario


def main() -> None:
    scenario = _scenario()
    small, map_png, large = (scenario.png_data_url(40, seed=7), scenario.png_data_url(36, seed=5),
                             scenario.png_data_url(112, seed=11))
    replies = with_api_call_ids(scenario.REPLIES, SESSION)
    with Recording(Path(__file__).parent, replies, framework="openai-agents",
                   instrumentation="opentelemetry-instrumentation-openai-agents-v2",
                   packages=[*OTEL_GENAI_PACKAGES, "opentelemetry-api", "opentelemetry-exporter-otlp-proto-http"],
                   session_id=SESSION,
                   notes=f"openai-agents_openinference_image's run: Responses API with images: turn 1 (run) a list of "
                         f"input items, a user message of input_text, a {len(small)}-character PNG data URL "
                         f"input_image and an https input_image (detail low); two parallel get_weather calls, Oslo's "
                         f"raising once, then get_weather again beside get_map, whose ToolOutputImage (a "
                         f"{len(map_png)}-character PNG data URL, detail low) is sent as the function_call_output's "
                         f"input_image; turn 2 (run_streamed) a {len(large)}-character PNG data URL; SQLiteSession "
                         f"memory, RunConfig group_id, neither recorded by the instrumentation, so each turn under an "
                         f"application span carrying gen_ai.conversation.id; content on the spans (span_only); "
                         f"function_call item ids (fc_) distinct from their call_ids (call_)") as rec:
        provider, turn = otel_genai_tracing(rec, SESSION)
        from agents import Agent, RunConfig, Runner, SQLiteSession, ToolOutputImage, function_tool

        failures = {"Oslo": 1}

        @function_tool
        def get_weather(city: str) -> str:
            """The weather in a city today."""
            if failures.get(city):
                failures[city] -= 1
                raise TimeoutError("the weather service did not answer in time")
            return str(scenario.WEATHER[city])

        @function_tool
        def get_map(city: str) -> Any:  # a ToolOutputImage; `Any`: the SDK reads the hints, this module's globals
            """A street map of a city's centre, as an image."""
            return ToolOutputImage(image_url=map_png, detail="low")

        desk = Agent(name="Photo trip desk", model="gpt-4o",
                     instructions="You are a terse travel assistant. Name the place in each photo; use the tools "
                                  "for the weather and for maps.",
                     tools=[get_weather, get_map])
        memory = SQLiteSession(SESSION)
        config = RunConfig(group_id=SESSION)
        turns = [[{"role": "user", "content": [
                     {"type": "input_text", "text": scenario.QUESTIONS[0]},
                     {"type": "input_image", "image_url": small, "detail": "auto"},
                     {"type": "input_image", "image_url": scenario.PHOTO_URL, "detail": "low"}]}],
                 [{"role": "user", "content": [
                     {"type": "input_text", "text": scenario.QUESTIONS[1]},
                     {"type": "input_image", "image_url": large, "detail": "auto"}]}]]

        async def run() -> None:
            with turn():
                first = await Runner.run(desk, turns[0], session=memory, run_config=config)
            with turn():
                second = Runner.run_streamed(desk, turns[1], session=memory, run_config=config)
                async for _event in second.stream_events():
                    pass
            print(first.final_output, second.final_output, sep="\n")

        asyncio.run(run())
        rec.flush(provider)


if __name__ == "__main__":
    main()
