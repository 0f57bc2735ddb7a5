"""An agent's sessions, and one session: its trajectory (steps, paged) and its raw spans (tree, waterfall)."""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Iterator
from datetime import datetime, timedelta
from typing import Any
from urllib.parse import quote, quote_plus

from aiohttp import web

from evalkit.api import ApiError
from evalkit.ui.images import without_images
from evalkit.ui.page import Page, Serves, page, query_int, serving, with_query
from evalkit.ui.render import content_text
from evalkit.ui.twin import call_route, parse_body, twin

PAGE_SIZE = 50
STEPS_PER_PAGE = 100
SPANS_PER_PAGE = 200
_SCAN = 1000  # rows a status filter looks through (the API's largest page); a session-id search is the API's
SORTS = {"last_seen": "last seen", "cost": "cost", "spans": "spans", "first_seen": "first seen"}
STATUSES = ("valid", "partial", "invalid")


def _path(agent: str, session_id: str | None = None) -> str:
    base = f"/api/agents/{quote(agent, safe='@')}/sessions"
    return base if session_id is None else f"{base}/{quote(session_id, safe='')}"


@page
async def sessions(request: web.Request) -> Page:
    agent_id = request.match_info["agent"]
    q = request.query
    search, status = q.get("q", "").strip(), q.get("status", "")
    if status and status not in STATUSES:
        raise ApiError(400, f"status={status!r} is not known; use one of {', '.join(STATUSES)}")
    sort = q.get("sort", "last_seen")
    offset = query_int(request, "offset", 0)
    # "Next" follows the list's cursor (a deep page costs a page); "previous" and links by hand use `offset`.
    cursor = q.get("cursor") or None
    # A session's status is its trajectory's (settled, valid), which the list does not keep: a status
    # filter checks the sessions of one large page. The id search is the list's own (any page, any sort).
    filtered = bool(status)
    query = {"since": q.get("since"), "until": q.get("until"), "errors": "true" if q.get("errors") else None,
             "model": q.get("model"), "min_cost": q.get("min_cost"), "sort": sort, "search": search or None,
             "limit": _SCAN if filtered else PAGE_SIZE, "offset": 0 if filtered else offset,
             "cursor": None if filtered else cursor}
    agent, listing = await asyncio.gather(twin(request, f"/api/agents/{quote(agent_id, safe='@')}"),
                                          twin(request, _path(agent_id), query))
    rows = listing["sessions"]
    scanned = len(rows)
    if filtered:
        rows = [s for s in rows if s["status"] == status]
        has_more = offset + PAGE_SIZE < len(rows)
        rows = rows[offset:offset + PAGE_SIZE]
    else:
        has_more = listing["has_more"]
        offset = int(listing["offset"])  # where the cursor's page starts
    live = offset == 0 and sort in ("last_seen", "first_seen")
    # An offset past the last session (a link kept from a longer list, or typed): say so and link the first
    # page, not "No sessions match" with a range that ends before it starts.
    past_end = offset > 0 and not rows
    if not has_more:
        next_url = None
    elif filtered:
        next_url = with_query(request, offset=offset + PAGE_SIZE)
    else:
        next_url = with_query(request, cursor=listing["next_cursor"], offset=None)
    context = {"agent": agent, "sessions": rows, "sort": sort, "sorts": SORTS, "statuses": STATUSES,
               "query": dict(q), "offset": offset, "page_size": PAGE_SIZE, "filtered": filtered, "scanned": scanned,
               "scan_limit": _SCAN, "live": live, "past_end": past_end,
               "first_url": with_query(request, offset=None, cursor=None),
               "next_url": next_url,
               "prev_url": with_query(request, offset=max(0, offset - PAGE_SIZE) or None, cursor=None)
               if offset and not past_end else None,
               "models": sorted({m for s in rows for m in s["models"]})}
    data = {**listing, "sessions": rows, "has_more": has_more}
    if filtered:
        # The page's own window of the status-filtered rows (the listing's were the 1,000 scanned): a status
        # filter pages by offset, so its JSON has no cursor to follow.
        data.update(offset=offset, limit=PAGE_SIZE, next_cursor=None)
    return Page("sessions.html", context, data, api=_path(agent_id), title=f"Sessions of {agent_id}")


