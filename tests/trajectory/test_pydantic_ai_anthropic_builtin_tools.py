"""pydantic-ai's native tools on an Anthropic model, read from its capture (`pydantic-ai_anthropic_builtin-tools`):
pydantic-ai 2.78 on claude-sonnet-4-6 with `WebSearch`, `WebFetch` and `NativeTool(CodeExecutionTool())` beside three
function tools, which Anthropic runs as server tools within the answer; two runs of one conversation, the second
given the first's messages and streamed.

pydantic-ai's instrumentation writes each server tool's call and result as `tool_call` / `tool_call_response` parts
marked `builtin` in the assistant message (`pydantic_ai_native_tools` reads them). Before it, each search, fetch and
command was a call of its step with no result and nothing saying the provider ran it, a command named `code_execution`
(pydantic-ai's kind) where the API's block named `bash_code_execution`; the cited answers' text had a newline at each
split the API made around a cited passage; the searches were not counted nor priced, the fetches not counted, and the
provider's tools were not among the agent's tools.
"""

from __future__ import annotations

import json
from decimal import Decimal
from typing import Any

import genai_prices
import pytest

from evalkit.trajectory.mappers import pydantic_ai, pydantic_ai_native_tools
from evalkit.trajectory.mappers.reader import SpanReader
from evalkit.trajectory.operations import LlmCall
from tests.captures import corpus, questions
from tests.trajectory.span_fixtures import capture_document, capture_spans, capture_truth, results_by_call

CAPTURE = "pydantic-ai_anthropic_builtin-tools"
SESSION = "pai-anthropic-builtin-tools-1"
Json = dict[str, Any]


def _document() -> Json:
    return capture_document(CAPTURE, SESSION)


def _log() -> list[Json]:
    return corpus.load(CAPTURE).llm_log


def _runs(steps: list[Json], log: list[Json]) -> list[tuple[Json, Json, Json]]:
    """Each server tool run the fake LLM answered with, and the step and ATIF result it made."""
    return [(use, step, results_by_call(step).get(use["id"], {}))
            for step, entry in zip(steps, log, strict=True) for use in entry["response"].get("server_tool_uses") or ()]


def test_the_trajectory_is_the_conversation_that_happened() -> None:
    """One step per call with its text and tool calls (the provider's among them, by their ids), each function tool's
    result on its call, both questions once, before their steps; the history each call re-sends no step of its own."""
    document = _document()
    assert corpus.compare(document, capture_truth(CAPTURE), call_ids=True) == []
    assert questions.missing_questions(document, _log()) == []
    assert [step["source"] for step in document["steps"]] == [
        "system", "user", "agent", "agent", "agent", "user", "agent", "agent"]
    assert not any(step.get("is_copied_context") for step in document["steps"])


def test_each_native_tool_is_a_call_of_its_step_run_by_the_provider_named_as_the_api_named_it() -> None:
    """Each search, fetch and command is a call of the step of the answer that ran it, marked run by the provider, named
    as Anthropic's `server_tool_use` block named it (a command `bash_code_execution`, which pydantic-ai records by its
    kind, `code_execution`), its input the arguments; the function tools are not marked."""
    steps, log = corpus.llm_steps(_document()), _log()
    for step, entry in zip(steps, log, strict=True):
        uses = entry["response"].get("server_tool_uses") or []
        ran = [c for c in step.get("tool_calls") or () if (c.get("extra") or {}).get("run_by") == "provider"]
        assert [(c["tool_call_id"], c["function_name"], c["arguments"]) for c in ran] == [
            (use["id"], use["name"], use["input"]) for use in uses]
        assert all(c["tool_call_id"].startswith("srvtoolu_") for c in ran)
    assert sorted({use["name"] for entry in log for use in entry["response"].get("server_tool_uses") or ()}) == [
        "bash_code_execution", "web_fetch", "web_search"]


def test_each_native_tool_result_is_on_its_call_from_the_answer_as_a_person_reads_it() -> None:
    """What each tool gave is its call's result, on the answer's step (`extra.from: "answer"`), in the shape
    OpenInference's Anthropic captures give it: a search's pages (url, title, age; never the encrypted content), the
    fetched document (url, title, when, text), a command's return code, stdout and stderr; the command that returned 1
    flagged, the others not."""
    runs = _runs(corpus.llm_steps(_document()), _log())
    assert len(runs) == 6
    for use, _step, result in runs:
        assert (result.get("extra") or {}).get("from") == "answer", use["id"]
        shown = json.loads(corpus.message_text(result["content"]))
        if use["name"] == "web_search":
            assert shown == [{"url": page["url"], "title": page["title"], "page_age": page["page_age"]}
                             for page in use["results"]]
        elif use["name"] == "web_fetch":
            document = use["result"]["content"]
            assert shown == [{"url": use["result"]["url"], "title": document["title"],
                              "retrieved_at": use["result"]["retrieved_at"], "text": document["source"]["data"]}]
        else:
            ran = use["result"]
            assert shown == {"return_code": ran["return_code"], "stdout": ran["stdout"], "stderr": ran["stderr"]}
            failed = ran["return_code"] != 0
            assert bool((result.get("extra") or {}).get("is_error")) == failed, use["id"]
            if failed:
                assert result["extra"]["error"] == {"status": "error", "message": "return code 1"}
        assert "encrypted_content" not in corpus.message_text(result["content"])


