"""openai-agents with the hosted `WebSearchTool()` beside a function tool, traced by OpenInference (the
`openai-agents_openinference_hosted-tools` capture).

The API runs a web search itself while it answers: a `web_search_call` item of the answer, no result ever sent back;
the answer's text carries `url_citation` annotations. OpenInference writes the item as a tool call named
`web_search_call`, without its status, and the annotations only in the Response's dump
(`trajectory/mappers/openai_agents_hosted_tools.py`). Each search must be a call of the step that made it, named as
the tool, marked run by the provider with its status and given no result; each answer must keep its citations.
"""

from __future__ import annotations

import json
from dataclasses import replace
from decimal import Decimal
from typing import Any

import genai_prices
from span_fixtures import capture_document, capture_spans, results_by_call

from evalkit.trajectory.mappers import openai_agents_hosted_tools, openinference
from evalkit.trajectory.mappers.reader import SpanReader
from evalkit.trajectory.operations import LlmCall
from evalkit.trajectory.span import Span
from tests.captures import corpus

CAPTURE = "openai-agents_openinference_hosted-tools"
SESSION = "oa-oi-hosted-tools-1"


def _log() -> list[dict[str, Any]]:
    return corpus.load(CAPTURE).llm_log


def _call_steps() -> list[dict[str, Any]]:
    """The steps of the LLM calls evalkit received, in the order they were made."""
    return corpus.llm_steps(capture_document(CAPTURE, SESSION))


def _response_spans() -> list[Span]:
    return sorted((span for span in capture_spans(CAPTURE) if span.attributes.get("openinference.span.kind") == "LLM"),
                  key=lambda span: span.start_time_unix_nano)


def _read(span: Span) -> LlmCall:
    call = openinference.map_span(SpanReader(span), ())
    assert isinstance(call, LlmCall)
    return call


def test_each_web_search_is_a_call_of_the_step_that_made_it_run_by_the_provider() -> None:
    """The search the API ran is a tool call of its answer's step, named as the tool the agent was given, its action
    the arguments and its status kept, marked run by the provider; it has no result (the model was sent none) and no
    step of its own. The function call beside it is as usual, its raised failure flagged on its result."""
    log, steps = _log(), _call_steps()
    assert len(steps) == len(log) == 4
    searched = 0
    for step, entry in zip(steps, log, strict=True):
        searches = entry["response"].get("web_search_calls") or []
        calls = [c for c in step.get("tool_calls") or () if c["tool_call_id"].startswith("ws_")]
        assert [(c["tool_call_id"], c["function_name"], c["arguments"], c.get("extra")) for c in calls] == [
            (s["id"], "web_search", s["action"], {"run_by": "provider", "status": s["status"]}) for s in searches]
        assert not {c["tool_call_id"] for c in calls} & set(results_by_call(step))
        searched += len(searches)
    assert searched == 2
    everything = capture_document(CAPTURE, SESSION)["steps"]
    assert sum(1 for step in everything for call in step.get("tool_calls") or ()
               if call["function_name"] in ("web_search", "web_search_call")) == searched
    # The first answer: the search and book_hotel in parallel, book_hotel's failure on its call.
    first = steps[0]
    booking = log[0]["response"]["tool_calls"][0]
    assert [c["function_name"] for c in first["tool_calls"]] == ["web_search", "book_hotel"]
    assert results_by_call(first)[booking["id"]]["extra"]["is_error"] is True
    # The streamed turn's answer: its search and its text, one step.
    assert steps[3]["message"] == log[3]["response"]["text"]


def test_each_answer_keeps_its_citations() -> None:
    """The `url_citation` annotations the API put on an answer's text, as it gave them, in its step's extra (the
    streamed turn's too); an answer without any has none."""
    for step, entry in zip(_call_steps(), _log(), strict=True):
        annotations = entry["response"].get("annotations")
        assert step["extra"].get("annotations") == annotations
        for annotation in annotations or ():
            cited = step["message"][annotation["start_index"]:annotation["end_index"]]
            assert cited and cited in entry["response"]["text"]
    assert sum(1 for entry in _log() if entry["response"].get("annotations")) == 2


def test_a_resent_web_search_is_read_as_the_call_it_was() -> None:
    """The SDK re-sends a search's item as history: the input message of the next call holds it as the same call,
    its status read from the item sent (`input.value`)."""
    call = _read(_response_spans()[1])
    sent = next(item for item in json.loads(str(_response_spans()[1].attributes["input.value"]))
                if item.get("type") == "web_search_call")
    [resent] = [part for message in call.input_messages for part in message.tool_calls if part.call_id == sent["id"]]
    assert (resent.name, resent.arguments, resent.extra) == (
        "web_search", sent["action"], {"run_by": "provider", "status": sent["status"]})