def step_view(step: dict[str, Any], asked: dict[str, Any] | None = None,
              edits: dict[str, Any] | None = None) -> dict[str, Any]:
    """A step with its observation results paired to its tool calls (by call id, else in order); `asked`, for a
    person's answer that resumed a run (`extra.from: "resume"`), the step that stopped to ask them; `edits`, its
    trajectory's context editing (`context_edits`): where each result cleared was first hidden, where each result is."""
    edits = edits or {}
    hidden: dict[str, Any] = edits.get("hidden") or {}
    calls = step.get("tool_calls") or []
    results = list((step.get("observation") or {}).get("results") or [])
    by_id = {r.get("source_call_id"): r for r in results if r.get("source_call_id")}
    paired, used = [], set()
    for i, call in enumerate(calls):
        result = by_id.get(call.get("tool_call_id"))
        if result is None and i < len(results) and not results[i].get("source_call_id"):
            result = results[i]
        if result is not None:
            used.add(id(result))
        given = call.get("extra")
        call_extra: dict[str, Any] = given if isinstance(given, dict) else {}
        paired.append({"call": call, "result": result,
                       "error": bool(result and (result.get("extra") or {}).get("is_error")),
                       # The model's answer given as a call of the output tool (a structured output), no tool it ran.
                       "output_tool": bool(call_extra.get("output_tool")),
                       # A search the provider ran inside the answer (OpenAI's hosted tools, Anthropic's web search).
                       "provider_run": call_extra.get("run_by") == "provider",
                       # A result that is a list of documents (a retriever's) or of pages found (a web search's).
                       "documents": documents(result.get("content")) if result else None,
                       # The retrievals the tool ran to answer (a LangChain retriever tool's): its text is what the
                       # model was shown, the documents each found listed under it.
                       "retrievals": _retrievals((result.get("extra") or {}).get("retrievals")) if result else [],
                       # Google Search's own suggestions for a grounded answer's queries (Gemini): links rebuilt from
                       # the call's queries, never the HTML it sent.
                       "suggestions": _suggestions(call.get("arguments"), call_extra.get("search_entry_point")),
                       # Code the provider ran (Anthropic's code execution): the command as a terminal shows it, a
                       # file edit as its path and text, not JSON of escaped lines.
                       "code": _code(call.get("arguments")) if call_extra.get("run_by") == "provider" else None,
                       # The container the provider ran the call's code in (OpenAI's code interpreter: `container_id`).
                       "container": call_extra["container_id"] if isinstance(call_extra.get("container_id"), str)
                       and call_extra["container_id"].strip() else None,
                       # What a command printed (`{return_code, stdout, stderr, files}`), a file edit's outcome, a
                       # provider's tool's failure (`{type: "…_tool_result_error", error_code}`): told by their shape.
                       "ran": _ran(result.get("content")) if result else None,
                       "edited": _edited(call.get("arguments"), result.get("content")) if result else None,
                       # A tool's text output the model was sent wrapped in JSON (Gemini CLI's `{"output": "…"}`,
                       # ADK's `{"result": "…"}`): its text, line by line, the JSON as sent folded.
                       "wrapped": _wrapped(result.get("content")) if result else None,
                       # A failure a plugin answered the model for, in the tool's place (ADK's
                       # ReflectAndRetryToolPlugin: `{response_type: "ERROR_HANDLED_BY_…", error_type, error_details,
                       # retry_count, reflection_guidance}`): the error, the retry and the guidance as text, not JSON.
                       "handled": _handled_failure(result.get("content")) if result else None,
                       # The agent the call handed the conversation to (a handoff: `extra.handoff_to` on its result).
                       "handoff_to": str((result.get("extra") or {})["handoff_to"])
                       if result and (result.get("extra") or {}).get("handoff_to") else None,
                       "provider_failure": _provider_failure(result.get("content"))
                       if result and call_extra.get("run_by") == "provider" else None,
                       # Where the model was first sent a placeholder instead of this result (context editing).
                       "hidden_from": hidden.get(call.get("tool_call_id")) if result else None,
                       # The result's anchor (a top-level step's), which a context edit's note links to.
                       "anchor": _anchor(step.get("step_id"), call.get("tool_call_id"))})
    extra = step.get("extra") or {}
    metrics = step.get("metrics") or {}
    given = metrics.get("extra")
    usage: dict[str, Any] = given if isinstance(given, dict) else {}
    return {"step": step, "calls": paired, "orphans": [r for r in results if id(r) not in used],
            # A step handing work to a subagent (a workflow agent's, a swarm's, a handoff with no tool call):
            # its message says so ("Delegated to subagent research"), it is no system prompt to fold away.
            "delegates": any(r.get("subagent_trajectory_ref") for r in results),
            "error": extra.get("error") or (metrics.get("extra") or {}).get("error"),
            "has_error": bool(extra.get("error") or extra.get("is_error") or any(p["error"] for p in paired)),
            "duration_ms": extra.get("duration_ms"), "price_source": (metrics.get("extra") or {}).get("price_source"),
            # Of the completion tokens, the model's reasoning (billed as output), and the effort the request asked.
            "reasoning_tokens": (metrics.get("extra") or {}).get("reasoning_tokens"),
            "effort": step.get("reasoning_effort"),
            # A run that stopped to ask a person (LangGraph's interrupt(): what it asked in `extra.interrupt`), and
            # the person's answer the run was carried on with.
            "interrupt": extra.get("interrupt") if step.get("source") == "agent" else None,
            "allowed": _allowed_answers(extra.get("interrupt")) if step.get("source") == "agent" else [],
            "resume": step.get("source") == "user" and extra.get("from") == "resume",
            "asked": asked, "decisions": _decisions(step, asked),
            # A run that raised and so ended (a guardrail's tripwire, max turns): a step of no LLM call saying so.
            "stopped": bool(extra.get("run_error")),
            # A plan the agent wrote before acting (smolagents' planning steps), not an action.
            "planning": extra.get("planning") if step.get("source") == "agent" else None,
            # The requests that failed before the one that answered (a fallback model's), each its model and error.
            "failed_attempts": [a for a in extra.get("failed_attempts") or () if isinstance(a, dict)],
            # The sources the answer cites (the Responses API's `url_citation` annotations of a web search, Anthropic's
            # `web_search_result_location` ones with the passage cited, Gemini's `grounding_support` ones with the
            # indices of the passage of the answer they support).
            "citations": _citations(extra.get("annotations"), step.get("message")),
            # Of the prompt and completion tokens, those of another modality than text ("774 image", "25 audio").
            "prompt_parts": _modalities(usage, "prompt_tokens_by_modality", "input_audio_tokens"),
            "completion_parts": _modalities(usage, "completion_tokens_by_modality", "output_audio_tokens"),
            # The web searches the provider ran within the call (Anthropic's `server_tool_use.web_search_requests`).
            "web_searches": _count(usage.get("web_search_requests")),
            # The pages and files the provider fetched within the call (Anthropic's web fetch: `web_fetch_requests`).
            "web_fetches": _count(usage.get("web_fetch_requests")),
            # The container the provider ran this answer's code in (Anthropic's code execution: `extra.container`).
            "container": extra["container"] if step.get("source") == "agent" and isinstance(extra.get("container"), str)
            and extra["container"].strip() else None,
            # The model answered in speech (OpenAI's audio output): the clip as noted, the message its transcript.
            "audio_answer": _audio_answer(extra.get("audio_answer")) if step.get("source") == "agent" else None,
            # The framework summarizing the conversation to fit the context (LangChain's SummarizationMiddleware): the
            # step's message is the summary later calls are sent instead, no answer to anyone.
            "compaction": _compaction(extra.get("context_compaction")) if step.get("source") == "agent" else None,
            # Tool results this call was the first sent a placeholder for (LangChain's ContextEditingMiddleware,
            # Anthropic's context management): the framework hid them from the model, the thread kept them.
            "context_edit": _context_edit(extra.get("context_edit"), edits.get("results") or {})
            if step.get("source") == "agent" else None,
            # The note an agent keeps of the conversation (Mastra's working memory), as this turn's call was sent it in
            # its instructions: not the step's message.
            "working_memory": extra["working_memory"] if step.get("source") == "agent"
            and isinstance(extra.get("working_memory"), str) and extra["working_memory"].strip() else None,
            # A step of no LLM call whose tool call found documents: a retriever's search (LlamaIndex's query engine).
            "retrieval": step.get("source") == "agent" and step.get("llm_call_count") == 0
            and any(p["documents"] and p["documents"]["kind"] == "documents" for p in paired),
            # A call the framework made for its own work (CrewAI's knowledge query rewrite, its memory's extraction and
            # save analyses: `extra.framework_work`), not the agent's reasoning: by what, what for, what it stored.
            "framework_work": _framework_work(extra.get("framework_work")) if step.get("source") == "agent" else None,
            # Context a framework handed this agent on the user channel, no person's words (ADK's "For context:"
            # rewrites of another agent's events: `extra.handed_over_context`): from which agent, and each block.
            "handed_over": _handed_over(extra.get("handed_over_context")) if step.get("source") == "system" else None,
            # What the framework retrieved and put in this call's prompt (CrewAI's memories recalled and knowledge
            # chunks, `extra.retrievals` on the step): listed as a retriever tool's documents are.
            "prompt_retrievals": _retrievals(extra.get("retrievals")) if step.get("source") == "agent" else [],
            # A question a person spoke, transcribed before the agent ran (`extra.spoken`: a voice pipeline's), and
            # an answer the pipeline said aloud (`extra.spoken_answer`): each with its model where recorded.
            "spoken": _voice(extra.get("spoken")) if step.get("source") == "user" else None,
            "spoken_answer": _voice(extra.get("spoken_answer")) if step.get("source") == "agent" else None,
            # A tool run no LLM call asked for (`extra.dispatch` says so: the builder's step for an orphan tool).
            "dispatch": extra["dispatch"] if isinstance(extra.get("dispatch"), str) else None,
            # How the prompt tokens were made to count what the emitter counted apart ("cache tokens added to prompt
            # tokens": the cache's reads and writes within the prompt's, as every other call's are).
            "normalisation": str(usage["prompt_tokens_normalisation"]) if usage.get("prompt_tokens_normalisation")
            else None,
            # Why the call has no price (`metrics.extra.unpriced_reason`: "no token usage", a model with no price).
            "unpriced_reason": str(usage["unpriced_reason"]) if usage.get("unpriced_reason") else None,
            # The object the run answered (a structured output: LangChain's response format, pydantic-ai's output type).
            "structured_output": extra.get("structured_output") if step.get("source") == "agent" else None,
            # A request the model answered nothing to (an HTTP 500 the run raised on): the failure, no answer.
            "failed_request": bool(step.get("source") == "agent" and extra.get("error") and not calls
                                   and not step.get("llm_call_count") and not extra.get("run_error")
                                   and not extra.get("interrupt")),
            # An answer of no text, no call, no clip (the Codex CLI's: it exports no answer's text), said so, not an
            # empty box under its tokens (not said to be the answer's: Codex puts a turn's on its last call).
            "unrecorded_answer": _unrecorded_answer(step)
            if step.get("source") == "agent" and not calls and not extra.get("audio_answer")
            and extra.get("structured_output") is None and not extra.get("error") else False,
            # Tagged blocks a client put before the person's words (Gemini CLI's `<session_context>`, Claude Code's
            # `<system-reminder>`): folded, the words after them shown as the message.
            "preamble": _preamble(step.get("message")) if step.get("source") == "user" else None}