def test_a_cited_answer_is_one_text_as_the_model_wrote_it() -> None:
    """The API splits a cited answer into a text block of each cited passage and one of the text between, which
    pydantic-ai records as a text part each: the step's message is the text as written (pydantic-ai's own
    `ModelResponse.text` joins adjacent parts as they are), no newline at a split."""
    steps, log = corpus.llm_steps(_document()), _log()
    cited = [(step, entry) for step, entry in zip(steps, log, strict=True) if entry["response"].get("citations")]
    assert len(cited) == 2
    for step, entry in cited:
        assert step["message"] == entry["response"]["text"]


def test_the_searches_and_fetches_are_counted_and_the_searches_priced() -> None:
    """Each answer's searches (pydantic-ai's `gen_ai.usage.details.web_search_requests`) are its step's
    `metrics.extra.web_search_requests`, priced per search as genai-prices prices them; its fetches (recorded nowhere
    but as its `web_fetch` calls) its `web_fetch_requests`."""
    steps, log = corpus.llm_steps(_document()), _log()
    for step, entry in zip(steps, log, strict=True):
        usage, ran = entry["response"]["usage"], [u["name"] for u in entry["response"].get("server_tool_uses") or ()]
        extra = step["metrics"].get("extra") or {}
        assert extra.get("web_search_requests") == (usage.get("web_search_requests") or None)
        assert extra.get("web_fetch_requests") == (ran.count("web_fetch") or None)
        price = genai_prices.calc_price(
            genai_prices.Usage(input_tokens=usage["input_tokens"], output_tokens=usage["output_tokens"],
                               web_searches=usage.get("web_search_requests") or None),
            entry["model"], provider_id="anthropic")
        assert abs(Decimal(str(step["metrics"]["cost_usd"])) - Decimal(str(price.total_price))) < Decimal("1e-9")
    assert sum((s["metrics"].get("extra") or {}).get("web_search_requests") or 0 for s in steps) == 2


def test_the_native_tools_offered_are_among_the_agents_tools() -> None:
    """Each native tool the requests offered (`model_request_parameters.native_tools`) is one of the agent's tools,
    named by its kind as the request names it, the options pydantic-ai recorded as offered, after the functions."""
    definitions = _document()["agent"]["tool_definitions"]
    assert [d["function"]["name"] for d in definitions] == [
        "get_exchange_rate", "get_weather", "get_walking_time", "web_search", "web_fetch", "code_execution"]
    offered = {d["function"]["name"]: d["extra"]["offered"] for d in definitions[3:]}
    assert offered == {
        "web_search": {"type": "web_search", "optional": False, "search_context_size": "medium", "max_uses": 3},
        "web_fetch": {"type": "web_fetch", "optional": False, "max_uses": 2, "enable_citations": False},
        "code_execution": {"type": "code_execution", "optional": False},
    }
    assert all("parameters" not in d["function"] for d in definitions[3:])


def test_the_history_re_sent_reads_as_the_answer_it_repeats() -> None:
    """The last call's input re-sends every earlier answer with its native tool parts: each read as the answer was,
    its commands named alike, its results the same, its cited text one text, so that none is a step again."""
    chats = [span for span in capture_spans(CAPTURE) if span.attributes.get("gen_ai.operation.name") == "chat"]
    calls = []
    for span in chats:
        call = pydantic_ai.map_span(SpanReader(span), ())
        assert isinstance(call, LlmCall)
        calls.append(call)
    resent = [message for message in calls[-1].input_messages if message.role == "assistant"]
    answers = [call.output_messages[0] for call in calls[:-1]]
    assert [(m.text, [(p.call_id, p.name, p.extra) for p in m.tool_calls], [(p.call_id, p.text) for p in
             m.tool_results]) for m in resent] == [
        (m.text, [(p.call_id, p.name, p.extra) for p in m.tool_calls], [(p.call_id, p.text) for p in m.tool_results])
        for m in answers]


def test_a_call_holding_no_native_tool_is_not_read_again(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every other pydantic-ai call (here the thinking capture's, on the same model) is not read by the native tools'
    rule: its messages hold no `builtin` part and its request offered no native tool, which a text test tells."""
    def refused(*_: object, **__: object) -> None:
        raise AssertionError("read a call holding no native tool")

    monkeypatch.setattr(pydantic_ai_native_tools, "read_call", refused)
    monkeypatch.setattr(pydantic_ai_native_tools.hosted_tool_definitions, "offered", refused)
    chats = [span for span in capture_spans("pydantic-ai_anthropic_thinking")
             if span.attributes.get("gen_ai.operation.name") == "chat"]
    assert len(chats) == 5
    for span in chats:
        assert isinstance(pydantic_ai.map_span(SpanReader(span), ()), LlmCall)
