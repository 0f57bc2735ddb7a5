"""Images in a smolagents ToolCallingAgent's run, as OpenInference's smolagents instrumentation records them (the
`smolagents_openinference_image` capture).

Run one is `agent.run(task, images=[postcard, stamp])`: the task's memory step holds the two PNGs, and smolagents sets
them on every action step of the run too (`observations_images`), so each step's memory re-sends them after its tool
calls, a user message of images alone right before the step's `tool-response`; the client merges the two into one user
message, images then `Observation:`. `render_map` returns an image (`output_type="image"`): ToolCallingAgent tells the
model "Stored 'image.png' in memory." and a step callback shows it the map as that step's observation images. The
instrumentation records the memory's messages, each image as a PNG data URL. Before `smolagents.read_roles` read a
step's observation images as the parts of the result its `tool-response` gives, they were five user steps (flagged
copied context) between the agent's steps, and render_map's result the temporary file path its tool span records.
"""

from __future__ import annotations

import base64
import json
import re
from dataclasses import replace
from typing import Any

import atif
from span_fixtures import capture_document, capture_spans

from evalkit.trajectory import media
from evalkit.trajectory.build import map_one_span
from evalkit.trajectory.from_spans import trajectory_from_spans
from evalkit.trajectory.mappers import openinference
from evalkit.trajectory.mappers.reader import SpanReader
from evalkit.trajectory.operations import LlmCall
from evalkit.trajectory.span import Span
from evalkit.trajectory.validate import errors_only, validate_trajectory
from tests.captures import corpus, questions

CAPTURE = "smolagents_openinference_image"
SESSION = "smol-oi-image-1"
Json = dict[str, Any]
_BASE64_RUN = re.compile(r"[A-Za-z0-9+/]{200,}")
_STORED = "Stored 'image.png' in memory."


def _log() -> list[Json]:
    return corpus.load(CAPTURE).llm_log


def _sent_images(seq: int) -> list[str]:
    """The data URLs of the images in call `seq`'s last user message, as the model was sent them."""
    last = [message for message in _log()[seq]["request"]["messages"] if message["role"] == "user"][-1]
    return [part["image_url"]["url"] for part in last["content"] if part["type"] == "image_url"]


def _task_images() -> tuple[str, str]:
    postcard, stamp = _sent_images(0)
    return postcard, stamp


def _call_spans() -> list[Span]:
    """The model calls' spans (`OpenAIModel.generate`, `.generate_stream`), in order."""
    return sorted((span for span in capture_spans(CAPTURE) if span.name.startswith("OpenAIModel.generate")),
                  key=lambda span: span.start_time_unix_nano)


def _read_back(path: str) -> media.Image:
    """The image a trajectory's reference names, read from its span as the service reads it (`routes._media`)."""
    reference = media.parse_reference(path)
    span = next(s for s in capture_spans(CAPTURE) if s.span_id == reference.span_id)
    return media.referenced_image(map_one_span(span), reference.where, reference.n)


def _decoded(data_url: str) -> bytes:
    return base64.b64decode(data_url.split(",", 1)[1])


def _image(path: str) -> Json:
    return {"type": "image", "source": {"media_type": "image/png", "path": path}}


def _results(document: Json) -> dict[str | None, list[Json]]:
    """Each step's observation results, by the call they answer (None: a result of no call), in order."""
    found: dict[str | None, list[Json]] = {}
    for step in document["steps"]:
        for result in (step.get("observation") or {}).get("results") or ():
            found.setdefault(result.get("source_call_id"), []).append(result)
    return found


def _input_path(call: int, n: int) -> str:
    span = _call_spans()[call]
    return f"evalkit-span://{span.trace_id}/{span.span_id}/input/{n}"


def test_the_question_once_with_its_images_a_large_one_referenced() -> None:
    postcard, stamp = _task_images()
    assert len(postcard) > media.INLINE_LIMIT >= len(stamp)
    document = capture_document(CAPTURE, SESSION)
    # The two runs' tasks and nothing else: the images re-sent after each step are no user's.
    first, second = [step for step in document["steps"] if step["source"] == "user"]
    assert second["message"] == "New task:\nWhich river is on the map?"
    path = _input_path(0, 0)
    assert first["message"] == [
        {"type": "text", "text": "New task:\nWhere was this postcard sent from? The weather there and in Oslo, a "
                                 "flight from Oslo, and a map of the city, please."},
        _image(path), _image(stamp)]
    assert first["extra"]["media"] == [{"path": path, "media_type": "image/png", "bytes": len(_decoded(postcard))}]
    image = _read_back(path)
    assert (image.media_type, image.data) == ("image/png", _decoded(postcard))


def test_the_tool_image_is_its_result_content_parts() -> None:
    # The map the step callback showed the model after render_map's call (call 4's input), with the text it was shown.
    (sent_map,) = _sent_images(4)
    assert len(sent_map) > media.INLINE_LIMIT
    document = capture_document(CAPTURE, SESSION)
    (render_map,) = [call for step in document["steps"] for call in step.get("tool_calls") or ()
                     if call["function_name"] == "render_map"]
    (result,) = _results(document)[render_map["tool_call_id"]]
    # Call 4's input holds the task's two images and three steps' two each before it.
    path = _input_path(4, 8)
    assert result["content"] == [{"type": "text", "text": _STORED}, _image(path)]
    assert result["extra"]["media"] == [{"path": path, "media_type": "image/png", "bytes": len(_decoded(sent_map))}]
    image = _read_back(path)
    assert (image.media_type, image.data) == ("image/png", _decoded(sent_map))
    # Its tool span records the AgentImage as the temporary file smolagents saved it to: no result the model saw.
    (tool_span,) = [span for span in capture_spans(CAPTURE) if span.attributes.get("tool.name") == "render_map"]
    assert json.loads(tool_span.attributes["output.value"]).endswith(".png")