def test_the_sources_a_search_consulted_are_no_arguments() -> None:
    """A request that includes `web_search_call.action.sources` gets the URLs the search consulted in the action,
    which the instrumentation writes into the arguments: what the search found, kept in the call's extra."""
    span = _response_spans()[0]
    key = "llm.output_messages.0.message.tool_calls.0.tool_call.function.arguments"
    action = json.loads(str(span.attributes[key]))
    sources = [{"type": "url", "url": "https://www.visitoslo.com/en/whats-on/"}]
    consulted = replace(span, attributes={**span.attributes, key: json.dumps({**action, "sources": sources})})
    [search] = [part for message in _read(consulted).output_messages for part in message.tool_calls
                if part.name == "web_search"]
    assert search.arguments == action
    assert search.extra == {"run_by": "provider", "status": "completed", "sources": sources}


def test_the_agent_lists_the_web_search_tool_as_offered() -> None:
    """OpenInference lists function tools alone (`llm.tools`); the Response echoes every tool the request offered, so
    the `web_search` tool is among the agent's tools, named as the request names it, with the options it was offered
    (its search context size; the options the request left unset, `null` in the echo, left out)."""
    assert not any("web_search" in str(value) for key, value in _response_spans()[0].attributes.items()
                   if key.startswith("llm.tools."))
    [offered] = [tool for tool in _log()[0]["request"]["tools"] if tool["type"] == "web_search"]
    definitions = {definition["function"]["name"]: definition
                   for definition in capture_document(CAPTURE, SESSION)["agent"]["tool_definitions"]}
    assert sorted(definitions) == ["book_hotel", "web_search"]
    assert definitions["web_search"] == {
        "type": "function", "function": {"name": "web_search"},
        "extra": {"offered": {key: value for key, value in offered.items() if value is not None}}}
    assert definitions["web_search"]["extra"]["offered"]["search_context_size"] == "medium"


def _billed(entry: dict[str, Any]) -> int:
    """The searches the logged answer is billed for: its `web_search_call` items whose action is a `search`."""
    return sum(1 for search in entry["response"].get("web_search_calls") or () if search["action"]["type"] == "search")


def test_each_answers_billed_searches_are_counted_and_priced() -> None:
    """OpenAI bills each search an answer ran, which its Responses usage does not count: the `web_search_call` items
    whose action is a `search` are the step's `metrics.extra.web_search_requests`, priced per search as genai-prices
    prices gpt-4o's ($10 a thousand). Calls 1 and 2 re-send call 0's search as history: billed once, to call 0."""
    steps, log = _call_steps(), _log()
    for step, entry in zip(steps, log, strict=True):
        usage, searches = entry["response"]["usage"], _billed(entry)
        assert (step["metrics"].get("extra") or {}).get("web_search_requests") == (searches or None)
        price = genai_prices.calc_price(genai_prices.Usage(input_tokens=usage["input_tokens"],
                                                           output_tokens=usage["output_tokens"],
                                                           web_searches=searches or None),
                                        entry["model"], provider_id="openai")
        assert abs(Decimal(str(step["metrics"]["cost_usd"])) - Decimal(str(price.total_price))) < Decimal("1e-9")
    assert [_billed(entry) for entry in log] == [1, 0, 0, 1]
    assert all("web_search_call" in str(span.attributes["input.value"]) for span in _response_spans()[1:3])
    per_search = genai_prices.calc_price(genai_prices.Usage(web_searches=1), "gpt-4o", provider_id="openai")
    assert per_search.total_price == Decimal("0.01")


def test_a_search_action_that_is_no_search_is_not_billed() -> None:
    """OpenAI bills a `search` action, not an `open_page` or `find_in_page` one: such a call is the step's call of
    the tool all the same, and no billed search."""
    span = _response_spans()[0]
    key = "llm.output_messages.0.message.tool_calls.0.tool_call.function.arguments"
    action = {"type": "open_page", "url": "https://www.visitoslo.com/en/whats-on/"}
    opened = replace(span, attributes={
        **span.attributes, key: json.dumps(action),
        "output.value": str(span.attributes["output.value"]).replace('"action":{"type":"search"',
                                                                     '"action":{"type":"open_page"')})
    call = _read(opened)
    [search] = [part for message in call.output_messages for part in message.tool_calls if part.name == "web_search"]
    assert search.arguments == action
    assert call.usage.web_search_requests is None
    assert _read(span).usage.web_search_requests == 1


def test_a_count_of_searches_the_emitter_recorded_is_kept() -> None:
    """An emitter's own count of the answer's searches (as pydantic-ai records one) is what the call counts."""
    call = _read(_response_spans()[0])
    call.usage.web_search_requests = 3
    openai_agents_hosted_tools.count_billed_searches(call)
    assert call.usage.web_search_requests == 3