def _unrecorded_answer(step: dict[str, Any]) -> bool:
    """An LLM call's step (it has metrics) whose answer has no text recorded: no message, no image."""
    message = step.get("message")
    return bool(step.get("metrics")) and not content_text(without_images(message)).strip() \
        and not (isinstance(message, list) and message)


# A block a tool put before the person's words: its tag a machine's name (`session_context`, `system-reminder`), with
# an underscore or a hyphen, so that a question opening with HTML a person typed (`<div>x</div> is not centred`)
# is shown whole.
_TAGGED = re.compile(r"\s*<([A-Za-z][A-Za-z0-9]*[-_][\w-]*)>(.*?)</\1>\s*", re.S)


def _preamble(message: Any) -> dict[str, Any] | None:
    """A user message (text) that opens with tagged blocks and goes on after them: each block (its tag, its text) and
    the words after; None for any other message, which is shown whole."""
    if not isinstance(message, str):
        return None
    blocks, at = [], 0
    while found := _TAGGED.match(message, at):
        blocks.append({"tag": found.group(1), "text": found.group(0).strip()})
        at = found.end()
    rest = message[at:]
    return {"blocks": blocks, "rest": rest} if blocks and rest.strip() else None


# OpenAI's Responses API's, Anthropic's web search's, Gemini's Google Search grounding's
_CITATIONS = ("url_citation", "web_search_result_location", "grounding_support")
_WEB = ("http://", "https://")


def _citations(annotations: Any, message: Any = None) -> list[dict[str, Any]]:
    """The web pages an answer cites, each once, in the order cited: its URL (a web link only), title and the passages
    of it cited, each once: Anthropic's `cited_text`, else the message's text from `start_index` to `end_index`
    (Gemini's grounding supports: character indices into the step's text)."""
    cited: dict[str, dict[str, Any]] = {}
    text: str | None = None
    for note in annotations if isinstance(annotations, list) else ():
        if isinstance(note, dict) and note.get("type") == "file_citation" and isinstance(note.get("file_id"), str) \
                and note["file_id"].strip():
            # A file a search found (the Responses API's file search): its id and name, cited at a point of the answer
            # (`index`), no passage of it.
            name = note.get("filename")
            cited.setdefault("file:" + note["file_id"], {
                "url": None, "file_id": note["file_id"], "quotes": [],
                "title": name if isinstance(name, str) and name.strip() else note["file_id"]})
            continue
        url = note.get("url") if isinstance(note, dict) and note.get("type") in _CITATIONS else None
        if not isinstance(url, str) or not url.lower().startswith(_WEB):
            continue
        page = cited.setdefault(url, {"url": url, "file_id": None, "title": str(note.get("title") or url),
                                      "quotes": []})
        quote_ = note.get("cited_text")
        if quote_ is None:
            if text is None:
                text = message if isinstance(message, str) else content_text(without_images(message))
            quote_ = _passage(text, note.get("start_index"), note.get("end_index"))
        if isinstance(quote_, str) and quote_.strip() and quote_ not in page["quotes"]:
            page["quotes"].append(quote_)
    return list(cited.values())


def _passage(text: str, start: Any, end: Any) -> str | None:
    """The passage of `text` from `start` to `end` (character indices), when they are indices into it."""
    if not all(isinstance(i, int) and not isinstance(i, bool) for i in (start, end)):
        return None
    if not 0 <= start < end <= len(text):
        return None
    return text[start:end]


_GOOGLE_SEARCH = "https://www.google.com/search?q="


def _suggestions(arguments: Any, entry_point: Any) -> list[dict[str, str]]:
    """Google Search's suggestions for a grounded answer (Gemini's `search_entry_point`, HTML with its own styles): one
    link a query the call searched, to Google's results for it, built from the call's queries. The HTML itself is never
    put in the page, which runs no inline style or script of another's."""
    if not isinstance(entry_point, str) or not entry_point.strip() or not isinstance(arguments, dict):
        return []
    queries = arguments.get("queries")
    found = [q for q in queries if isinstance(q, str) and q.strip()] if isinstance(queries, list) else []
    return [{"query": q, "url": _GOOGLE_SEARCH + quote_plus(q)} for q in dict.fromkeys(found)]


def _retrievals(retrievals: Any) -> list[dict[str, Any]]:
    """The retrievals a tool ran to answer (`extra.retrievals` on its result: `{retriever, query, documents, error}`),
    each its retriever, query, the documents it found as a page lists them, and its error."""
    found = []
    for r in retrievals if isinstance(retrievals, list) else ():
        if not isinstance(r, dict):
            continue
        query = r.get("query")
        listed = r.get("documents")
        found.append({"retriever": str(r.get("retriever") or "a retriever"),
                      "query": query if isinstance(query, str) else None if query is None
                      else json.dumps(query, ensure_ascii=False, default=str),
                      "items": (_items([d for d in listed if isinstance(d, dict)], loose=True) or [])
                      if isinstance(listed, list) else [],
                      "error": r.get("error"),
                      # Where the framework put what it found (CrewAI's "task prompt"), when it says.
                      "sent_in": str(r["from"]) if isinstance(r.get("from"), str) and r["from"].strip() else None})
    return found


