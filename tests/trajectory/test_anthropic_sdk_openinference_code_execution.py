"""The Anthropic SDK with Anthropic's code execution and web fetch server tools beside two client tools, traced by
OpenInference (the `anthropic-sdk_openinference_code-execution` capture).

The API runs the commands, the file edits and the fetches itself, within the answer: each a `server_tool_use` block and
its result block (`bash_code_execution_tool_result`: stdout, stderr, return code, files made;
`text_editor_code_execution_tool_result`; `web_fetch_tool_result`: a document, a PDF's base64, or an error), the answer
naming the container the code ran in and counting its fetches. OpenInference writes each call as a tool call and each
result block as a text of the answer (its JSON, a base64 source redacted); `anthropic_server_tools` reads them as it
reads a web search, `anthropic_server_results` what each result shows a person. The streamed turn's call re-sends so
many blocks that OpenTelemetry's 128-attribute limit drops its first attributes, the re-sent answer's role among them
(`anthropic_openinference_attribute_limit`).
"""

from __future__ import annotations

import base64
import json
from dataclasses import replace
from typing import Any

from span_fixtures import capture_document, capture_spans, results_by_call

from evalkit.trajectory.mappers import openinference
from evalkit.trajectory.mappers.reader import SpanReader
from evalkit.trajectory.operations import LlmCall
from evalkit.trajectory.span import Span
from tests.captures import corpus

CAPTURE = "anthropic-sdk_openinference_code-execution"
SESSION = "oi-anthropic-code-execution-1"
_CODE_EXECUTION = ("bash_code_execution", "text_editor_code_execution")


def _log() -> list[dict[str, Any]]:
    return corpus.load(CAPTURE).llm_log


def _document() -> dict[str, Any]:
    return capture_document(CAPTURE, SESSION)


def _call_steps() -> list[dict[str, Any]]:
    """The steps of the LLM calls evalkit received, in the order they were made."""
    return corpus.llm_steps(_document())


def _call_spans() -> list[Span]:
    return sorted((span for span in capture_spans(CAPTURE) if span.attributes.get("openinference.span.kind") == "LLM"),
                  key=lambda span: span.start_time_unix_nano)


def _read(span: Span) -> LlmCall:
    call = openinference.map_span(SpanReader(span), ())
    assert isinstance(call, LlmCall)
    return call


def _server_runs(name: str) -> list[tuple[dict[str, Any], dict[str, Any], dict[str, Any]]]:
    """Each run of the server tool `name` the fake LLM answered with, and the step and ATIF result it made."""
    found = []
    for step, entry in zip(_call_steps(), _log(), strict=True):
        results = results_by_call(step)
        found.extend((use, step, results[use["id"]]) for use in entry["response"].get("server_tool_uses") or ()
                     if use["name"] == name)
    return found


def test_each_code_execution_is_a_call_of_its_step_with_its_output_a_failed_command_flagged() -> None:
    """Each command and file edit the API ran is a call of the answer's step, run by the provider, its input the
    arguments; its result, from the answer, is what a person reads of it: a command's return code, stdout and stderr
    and the files it made, an edit's result without its type. The command that returned 1 (polars not installed) is a
    failed call, flagged; the others are not."""
    log, steps = _log(), _call_steps()
    assert len(steps) == len(log) == 4
    for step, entry in zip(steps, log, strict=True):
        uses = entry["response"].get("server_tool_uses") or []
        ran = [c for c in step.get("tool_calls") or () if c["tool_call_id"].startswith("srvtoolu_")]
        assert [(c["tool_call_id"], c["function_name"], c["arguments"], c.get("extra")) for c in ran] == [
            (use["id"], use["name"], use["input"], {"run_by": "provider"}) for use in uses]
    commands = _server_runs("bash_code_execution")
    assert len(commands) == 4
    for use, _, result in commands:
        ran = use["result"]
        files = [output["file_id"] for output in ran["content"]]
        assert json.loads(result["content"]) == {"return_code": ran["return_code"], "stdout": ran["stdout"],
                                                 "stderr": ran["stderr"], **({"files": files} if files else {})}
        failed = ran["return_code"] != 0
        assert result["extra"] == {"from": "answer", **({"is_error": True, "error": {
            "status": "error", "message": f"return code {ran['return_code']}"}} if failed else {})}
    assert [use["result"]["return_code"] for use, _, result in commands if result["extra"].get("is_error")] == [1]
    assert [json.loads(result["content"]).get("files") for _, _, result in commands] == [
        None, None, ["file_011CRiders2025png"], None]
    ((edit, _, written),) = _server_runs("text_editor_code_execution")
    assert json.loads(written["content"]) == {"is_file_update": False} and edit["input"]["command"] == "create"
    assert written["extra"] == {"from": "answer"}
    # Beside them, the client tools as usual: get_exchange_rate's failure on its call.
    first = steps[0]
    assert [c["function_name"] for c in first["tool_calls"]] == [
        "web_fetch", "text_editor_code_execution", "bash_code_execution", "bash_code_execution", "get_exchange_rate",
        "get_population"]
    assert results_by_call(first)[log[0]["response"]["tool_calls"][0]["id"]]["extra"]["is_error"] is True


