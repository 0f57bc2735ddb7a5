"""What the result block of one of Anthropic's server tools shows a person, as its call's result: the pages a web search
found, the document a web fetch got, what a code execution printed, or the error the tool gave, flagged failed.

The API runs a server tool within the answer and puts its result in a block of the same answer (`<tool>_tool_result`,
naming the `server_tool_use` block by `tool_use_id`); `anthropic_server_tools` makes it the call's result. Its
`content` is, by tool (the beta Messages API's types, anthropic 2.17.0):
- `web_search_tool_result`: a list of `web_search_result` items (`url`, `title`, `page_age`, and `encrypted_content`,
  opaque, for the model alone): shown as that list, each item's url, title and age;
- `web_fetch_tool_result` (`web_fetch_20250910`): a `web_fetch_result` (`url`, `retrieved_at`, `content`: a `document`
  block, its `title` and its `source`: `text` (`data`, the page's text), `base64` (a PDF's bytes) or `content` (text
  blocks)): shown as one document, as a web search's page is shown (the session page lists it: its title linking its
  url, its text), `[{"url", "title", "retrieved_at", "text"}]`, a PDF's text a marker of its size (the base64 is no
  text; OpenInference's messages write it `__REDACTED__`, the answer's dump in `output.value` keeps it);
- `bash_code_execution_tool_result` and the older `code_execution_tool_result` (`code_execution_20250825`,
  `…20250522`): a `bash_code_execution_result` (`stdout`, `stderr`, `return_code`, and `content`, the files the
  command made, each `{"type": "bash_code_execution_output", "file_id"}`): shown as `{"return_code", "stdout",
  "stderr"}` and `files` (their ids) when it made any; a return code other than 0 is a command that failed, as a
  person reads a terminal, flagged so;
- `text_editor_code_execution_tool_result`: a `text_editor_code_execution_create_result` (`is_file_update`), a
  `…_view_result` (the file's `content`, `file_type`, lines) or a `…_str_replace_result` (the diff's `lines`): shown
  as the API gave it, its type aside;
- any tool's failure, a `<tool>_tool_result_error` (`error_code`: `url_not_accessible`, `unavailable`,
  `max_uses_exceeded`, …; the text editor's an `error_message` too): shown as the API gave it, flagged failed.
A result of a type not known here is shown as the API gave it.

A failed result's `Part.error` is set and its `Part.extra` holds the ATIF flag (`is_error`, and `error`: `type` the
error code, or `message` the return code), which the builder puts on the result (`trajectory/build.py`
`_provider_result`).

Seen in a real capture: tests/captures/anthropic-sdk_openinference_code-execution (and _web-search).
"""

from __future__ import annotations

import json
from typing import Any

from evalkit.trajectory.mappers.anthropic_openinference import REDACTED_SOURCE
from evalkit.trajectory.operations import Part

_PAGE_KEYS = ("url", "title", "page_age")  # of a `web_search_result`: what a person reads of what was found
_ERROR_SUFFIX = "_tool_result_error"
_RUN_KEYS = ("return_code", "stdout", "stderr")  # a command's, as a terminal shows it


def result_part(block: dict[str, Any], sent: dict[str, Any] | None = None) -> Part:
    """`block` (a server tool's result block, as the instrumentation recorded it) as its call's result; `sent`: the same
    block as the API gave it, where the span holds it unredacted (a PDF's payload, for its size)."""
    found = block.get("content")
    failure: dict[str, Any] | None = None
    if isinstance(found, dict) and str(found.get("type", "")).endswith(_ERROR_SUFFIX):
        shown: Any = found
        failure = {"status": "error", "type": found.get("error_code")}
        if isinstance(found.get("error_message"), str):
            failure["message"] = found["error_message"]
    elif isinstance(found, list):  # what a web search found: each page as a person reads it
        shown = [{key: item[key] for key in _PAGE_KEYS if item.get(key) is not None}
                 for item in found if isinstance(item, dict)]
    elif isinstance(found, dict) and found.get("type") == "web_fetch_result":
        sent_content = sent.get("content") if isinstance(sent, dict) else None
        shown = [_fetched(found, sent_content if isinstance(sent_content, dict) else None)]
    elif isinstance(found, dict) and isinstance(found.get("return_code"), int):
        shown = _run(found)
        if found["return_code"] != 0:
            failure = {"status": "error", "message": f"return code {found['return_code']}"}
    elif isinstance(found, dict) and str(found.get("type", "")).startswith("text_editor_code_execution"):
        shown = {key: value for key, value in found.items() if key != "type"}
    else:
        shown = found
    part = Part("tool_result", call_id=str(block["tool_use_id"]), name=block.get("type"),
                text=json.dumps(shown, ensure_ascii=False))
    if failure is not None:
        part.error = True
        part.extra = {"is_error": True, "error": {key: value for key, value in failure.items() if value is not None}}
    return part


def _fetched(result: dict[str, Any], sent: dict[str, Any] | None) -> dict[str, Any]:
    """A fetch's `web_fetch_result` as one document: its url, title, when it was fetched and its text."""
    document = _object(result.get("content"))
    sent_document = _object(sent.get("content")) if sent is not None else {}
    fetched = {"url": result.get("url"), "title": document.get("title"), "retrieved_at": result.get("retrieved_at"),
               "text": _document_text(document.get("source"), sent_document.get("source"))}
    return {key: value for key, value in fetched.items() if value is not None}


def _object(value: object) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _document_text(source: object, sent: object) -> str | None:
    """A document's text: a text source's, a content source's text blocks; a base64 source's (a PDF) a marker of what
    it is and its size where the span holds its payload."""
    if not isinstance(source, dict):
        return None
    kind, media_type = source.get("type"), source.get("media_type") or source.get("type")
    if kind == "text" and isinstance(source.get("data"), str):
        return str(source["data"])
    if kind == "content" and isinstance(source.get("content"), list):
        return "\n".join(str(block["text"]) for block in source["content"]
                         if isinstance(block, dict) and isinstance(block.get("text"), str))
    payload = sent.get("data") if isinstance(sent, dict) and sent.get("type") == "base64" else None
    if isinstance(payload, str) and payload:
        return f"[{media_type}: {len(payload) * 3 // 4 - payload[-2:].count('=')} bytes, omitted]"
    if kind == "base64":
        return f"[{media_type}: {REDACTED_SOURCE}]"
    return f"[{media_type}]"


def _run(result: dict[str, Any]) -> dict[str, Any]:
    """A command's result as a terminal shows it, and the files it made."""
    shown = {key: result.get(key) for key in _RUN_KEYS}
    files = [output["file_id"] for output in result.get("content") or () if isinstance(output, dict)
             and isinstance(output.get("file_id"), str)]
    if files:
        shown["files"] = files
    return shown
