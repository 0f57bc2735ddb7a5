"""Strands Agents' spans rewritten by OpenInference's span processor (the `strands_openinference` capture).

`StrandsAgentsToOpenInferenceProcessor` adds OpenInference attributes to Strands' own spans and strips their
`gen_ai.*` events (`trajectory/mappers/strands_openinference.py`): each span is read by `openinference` and then
`strands`. The trajectory must be the one Strands' own spans give (`strands_native`): the agent named as Strands
names it, each call's finish reason, the processor's restatements read rather than listed as unmapped.
"""

from __future__ import annotations

from typing import Any

from span_fixtures import capture_document, capture_spans

from evalkit.trajectory.mappers import openinference
from evalkit.trajectory.mappers.reader import SpanReader
from evalkit.trajectory.operations import AgentRun
from evalkit.trajectory.span import Span

CAPTURE = "strands_openinference"
SESSION = "strands-oi-trip-1"


def _document() -> dict[str, Any]:
    return capture_document(CAPTURE, SESSION)


def _agent_spans() -> list[Span]:
    return [span for span in capture_spans(CAPTURE) if span.name.startswith("invoke_agent")]


def test_the_agent_is_named_as_strands_names_it_not_by_the_processors_graph_node() -> None:
    spans = _agent_spans()
    assert len(spans) == 2  # one a turn
    for span in spans:
        # The processor's node id is one constant for every Strands agent; Strands' own attribute names it.
        assert span.attributes["graph.node.id"] == "strands_agent"
        assert span.attributes["gen_ai.agent.name"] == "trip-planner"
        run = openinference.map_span(SpanReader(span), ())
        assert isinstance(run, AgentRun) and run.name == "trip-planner"
    assert _document()["agent"]["name"] == "trip-planner"


def test_each_call_keeps_its_finish_reason_from_its_output_message() -> None:
    """Strands' `gen_ai.choice` event is stripped: the output message's finish reason is the one left."""
    steps = [step for step in _document()["steps"] if step.get("llm_call_count") == 1]
    assert [step["extra"].get("finish_reasons") for step in steps] == [
        ["tool_use"], ["end_turn"], ["tool_use"], ["tool_use"], ["end_turn"]]


def test_the_processors_restatements_are_read_and_only_strands_own_leftovers_unmapped() -> None:
    """What is left unmapped is what `strands_native` leaves (its stripped events aside): the agent span's tool
    names and `gen_ai.system`, not the processor's copies of the messages, graph ids or `tool.call_id`."""
    assert _document()["extra"]["unmapped_attributes"] == ["gen_ai.agent.tools", "gen_ai.system"]


def test_parallel_results_are_each_on_their_call_though_the_processor_merges_them() -> None:
    """The processor turns Strands' one user message of two `toolResult`s into one tool message (the last id, both
    texts joined): the results come from the tool spans, each on its call; the raising one flagged."""
    llm_spans = [span for span in capture_spans(CAPTURE) if span.name == "chat"]
    merged = llm_spans[1].attributes
    assert (merged["llm.input_messages.3.message.tool_call_id"], merged["llm.input_messages.3.message.content"]) == (
        "call_0_1", "sunny, 21°C rainy, 9°C")
    document = _document()
    assert [step["source"] for step in document["steps"]] == [
        "system", "user", "agent", "agent", "user", "agent", "agent", "agent"]
    results = [[(r["source_call_id"], r["content"], bool(r["extra"].get("is_error")))
                for r in (step.get("observation") or {}).get("results") or ()]
               for step in document["steps"] if step.get("llm_call_count") == 1]
    assert results == [
        [("call_0_0", "sunny, 21°C", False), ("call_0_1", "rainy, 9°C", False)], [],
        [("call_2_0", "Error: no airport in Atlantis", True)], [("call_3_0", "AB123 at 09:40", False)], []]