def _voice(note: Any) -> dict[str, Any] | None:
    """A spoken question's or answer's note (`extra.spoken`, `extra.spoken_answer`): the model that transcribed or said
    it ("" where the emitter recorded none) and what the emitter did not record."""
    if not isinstance(note, dict):
        return None
    models = note.get("models")
    model = note.get("model") if isinstance(note.get("model"), str) else \
        ", ".join(str(m) for m in models) if isinstance(models, list) else ""
    return {"model": model, "not_recorded": str(note.get("not_recorded") or "")}


def _handed_over(mark: Any) -> dict[str, Any] | None:
    """Context a framework handed an agent as the step notes it (`extra.handed_over_context`: `{by, from_agent,
    items}`, each item a block's `kind` — said, thought, called tool, tool returned —, its `tool` and `content`)."""
    if not isinstance(mark, dict):
        return None
    items = [{"kind": str(i.get("kind") or ""), "tool": str(i["tool"]) if i.get("tool") is not None else None,
              "content": str(i.get("content") or "")} for i in mark.get("items") or () if isinstance(i, dict)]
    return {"by": str(mark.get("by") or "the framework"), "from_agent": str(mark.get("from_agent") or "another agent"),
            "items": items}


def _framework_work(work: Any) -> dict[str, Any] | None:
    """A framework's own call as the step notes it (`extra.framework_work`: `{by, purpose, content}`): its label
    ("CrewAI: memory save analysis") and what it was given to store."""
    if not isinstance(work, dict):
        return None
    by, purpose, content = work.get("by"), work.get("purpose"), work.get("content")
    return {"by": str(by) if by else "the framework", "purpose": str(purpose) if purpose else None,
            "content": content if isinstance(content, str) and content.strip() else None}


def _modalities(usage: dict[str, Any], by_modality: str, audio: str) -> list[str]:
    """Of a call's prompt (or completion) tokens, those of each modality but text, as "774 image": from the counts by
    modality (Gemini's), else the audio ones (OpenAI's audio tokens)."""
    counts = usage.get(by_modality)
    parts = {str(kind).lower(): _count(n) for kind, n in counts.items()} if isinstance(counts, dict) else {}
    parts.setdefault("audio", _count(usage.get(audio)))
    return [f"{n:,} {kind}" for kind, n in parts.items() if n and kind != "text"]


def _audio_answer(answer: Any) -> dict[str, Any] | None:
    """A spoken answer as the step notes it (`extra.audio_answer`: `{id, format, bytes, duration_sec, expires_at}`, or
    `not_recorded` saying why its clip and transcript are not): its format, length in seconds and bytes, or why not."""
    if not isinstance(answer, dict):
        return None
    seconds, size = answer.get("duration_sec"), answer.get("bytes")
    return {"format": str(answer.get("format") or "").upper() or None,
            "seconds": seconds if isinstance(seconds, int | float) and not isinstance(seconds, bool) else None,
            "bytes": _count(size) or None,
            "not_recorded": str(answer["not_recorded"]) if answer.get("not_recorded") else None}


def _compaction(compaction: Any) -> dict[str, Any] | None:
    """A context compaction as the step notes it (`extra.context_compaction`: `{kind, by, summarized_messages,
    kept_messages}`)."""
    if not isinstance(compaction, dict):
        return None
    return {"kind": str(compaction.get("kind") or "summary"), "by": str(compaction.get("by") or "") or None,
            # The agent the framework had summarize (Strands' summarization agent), where it names one.
            "agent": str(compaction.get("agent") or "") or None,
            "summarized": _number(compaction.get("summarized_messages")),
            "kept": _number(compaction.get("kept_messages")),
            # An encrypted compaction (the Responses API's `responses.compact`): the item later calls are sent instead,
            # readable by the provider alone (its id and size), the user messages it keeps as they were, and whether
            # the compaction's own call (its tokens, its cost) is in a span.
            "item_id": str(compaction.get("item_id") or "") or None,
            "encrypted_chars": _number(compaction.get("encrypted_chars")),
            "kept_user": _number(compaction.get("kept_user_messages")),
            "call_recorded": compaction.get("call_recorded") if isinstance(compaction.get("call_recorded"), bool)
            else None}


def _anchor(step_id: Any, call_id: Any) -> str | None:
    """The id of a tool's result on the page: its step's and its call's (a call id alone may repeat across turns)."""
    if not isinstance(call_id, str) or not call_id:
        return None
    return f"result-{quote(str(step_id), safe='')}-{quote(call_id, safe='')}"


def _cleared(edit: Any) -> list[dict[str, Any]]:
    """The results a context edit cleared (`cleared_tool_results`), each with a call id (a string)."""
    items = edit.get("cleared_tool_results") if isinstance(edit, dict) else None
    return [item for item in items if isinstance(item, dict) and isinstance(item.get("tool_call_id"), str)
            and item["tool_call_id"]] if isinstance(items, list) else []


def context_edits(steps: list[dict[str, Any]], request: web.Request | None = None,
                  page_number: int = 1) -> dict[str, Any]:
    """A trajectory's context editing (`extra.context_edit` on the first call sent each result cleared): by call id,
    the step from which its result was hidden from the model (`hidden`: `{step_id, url}`) and the link to where its
    result is shown (`results`). Links only for the session's own steps (`request` given): a subagent's step ids
    repeat the session's, so they have no anchors; one on another steps page links that page."""
    where_result: dict[str, tuple[int, str | None]] = {}
    hidden: dict[str, dict[str, Any]] = {}
    for i, s in enumerate(steps):
        if not isinstance(s, dict):
            continue
        for call in s.get("tool_calls") or ():
            call_id = call.get("tool_call_id") if isinstance(call, dict) else None
            if isinstance(call_id, str) and call_id not in where_result and any(
                    isinstance(r, dict) and r.get("source_call_id") == call_id
                    for r in (s.get("observation") or {}).get("results") or ()):
                where_result[call_id] = (i, _anchor(s.get("step_id"), call_id))
        if s.get("source") == "agent":
            for item in _cleared((s.get("extra") or {}).get("context_edit")):
                url = _link(request, page_number, i, f"step-{s.get('step_id')}")
                hidden.setdefault(item["tool_call_id"], {"step_id": s.get("step_id"), "url": url})
    if not hidden:
        return {}
    return {"hidden": hidden, "results": {call_id: _link(request, page_number, i, anchor)
                                          for call_id, (i, anchor) in where_result.items() if call_id in hidden}}


def _link(request: web.Request | None, page_number: int, index: int, anchor: str | None) -> str | None:
    """A link to an anchor of the session's step at `index` (on its steps page), none without a request."""
    if request is None or anchor is None:
        return None
    where = index // STEPS_PER_PAGE + 1
    return ("" if where == page_number else with_query(request, page=where)) + f"#{anchor}"


