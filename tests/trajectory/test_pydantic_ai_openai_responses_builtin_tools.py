"""pydantic-ai's native tools on OpenAI's Responses API, read from its capture
(`pydantic-ai_openai-responses_builtin-tools`): pydantic-ai 2.78 on `OpenAIResponsesModel("gpt-4.1")` with `WebSearch`
and `NativeTool(CodeExecutionTool())` beside three function tools, which the API runs itself within the answer (its
`web_search_call` and `code_interpreter_call` items, their sources and logs included); two runs of one conversation,
the second given the first's messages and streamed.

pydantic-ai's instrumentation writes each item as a `tool_call` / `tool_call_response` pair marked `builtin` in the
assistant message (`pydantic_ai_native_tools` reads them). Before its Responses rule, each item was read as an
Anthropic server tool's: a search's result the raw `{"status", "sources"}` JSON, its status nowhere on the call; each
run of code named `code_execution` (pydantic-ai's kind, where the request names the tool `code_interpreter`), its
container id among the arguments and its output the raw `{"status", "logs": […]}` JSON, not what the code printed.
"""

from __future__ import annotations

import json
from decimal import Decimal
from typing import Any

import genai_prices

from evalkit.trajectory.mappers import pydantic_ai, pydantic_ai_native_tools
from evalkit.trajectory.mappers.reader import SpanReader
from evalkit.trajectory.operations import LlmCall, Message, Part
from tests.captures import corpus, questions
from tests.trajectory.span_fixtures import capture_document, capture_spans, capture_truth, results_by_call

CAPTURE = "pydantic-ai_openai-responses_builtin-tools"
SESSION = "pai-openai-builtin-tools-1"
Json = dict[str, Any]


def _document() -> Json:
    return capture_document(CAPTURE, SESSION)


def _log() -> list[Json]:
    return corpus.load(CAPTURE).llm_log


def _hosted(entry: Json) -> list[tuple[str, Json]]:
    """The items the API ran in a call's answer, as the log keeps them, in the answer's order: each kind and item."""
    response = entry["response"]
    return [*(("web_search", item) for item in response.get("web_search_calls") or ()),
            *(("code_interpreter", item) for item in response.get("code_interpreter_calls") or ())]


def test_the_trajectory_is_the_conversation_that_happened() -> None:
    """One step per call with its text and tool calls (the API's among them, by their item ids), each function tool's
    result on its call, both questions once, before their steps; the history each call re-sends no step of its own."""
    document = _document()
    assert corpus.compare(document, capture_truth(CAPTURE), call_ids=True) == []
    assert questions.missing_questions(document, _log()) == []
    assert [step["source"] for step in document["steps"]] == [
        "system", "user", "agent", "agent", "agent", "user", "agent", "agent"]
    assert not any(step.get("is_copied_context") for step in document["steps"])


def test_each_hosted_tool_is_a_call_of_its_step_run_by_the_provider_named_as_the_request_names_it() -> None:
    """Each search and each run of code is a call of the step of the answer that ran it, by its item's id, marked run by
    the provider with the item's status, named as the request names the tool (a run `code_interpreter`, which
    pydantic-ai records by its kind, `code_execution`); a search's action its arguments (what it read is its result),
    a run's code its arguments and the container it ran in on the call; the function tools are not marked."""
    steps, log = corpus.llm_steps(_document()), _log()
    for step, entry in zip(steps, log, strict=True):
        ran = [c for c in step.get("tool_calls") or () if (c.get("extra") or {}).get("run_by") == "provider"]
        expected = []
        for kind, item in _hosted(entry):
            if kind == "web_search":
                expected.append((item["id"], kind, {"type": "search", "query": item["action"]["query"]},
                                 {"run_by": "provider", "status": item["status"]}))
            else:
                expected.append((item["id"], kind, {"code": item["code"]},
                                 {"run_by": "provider", "container_id": item["container_id"],
                                  "status": item["status"]}))
        assert [(c["tool_call_id"], c["function_name"], c["arguments"], c["extra"]) for c in ran] == expected
    assert [kind for entry in log for kind, _ in _hosted(entry)] == [
        "web_search", "code_interpreter", "code_interpreter", "code_interpreter", "web_search"]


def test_each_hosted_tool_result_is_on_its_call_from_the_answer_as_a_person_reads_it() -> None:
    """What each tool gave is its call's result, on the answer's step (`extra.from: "answer"`): a search's pages (each
    source's url), a run's output (the logs it printed, as a command's output is shown). The run whose code raised is a
    run the API calls `completed`, its traceback the logs: shown, not flagged; no run is."""
    steps, log = corpus.llm_steps(_document()), _log()
    runs = [(kind, item, results_by_call(step).get(item["id"], {}))
            for step, entry in zip(steps, log, strict=True) for kind, item in _hosted(entry)]
    assert len(runs) == 5
    for kind, item, result in runs:
        assert (result.get("extra") or {}).get("from") == "answer", item["id"]
        shown = corpus.message_text(result["content"])
        if kind == "web_search":
            assert json.loads(shown) == [{"url": source["url"]} for source in item["action"]["sources"]]
        else:
            assert shown == "".join(output["logs"] for output in item["outputs"])
        assert not (result.get("extra") or {}).get("is_error"), item["id"]
    raised = [result for kind, item, result in runs if "Traceback" in corpus.message_text(result["content"])]
    assert len(raised) == 1


