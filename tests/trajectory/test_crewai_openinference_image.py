"""A multimodal CrewAI agent under OpenInference (the `crewai_openinference_image` capture's trace exports).

`Agent(multimodal=True)` gives the agent CrewAI's `AddImageTool` (offered as `add_image_to_content`), which returns a
user message of its `action` text and an `image_url` part. In native function calling CrewAI sends the model a tool's
result as `str()` of what it returned: that message's Python repr, a text tool message, no image (the fake LLM's log).
OpenInference records the dict as JSON (`output.mime_type` application/json). Before `crewai._shown_as_str`, each
added image's result was that JSON, not the text the model was shown.
"""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

from span_fixtures import capture_document, capture_spans, capture_truth, results_by_call

from evalkit.trajectory.mappers import openinference
from evalkit.trajectory.mappers.reader import SpanReader
from evalkit.trajectory.operations import ToolExecution
from evalkit.trajectory.span import Span
from tests.captures import corpus, images, questions

CAPTURE = "crewai_openinference_image"
SESSION = "crew-image-1"
ADD_IMAGE = "add_image_to_content"
Json = dict[str, Any]


def _log() -> list[Json]:
    return corpus.load(CAPTURE).llm_log


def _add_image_spans() -> list[Span]:
    """The AddImageTool's TOOL spans, in the order they ran."""
    return sorted((s for s in capture_spans(CAPTURE) if s.name == "Add image to content.run"),
                  key=lambda s: s.start_time_unix_nano)


def _llm_steps(document: Json) -> list[Json]:
    return [step for trajectory in document.get("subagent_trajectories") or ()
            for step in trajectory["steps"] if step.get("llm_call_count") == 1]


def _image_parts(value: Any) -> int:
    """How many ATIF image parts `value` holds, at any depth."""
    if isinstance(value, dict):
        return int(value.get("type") == "image") + sum(_image_parts(item) for item in value.values())
    if isinstance(value, list):
        return sum(_image_parts(item) for item in value)
    return 0


def test_an_added_image_is_the_text_the_model_was_shown() -> None:
    truth = capture_truth(CAPTURE)
    added = {call["id"]: call["arguments"]["image_url"] for call in
             (c for entry in _log() for c in entry["response"]["tool_calls"]) if call["name"] == ADD_IMAGE}
    assert len(added) == 2
    # As recorded: the message dict the tool returned, as JSON.
    photo, sketch = _add_image_spans()
    for span in (photo, sketch):
        assert span.attributes["output.mime_type"] == "application/json"
        assert json.loads(span.attributes["output.value"])["role"] == "user"
    document = capture_document(CAPTURE, SESSION)
    shown = {call_id: result for step in _llm_steps(document) for call_id, result in results_by_call(step).items()
             if call_id in added}
    for call_id, url in added.items():
        # What CrewAI sent: the message's str(), the image's URL inside it as text.
        sent = truth.tool_results[call_id]
        assert sent.startswith("{'role': 'user', 'content': [{'type': 'text', 'text': ")
        assert f"'image_url': {{'url': '{url}'}}" in sent
        assert shown[call_id]["content"] == sent
        assert "is_error" not in shown[call_id]["extra"]


def test_no_image_is_shown_since_none_was_sent() -> None:
    document = capture_document(CAPTURE, SESSION)
    # CrewAI sent the model no image part (its AddImageTool's message went as text): the trajectory shows none.
    assert images.sent_anew(_log()) == []
    assert _image_parts(document) == 0
    assert images.missing_images(document, _log(), lambda ref: f"no image was sent to read back at {ref}") == []


def test_a_json_string_result_stays_as_recorded() -> None:
    # A tool returning a string that holds JSON is recorded as itself (text/plain), and the model is shown it so: only
    # a dict or list OpenInference wrote as JSON is shown as Python's str().
    span = _add_image_spans()[0]
    returned_text = replace(span, attributes={**span.attributes, "output.mime_type": "text/plain"})
    execution = openinference.map_span(SpanReader(returned_text), ())
    assert isinstance(execution, ToolExecution)
    assert execution.result == json.loads(span.attributes["output.value"])


def test_the_tool_loop_is_the_conversation_that_happened() -> None:
    document = capture_document(CAPTURE, SESSION)
    truth = capture_truth(CAPTURE)
    assert corpus.compare(document, truth, call_ids=True) == []
    assert questions.missing_questions(document, _log()) == []
    # The parallel calls' results on their calls, the raising get_weather flagged and answered on its retry.
    first, parallel, retry, _ = _llm_steps(document)[:4]
    assert [c["function_name"] for c in first["tool_calls"]] == [ADD_IMAGE]
    results = results_by_call(parallel)
    assert [c["function_name"] for c in parallel["tool_calls"]] == ["get_weather", "get_opening_hours"]
    failed, hours = (results[c["tool_call_id"]] for c in parallel["tool_calls"])
    assert failed["content"] == "Error executing tool: weather service timed out"
    assert failed["extra"]["is_error"] is True
    assert hours["content"] == "10:00-23:00" and "is_error" not in hours["extra"]
    assert [r["content"] for r in results_by_call(retry).values()] == ["rainy, 9°C"]
    # Each kickoff one turn, the streamed one too: its request, then the crew's agent answering it.
    assert [s["source"] for s in document["steps"]] == ["user", "system", "user", "system"]
    streamed = document["subagent_trajectories"][1]
    assert [s["extra"]["request"].get("stream") for s in streamed["steps"] if s.get("llm_call_count") == 1] == [
        True, True]