def _context_edit(edit: Any, results: dict[str, Any]) -> dict[str, Any] | None:
    """A context edit as the step notes it: by what and how, the results cleared from this call on (each its tool,
    call id, placeholder and link), how many results the call was sent cleared in all."""
    cleared = _cleared(edit)
    if not isinstance(edit, dict) or not cleared:
        return None
    items = [{"call_id": item["tool_call_id"], "url": results.get(item["tool_call_id"]),
              "function": item["function_name"] if isinstance(item.get("function_name"), str)
              and item["function_name"].strip() else None,
              "placeholder": item["placeholder"] if isinstance(item.get("placeholder"), str)
              and item["placeholder"].strip() else None}
             for item in cleared]
    placeholders = {item["placeholder"] for item in items}
    return {"by": str(edit.get("by") or "") or None, "strategy": str(edit.get("strategy") or "") or None,
            "items": items,
            # One placeholder for all (said once), else each its own (or none: the API named none).
            "placeholder": next(iter(placeholders)) if len(placeholders) == 1 else None,
            "mixed": len(placeholders) > 1,
            "in_all": _number(edit.get("results_sent_cleared")),
            "input_tokens": _number(edit.get("cleared_input_tokens")),
            # Anthropic's API counts the results it cleared and names none: these are the oldest so many.
            "by_position": edit.get("identified_by") == "position"}


def _number(value: Any) -> int | None:
    """A count as recorded: a whole number, not a boolean; None for anything else."""
    return value if isinstance(value, int) and not isinstance(value, bool) else None


_EXCERPT = 140  # characters of a document's text shown before it is opened


def _excerpt(text: str, limit: int) -> str:
    """`text` on one line, cut at a word before `limit` characters with "…" when longer."""
    flat = " ".join(text.split())
    if len(flat) <= limit:
        return flat
    cut = flat[:limit].rsplit(" ", 1)[0] if " " in flat[:limit] else flat[:limit]
    return cut.rstrip(" ,;:.") + "…"


_DOCUMENTS_MAX_CHARS = 2_000_000  # a larger result is shown as its text, not parsed on every view
_TEXT_KEYS = ("content", "text", "page_content", "snippet")


def documents(content: Any) -> dict[str, Any] | None:
    """A tool's result that is a list of documents, as a page lists them; None for any other result.

    What makes it one is its shape, not a tool's name: a JSON list (or a list of content parts holding one text that
    is one) of objects each of which has a text (`content`, `text`, `page_content` or `snippet`) with an `id` or a
    number `score` (a retriever's documents: OpenInference's `retrieval.documents`), or a web `url` (the pages a web
    search found). `kind` is "documents" when any has a text, else "pages"."""
    if isinstance(content, list) and len(content) == 1 and isinstance(content[0], dict) \
            and content[0].get("type") == "text":
        content = content[0].get("text")
    if not isinstance(content, str) or not content.lstrip().startswith("[") or len(content) > _DOCUMENTS_MAX_CHARS:
        return None
    try:
        found = json.loads(content)
    except ValueError:
        return None
    if not isinstance(found, list) or not found or not all(isinstance(d, dict) for d in found):
        return None
    listed = _items(found)
    if listed is None:
        return None
    return {"kind": "documents" if any(d["text"] is not None or d["omitted"] for d in listed) else "pages",
            "fetched": all(d["fetched"] for d in listed), "items": listed}


_OMITTED = re.compile(r"\[([\w.+-]+/[\w.+-]+): (\d+) bytes, omitted\]")


def _omitted(text: str | None) -> dict[str, Any] | None:
    """The marker a trajectory puts where media's bytes were left out (`[application/pdf: 638 bytes, omitted]`): its
    media type and size; None for any other text."""
    found = _OMITTED.fullmatch(text.strip()) if isinstance(text, str) else None
    return {"media_type": found.group(1), "bytes": int(found.group(2))} if found else None


def _json(content: Any) -> Any:
    """A result's text (or its one text part) read as a JSON object; None when it is none."""
    if isinstance(content, list) and len(content) == 1 and isinstance(content[0], dict) \
            and content[0].get("type") == "text":
        content = content[0].get("text")
    if not isinstance(content, str) or not content.lstrip().startswith("{") or len(content) > _DOCUMENTS_MAX_CHARS:
        return None
    try:
        found = json.loads(content)
    except ValueError:
        return None
    return found if isinstance(found, dict) else None


def _ran(content: Any) -> dict[str, Any] | None:
    """A command's result as a terminal shows it (Anthropic's code execution: `{return_code, stdout, stderr}` and the
    `files` it made, their ids): its return code, what it printed to each stream, the files; None for another result."""
    found = _json(content)
    if found is None or _number(found.get("return_code")) is None \
            or not all(isinstance(found.get(k), str) for k in ("stdout", "stderr")):
        return None
    files = found.get("files")
    return {"return_code": found["return_code"], "stdout": found["stdout"], "stderr": found["stderr"],
            "files": [str(f) for f in files if isinstance(f, str | int) and not isinstance(f, bool)]
            if isinstance(files, list) else []}


def _code(arguments: Any) -> dict[str, Any] | None:
    """Code the provider was asked to run, as a person reads it: a command (`{"command"}` alone: bash), or a file edit
    (`{"command", "path", …}`: the text editor's create, view, str_replace) its command and path, each other text
    argument (the file's text, the text replaced) as its text; None for any other arguments (shown as JSON)."""
    if isinstance(arguments, dict) and isinstance(arguments.get("code"), str) and "command" not in arguments:
        # Code the provider runs as a program (OpenAI's code interpreter: `{"code"}`): the code as text.
        return {"command": None, "code": arguments["code"], "path": None, "texts": [],
                "others": [(str(k), json.dumps(v, ensure_ascii=False, default=str)) for k, v in arguments.items()
                           if k != "code"]}
    if not isinstance(arguments, dict) or not isinstance(arguments.get("command"), str):
        return None
    if set(arguments) == {"command"}:
        return {"command": arguments["command"], "code": None, "path": None, "texts": [], "others": []}
    if not isinstance(arguments.get("path"), str):
        return None
    rest = [(str(k), v) for k, v in arguments.items() if k not in ("command", "path")]
    return {"command": arguments["command"], "code": None, "path": arguments["path"],
            "texts": [(k, v) for k, v in rest if isinstance(v, str)],
            "others": [(k, json.dumps(v, ensure_ascii=False, default=str)) for k, v in rest if not isinstance(v, str)]}


def _edited(arguments: Any, content: Any) -> dict[str, Any] | None:
    """A file edit's result (Anthropic's text editor, its type left out): a file made or replaced (`is_file_update`),
    a file's lines viewed (`content`), the lines an edit changed (`lines`); None for another result."""
    found = _json(content)
    if found is None:
        return None
    path = arguments.get("path") if isinstance(arguments, dict) and isinstance(arguments.get("path"), str) else None
    if set(found) == {"is_file_update"} and isinstance(found["is_file_update"], bool):
        return {"path": path, "updated": found["is_file_update"], "text": None}
    if isinstance(found.get("content"), str) and "file_type" in found:
        return {"path": path, "updated": None, "text": found["content"]}
    if isinstance(found.get("lines"), list) and all(isinstance(line, str) for line in found["lines"]):
        return {"path": path, "updated": None, "text": "\n".join(found["lines"])}
    return None