def test_the_searches_are_counted_and_priced_at_genai_prices_rate_for_openai() -> None:
    """Each answer's searches (pydantic-ai counts its `search` actions as `gen_ai.usage.details.web_search_requests`;
    OpenAI bills each) are its step's `metrics.extra.web_search_requests`, priced per search as genai-prices prices an
    OpenAI model's ($10 a thousand for gpt-4.1)."""
    steps, log = corpus.llm_steps(_document()), _log()
    for step, entry in zip(steps, log, strict=True):
        usage = entry["response"]["usage"]
        searches = len(entry["response"].get("web_search_calls") or ())
        assert (step["metrics"].get("extra") or {}).get("web_search_requests") == (searches or None)
        price = genai_prices.calc_price(genai_prices.Usage(input_tokens=usage["input_tokens"],
                                                           output_tokens=usage["output_tokens"],
                                                           web_searches=searches or None),
                                        entry["model"], provider_id="openai")
        assert abs(Decimal(str(step["metrics"]["cost_usd"])) - Decimal(str(price.total_price))) < Decimal("1e-9")
    per_search = genai_prices.calc_price(genai_prices.Usage(web_searches=1), "gpt-4.1", provider_id="openai")
    assert per_search.total_price == Decimal("0.01")


def test_the_history_re_sent_reads_as_the_answer_it_repeats() -> None:
    """The last call's input re-sends every earlier answer with its native tool parts (pydantic-ai's messages, though
    gpt-4.1's requests send the API none of them): each read as the answer was, its calls named alike, its results the
    same, so that none is a step again."""
    chats = [span for span in capture_spans(CAPTURE) if span.attributes.get("gen_ai.operation.name") == "chat"]
    calls = []
    for span in chats:
        call = pydantic_ai.map_span(SpanReader(span), ())
        assert isinstance(call, LlmCall)
        calls.append(call)
    resent = [message for message in calls[-1].input_messages if message.role == "assistant"]
    answers = [call.output_messages[0] for call in calls[:-1]]

    def read(message: Message) -> Any:
        return (message.text, [(p.call_id, p.name, p.arguments, p.extra) for p in message.tool_calls],
                [(p.call_id, p.text) for p in message.tool_results])

    assert [read(m) for m in resent] == [read(m) for m in answers]
    assert sum(len(m.tool_results) for m in resent) == 4  # call 0's search, call 2's run, call 3's two
    assert {p.name for m in resent for p in m.tool_calls if (p.extra or {}).get("run_by") == "provider"} == {
        "web_search", "code_interpreter"}


def _answer(*parts: Part) -> LlmCall:
    call = LlmCall(span=capture_spans(CAPTURE)[0], emitter=pydantic_ai.NAME, model="gpt-4.1", provider="openai")
    call.output_messages = [Message("assistant", list(parts))]
    pydantic_ai_native_tools.read_call(call, answer=True, history=False)
    return call


def test_a_run_the_api_says_failed_is_flagged_and_a_search_holding_only_its_status_has_no_result() -> None:
    """A run of code whose item the API calls `failed` (or `incomplete`) is flagged, its status the error; a search
    whose return holds only its status (the request did not include its sources) is a call with no result, as the
    openai-agents instrumentations' searches are."""
    call = _answer(
        Part("tool_call", call_id="ci_1", name="code_execution", arguments={"container_id": "cntr_1", "code": "1/0"}),
        Part("tool_result", call_id="ci_1", name="code_execution", text='{"status":"failed"}'),
        Part("tool_call", call_id="ws_1", name="web_search", arguments={"type": "search", "query": "q"}),
        Part("tool_result", call_id="ws_1", name="web_search", text='{"status":"completed"}'),
    )
    parts = call.output_messages[0].parts
    assert [(p.kind, p.call_id, p.name) for p in parts] == [
        ("tool_call", "ci_1", "code_interpreter"), ("tool_result", "ci_1", "code_interpreter"),
        ("tool_call", "ws_1", "web_search")]
    assert parts[1].error and parts[1].extra == {"is_error": True,
                                                 "error": {"status": "error", "message": "status failed"}}
    assert parts[0].extra == {"run_by": "provider", "container_id": "cntr_1", "status": "failed"}
    assert parts[2].extra == {"run_by": "provider", "status": "completed"}


def test_an_anthropic_native_tool_is_still_read_as_anthropic_s() -> None:
    """The Responses rule reads a return that is a dict of a status and no type: an Anthropic command's result (its
    `type` named) is read as before, named as its block names it, its return code shown."""
    call = _answer(
        Part("tool_call", call_id="srvtoolu_1", name="code_execution", arguments={"command": "true"}),
        Part("tool_result", call_id="srvtoolu_1", name="code_execution",
             text='{"type":"bash_code_execution_result","stdout":"","stderr":"","return_code":0,"content":[]}'))
    parts = call.output_messages[0].parts
    assert [(p.kind, p.name) for p in parts] == [("tool_call", "bash_code_execution"),
                                                 ("tool_result", "bash_code_execution_tool_result")]
    assert json.loads(parts[1].text or "") == {"return_code": 0, "stdout": "", "stderr": ""}