def test_each_fetch_is_the_document_it_got_a_pdf_a_marker_a_failed_fetch_flagged() -> None:
    """A fetched page is one document, its url, title, when it was fetched and its text (as the session page lists a
    search's pages); the PDF's text a marker of its size, its base64 nowhere in the trajectory (nor OpenInference's
    `__REDACTED__`); the fetch that failed (`url_not_accessible`) its error as the API gave it, flagged failed."""
    fetches = _server_runs("web_fetch")
    assert len(fetches) == 3
    pdfs = []
    for use, _, result in fetches:
        got = use["result"]
        if got["type"] == "web_fetch_tool_result_error":
            assert json.loads(result["content"]) == got
            assert result["extra"] == {"from": "answer", "is_error": True,
                                       "error": {"status": "error", "type": "url_not_accessible"}}
            continue
        source = got["content"]["source"]
        if source["type"] == "base64":
            pdfs.append(source["data"])
            text = f"[application/pdf: {len(base64.b64decode(source['data']))} bytes, omitted]"
        else:
            text = source["data"]
        assert json.loads(result["content"]) == [{"url": got["url"], "title": got["content"]["title"],
                                                  "retrieved_at": got["retrieved_at"], "text": text}]
        assert result["extra"] == {"from": "answer"}
    assert len(pdfs) == 1
    everything = json.dumps(_document())
    assert pdfs[0] not in everything and pdfs[0][:40] not in everything and "__REDACTED__" not in everything


def test_the_answer_re_sent_into_a_clipped_span_is_no_user_step() -> None:
    """The streamed turn's call re-sends five earlier messages of many blocks: its span hit OpenTelemetry's limit of 128
    attributes, which dropped its first ones (the request, the provider, the session id, the system message and the
    first question) and cut into the first answer re-sent, its role gone and its first call's id and name under
    `tool_calls`. Read as the assistant's answer it is, its calls whole from its `tool_use` contents, it repeats the
    first step: the session is its two questions and four answers, no user step of JSON, no copied step."""
    clipped = _call_spans()[3]
    assert len(clipped.attributes) == 128
    assert not {"input.value", "session.id", "llm.provider", "llm.input_messages.2.message.role",
                "llm.input_messages.2.message.tool_calls.0.tool_call.id"} & set(clipped.attributes)
    resent = _read(clipped).input_messages[0]
    first = _log()[0]["response"]
    assert resent.role == "assistant"
    assert [(part.call_id, part.name) for part in resent.tool_calls] == [
        *((use["id"], use["name"]) for use in first["server_tool_uses"]),
        *((call["id"], call["name"]) for call in first["tool_calls"])]
    steps = _document()["steps"]
    assert [step["source"] for step in steps] == ["system", "user", "agent", "agent", "agent", "user", "agent"]
    assert not [step["step_id"] for step in steps if step.get("is_copied_context")]
    assert [step["message"] for step in steps if step["source"] == "user"] == [
        entry["request"]["messages"][-1]["content"] for entry in _log() if isinstance(
            entry["request"]["messages"][-1]["content"], str)]


def test_the_fetches_are_counted_and_the_container_named_on_their_steps() -> None:
    """`usage.server_tool_use.web_fetch_requests` (the span's metadata) is the step's `metrics.extra.
    web_fetch_requests`, and the container an answer's code ran in (`metadata.container_id`) its step's
    `extra.container`: an answer that ran no code names none."""
    steps, log = _call_steps(), _log()
    counted = [((step.get("metrics") or {}).get("extra") or {}).get("web_fetch_requests") for step in steps]
    assert counted == [entry["response"]["usage"].get("web_fetch_requests") for entry in log] == [1, None, None, 2]
    named = [(step.get("extra") or {}).get("container") for step in steps]
    assert named == [(entry["response"].get("container") or {}).get("id") for entry in log] == [
        "container_0", None, "container_0", "container_0"]
    assert all(any(use["name"] in _CODE_EXECUTION for use in entry["response"].get("server_tool_uses") or ())
               == (name is not None) for name, entry in zip(named, log, strict=True))


def test_a_command_the_api_could_not_run_gives_its_error_flagged() -> None:
    """A command's `bash_code_execution_tool_result_error` (the container unavailable) is its result as the API gave
    it, flagged failed with its error code, not a return code."""
    span = _call_spans()[2]
    key = "llm.output_messages.0.message.contents.1.message_content.text"
    block = json.loads(str(span.attributes[key]))
    assert block["type"] == "bash_code_execution_tool_result"
    failed = {**block, "content": {"type": "bash_code_execution_tool_result_error", "error_code": "unavailable"}}
    call = _read(replace(span, attributes={**span.attributes, key: json.dumps(failed)}))
    (result,) = [part for message in call.output_messages for part in message.parts if part.kind == "tool_result"]
    assert (result.call_id, json.loads(result.text or ""), result.error, result.extra) == (
        block["tool_use_id"], failed["content"], True,
        {"is_error": True, "error": {"status": "error", "type": "unavailable"}})


def test_each_server_tool_the_request_offered_is_listed_as_offered() -> None:
    """Each server tool the request offered among the agent's tools, named as the request names it, with its type
    (the tool's version) and options (`max_uses`) as offered, in the request's order; the client tools as declared.
    (They were listed by their names alone.)"""
    offered = _log()[0]["request"]["tools"]
    servers = [tool for tool in offered if "type" in tool]
    assert servers
    definitions = _document()["agent"]["tool_definitions"]
    assert definitions[:len(servers)] == [{"type": "function", "function": {"name": tool["name"]},
                                           "extra": {"offered": tool}} for tool in servers]
    assert [definition["function"]["name"] for definition in definitions[len(servers):]] == [
        tool["name"] for tool in offered if "type" not in tool]
