"""openai-agents with the hosted `WebSearchTool()` beside a function tool, traced by OpenTelemetry's
`opentelemetry-instrumentation-openai-agents-v2` (the `openai-agents_otel-genai_hosted-tools` capture: the run of
`openai-agents_openinference_hosted-tools`).

The API runs a web search itself while it answers: a `web_search_call` item of the answer, no result ever sent back;
the answer's text carries `url_citation` annotations. 0.1.0 writes a search of an answer without text as a text part
holding the item's repr, an answer with text as its text alone, and the annotations only where a later call re-sends
the answer (`trajectory/mappers/otel_openai_agents.py`). Each recorded search must be a call of the step that made it,
named as the tool, marked run by the provider with its status and given no result; each answer whose citations a span
records must keep them. The streamed turn's search and citation are in no span (a known gap of the corpus test).
"""

from __future__ import annotations

import json
from dataclasses import replace
from decimal import Decimal
from typing import Any

import genai_prices
from span_fixtures import capture_document, capture_spans, results_by_call

from evalkit.trajectory.mappers import otel_openai_agents
from evalkit.trajectory.mappers.reader import SpanReader
from evalkit.trajectory.operations import LlmCall
from evalkit.trajectory.span import Span
from tests.captures import corpus

CAPTURE = "openai-agents_otel-genai_hosted-tools"
SESSION = "oa-otel-genai-hosted-tools-1"


def _log() -> list[dict[str, Any]]:
    return corpus.load(CAPTURE).llm_log


def _call_steps() -> list[dict[str, Any]]:
    """The steps of the LLM calls evalkit received, in the order they were made."""
    return corpus.llm_steps(capture_document(CAPTURE, SESSION))


def _chat_spans() -> list[Span]:
    return sorted((span for span in capture_spans(CAPTURE) if span.attributes.get("gen_ai.operation.name") == "chat"),
                  key=lambda span: span.start_time_unix_nano)


def _read(span: Span) -> LlmCall:
    call = otel_openai_agents.map_span(SpanReader(span), ())
    assert isinstance(call, LlmCall)
    return call


def test_each_recorded_web_search_is_a_call_of_the_step_that_made_it_run_by_the_provider() -> None:
    """The search the API ran beside `book_hotel` (an answer without text: the item's repr on the span) is a tool
    call of that answer's step, named as the tool the agent was given, its action the arguments and its status kept,
    marked run by the provider; it has no result and no step of its own, and its repr is no text of the step. The
    streamed answer's search, beside its text, is in no span: no call of its step."""
    log, steps = _log(), _call_steps()
    assert len(steps) == len(log) == 4
    for step, entry in zip(steps, log, strict=True):
        recorded = [] if entry["response"]["text"] else entry["response"].get("web_search_calls") or []
        calls = [c for c in step.get("tool_calls") or () if c["function_name"] == "web_search"]
        assert [(c["tool_call_id"], c["arguments"], c.get("extra")) for c in calls] == [
            (s["id"], s["action"], {"run_by": "provider", "status": s["status"]}) for s in recorded]
        assert not {c["tool_call_id"] for c in calls} & set(results_by_call(step))
        assert step["message"] == entry["response"]["text"]
    assert log[0]["response"]["web_search_calls"] and log[3]["response"]["web_search_calls"]
    everything = capture_document(CAPTURE, SESSION)["steps"]
    assert sum(1 for step in everything for call in step.get("tool_calls") or ()
               if call["function_name"] in ("web_search", "web_search_call")) == 1
    # The first answer: the search and book_hotel in parallel, book_hotel's failure on its call.
    booking = log[0]["response"]["tool_calls"][0]
    assert [c["function_name"] for c in steps[0]["tool_calls"]] == ["web_search", "book_hotel"]
    assert results_by_call(steps[0])[booking["id"]]["extra"]["is_error"] is True


def test_an_answers_citations_are_read_from_the_call_re_sending_it() -> None:
    """Call 2's `url_citation`, written only in turn 2's re-sent history (its content part's dict repr), is on call
    2's step as the API gave it, its indices cutting the cited passage of the step's message; the streamed answer's
    citation is in no span, and no step shows one it was not given."""
    steps, log = _call_steps(), _log()
    cited = log[2]["response"]["annotations"]
    assert steps[2]["extra"]["annotations"] == cited
    for annotation in cited:
        assert steps[2]["message"][annotation["start_index"]:annotation["end_index"]] == \
            "the Oslo Jazz Festival plays Rockefeller"
    assert log[3]["response"]["annotations"]
    assert [i for i, step in enumerate(steps) if "annotations" in step["extra"]] == [2]
    # On the answering call's own span, nothing of them.
    assert "annotations" not in _read(_chat_spans()[2]).extra


def test_the_sources_a_search_consulted_are_no_arguments() -> None:
    """A request that includes `web_search_call.action.sources` gets the URLs the search consulted in the action
    (pydantic's repr: `sources=[ActionSearchSource(type='url', url='…')]`): what the search found, kept in the call's
    extra as plain values, the action's arguments without it."""
    span = _chat_spans()[0]
    answer = json.loads(str(span.attributes["gen_ai.output.messages"]))
    part = answer[0]["parts"][0]
    url = "https://www.visitoslo.com/en/whats-on/"
    part["content"] = part["content"].replace(
        "sources=None", f"sources=[ActionSearchSource(type='url', url='{url}')]")
    consulted = replace(span, attributes={**span.attributes, "gen_ai.output.messages": json.dumps(answer)})
    [search] = [call for message in _read(consulted).output_messages for call in message.tool_calls
                if call.name == "web_search"]
    assert search.arguments == _log()[0]["response"]["web_search_calls"][0]["action"]
    assert search.extra == {"run_by": "provider", "status": "completed", "sources": [{"type": "url", "url": url}]}


def test_a_recorded_search_is_counted_and_priced() -> None:
    """OpenAI bills each search an answer ran (its usage counts none): call 0's, whose item's repr is on its span, is
    its step's `metrics.extra.web_search_requests`, priced at genai-prices' $0.01; call 3's is in no span (a known
    gap)."""
    steps, log = _call_steps(), _log()
    counted = [(step["metrics"].get("extra") or {}).get("web_search_requests") for step in steps]
    assert counted == [1, None, None, None]
    assert [len(entry["response"].get("web_search_calls") or ()) for entry in log] == [1, 0, 0, 1]
    usage = log[0]["response"]["usage"]
    price = genai_prices.calc_price(genai_prices.Usage(input_tokens=usage["input_tokens"],
                                                       output_tokens=usage["output_tokens"], web_searches=1),
                                    log[0]["model"], provider_id="openai")
    assert abs(Decimal(str(steps[0]["metrics"]["cost_usd"])) - Decimal(str(price.total_price))) < Decimal("1e-9")