def _wrapped(content: Any) -> dict[str, str] | None:
    """A result that is a JSON object of one member whose value is a text of more than one line (a tool's output
    wrapped for the model: Gemini CLI's `{"output": "…"}`, ADK's `{"result": "…"}`): its key and text; None for any
    other result. One line reads as well as JSON, so it is left as sent."""
    if isinstance(content, str) and "\\n" not in content:
        return None  # a line break in a JSON text is escaped: no `\n`, no text of more than one line, nothing parsed
    found = _json(content)
    if found is None or len(found) != 1:
        return None
    (key, text), = found.items()
    return {"key": key, "text": text} if isinstance(text, str) and "\n" in text else None


_HANDLED = "ERROR_HANDLED_BY_"


def _handled_failure(content: Any) -> dict[str, Any] | None:
    """A tool's failure a plugin answered for (ADK's ReflectAndRetryToolPlugin's `ToolFailureResponse`): the plugin,
    the error's type and message, which retry it was and the guidance the model was sent; None for another result."""
    found = _json(content) if isinstance(content, str) and _HANDLED in content else None
    kind = found.get("response_type") if found is not None else None
    if found is None or not isinstance(kind, str) or not kind.startswith(_HANDLED):
        return None
    guidance = found.get("reflection_guidance")
    return {"by": kind[len(_HANDLED):].replace("_", " ").lower(),
            "type": str(found.get("error_type") or "") or None,
            "message": str(found.get("error_details") or "") or None,
            "retry": _number(found.get("retry_count")),
            "guidance": guidance if isinstance(guidance, str) and guidance.strip() else None}


def _provider_failure(content: Any) -> str | None:
    """A provider's tool's failure as the API gave it (`{"type": "web_fetch_tool_result_error", "error_code"}`): its
    error code."""
    found = _json(content)
    if found is None or not str(found.get("type", "")).endswith("_tool_result_error"):
        return None
    return str(found.get("error_code") or found["type"])


def _items(found: list[dict[str, Any]], loose: bool = False) -> list[dict[str, Any]] | None:
    """Documents as a page lists them (id, score, text and its excerpt, web link, title, age, metadata); None when one
    is not a document by its shape. `loose`, for documents known to be a retrieval's: any with a text, an id or a link,
    the others left out."""
    listed = []
    for d in found:
        text = next((d[k] for k in _TEXT_KEYS if isinstance(d.get(k), str)), None)
        score = d.get("score")
        score = score if isinstance(score, int | float) and not isinstance(score, bool) else None
        url = d.get("url") if isinstance(d.get("url"), str) and d["url"].lower().startswith(_WEB) else None
        ident = d.get("id") if isinstance(d.get("id"), str | int) and not isinstance(d.get("id"), bool) else None
        if loose and text is None and ident is None and url is None:
            continue
        if not loose and not ((text is not None and (ident is not None or score is not None)) or url):
            return None
        metadata = d.get("metadata")
        omitted = _omitted(text)
        title = next((d[k] for k in ("title", "name") if isinstance(d.get(k), str) and d[k].strip()), None)
        listed.append({"id": None if ident is None else str(ident), "score": score, "url": url,
                       # A text that only marks what was left out (a fetched PDF's "[application/pdf: 638 bytes,
                       # omitted]"): said as such, no text.
                       "text": None if omitted else text, "omitted": omitted,
                       "excerpt": _excerpt(text, _EXCERPT) if text is not None and not omitted else None,
                       # Its title, else its name (an Agno knowledge document's: no id, no title).
                       "title": title,
                       "age": str(d["page_age"]) if d.get("page_age") else None,
                       # When the provider fetched it (Anthropic's web fetch).
                       "fetched": str(d["retrieved_at"]) if d.get("retrieved_at") else None,
                       "metadata": [(str(k), v if isinstance(v, str) else json.dumps(v, ensure_ascii=False))
                                    for k, v in metadata.items()] if isinstance(metadata, dict) else []})
    return listed


def _requests(interrupt: Any) -> list[dict[str, Any]]:
    """The tool calls an interrupt asked a person to review (LangChain's HumanInTheLoopMiddleware's
    `action_requests`, with each one's `review_configs`), in order; none for any other request."""
    found = []
    for request in interrupt if isinstance(interrupt, list) else []:
        value = request.get("value") if isinstance(request, dict) else None
        if not isinstance(value, dict) or not isinstance(value.get("action_requests"), list):
            continue
        configs = {c.get("action_name"): c for c in value.get("review_configs") or [] if isinstance(c, dict)}
        for action in value["action_requests"]:
            if isinstance(action, dict):
                config = configs.get(action.get("name")) or {}
                found.append({"name": action.get("name"), "args": action.get("args"),
                              "allowed": [str(d) for d in config.get("allowed_decisions") or []]})
    return found


def _allowed_answers(interrupt: Any) -> list[str]:
    """The answers a person may give an interrupt's reviews (approve, edit, reject), each once, in order."""
    return list(dict.fromkeys(d for request in _requests(interrupt) for d in request["allowed"]))


def _decisions(step: dict[str, Any], asked: dict[str, Any] | None) -> list[dict[str, Any]]:
    """A resume answer's decisions (HumanInTheLoopMiddleware's `{"decisions": [...]}`), each with the tool call it
    decides on when the step that asked is known (they are given in the order they were asked)."""
    if step.get("source") != "user" or (step.get("extra") or {}).get("from") != "resume":
        return []
    message = step.get("message")
    try:
        answer = json.loads(message) if isinstance(message, str) else None
    except ValueError:
        return []
    decisions = answer.get("decisions") if isinstance(answer, dict) else None
    if not isinstance(decisions, list):
        return []
    requests = _requests(((asked or {}).get("extra") or {}).get("interrupt"))
    found = []
    for i, decision in enumerate(decisions):
        if not isinstance(decision, dict):
            continue
        edited = decision.get("edited_action")
        edited = edited if isinstance(edited, dict) else {}
        args = edited.get("args")
        found.append({"type": str(decision.get("type") or "answer"),
                      "tool": edited.get("name") or (requests[i]["name"] if i < len(requests) else None),
                      "args": None if args is None else json.dumps(args, ensure_ascii=False, default=str),
                      "message": decision.get("message")})
    return found


def answered(steps: list[dict[str, Any]]) -> dict[Any, dict[str, Any]]:
    """Each person's answer (a user step `extra.from: "resume"`) by step id, with the step that asked: the last step
    before it that stopped to ask (`extra.interrupt`)."""
    found: dict[Any, dict[str, Any]] = {}
    asking: dict[str, Any] | None = None
    for s in steps:
        extra = s.get("extra") or {}
        if s.get("source") == "agent" and extra.get("interrupt"):
            asking = s
        elif s.get("source") == "user" and extra.get("from") == "resume" and asking is not None:
            found[s.get("step_id")] = asking
            asking = None
    return found


