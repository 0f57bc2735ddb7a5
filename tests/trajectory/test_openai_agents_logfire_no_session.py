"""openai-agents' own tracing bridged by logfire (`openai-agents_logfire_no-session`), the function calls carrying the
two ids the Responses API gives them: the `call_id` (`call_…`), which the `function_call_output` names, and the
item's own `id` (`fc_…`).

Before `logfire_openai_agents._function_call_item`, a `function_call` item (in the answer's `output`, in the
`raw_input` history) was read under its item id: every step's tool calls were named `fc_…`, each result of the
re-sent history matched no call (six "matches no tool call; dropped" warnings) and the handoff's result lost what
the model was shown for it (`{"assistant": "Booking agent"}`). The tool spans, which carry no id, still met their
calls by name and arguments, so the corpus comparison did not see it.
"""

from __future__ import annotations

from typing import Any

from evalkit.trajectory.mappers import logfire_openai_agents
from evalkit.trajectory.mappers.reader import SpanReader
from evalkit.trajectory.operations import LlmCall
from tests.captures import corpus
from tests.trajectory.span_fixtures import capture_document, capture_spans

CAPTURE = "openai-agents_logfire_no-session"
Json = dict[str, Any]


def _log() -> list[Json]:
    return corpus.load(CAPTURE).llm_log


def _model_calls() -> list[Json]:
    """Every function call the model made, in order, as the fake LLM answered it (`id`: its call_id)."""
    return [call for entry in _log() for call in entry["response"]["tool_calls"]]


def _document() -> Json:
    return capture_document(CAPTURE, None)


def test_the_capture_s_calls_have_an_item_id_of_their_own() -> None:
    calls = _model_calls()
    assert calls and all(c["id"].startswith("call_") and c["item_id"].startswith("fc_") for c in calls)


def test_a_responses_call_s_calls_and_results_are_named_by_the_call_id() -> None:
    """The last call re-sends every call and its output: each call under its call_id, as its output names it."""
    span = max((s for s in capture_spans(CAPTURE) if logfire_openai_agents.detect(s)
                and str(s.attributes.get("logfire.msg_template", "")).startswith("Responses API")),
               key=lambda s: s.start_time_unix_nano)
    call = logfire_openai_agents.map_span(SpanReader(span), ())
    assert isinstance(call, LlmCall)
    asked = [p.call_id for m in call.input_messages for p in m.parts if p.kind == "tool_call"]
    answered = [p.call_id for m in call.input_messages for p in m.parts if p.kind == "tool_result"]
    assert asked == answered == [c["id"] for c in _model_calls()]


def test_each_step_s_calls_are_the_model_s_and_each_result_is_on_its_call() -> None:
    document = _document()
    truth = corpus.GroundTruth.of(_log())
    assert corpus.compare(document, truth) == []
    steps = corpus.llm_steps(document)
    assert [c["tool_call_id"] for s in steps for c in s.get("tool_calls") or ()] == [c["id"] for c in _model_calls()]
    assert not document["extra"].get("warnings")  # no result of the history left without its call
    # The handoff's result is what the model was shown for its transfer call, beside the agent it started.
    (transfer,) = [c for s in steps for c in s.get("tool_calls") or () if c["function_name"].startswith("transfer_")]
    (handoff,) = [r for s in steps for r in (s.get("observation") or {}).get("results") or ()
                  if r["source_call_id"] == transfer["tool_call_id"]]
    assert handoff["content"] == truth.tool_results[transfer["tool_call_id"]] == '{"assistant": "Booking agent"}'
    assert handoff["extra"]["handoff_to"] == "Booking agent" and handoff["subagent_trajectory_ref"]