def test_the_task_images_shown_again_after_each_step_are_its_observation() -> None:
    postcard, stamp = _task_images()
    document = capture_document(CAPTURE, SESSION)
    results = _results(document)
    # The parallel step: each call's result from its tool span, the images shown with them a result of no call.
    assert [result["content"] for result in results["call_0_0"] + results["call_0_1"]] == ["sunny, 21°C",
                                                                                           "rainy, 9°C"]
    (shown,) = results[None]
    assert shown["content"] == [_image(_input_path(1, 2)), _image(stamp)]
    assert shown["extra"]["from"] == "input history"
    # The failed call: the error text it was shown, then the images, still flagged.
    (failed,) = results["call_1_0"]
    text, *images = failed["content"]
    assert text["text"].startswith("Error:\nError executing tool 'lookup_flight'")
    assert images == [_image(_input_path(2, 4)), _image(stamp)]
    assert failed["extra"]["is_error"]
    # The retry and run one's answer (shown in run two's call), each with the two images after it.
    (retried,) = results["call_2_0"]
    assert retried["content"] == [{"type": "text", "text": "SK 4711 Oslo 09:10 -> Paris 11:45"},
                                  _image(_input_path(3, 6)), _image(stamp)]
    (answered,) = results["call_4_0"]
    assert answered["content"][1:] == [_image(_input_path(5, 9)), _image(stamp)]
    for path in (_input_path(1, 2), _input_path(2, 4), _input_path(3, 6), _input_path(5, 9)):
        assert _read_back(path).data == _decoded(postcard)


def test_a_step_s_observation_images_are_no_user_message() -> None:
    # Mapped alone: the call after render_map reads no message of images alone; the step's images are its result's.
    call = openinference.map_span(SpanReader(_call_spans()[4]), ())
    assert isinstance(call, LlmCall)
    assert [message.role for message in call.input_messages] == [
        "system", "user", "assistant", "tool", "tool", "assistant", "tool", "assistant", "tool"]
    shown = [part.result_parts for message in call.input_messages for part in message.tool_results]
    assert [[part.kind for part in parts or ()] for parts in shown] == [
        ["text", "media", "media"], ["text", "media", "media"], ["text", "media", "media"], ["text", "media"]]


def test_a_code_agent_s_observation_images_are_its_step_s_observation() -> None:
    """smolagents' vision browser example: a CodeAgent whose step callback sets a screenshot as the step's observation
    images. No capture records one: the code-agent capture's second call, its step's observation preceded by a message
    of an image alone, as `ActionStep.to_messages` writes it (the image: this capture's stamp, small, inlined)."""
    code_agent = "smolagents_openinference_code-agent-no-session"
    spans = capture_spans(code_agent)
    second = sorted((span for span in spans if span.name == "OpenAIModel.generate"),
                    key=lambda span: span.start_time_unix_nano)[1]
    observation, shown = "llm.input_messages.4.", "llm.input_messages.5."
    assert second.attributes[observation + "message.role"] == "tool-response"
    assert not any(key.startswith(shown) for key in second.attributes)
    stamp = _task_images()[1]
    attributes = {shown + key.removeprefix(observation) if key.startswith(observation) else key: value
                  for key, value in second.attributes.items()}
    attributes.update({observation + "message.role": "user",
                       observation + "message.contents.0.message_content.type": "image",
                       observation + "message.contents.0.message_content.image.image.url": stamp})
    screenshot = replace(second, attributes=attributes)
    document = trajectory_from_spans([screenshot if span is second else span for span in spans],
                                     session_id=None).document()
    (code_step,) = [step for step in document["steps"] if "get_weather(city=" in str(step.get("message"))]
    (result,) = code_step["observation"]["results"]
    assert result["content"] == [
        {"type": "text", "text": "Observation:\nExecution logs:\nsunny, 21°C\nLast output from code snippet:\nNone"},
        _image(stamp)]
    assert result["extra"] == {"from": "input history", "tool": "python_interpreter"}
    assert [step["source"] for step in document["steps"]].count("user") == 1


def test_no_base64_as_text_anywhere() -> None:
    document = capture_document(CAPTURE, SESSION)

    def strip(value: Any) -> Any:
        """The document, every image part's path left out: where no base64 may be (a small one is its data URL)."""
        if isinstance(value, dict):
            if value.get("type") == "image" and isinstance(value.get("source"), dict):
                return {**value, "source": {**value["source"], "path": "<image>"}}
            return {key: strip(item) for key, item in value.items()}
        if isinstance(value, list):
            return [strip(item) for item in value]
        return value

    assert _BASE64_RUN.findall(json.dumps(strip(document))) == []
    assert not errors_only(validate_trajectory(document, schema=True))
    atif.Trajectory.model_validate(document)


def test_the_conversation_that_happened() -> None:
    document = capture_document(CAPTURE, SESSION)
    assert corpus.compare(document, corpus.GroundTruth.of(_log()), call_ids=True) == []
    assert questions.missing_questions(document, _log()) == []
    assert [entry["stream"] for entry in _log()] == [False] * 5 + [True]
    assert document["agent"]["name"] == "postcard_desk"
    assert [step["source"] for step in document["steps"]] == ["system", "user"] + ["agent"] * 5 + ["user", "agent"]