def has_error(step: dict[str, Any]) -> bool:
    """step_view(step)["has_error"], without building the view: most steps have no erring result at all, and a
    summary of 3,000 steps asks it of each."""
    extra = step.get("extra") or {}
    if extra.get("error") or extra.get("is_error"):
        return True
    results = (step.get("observation") or {}).get("results") or ()
    if not any((r.get("extra") or {}).get("is_error") for r in results):
        return False
    return bool(step_view(step)["has_error"])  # whether the erring result pairs with one of the step's calls


def trajectory_summary(document: dict[str, Any]) -> dict[str, Any]:
    steps = document.get("steps") or []
    final = document.get("final_metrics") or {}
    extra = document.get("extra") or {}
    prompt = final.get("total_prompt_tokens")
    completion = final.get("total_completion_tokens")
    times = [s.get("timestamp") for s in steps if s.get("timestamp")]
    duration = sum(float((s.get("extra") or {}).get("duration_ms") or 0) for s in steps) / 1000 if steps else None
    priced = [((s.get("metrics") or {}).get("extra") or {}).get("price_source") for s in steps
              if s.get("source") == "agent" and s.get("metrics")]
    subagents = list(_subagents_within(document))
    return {"steps": len(steps), "subagents": len(subagents),
            "subagent_steps": sum(len(t.get("steps") or []) for t in subagents),
            # Every call made in the session, the subagents' too: a swarm's or a workflow's top trajectory only
            # delegates, and "0 tool calls" would say nothing happened.
            "tool_calls": sum(len(s.get("tool_calls") or []) for t in (document, *subagents)
                              for s in t.get("steps") or []),
            "prompt_tokens": prompt, "completion_tokens": completion,
            "cached_tokens": final.get("total_cached_tokens"),
            # Of the completion tokens, the reasoning: every call's, the subagents' too (as the totals count them).
            "reasoning_tokens": sum(_count(((s.get("metrics") or {}).get("extra") or {}).get("reasoning_tokens"))
                                    for t in (document, *subagents) for s in t.get("steps") or []
                                    if not s.get("is_copied_context")),
            "cache_write_tokens": (final.get("extra") or {}).get("total_cache_creation_input_tokens"),
            "cost_usd": final.get("total_cost_usd"), "status": extra.get("status"),
            "settled": extra.get("settled"), "mapping_version": extra.get("mapping_version"),
            "unmapped_attributes": extra.get("unmapped_attributes") or [], "emitters": extra.get("emitters") or [],
            "first": times[0] if times else None, "last": times[-1] if times else None,
            "duration_s": _elapsed(steps) if times else None,
            "busy_seconds": duration, "price_sources": sorted({p for p in priced if p}),
            "errors": errors_of(document),
            "issues": extra.get("validation_issues") or [], "reasons": (extra.get("settlement") or {}).get("reasons")
            or []}


def _count(value: Any) -> int:
    """A token count as a number: a missing (or unreadable) one adds nothing."""
    return int(value) if isinstance(value, int | float) and not isinstance(value, bool) else 0


def errors_of(document: dict[str, Any]) -> int:
    """Failed steps, a subagent's (at any depth) too, and the failed requests before a step's answer (a fallback
    model's): the sessions list counts their spans as the session's."""
    return sum(has_error(s) + len((s.get("extra") or {}).get("failed_attempts") or ())
               for s in document.get("steps") or []) + sum(
        errors_of(sub) for sub in document.get("subagent_trajectories") or [])


def _elapsed(steps: list[dict[str, Any]]) -> float | None:
    """From the first step's start to the end of the one that ends last (its start plus its duration): a step's
    timestamp is when it started, so the last start alone read "0 ms" for a session of one 37 ms LLM call."""
    first: datetime | None = None
    end: datetime | None = None
    for s in steps:
        if not s.get("timestamp"):
            continue
        try:
            start = datetime.fromisoformat(str(s["timestamp"]).replace("Z", "+00:00"))
        except ValueError:
            return None
        first = start if first is None else min(first, start)
        try:
            took = timedelta(milliseconds=float((s.get("extra") or {}).get("duration_ms") or 0))
        except (TypeError, ValueError, OverflowError):
            took = timedelta(0)  # a step whose duration is not a number still has its start
        stop = start + took
        end = stop if end is None else max(end, stop)
    if first is None or end is None:
        return None
    return max(0.0, (end - first).total_seconds())


