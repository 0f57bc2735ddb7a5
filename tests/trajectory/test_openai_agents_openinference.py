"""OpenInference's openai-agents instrumentation (`openai-agents_openinference`), the function calls carrying the two
ids the Responses API gives them: the `call_id` (`call_…`), which the `function_call_output` names, and the item's own
`id` (`fc_…`). The instrumentation writes the `call_id` for a call of the answer and of the re-sent history alike (the
item id is only in `output.value` / `input.value`, the items' JSON): right as it is.
"""

from __future__ import annotations

from typing import Any

from evalkit.trajectory.from_spans import trajectory_from_spans
from evalkit.trajectory.mappers import openinference
from evalkit.trajectory.mappers.reader import SpanReader
from evalkit.trajectory.operations import LlmCall
from tests.captures import corpus
from tests.trajectory.span_fixtures import capture_spans

CAPTURE = "openai-agents_openinference"


def _model_calls() -> list[dict[str, Any]]:
    """Every function call the model made, in order, as the fake LLM answered it (`id`: its call_id)."""
    return [call for entry in corpus.load(CAPTURE).llm_log for call in entry["response"]["tool_calls"]]


def test_every_call_and_result_is_under_the_call_id_its_output_names() -> None:
    model_calls = _model_calls()
    assert all(c["id"].startswith("call_") and c["item_id"].startswith("fc_") for c in model_calls)
    last = max((s for s in capture_spans(CAPTURE) if s.name == "response"), key=lambda s: s.start_time_unix_nano)
    assert all(c["item_id"] in str(last.attributes["input.value"]) for c in model_calls)
    call = openinference.map_span(SpanReader(last), ())
    assert isinstance(call, LlmCall)
    asked = [p.call_id for m in call.input_messages for p in m.parts if p.kind == "tool_call"]
    answered = [p.call_id for m in call.input_messages for p in m.parts if p.kind == "tool_result"]
    assert asked == answered == [c["id"] for c in model_calls]
    capture = corpus.load(CAPTURE)
    document = trajectory_from_spans(capture_spans(CAPTURE), session_id=capture.session_id).document()
    assert corpus.compare(document, corpus.GroundTruth.of(capture.llm_log)) == []
    steps = corpus.llm_steps(document)
    assert [c["tool_call_id"] for s in steps for c in s.get("tool_calls") or ()] == [c["id"] for c in model_calls]
    results = [r["source_call_id"] for s in steps for r in (s.get("observation") or {}).get("results") or ()]
    assert results == [c["id"] for c in model_calls]
    for trajectory in corpus.all_trajectories(document):
        assert not [s for s in trajectory["steps"] if s.get("is_copied_context")]
    assert not document["extra"].get("warnings")