def steps_pages(document: dict[str, Any]) -> int:
    return max(1, -(-len(document.get("steps") or []) // STEPS_PER_PAGE))


def steps_page(request: web.Request, document: dict[str, Any]) -> dict[str, Any]:
    steps = document.get("steps") or []
    pages = steps_pages(document)
    number = query_int(request, "page", 1, low=1, high=pages)
    start = (number - 1) * STEPS_PER_PAGE
    asked = answered(steps)
    edits = context_edits(steps, request, number)
    views = [step_view(s, asked.get(s.get("step_id")), edits) for s in steps[start:start + STEPS_PER_PAGE]]
    for view in views:
        if view["asked"] is not None:  # a link to the step that asked, which may be on an earlier page
            where = steps.index(view["asked"]) // STEPS_PER_PAGE + 1
            view["asked_url"] = ("" if where == number else with_query(request, page=where)) + \
                f"#step-{view['asked'].get('step_id')}"
    return {"views": views, "page": number, "pages": pages,
            "first_step": start + 1,
            "page_urls": {n: with_query(request, page=n) for n in _page_numbers(number, pages)}}


def _page_numbers(current: int, pages: int) -> list[int]:
    wanted = {1, pages, current - 1, current, current + 1, current - 10, current + 10}
    return sorted(n for n in wanted if 1 <= n <= pages)


# What the trajectory macros call: a subagent's steps render with the same macro as the session's, and a folded
# subagent says whether it holds a failure.
def sub_view(step: dict[str, Any], subagent: dict[str, Any] | None = None) -> dict[str, Any]:
    """A subagent's step as the session's are viewed, with its subagent's context editing (no links)."""
    return step_view(step, None, (subagent or {}).get("ui_edits"))


TEMPLATE_GLOBALS = {"sub_view": sub_view, "errors_of": errors_of}


def subagents_of(document: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Embedded subagent trajectories by trajectory id, so a reference can open one in place: at any depth (a
    workflow agent's subagents are embedded in its own trajectory, not in the session's). A subagent whose name
    another one shares (a map-reduce's parallel branches, one query engine called twice) carries `ui_branch`: what
    tells it apart, from its first user message (`branch_labels`)."""
    found = {str(t.get("trajectory_id")): t for t in _subagents_within(document)}
    labels = branch_labels(list(found.values()))
    opened = {key: {**t, "ui_branch": labels[id(t)]} if id(t) in labels else t for key, t in found.items()}
    # A subagent's own context editing (its results hidden from its model), once per subagent, not per step.
    for key, t in opened.items():
        edits = context_edits([s for s in t.get("steps") or () if isinstance(s, dict)])
        if edits:
            opened[key] = {**t, "ui_edits": edits}
    return opened


_BRANCH = 90  # characters of a branch's label


def branch_labels(subagents: list[dict[str, Any]]) -> dict[int, dict[str, str]]:
    """For each subagent (by `id()`) that shares its name with another, the line of its first user message that tells
    it apart: the first line no other subagent of that name has in its own first user message ("Subtopic: weather"
    beside "Subtopic: food"; a query engine's "Query: …"), else its first line; `label` cut to a line, `text` whole."""
    named: dict[str, list[tuple[dict[str, Any], str]]] = {}
    for sub in subagents:
        given = sub.get("agent")
        agent: dict[str, Any] = given if isinstance(given, dict) else {}
        first = next((s for s in sub.get("steps") or () if isinstance(s, dict) and s.get("source") == "user"
                      and not s.get("is_copied_context")), None)
        text = content_text(without_images(first.get("message"))).strip() if first else ""
        named.setdefault(str(agent.get("name") or ""), []).append((sub, text))
    labels: dict[int, dict[str, str]] = {}
    for group in named.values():
        if len(group) < 2:
            continue
        holders: dict[str, int] = {}  # a line: how many of the group's first messages hold it
        lines_of = []
        for _, text in group:
            lines = list(dict.fromkeys(line.strip() for line in text.splitlines() if line.strip()))
            lines_of.append(lines)
            for line in lines:
                holders[line] = holders.get(line, 0) + 1
        for (sub, text), lines in zip(group, lines_of, strict=True):
            if lines:
                line = next((line for line in lines if holders[line] == 1), lines[0])
                labels[id(sub)] = {"label": _excerpt(line, _BRANCH), "text": text}
    return labels


def _subagents_within(document: dict[str, Any]) -> Iterator[dict[str, Any]]:
    for sub in document.get("subagent_trajectories") or []:
        yield sub
        yield from _subagents_within(sub)


@serving(Serves(download=True))  # ?download=1: the trajectory as an .atif.json file
async def session(request: web.Request) -> Page | web.StreamResponse:
    agent_id, session_id = request.match_info["agent"], request.match_info["session_id"]
    if "media" in request.query:
        return await _image(request, agent_id, session_id)
    tab = request.query.get("tab", "steps")
    download = request["page_download"]
    if download and tab != "steps":
        raise ApiError(400, f"the download is the session's trajectory, not its {tab!r} tab; leave tab out "
                            "(or leave download out)")
    if tab == "spans":
        return await _spans_tab(request, agent_id, session_id)
    if tab != "steps":
        raise ApiError(400, f"tab={tab!r} is not known; use tab=steps or tab=spans")
    # ?wait=SECONDS as the route takes it: its "no such session" message says to ask again with it.
    response = await call_route(request, _path(agent_id, session_id) + "/trajectory",
                                {"wait": request.query.get("wait")})
    document = parse_body(response)
    if response.status >= 400:
        raise ApiError(response.status, str(document.get("error", {}).get("message")))
    if download or request["page_format"] == "json":
        # A ?page= the HTML page refuses is refused here too (it answered the whole document with 200).
        query_int(request, "page", 1, low=1, high=steps_pages(document))
        # The route's own bytes: the twin is exactly what GET .../trajectory answers, not a re-serialisation.
        headers = {k: v for k, v in response.headers.items() if k.lower().startswith("x-evalkit-")}
        if download:
            headers["Content-Disposition"] = f'attachment; filename="{quote(session_id, safe="")}.atif.json"'
        return web.Response(body=response.body, content_type="application/json", headers=headers)
    summary = trajectory_summary(document)
    context = {"agent_id": agent_id, "session_id": session_id, "document": document, "summary": summary,
               "subagents": subagents_of(document), "live": not summary["settled"], **steps_page(request, document)}
    return Page("session.html", context, document, api=_path(agent_id, session_id) + "/trajectory",
                title=f"Session {session_id}")


async def _image(request: web.Request, agent_id: str, session_id: str) -> web.StreamResponse:
    """An image the trajectory references (`?media=evalkit-span://…`, ui/images.py): the API's bytes, for an `<img>`
    of this page (which loads images from this site only)."""
    response = await call_route(request, _path(agent_id, session_id) + "/media", {"ref": request.query["media"]})
    if response.status >= 400:
        raise ApiError(response.status, str(parse_body(response).get("error", {}).get("message")))
    headers = {k: v for k, v in response.headers.items() if k.lower() in ("cache-control", "x-content-type-options")}
    return web.Response(body=response.body, content_type=response.content_type, headers=headers)


def span_rows(spans: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Spans as a tree in start order (children under their parent), with waterfall offsets in percent."""
    by_id = {s["span_id"]: s for s in spans}
    children: dict[str | None, list[dict[str, Any]]] = {}
    for s in spans:
        parent = s.get("parent_span_id") or None
        children.setdefault(parent if parent in by_id else None, []).append(s)
    for group in children.values():
        group.sort(key=lambda s: s.get("start_time_unix_nano") or 0)
    starts = [int(s.get("start_time_unix_nano") or 0) for s in spans]
    ends = [int(s.get("end_time_unix_nano") or 0) for s in spans]
    t0, t1 = (min(starts), max(ends)) if spans else (0, 1)
    width = max(t1 - t0, 1)
    rows: list[dict[str, Any]] = []
    stack = [(s, 0) for s in reversed(children.get(None, []))]
    while stack:
        s, depth = stack.pop()
        start, end = int(s.get("start_time_unix_nano") or 0), int(s.get("end_time_unix_nano") or 0)
        rows.append({"span": s, "depth": min(depth, 30), "left": round((start - t0) / width * 100, 2),
                     "width": round(max(end - start, 0) / width * 100, 2), "duration_ms": (end - start) / 1e6})
        stack.extend((c, depth + 1) for c in reversed(children.get(s["span_id"], [])))
    return rows


async def _spans_tab(request: web.Request, agent_id: str, session_id: str) -> Page:
    offset = query_int(request, "offset", 0)
    detail = await twin(request, _path(agent_id, session_id), {"limit": SPANS_PER_PAGE, "offset": offset})
    total = detail["summary"]["span_count"]
    past_end = offset > 0 and offset >= total  # as the sessions list: say so, and link the first page
    context = {"agent_id": agent_id, "session_id": session_id, "detail": detail, "rows": span_rows(detail["spans"]),
               "offset": offset, "total": total, "past_end": past_end,
               "first_url": with_query(request, offset=None),
               "next_url": with_query(request, offset=offset + SPANS_PER_PAGE) if offset + SPANS_PER_PAGE < total
               else None,
               "prev_url": with_query(request, offset=max(0, offset - SPANS_PER_PAGE)) if offset and not past_end
               else None}
    return Page("spans.html", context, detail, api=_path(agent_id, session_id), title=f"Spans of {session_id}")


def add_routes(app: web.Application) -> None:
    app.router.add_get("/agents/{agent}/sessions", sessions)
    app.router.add_get("/agents/{agent}/sessions/{session_id}", session)
