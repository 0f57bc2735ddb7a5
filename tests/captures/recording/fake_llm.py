"""A scripted OpenAI/Anthropic/Gemini-compatible endpoint: the paid service a capture stands in for.

It answers `POST /v1/chat/completions` (OpenAI chat, streamed or not), `POST /v1/responses` (the
OpenAI Responses API, streamed or not), `POST /v1/messages` (Anthropic, streamed or not) and
`POST /v1beta/models/{model}:generateContent` / `:streamGenerateContent?alt=sse` (the Gemini API,
whose clients point at the server's root, not `…/v1`), and Amazon Bedrock Runtime's Converse API,
`POST /model/{modelId}/converse` / `…/converse-stream` (boto3's `bedrock-runtime` client pointed at the server's root
by `endpoint_url`; the stream in AWS's binary event stream framing, `_event_stream_message`; tool call ids
`tooluse_<seq>_<k>`; `api` `bedrock.converse` in the log) from a script: a list of replies, each
consumed once, in order. A reply may name `when`, a text that must occur in the request's last input
message (Gemini: its last content); the first unconsumed reply that fits is taken, so concurrent
agents can be scripted too. `POST /v1/conversations` (the Conversations API's create) gives a
conversation id for Responses calls to name (`conversation=`); it is no LLM call, so not logged.
`POST /v1/embeddings` (OpenAI's) answers each input with a vector made from its words (`embedding_of`), so that a
vector index retrieves by meaning, offline; no LLM call either, so not logged.
`POST /v1/responses/compact` (the Responses API's compaction, `client.responses.compact`) answers as the API does: the
conversation's user messages, then one `compaction` item whose `encrypted_content` is opaque (the summary the real API
writes is readable by no one but OpenAI); the conversation is the request's `input`, or the logged call whose response
its `previous_response_id` names (that call's input). It consumes no scripted reply and is no call of the log: each
goes to `Script.compactions` (`llm_compactions.jsonl`), with where it came among the calls.

Every request and the reply it got is logged: that log is a capture's ground truth (what the model
was asked, what it answered, which tool results it was shown). Gemini's function calls go out with
no id unless the script names one (as gemini-2.5 answers); the log names them (`gemini_<seq>_<k>`)
all the same, for the ground truth to key their results on.

Standard library only: record scripts run it inside throwaway virtualenvs holding nothing but the
framework under test.
"""

from __future__ import annotations

import base64
import hashlib
import json
import math
import struct
import threading
import urllib.parse
import zlib
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from .fake_audio import SPEECH, TRANSCRIPTIONS, AudioScript, is_transcript

CREATED = 1_760_000_000


@dataclass
class ToolCall:
    name: str
    arguments: dict[str, Any]
    id: str = ""
    # The Responses API's function_call item has an id of its own (`fc_…`) beside the `call_id` (`call_…`) its
    # function_call_output names; only when scripted (else both are `id`), so that captures recorded before re-record
    # the same.
    item_id: str = ""


@dataclass
class Reply:
    """One scripted model answer."""

    text: str = ""
    tool_calls: list[ToolCall] = field(default_factory=list)
    reasoning: str = ""
    when: str = ""  # a text the request's last input message must contain
    input_tokens: int | None = None  # every prompt token, cached or not; default: a quarter of the request's bytes
    output_tokens: int | None = None  # default: a quarter of the answer's characters
    # Prompt caching: of `input_tokens`, how many were read from the provider's cache and how many
    # written to it. Each API reports them its own way (`_chat_usage`, `_responses_body`, `_anthropic_body`,
    # `_gemini_usage`); only Anthropic's reports writes.
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    # Of `output_tokens`, how many the model spent reasoning (Anthropic's `output_tokens_details.thinking_tokens`,
    # the Responses API's `output_tokens_details.reasoning_tokens`, Gemini's `thoughtsTokenCount`); reported only
    # when scripted.
    reasoning_tokens: int = 0
    # A failed request instead of an answer (OpenAI's APIs only): `{"status": 500 | 429 | …, "message": …}`, optionally
    # `type` and `code`, answered with that status and an OpenAI-shaped error body. The model answered nothing, so it
    # is no call of the log: it goes to `Script.failures`, with where it came among the calls.
    error: dict[str, Any] | None = None
    # The Responses API's hosted web search (`tools=[{"type": "web_search"}]`), which the API runs itself: each
    # `{"query": …}` (optionally `id`, `status`) a `web_search_call` item of the answer, before its message and function
    # calls, with `action: {"type": "search", "query": …}` (and, scripted `sources: [url, …]`, the pages it read as the
    # action's `sources`, sent only to a request that includes `web_search_call.action.sources`, as the API does); no
    # result of it is ever sent back. `citations`: the
    # answer's `url_citation` annotations, each `{"url", "title", "cited"}` (`cited`: the text of the answer it cites,
    # which gives its indices). Anthropic's Messages API runs its `web_search` server tool alike: there each search
    # `{"query": …, "results": [{"url", "title", "page_age"}, …]}` (optionally `id`) is a `server_tool_use` block and
    # its `web_search_tool_result` block, before the answer's text, and each citation `{"url", "title", "cited",
    # "cited_text"}` (`cited_text`: the source's passage) a `web_search_result_location` on the text block of the cited
    # passage (the text split around it, as the API splits it); `usage.server_tool_use.web_search_requests` counts the
    # searches. The Gemini API's Google Search grounding (`tools=[{"googleSearch": {}}]`) alike: the searches' queries
    # the candidate's `groundingMetadata.webSearchQueries`, each result `{"url", "title"}` (the API's: a grounding
    # redirect and the page's domain) a `groundingChunks` item, each citation `{"cited", "url"}` (or `urls`) a
    # `groundingSupports` item (`segment`: the cited text's UTF-8 byte offsets in the answer's text, and the text;
    # `groundingChunkIndices`), with a `searchEntryPoint` of the queries (`_gemini_grounding`); streamed, in the last
    # chunk. Only when scripted, so that captures recorded before re-record the same.
    web_searches: list[dict[str, Any]] = field(default_factory=list)
    citations: list[dict[str, Any]] = field(default_factory=list)
    # The Responses API's hosted file search (`tools=[{"type": "file_search", "vector_store_ids": […]}]`), which the API
    # runs itself over the vector stores: each `{"queries": […], "results": [{"file_id", "filename", "score", "text",
    # "attributes"}, …]}` (optionally `id`, `status`) a `file_search_call` item of the answer, after its web searches
    # and before its message and function calls; its `results` sent only to a request that includes them
    # (`include: ["file_search_call.results"]`), else null, as the API does; the log keeps them all the same. A
    # citation `{"cited", "file_id", "filename"}` is a `file_citation` annotation, its `index` where the cited text ends
    # (the API's: where to insert the citation in the text). Only when scripted, so that captures recorded before
    # re-record the same.
    file_searches: list[dict[str, Any]] = field(default_factory=list)
    # Of `input_tokens`, how many the prompt's images took: Gemini breaks the prompt's count down by modality
    # (`promptTokensDetails`, TEXT and IMAGE, as it reports a prompt holding images). Gemini only; reported only when
    # scripted, so that captures recorded before re-record the same.
    image_tokens: int = 0
    # A spoken answer (a Chat Completions request asking `modalities=["text", "audio"]`): its transcript. The answer's
    # content is then null and its `message.audio` the clip (`id`, base64 `data` in the request's `audio.format`,
    # `transcript`, `expires_at`), streamed as `delta.audio` pieces; a later request may re-send it as
    # `{"role": "assistant", "audio": {"id": …}}`, naming a clip this endpoint gave. Of `input_tokens` and
    # `output_tokens`, how many were audio (`prompt_tokens_details.audio_tokens`, `completion_tokens_details.
    # audio_tokens`). OpenAI chat only; only when scripted, so that captures recorded before re-record the same.
    audio: str = ""
    input_audio_tokens: int = 0
    output_audio_tokens: int = 0
    # Anthropic's other server tools, which the API runs within the answer as it runs its web search: each
    # `{"name", "input", "result"}` (optionally `id`; `name` as the `server_tool_use` block names it: `web_fetch`,
    # `bash_code_execution`, `text_editor_code_execution`) a `server_tool_use` block and its `<name>_tool_result` block,
    # whose `content` is `result` as the API gives it (a `web_fetch_result` with its document, a
    # `bash_code_execution_result` with stdout, stderr, return code and the files made, an error), after the web
    # searches and before the text, in order; `usage.server_tool_use.web_fetch_requests` counts the fetches, and an
    # answer that ran code names its `container` (`{"id", "expires_at"}`: the one the request names, else a new one;
    # streamed, in the `message_delta`). Only when scripted, so that captures recorded before re-record the same.
    server_tools: list[dict[str, Any]] = field(default_factory=list)
    # Anthropic's context editing (the beta `context_management={"edits": […]}`), which the API applies to what the
    # model is shown before it answers: each `{"type": "clear_tool_uses_20250919", "cleared_tool_uses",
    # "cleared_input_tokens"}` an item of the answer's `context_management.applied_edits` (streamed, in the final
    # `message_delta`), the input tokens cleared not counted in its `input_tokens` (the default's quarter of the
    # request's bytes less them). Anthropic only; only when scripted, so that captures recorded before re-record the
    # same.
    applied_edits: list[dict[str, Any]] = field(default_factory=list)
    # The Responses API's code interpreter (`tools=[{"type": "code_interpreter", "container": {"type": "auto"}}]`),
    # which the API runs itself within the answer: each `{"code": …, "logs": …}` (optionally `id`, `container_id`,
    # `status`) a `code_interpreter_call` item of the answer, after its searches and before its message and function
    # calls, its `outputs` (`[{"type": "logs", "logs": …}]`) sent only to a request that includes them
    # (`include: ["code_interpreter_call.outputs"]`), else null, as the API does; the log keeps them all the same. A
    # run whose code raised is still `completed`: the traceback is its logs, as the API gives it. Streamed, its code as
    # `response.code_interpreter_call_code.delta` events. OpenAI's Responses API only; only when scripted, so that
    # captures recorded before re-record the same.
    code_interpreter: list[dict[str, Any]] = field(default_factory=list)

    @staticmethod
    def of(data: dict[str, Any]) -> Reply:
        calls = [ToolCall(c["name"], c.get("arguments", {}), c.get("id", ""), c.get("item_id", ""))
                 for c in data.get("tool_calls", ())]
        return Reply(data.get("text", ""), calls, data.get("reasoning", ""), data.get("when", ""),
                     data.get("input_tokens"), data.get("output_tokens"),
                     data.get("cache_read_tokens", 0), data.get("cache_write_tokens", 0),
                     data.get("reasoning_tokens", 0), error=data.get("error"),
                     web_searches=list(data.get("web_search", ())), citations=list(data.get("citations", ())),
                     file_searches=list(data.get("file_search", ())),
                     image_tokens=data.get("image_tokens", 0), audio=data.get("audio", ""),
                     input_audio_tokens=data.get("input_audio_tokens", 0),
                     output_audio_tokens=data.get("output_audio_tokens", 0),
                     server_tools=list(data.get("server_tools", ())),
                     applied_edits=list(data.get("applied_edits", ())),
                     code_interpreter=list(data.get("code_interpreter", ())))


def _last_message_text(api: str, body: dict[str, Any]) -> str:
    if api == "gemini.generate_content":
        contents = body.get("contents") or []
        return json.dumps(contents[-1]) if contents else ""
    if api == "openai.responses":
        items = body.get("input")
        if isinstance(items, str):
            return items
        return json.dumps(items[-1]) if items else ""
    messages = body.get("messages") or []
    return json.dumps(messages[-1]) if messages else ""


class Script:
    """The replies not given yet, and the log of what was asked and answered."""

    def __init__(self, replies: list[Reply]) -> None:
        self.replies = list(enumerate(replies))
        self.log: list[dict[str, Any]] = []
        self.failures: list[dict[str, Any]] = []  # the requests answered with a scripted error (`Reply.error`)
        self.lock = threading.Lock()
        self.conversations = 0  # created by `POST /v1/conversations`
        self.audio_ids: set[str] = set()  # the spoken answers' clips, which a later request may name
        self.compactions: list[dict[str, Any]] = []  # the `POST /v1/responses/compact` requests answered (`compact`)

    def take(self, api: str, body: dict[str, Any], raw: bytes, *, model: str | None = None,
             stream: bool | None = None) -> tuple[int, Reply, dict[str, Any]]:
        """`model` and `stream` when the request names them elsewhere than in its body (Gemini: the URL)."""
        last = _last_message_text(api, body)
        with self.lock:
            unknown = _unknown_audio(api, body, self.audio_ids)
            if unknown:  # as OpenAI refuses a re-sent spoken answer naming no clip it gave
                raise LookupError(f"an assistant message names the audio {unknown!r}, which this endpoint never gave")
            for position, (_, reply) in enumerate(self.replies):
                if not reply.when or reply.when in last:
                    index = self.replies.pop(position)[0]
                    break
            else:
                raise LookupError(f"the script has no reply left for this request (last message: {last[:300]})")
            if reply.error is not None:
                if not api.startswith("openai."):
                    raise ValueError(f"{api} answers no scripted error: script errors for OpenAI's APIs only")
                # `before_seq`: the log's call that came next (a fallback's, a retry's), or its length if none did.
                self.failures.append({"before_seq": len(self.log), "api": api, "script_index": index,
                                      "model": model if model is not None else body.get("model"),
                                      "stream": stream if stream is not None else bool(body.get("stream")),
                                      "request": body, "error": reply.error})
                return -1, reply, {}
            seq = len(self.log)
            prefix = ("toolu" if api == "anthropic.messages" else "fc" if api == "openai.responses"
                      else "gemini" if api == "gemini.generate_content"
                      else "tooluse" if api == "bedrock.converse" else "call")
            calls = [{"id": call.id or f"{prefix}_{seq}_{k}", "name": call.name, "arguments": call.arguments,
                      **({"item_id": call.item_id} if call.item_id else {})}
                     for k, call in enumerate(reply.tool_calls)]
            hosted = _hosted_output(api, seq, reply)
            if reply.server_tools:
                hosted = _anthropic_server_tool_runs(api, seq, reply, body, hosted)
            answer_chars = len(reply.text) + len(reply.reasoning) + sum(len(json.dumps(c["arguments"])) for c in calls)
            answer_chars += sum(len(search["action"]["query"]) for search in hosted.get("web_search_calls", ()))
            answer_chars += sum(len(use["input"]["query"]) if use["name"] == "web_search"
                                else len(json.dumps(use["input"])) for use in hosted.get("server_tool_uses", ()))
            answer_chars += sum(len(run["code"]) for run in hosted.get("code_interpreter_calls", ()))
            answer_chars += sum(len(query) for search in hosted.get("file_search_calls", ())
                                for query in search["queries"])
            answer_chars += len(reply.audio)
            if reply.applied_edits and api != "anthropic.messages":
                raise ValueError(f"{api} applies no context edits: script applied_edits for Anthropic only")
            cleared = sum(int(edit.get("cleared_input_tokens", 0)) for edit in reply.applied_edits)
            usage = {"input_tokens": reply.input_tokens if reply.input_tokens is not None
                     else max(1, len(raw) // 4 - cleared),
                     "output_tokens": reply.output_tokens if reply.output_tokens is not None
                     else max(1, answer_chars // 4)}
            cached = reply.cache_read_tokens + reply.cache_write_tokens
            if cached:
                if reply.cache_write_tokens and api not in ("anthropic.messages", "bedrock.converse"):
                    raise ValueError(f"{api} reports no cache writes: script cache_write_tokens for Anthropic "
                                     "(or Bedrock's Converse) only")
                if usage["input_tokens"] < cached:
                    raise ValueError(f"input_tokens {usage['input_tokens']} count every prompt token, so at least "
                                     f"the {cached} cached ones: script input_tokens for this reply")
                usage["cache_read_tokens"] = reply.cache_read_tokens
                usage["cache_write_tokens"] = reply.cache_write_tokens
            ran = [use["name"] for use in hosted.get("server_tool_uses", ())]
            if "web_search" in ran:  # Anthropic counts its web searches and fetches in the usage
                usage["web_search_requests"] = ran.count("web_search")
            if "web_fetch" in ran:
                usage["web_fetch_requests"] = ran.count("web_fetch")
            if reply.reasoning_tokens:
                if usage["output_tokens"] < reply.reasoning_tokens:
                    raise ValueError(f"output_tokens {usage['output_tokens']} count the {reply.reasoning_tokens} "
                                     "reasoning ones: script output_tokens for this reply")
                usage["reasoning_tokens"] = reply.reasoning_tokens
            if reply.image_tokens:
                if api != "gemini.generate_content":
                    raise ValueError(f"{api} reports no image tokens: script image_tokens for Gemini only")
                if usage["input_tokens"] < reply.image_tokens:
                    raise ValueError(f"input_tokens {usage['input_tokens']} count the {reply.image_tokens} image "
                                     "ones: script input_tokens for this reply")
                usage["image_tokens"] = reply.image_tokens
            spoken = _spoken(api, seq, reply, body, usage)
            if spoken:
                self.audio_ids.add(spoken["audio"]["id"])
            entry = {
                "seq": seq, "api": api, "script_index": index,
                "model": model if model is not None else body.get("model"),
                "stream": stream if stream is not None else bool(body.get("stream")), "request": body,
                "response": {
                    "id": f"{api.split('.')[0]}-resp-{seq}", "text": reply.text, "reasoning": reply.reasoning,
                    "tool_calls": calls, "usage": usage, **hosted, **spoken,
                    **({"context_management": {"applied_edits": reply.applied_edits}} if reply.applied_edits else {}),
                },
            }
            self.log.append(entry)
            return seq, reply, entry["response"]


    def compact(self, body: dict[str, Any], raw: bytes) -> dict[str, Any]:
        """The Responses API's compaction of a conversation (`POST /v1/responses/compact`): its user messages, then a
        `compaction` item of opaque content; logged in `compactions` with `before_seq`, the log's next call."""
        with self.lock:
            items = body.get("input")
            previous = body.get("previous_response_id")
            answered: list[dict[str, Any]] = []  # the named response's output items, compacted with its input
            if items is None and previous:
                named = next((e for e in self.log if e["response"]["id"] == previous), None)
                if named is None:
                    raise LookupError(f"no logged call answered with the response {previous!r}")
                items = named["request"].get("input")
                answered = _responses_body(str(named.get("model")), named["response"])["output"]
            if isinstance(items, str):
                items = [{"role": "user", "content": items}]
            number = len(self.compactions)
            asked = [item for item in items or () if isinstance(item, dict) and item.get("role") == "user"
                     and item.get("type", "message") == "message"]
            output: list[dict[str, Any]] = [
                {"id": f"msg_cmp_{number}_{k}", "type": "message", "status": "completed", "role": "user",
                 "content": ([{"type": "input_text", "text": item["content"]}] if isinstance(item["content"], str)
                             else item["content"])}
                for k, item in enumerate(asked)]
            sealed = b"".join(hashlib.sha256(raw + bytes([k])).digest() for k in range(6))
            opaque = "gAAAAA" + base64.urlsafe_b64encode(sealed).decode().rstrip("=")
            output.append({"id": f"cmp_{number}", "type": "compaction", "encrypted_content": opaque})
            compacted = [*(items or ()), *answered]
            usage = {"input_tokens": max(1, len(json.dumps(compacted)) // 4), "output_tokens": len(opaque) // 4}
            answer = {"id": f"resp_cmp_{number}", "object": "response.compaction", "created_at": CREATED,
                      "output": output,
                      "usage": {**usage, "total_tokens": usage["input_tokens"] + usage["output_tokens"],
                                "input_tokens_details": {"cached_tokens": 0},
                                "output_tokens_details": {"reasoning_tokens": 0}}}
            self.compactions.append({"before_seq": len(self.log), "api": "openai.responses.compact",
                                     "model": body.get("model"), "request": body,
                                     "compacted_items": len(compacted), "response": answer})
            return answer


def _unknown_audio(api: str, body: dict[str, Any], given: set[str]) -> str | None:
    """The id of a re-sent spoken answer (`{"role": "assistant", "audio": {"id": …}}`) naming no clip this endpoint
    gave, if a chat request holds one."""
    if api != "openai.chat":
        return None
    for message in body.get("messages") or ():
        audio = message.get("audio") if isinstance(message, dict) else None
        if isinstance(audio, dict) and audio.get("id") not in given:
            return str(audio.get("id"))
    return None


def _spoken(api: str, seq: int, reply: Reply, body: dict[str, Any], usage: dict[str, Any]) -> dict[str, Any]:
    """A spoken answer as the log keeps it (`Reply.audio`): `audio`, `{"id", "transcript", "format", "bytes",
    "expires_at"}` (the clip's bytes are `_audio_clip(format)`), and its audio tokens in `usage`; nothing when
    neither is scripted."""
    if not (reply.audio or reply.input_audio_tokens or reply.output_audio_tokens):
        return {}
    if api != "openai.chat":
        raise ValueError(f"{api} answers no audio here: script audio and audio tokens for OpenAI chat only")
    if usage["input_tokens"] < reply.input_audio_tokens or usage["output_tokens"] < reply.output_audio_tokens:
        raise ValueError("input_tokens and output_tokens count the audio ones: script them for this reply")
    usage["input_audio_tokens"] = reply.input_audio_tokens
    usage["output_audio_tokens"] = reply.output_audio_tokens
    if not reply.audio:
        return {}
    options = body.get("audio") or {}
    if "audio" not in (body.get("modalities") or ()) or not options.get("format"):
        raise ValueError("a spoken answer needs a request asking modalities [\"text\", \"audio\"] and an audio format")
    audio_format = str(options["format"])
    return {"audio": {"id": f"audio_{seq}", "transcript": reply.audio, "format": audio_format,
                      "bytes": len(_audio_clip(audio_format)), "expires_at": CREATED + 3600}}


def _audio_clip(audio_format: str) -> bytes:
    """The clip every spoken answer gets: a quarter second of a 440 Hz tone, 24 kHz 16-bit mono (the API's rate),
    as `pcm16` samples or a `wav` file of them."""
    rate, seconds = 24_000, 0.25
    samples = b"".join(struct.pack("<h", int(8000 * math.sin(2 * math.pi * 440 * n / rate)))
                       for n in range(int(rate * seconds)))
    if audio_format == "pcm16":
        return samples
    if audio_format == "wav":
        header = (b"RIFF" + struct.pack("<I", 36 + len(samples)) + b"WAVEfmt "
                  + struct.pack("<IHHIIHH", 16, 1, 1, rate, rate * 2, 2, 16)
                  + b"data" + struct.pack("<I", len(samples)))
        return header + samples
    raise ValueError(f"the fake LLM speaks wav or pcm16, not {audio_format}")


def _audio_message(audio: dict[str, Any]) -> dict[str, Any]:
    """A spoken answer's `message.audio`, as Chat Completions answers it."""
    data = base64.b64encode(_audio_clip(audio["format"])).decode()
    return {"id": audio["id"], "data": data, "expires_at": audio["expires_at"], "transcript": audio["transcript"]}


def _audio_deltas(base: dict[str, Any], audio: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """A spoken answer's clip as Chat Completions streams it: its id with the transcript's first piece, the rest of
    the transcript and the base64 data in pieces, then its expiry alone (as the SDK's `ChoiceDeltaAudio` says)."""
    transcript, data = audio["transcript"], _audio_message(audio)["data"]

    def delta(piece: dict[str, Any]) -> dict[str, Any]:
        return {**base, "choices": [{"index": 0, "delta": {"audio": piece}, "finish_reason": None}]}

    yield delta({"id": audio["id"], "transcript": transcript[:16]})
    for start in range(16, len(transcript), 16):
        yield delta({"transcript": transcript[start:start + 16]})
    for start in range(0, len(data), 4096):
        yield delta({"data": data[start:start + 4096]})
    yield delta({"expires_at": audio["expires_at"]})


def _hosted_output(api: str, seq: int, reply: Reply) -> dict[str, Any]:
    """What the API adds to an answer of its own (`Reply.web_searches`, `Reply.file_searches`, `Reply.citations`), as
    the log keeps it: `web_search_calls` (each `{"id", "status", "action"}`), `file_search_calls` (each `{"id",
    "status", "queries", "results"}`) and the answer text's `annotations`; nothing when none is scripted."""
    if not (reply.web_searches or reply.citations or reply.file_searches or reply.code_interpreter):
        return {}
    if reply.code_interpreter and api != "openai.responses":
        raise ValueError(f"{api} runs no code interpreter: script code_interpreter for the Responses API only")
    if api == "anthropic.messages":
        return _anthropic_server_tools(seq, reply)
    if api == "gemini.generate_content":
        return _gemini_grounding(reply)
    if api != "openai.responses":
        raise ValueError(f"{api} runs no hosted tool: script web_search and citations for the Responses API only")
    hosted: dict[str, Any] = {}
    if reply.code_interpreter:
        hosted["code_interpreter_calls"] = [
            {"id": run.get("id") or f"ci_{seq}_{k}", "status": run.get("status", "completed"), "code": run["code"],
             "container_id": run.get("container_id") or f"cntr_{seq}",
             "outputs": [{"type": "logs", "logs": run["logs"]}] if run.get("logs") else []}
            for k, run in enumerate(reply.code_interpreter)]
    if reply.file_searches:
        hosted["file_search_calls"] = [{"id": search.get("id") or f"fs_{seq}_{k}",
                                        "status": search.get("status", "completed"), "queries": search["queries"],
                                        "results": search.get("results", [])}
                                       for k, search in enumerate(reply.file_searches)]
    if reply.web_searches:
        hosted["web_search_calls"] = [{"id": search.get("id") or f"ws_{seq}_{k}",
                                       "status": search.get("status", "completed"),
                                       "action": {"type": "search", "query": search["query"],
                                                  **({"sources": [{"type": "url", "url": url}
                                                                  for url in search["sources"]]}
                                                     if "sources" in search else {})}}
                                      for k, search in enumerate(reply.web_searches)]
    if reply.citations:
        annotations = []
        for citation in reply.citations:
            start = reply.text.find(citation["cited"])
            if start < 0:
                raise ValueError(f"a citation cites {citation['cited']!r}, which the answer's text does not hold")
            if "file_id" in citation:  # a file the file search found: cited where the cited text ends
                annotations.append({"type": "file_citation", "file_id": citation["file_id"],
                                    "filename": citation["filename"], "index": start + len(citation["cited"])})
                continue
            annotations.append({"type": "url_citation", "start_index": start,
                                "end_index": start + len(citation["cited"]), "url": citation["url"],
                                "title": citation["title"]})
        hosted["annotations"] = annotations
    return hosted


def _gemini_grounding(reply: Reply) -> dict[str, Any]:
    """Gemini's Google Search grounding as the log keeps it: `grounding_metadata`, the candidate's `groundingMetadata`
    as the API answers it (`Reply.web_searches`, `Reply.citations`): a segment's zero offsets left out, as proto3
    JSON leaves out a default."""
    chunks: list[dict[str, Any]] = []
    for search in reply.web_searches:
        for result in search.get("results", ()):
            if all(chunk["web"]["uri"] != result["url"] for chunk in chunks):
                chunks.append({"web": {"uri": result["url"], "title": result["title"]}})
    uris = [chunk["web"]["uri"] for chunk in chunks]
    supports = []
    for citation in reply.citations:
        cited = citation["cited"]
        start = reply.text.find(cited)
        if start < 0:
            raise ValueError(f"a citation cites {cited!r}, which the answer's text does not hold")
        first = len(reply.text[:start].encode())
        segment = {**({"startIndex": first} if first else {}), "endIndex": first + len(cited.encode()), "text": cited}
        cites = citation.get("urls") or [citation["url"]]
        supports.append({"segment": segment, "groundingChunkIndices": [uris.index(url) for url in cites]})
    queries = [search["query"] for search in reply.web_searches]
    chips = "".join(f'<a class="chip" href="https://www.google.com/search?q={urllib.parse.quote_plus(query)}'
                    f'&client=app-vertex-grounding&safesearch=active">{query}</a>' for query in queries)
    entry = ('<style>.container { display: flex; } .chip { border-radius: 16px; }</style>'
             f'<div class="container"><div class="headline">Google Search Suggestions</div>'
             f'<div class="carousel">{chips}</div></div>')
    return {"grounding_metadata": {"webSearchQueries": queries, "searchEntryPoint": {"renderedContent": entry},
                                   "groundingChunks": chunks, "groundingSupports": supports}}


def _anthropic_server_tools(seq: int, reply: Reply) -> dict[str, Any]:
    """Anthropic's web searches as the log keeps them: `server_tool_uses` (each `{"id", "name", "input", "results"}`,
    `results` the `web_search_result` items its `web_search_tool_result` holds) and the answer text's `citations` (each
    `{"cited", "citation"}`, `citation` the `web_search_result_location` on the text block of `cited`)."""
    hosted: dict[str, Any] = {}
    if reply.web_searches:
        hosted["server_tool_uses"] = [
            {"id": search.get("id") or f"srvtoolu_{seq}_{k}", "name": "web_search", "input": {"query": search["query"]},
             "results": [{"type": "web_search_result", "url": result["url"], "title": result["title"],
                          "encrypted_content": f"enc_{seq}_{k}_{n}", "page_age": result.get("page_age")}
                         for n, result in enumerate(search.get("results", ()))]}
            for k, search in enumerate(reply.web_searches)]
    if reply.citations:
        citations = []
        for k, citation in enumerate(reply.citations):
            if citation["cited"] not in reply.text:
                raise ValueError(f"a citation cites {citation['cited']!r}, which the answer's text does not hold")
            citations.append({"cited": citation["cited"], "citation": {
                "type": "web_search_result_location", "url": citation["url"], "title": citation["title"],
                "cited_text": citation["cited_text"], "encrypted_index": f"idx_{seq}_{k}"}})
        hosted["citations"] = citations
    return hosted


_CODE_EXECUTION_TOOLS = ("bash_code_execution", "text_editor_code_execution", "code_execution")
_CONTAINER_EXPIRES_AT = "2025-10-09T09:53:20Z"  # CREATED and an hour: a container lives an hour after its last use


def _anthropic_server_tool_runs(api: str, seq: int, reply: Reply, body: dict[str, Any],
                                hosted: dict[str, Any]) -> dict[str, Any]:
    """`hosted` with Anthropic's other server tools (`Reply.server_tools`) after its web searches in the log's
    `server_tool_uses` (each `{"id", "name", "input", "result"}`), and the `container` the answer's code ran in."""
    if api != "anthropic.messages":
        raise ValueError(f"{api} runs no Anthropic server tool: script server_tools for Anthropic's Messages API only")
    uses = list(hosted.get("server_tool_uses", ()))
    uses.extend({"id": tool.get("id") or f"srvtoolu_{seq}_{k}", "name": tool["name"], "input": tool["input"],
                 "result": tool["result"]} for k, tool in enumerate(reply.server_tools, start=len(uses)))
    ran: dict[str, Any] = {**hosted, "server_tool_uses": uses}
    if any(use["name"] in _CODE_EXECUTION_TOOLS for use in uses):
        named = body.get("container")
        ran["container"] = {"id": named if isinstance(named, str) else f"container_{seq}",
                            "expires_at": _CONTAINER_EXPIRES_AT}
    return ran


# --- the wire formats -------------------------------------------------------------------------

def _cache_read(r: dict[str, Any]) -> int:
    return int(r["usage"].get("cache_read_tokens", 0))


def _chat_usage(r: dict[str, Any]) -> dict[str, Any]:
    """OpenAI's: `prompt_tokens` counts every prompt token, the cached ones again in its details."""
    usage = r["usage"]
    reported: dict[str, Any] = {"prompt_tokens": usage["input_tokens"], "completion_tokens": usage["output_tokens"],
                                "total_tokens": usage["input_tokens"] + usage["output_tokens"]}
    if "cache_read_tokens" in usage:  # only when scripted, so that captures recorded before re-record the same
        reported["prompt_tokens_details"] = {"cached_tokens": _cache_read(r)}
    if "reasoning_tokens" in usage:  # of `completion_tokens`, as OpenAI and DeepSeek report them; only when scripted
        reported["completion_tokens_details"] = {"reasoning_tokens": usage["reasoning_tokens"]}
    if "input_audio_tokens" in usage:  # of the prompt's and the answer's, as OpenAI reports them; only when scripted
        reported.setdefault("prompt_tokens_details", {})["audio_tokens"] = usage["input_audio_tokens"]
        reported.setdefault("completion_tokens_details", {})["audio_tokens"] = usage["output_audio_tokens"]
    return reported


def _chat_body(model: str, r: dict[str, Any]) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": r["text"] or None}
    if r["reasoning"]:  # DeepSeek-R1-style endpoints (deepseek-reasoner, vLLM's reasoning parsers): beside the content
        message["reasoning_content"] = r["reasoning"]
    if r.get("audio"):  # a spoken answer: no content, the clip and its transcript
        message["audio"] = _audio_message(r["audio"])
    if r["tool_calls"]:
        message["tool_calls"] = [{"id": c["id"], "type": "function",
                                  "function": {"name": c["name"], "arguments": json.dumps(c["arguments"])}}
                                 for c in r["tool_calls"]]
    return {"id": r["id"], "object": "chat.completion", "created": CREATED, "model": model,
            "choices": [{"index": 0, "message": message,
                         "finish_reason": "tool_calls" if r["tool_calls"] else "stop"}],
            "usage": _chat_usage(r)}


def _chat_stream(model: str, r: dict[str, Any], include_usage: bool) -> Iterator[dict[str, Any]]:
    base = {"id": r["id"], "object": "chat.completion.chunk", "created": CREATED, "model": model}
    # A spoken answer's content is null, as the API streams it.
    first = {"role": "assistant", "content": None if r.get("audio") else ""}
    yield {**base, "choices": [{"index": 0, "delta": first, "finish_reason": None}]}
    reasoning = r["reasoning"]  # DeepSeek-R1-style: `reasoning_content` deltas before the content's
    for start in range(0, len(reasoning), 16):
        yield {**base, "choices": [{"index": 0, "delta": {"reasoning_content": reasoning[start:start + 16]},
                                    "finish_reason": None}]}
    text = r["text"]
    for start in range(0, len(text), 16):
        yield {**base, "choices": [{"index": 0, "delta": {"content": text[start:start + 16]}, "finish_reason": None}]}
    if r.get("audio"):
        yield from _audio_deltas(base, r["audio"])
    for k, c in enumerate(r["tool_calls"]):
        yield {**base, "choices": [{"index": 0, "finish_reason": None, "delta": {"tool_calls": [
            {"index": k, "id": c["id"], "type": "function",
             "function": {"name": c["name"], "arguments": json.dumps(c["arguments"])}}]}}]}
    yield {**base, "choices": [{"index": 0, "delta": {},
                                "finish_reason": "tool_calls" if r["tool_calls"] else "stop"}]}
    if include_usage:
        yield {**base, "choices": [], "usage": _chat_usage(r)}


def _responses_body(model: str, r: dict[str, Any], request: dict[str, Any] | None = None) -> dict[str, Any]:
    output: list[dict[str, Any]] = []
    if r["reasoning"]:
        output.append({"type": "reasoning", "id": f"rs_{r['id']}",
                       "summary": [{"type": "summary_text", "text": r["reasoning"]}]})
    # The searches the API ran, before the answer they inform (as the API orders them).
    # A search's `action.sources` (scripted `sources`: the pages it read) only to a request that includes them.
    sourced = "web_search_call.action.sources" in ((request or {}).get("include") or ())
    output.extend({"type": "web_search_call", **search} if sourced or "sources" not in search["action"] else
                  {"type": "web_search_call", **search,
                   "action": {k: v for k, v in search["action"].items() if k != "sources"}}
                  for search in r.get("web_search_calls", ()))
    # What the file searches found goes out only to a request that includes it, as the API sends it.
    included = "file_search_call.results" in ((request or {}).get("include") or ())
    output.extend({"type": "file_search_call", "id": search["id"], "status": search["status"],
                   "queries": search["queries"], "results": search["results"] if included else None}
                  for search in r.get("file_search_calls", ()))
    # The code the API ran, and what it printed only to a request that includes it, as the API sends it.
    shown = "code_interpreter_call.outputs" in ((request or {}).get("include") or ())
    output.extend({"type": "code_interpreter_call", "id": run["id"], "status": run["status"], "code": run["code"],
                   "container_id": run["container_id"], "outputs": run["outputs"] if shown else None}
                  for run in r.get("code_interpreter_calls", ()))
    if r["text"]:
        text = {"type": "output_text", "text": r["text"], "annotations": r.get("annotations", [])}
        output.append({"type": "message", "id": f"msg_{r['id']}", "status": "completed", "role": "assistant",
                       "content": [text]})
    for c in r["tool_calls"]:
        output.append({"type": "function_call", "id": c.get("item_id") or c["id"], "call_id": c["id"],
                       "name": c["name"], "arguments": json.dumps(c["arguments"]), "status": "completed"})
    usage = r["usage"]
    # The real API echoes the request's instructions, tools, previous_response_id, reasoning settings and
    # conversation in the response (instrumentations read the system prompt, and OpenInference's openai-agents one
    # every parameter, from there; a conversation named by its id as an object).
    echoed = {key: (request or {})[key] for key in ("instructions", "tools", "previous_response_id", "reasoning")
              if (request or {}).get(key) is not None}
    conversation = (request or {}).get("conversation")
    if conversation is not None:
        echoed["conversation"] = {"id": conversation} if isinstance(conversation, str) else conversation
    return {"id": r["id"], "object": "response", "created_at": CREATED, "status": "completed", "model": model,
            "output": output, "parallel_tool_calls": True, "tool_choice": "auto", "tools": [], **echoed,
            "usage": {"input_tokens": usage["input_tokens"], "output_tokens": usage["output_tokens"],
                      "total_tokens": usage["input_tokens"] + usage["output_tokens"],
                      "input_tokens_details": {"cached_tokens": _cache_read(r)},
                      "output_tokens_details": {"reasoning_tokens": int(usage.get("reasoning_tokens", 0))}}}


def _responses_stream(model: str, r: dict[str, Any], request: dict[str, Any]) -> Iterator[dict[str, Any]]:
    done = _responses_body(model, r, request)
    started = {**done, "status": "in_progress", "output": []}
    seq = 0

    def event(kind: str, **data: Any) -> dict[str, Any]:
        nonlocal seq
        seq += 1
        return {"type": kind, "sequence_number": seq, **data}

    yield event("response.created", response=started)
    for index, item in enumerate(done["output"]):
        # As the API streams them: a function call's item added with no arguments yet, then its arguments as
        # deltas (clients that build the call from the deltas, as Mastra's stream does, see none otherwise).
        empty = ({**item, "content": []} if item["type"] == "message"
                 else {**item, "arguments": "", "status": "in_progress"} if item["type"] == "function_call"
                 else {**item, "summary": []} if item["type"] == "reasoning"
                 else {**item, "status": "in_progress"} if item["type"] == "web_search_call"
                 else {**item, "status": "in_progress", "queries": [], "results": None}
                 if item["type"] == "file_search_call"
                 else {**item, "status": "in_progress", "code": "", "outputs": None}
                 if item["type"] == "code_interpreter_call" else item)
        yield event("response.output_item.added", output_index=index, item=empty)
        if item["type"] in ("web_search_call", "file_search_call"):  # the API's search, run while the answer streams
            for stage in ("in_progress", "searching", "completed"):
                yield event(f"response.{item['type']}.{stage}", item_id=item["id"], output_index=index)
        if item["type"] == "code_interpreter_call":  # its code as it is written, then run
            ids = {"item_id": item["id"], "output_index": index}
            yield event("response.code_interpreter_call.in_progress", **ids)
            yield event("response.code_interpreter_call_code.delta", **ids, delta=item["code"])
            yield event("response.code_interpreter_call_code.done", **ids, code=item["code"])
            yield event("response.code_interpreter_call.interpreting", **ids)
            yield event("response.code_interpreter_call.completed", **ids)
        if item["type"] == "reasoning":  # its summary's parts, each added, its text as deltas, then done
            for k, summary in enumerate(item["summary"]):
                ids = {"item_id": item["id"], "output_index": index, "summary_index": k}
                yield event("response.reasoning_summary_part.added", **ids, part={**summary, "text": ""})
                yield event("response.reasoning_summary_text.delta", **ids, delta=summary["text"])
                yield event("response.reasoning_summary_text.done", **ids, text=summary["text"])
                yield event("response.reasoning_summary_part.done", **ids, part=summary)
        if item["type"] == "function_call":
            yield event("response.function_call_arguments.delta", item_id=item["id"], output_index=index,
                        delta=item["arguments"])
            yield event("response.function_call_arguments.done", item_id=item["id"], output_index=index,
                        arguments=item["arguments"])
        if item["type"] == "message":
            part = item["content"][0]
            yield event("response.content_part.added", item_id=item["id"], output_index=index, content_index=0,
                        part={**part, "text": "", "annotations": []})
            yield event("response.output_text.delta", item_id=item["id"], output_index=index, content_index=0,
                        delta=part["text"])
            for k, annotation in enumerate(part["annotations"]):  # a citation once the text it cites has streamed
                yield event("response.output_text.annotation.added", item_id=item["id"], output_index=index,
                            content_index=0, annotation_index=k, annotation=annotation)
            yield event("response.output_text.done", item_id=item["id"], output_index=index, content_index=0,
                        text=part["text"])
            yield event("response.content_part.done", item_id=item["id"], output_index=index, content_index=0,
                        part=part)
        yield event("response.output_item.done", output_index=index, item=item)
    yield event("response.completed", response=done)


def _anthropic_content(r: dict[str, Any]) -> list[dict[str, Any]]:
    content: list[dict[str, Any]] = []
    if r["reasoning"]:
        content.append({"type": "thinking", "thinking": r["reasoning"], "signature": "sig"})
    for search in r.get("server_tool_uses", ()):  # each search the API ran, then what it found, before the text
        content.append({"type": "server_tool_use", "id": search["id"], "name": search["name"],
                        "input": search["input"]})
        content.append({"type": f"{search['name']}_tool_result", "tool_use_id": search["id"],
                        "content": search["results"] if search["name"] == "web_search" else search["result"]})
    if r.get("citations"):
        content.extend(_cited_text_blocks(r["text"], r["citations"]))
    elif r["text"]:
        content.append({"type": "text", "text": r["text"]})
    content.extend({"type": "tool_use", "id": c["id"], "name": c["name"], "input": c["arguments"]}
                   for c in r["tool_calls"])
    return content


def _cited_text_blocks(text: str, citations: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The answer's text as the API gives a cited answer: a text block of each cited passage, with its citations, and
    one of the text between."""
    blocks: list[dict[str, Any]] = []
    position = 0
    for cited in sorted(citations, key=lambda c: text.index(c["cited"])):
        start = text.index(cited["cited"], position)
        if start > position:
            blocks.append({"type": "text", "text": text[position:start]})
        blocks.append({"type": "text", "text": cited["cited"], "citations": [cited["citation"]]})
        position = start + len(cited["cited"])
    if position < len(text):
        blocks.append({"type": "text", "text": text[position:]})
    return blocks


def _anthropic_body(model: str, r: dict[str, Any]) -> dict[str, Any]:
    usage = r["usage"]
    # Anthropic's `input_tokens` are the prompt tokens after the last cache breakpoint: the ones
    # read from or written to the cache are reported beside them, not within.
    read, written = _cache_read(r), int(usage.get("cache_write_tokens", 0))
    reported: dict[str, Any] = {"input_tokens": usage["input_tokens"] - read - written,
                                "output_tokens": usage["output_tokens"],
                                "cache_creation_input_tokens": written, "cache_read_input_tokens": read}
    if "reasoning_tokens" in usage:  # only when scripted, so that captures recorded before re-record the same
        reported["output_tokens_details"] = {"thinking_tokens": usage["reasoning_tokens"]}
    if "web_search_requests" in usage or "web_fetch_requests" in usage:  # only when scripted
        reported["server_tool_use"] = {"web_search_requests": usage.get("web_search_requests", 0),
                                       "web_fetch_requests": usage.get("web_fetch_requests", 0)}
    return {"id": r["id"], "type": "message", "role": "assistant", "model": model,
            "content": _anthropic_content(r), "stop_reason": "tool_use" if r["tool_calls"] else "end_turn",
            "stop_sequence": None, "usage": reported, **({"container": r["container"]} if "container" in r else {}),
            **({"context_management": r["context_management"]} if "context_management" in r else {})}


def _anthropic_stream(model: str, r: dict[str, Any]) -> Iterator[tuple[str, dict[str, Any]]]:
    body = _anthropic_body(model, r)
    usage = body["usage"]
    # The start reports the output begun (1 token), none of it reasoning yet: the breakdown comes with the total.
    started = {key: value for key, value in usage.items() if key != "output_tokens_details"}
    # The container code ran in comes with the stop reason (the SDK's `message_delta`'s `delta.container`).
    running = {"container": None} if "container" in body else {}
    # The context edits applied come with the final usage (the SDK's `message_delta`'s `context_management`).
    editing = {"context_management": None} if "context_management" in body else {}
    yield "message_start", {"type": "message_start", "message": {
        **body, "content": [], "stop_reason": None, "usage": {**started, "output_tokens": 1}, **running, **editing}}
    for index, block in enumerate(body["content"]):
        if block["type"] == "text":
            yield "content_block_start", {"type": "content_block_start", "index": index,
                                          "content_block": {"type": "text", "text": ""}}
            yield "content_block_delta", {"type": "content_block_delta", "index": index,
                                          "delta": {"type": "text_delta", "text": block["text"]}}
            for citation in block.get("citations", ()):  # a cited passage's sources once it has streamed
                yield "content_block_delta", {"type": "content_block_delta", "index": index,
                                              "delta": {"type": "citations_delta", "citation": citation}}
        elif block["type"].endswith("_tool_result"):  # what a server tool found or did, whole in its block's start
            yield "content_block_start", {"type": "content_block_start", "index": index, "content_block": block}
        elif block["type"] == "thinking":
            yield "content_block_start", {"type": "content_block_start", "index": index,
                                          "content_block": {"type": "thinking", "thinking": "", "signature": ""}}
            yield "content_block_delta", {"type": "content_block_delta", "index": index,
                                          "delta": {"type": "thinking_delta", "thinking": block["thinking"]}}
            yield "content_block_delta", {"type": "content_block_delta", "index": index,
                                          "delta": {"type": "signature_delta", "signature": "sig"}}
        else:
            yield "content_block_start", {"type": "content_block_start", "index": index,
                                          "content_block": {**block, "input": {}}}
            yield "content_block_delta", {"type": "content_block_delta", "index": index,
                                          "delta": {"type": "input_json_delta",
                                                    "partial_json": json.dumps(block["input"])}}
        yield "content_block_stop", {"type": "content_block_stop", "index": index}
    # The final usage, cumulative: the API has sent the input and cache counts here again since server tools
    # (some clients, langchain-anthropic among them, read usage from this event alone).
    yield "message_delta", {"type": "message_delta", "delta": {"stop_reason": body["stop_reason"],
                                                               "stop_sequence": None,
                                                               **({"container": body["container"]} if running else {})},
                            "usage": usage,
                            **({"context_management": body["context_management"]} if editing else {})}
    yield "message_stop", {"type": "message_stop"}


def _gemini_parts(r: dict[str, Any], calls_with_ids: set[str]) -> list[dict[str, Any]]:
    parts: list[dict[str, Any]] = []
    if r["reasoning"]:
        parts.append({"text": r["reasoning"], "thought": True})
    if r["text"]:
        parts.append({"text": r["text"]})
    for k, c in enumerate(r["tool_calls"]):
        call = {"name": c["name"], "args": c["arguments"]}
        if c["id"] in calls_with_ids:
            call = {"id": c["id"], **call}
        # A thinking model signs its reasoning on the first function call part (opaque bytes, base64), which a
        # client must send back with it; only when reasoning is scripted, so that captures recorded before re-record
        # the same.
        signed = {"thoughtSignature": "c2lnbmF0dXJl"} if r["reasoning"] and k == 0 else {}
        parts.append({"functionCall": call, **signed})
    return parts


def _gemini_usage(r: dict[str, Any], final: bool = True) -> dict[str, Any]:
    usage = r["usage"]
    # Gemini's `promptTokenCount` counts every prompt token, the cached ones again beside it.
    cached = {"cachedContentTokenCount": _cache_read(r)} if _cache_read(r) else {}
    # The prompt's count by modality, in every chunk as the prompt's count is; only when scripted (Reply.image_tokens).
    modalities = {"promptTokensDetails": [
        {"modality": "TEXT", "tokenCount": usage["input_tokens"] - usage["image_tokens"]},
        {"modality": "IMAGE", "tokenCount": usage["image_tokens"]}]} if "image_tokens" in usage else {}
    if not final:  # a stream's chunks before the last count the prompt only
        return {"promptTokenCount": usage["input_tokens"], "totalTokenCount": usage["input_tokens"], **cached,
                **modalities}
    if "reasoning_tokens" in usage:  # only when scripted: Gemini counts the thoughts beside the candidates, not within
        return {"promptTokenCount": usage["input_tokens"],
                "candidatesTokenCount": usage["output_tokens"] - usage["reasoning_tokens"],
                "thoughtsTokenCount": usage["reasoning_tokens"],
                "totalTokenCount": usage["input_tokens"] + usage["output_tokens"], **cached, **modalities}
    return {"promptTokenCount": usage["input_tokens"], "candidatesTokenCount": usage["output_tokens"],
            "totalTokenCount": usage["input_tokens"] + usage["output_tokens"], **cached, **modalities}


def _gemini_grounded(r: dict[str, Any]) -> dict[str, Any]:
    """A grounded answer's candidate's `groundingMetadata` (`_gemini_grounding`); nothing for another answer."""
    return {"groundingMetadata": r["grounding_metadata"]} if r.get("grounding_metadata") else {}


def _gemini_body(model: str, r: dict[str, Any], calls_with_ids: set[str]) -> dict[str, Any]:
    return {"candidates": [{"content": {"role": "model", "parts": _gemini_parts(r, calls_with_ids)},
                            "finishReason": "STOP", "index": 0, **_gemini_grounded(r)}],
            "usageMetadata": _gemini_usage(r), "modelVersion": model, "responseId": r["id"]}


def _gemini_stream(model: str, r: dict[str, Any], calls_with_ids: set[str]) -> Iterator[dict[str, Any]]:
    """Text in pieces, the function calls whole in the last chunk (as the API streams them), which
    alone carries the finish reason and the answer's token count."""
    parts = _gemini_parts(r, calls_with_ids)
    chunks: list[list[dict[str, Any]]] = []
    for part in parts:
        if "text" in part:
            chunks.extend([{**part, "text": part["text"][start:start + 16]}]
                          for start in range(0, len(part["text"]), 16))
    calls = [part for part in parts if "functionCall" in part]
    if calls or not chunks:
        chunks.append(calls or [{"text": ""}])
    for index, chunk_parts in enumerate(chunks):
        last = index == len(chunks) - 1
        candidate: dict[str, Any] = {"content": {"role": "model", "parts": chunk_parts}, "index": 0}
        if last:  # the finish reason, and a grounded answer's sources, with the last chunk (as the API streams them)
            candidate.update({"finishReason": "STOP", **_gemini_grounded(r)})
        yield {"candidates": [candidate], "usageMetadata": _gemini_usage(r, last), "modelVersion": model,
               "responseId": r["id"]}


def _converse_usage(r: dict[str, Any]) -> dict[str, Any]:
    """Bedrock's `TokenUsage`: `inputTokens` the prompt tokens neither read from nor written to the cache (as
    Anthropic counts them), the cache's beside them, `totalTokens` all four counts; Bedrock breaks no reasoning out of
    `outputTokens`. The cache's counts only when scripted, as the API leaves them out of a call that used no cache."""
    usage = r["usage"]
    read, written = _cache_read(r), int(usage.get("cache_write_tokens", 0))
    reported: dict[str, Any] = {"inputTokens": usage["input_tokens"] - read - written,
                                "outputTokens": usage["output_tokens"],
                                "totalTokens": usage["input_tokens"] + usage["output_tokens"]}
    if "cache_read_tokens" in usage:
        reported.update({"cacheReadInputTokens": read, "cacheWriteInputTokens": written})
    return reported


def _converse_content(r: dict[str, Any]) -> list[dict[str, Any]]:
    """The answer's `content` blocks: Claude's reasoning (signed), the text, the tool uses."""
    content: list[dict[str, Any]] = []
    if r["reasoning"]:
        content.append({"reasoningContent": {"reasoningText": {"text": r["reasoning"], "signature": "sig"}}})
    if r["text"]:
        content.append({"text": r["text"]})
    content.extend({"toolUse": {"toolUseId": c["id"], "name": c["name"], "input": c["arguments"]}}
                   for c in r["tool_calls"])
    return content


def _converse_body(r: dict[str, Any]) -> dict[str, Any]:
    return {"output": {"message": {"role": "assistant", "content": _converse_content(r)}},
            "stopReason": "tool_use" if r["tool_calls"] else "end_turn", "usage": _converse_usage(r),
            "metrics": {"latencyMs": 420}}


def _converse_stream(r: dict[str, Any]) -> Iterator[tuple[str, dict[str, Any]]]:
    """ConverseStream's events, as Bedrock streams a Claude answer: a text or reasoning block has no start event (its
    first delta opens it), a tool use's start names it and its input comes as one JSON-text delta; the reasoning's
    signature is a delta of its own after its text; the usage comes last, in `metadata`."""
    yield "messageStart", {"role": "assistant"}
    for index, block in enumerate(_converse_content(r)):
        if "reasoningContent" in block:
            reasoning = block["reasoningContent"]["reasoningText"]
            for start in range(0, len(reasoning["text"]), 16):
                piece = reasoning["text"][start:start + 16]
                yield "contentBlockDelta", {"delta": {"reasoningContent": {"text": piece}}, "contentBlockIndex": index}
            yield "contentBlockDelta", {"delta": {"reasoningContent": {"signature": reasoning["signature"]}},
                                        "contentBlockIndex": index}
        elif "text" in block:
            for start in range(0, len(block["text"]), 16):
                yield "contentBlockDelta", {"delta": {"text": block["text"][start:start + 16]},
                                            "contentBlockIndex": index}
        else:
            use = block["toolUse"]
            yield "contentBlockStart", {"start": {"toolUse": {"toolUseId": use["toolUseId"], "name": use["name"]}},
                                        "contentBlockIndex": index}
            yield "contentBlockDelta", {"delta": {"toolUse": {"input": json.dumps(use["input"])}},
                                        "contentBlockIndex": index}
        yield "contentBlockStop", {"contentBlockIndex": index}
    yield "messageStop", {"stopReason": "tool_use" if r["tool_calls"] else "end_turn"}
    yield "metadata", {"usage": _converse_usage(r), "metrics": {"latencyMs": 420}}


def _event_stream_message(event_type: str, payload: dict[str, Any]) -> bytes:
    """One message of AWS's binary event stream (`application/vnd.amazon.eventstream`, botocore/eventstream.py): a
    prelude (total length, headers' length, the CRC32 of those 8 bytes), the headers (each a 1-byte name length, the
    name, type 7 (string), a 2-byte value length, the value), the JSON payload, then the CRC32 of all before it."""
    headers = b""
    for name, value in ((":event-type", event_type), (":content-type", "application/json"),
                        (":message-type", "event")):
        headers += (struct.pack("!B", len(name)) + name.encode() + struct.pack("!BH", 7, len(value.encode()))
                    + value.encode())
    data = json.dumps(payload).encode()
    lengths = struct.pack("!II", 12 + len(headers) + len(data) + 4, len(headers))
    prelude = lengths + struct.pack("!I", zlib.crc32(lengths))
    message = prelude + headers + data
    return message + struct.pack("!I", zlib.crc32(message))


_GEMINI_PATH = "/v1beta/models/"
_GEMINI_METHODS = {"generateContent": False, "streamGenerateContent": True}  # method -> streamed
_CONVERSE_PATH = "/model/"  # Bedrock Runtime: `/model/{modelId}/converse[-stream]`
_CONVERSE_METHODS = {"converse": False, "converse-stream": True}  # method -> streamed

_APIS = {"/v1/chat/completions": "openai.chat", "/chat/completions": "openai.chat",
         "/v1/responses": "openai.responses", "/responses": "openai.responses",
         "/v1/messages": "anthropic.messages", "/messages": "anthropic.messages"}
_CONVERSATIONS = ("/v1/conversations", "/conversations")
_EMBEDDINGS = ("/v1/embeddings", "/embeddings")
_COMPACTIONS = ("/v1/responses/compact", "/responses/compact")
EMBEDDING_DIMENSIONS = 32


def embedding_of(text: str) -> list[float]:
    """A bag of the text's words (of three letters or more, lower-cased), each hashed to one of the dimensions, made
    unit length: texts sharing words are near (cosine), as a real embedding model's are for this corpus's texts."""
    vector = [0.0] * EMBEDDING_DIMENSIONS
    for word in "".join(c if c.isalnum() else " " for c in text.lower()).split():
        if len(word) >= 3:
            vector[zlib.crc32(word.encode()) % EMBEDDING_DIMENSIONS] += 1.0
    norm = sum(x * x for x in vector) ** 0.5 or 1.0
    return [round(x / norm, 6) for x in vector]


def _embeddings_body(body: dict[str, Any]) -> dict[str, Any]:
    """OpenAI's embeddings answer; as base64 float32s where asked (the openai SDK asks so unless told a format)."""
    inputs = body.get("input")
    texts = [inputs] if isinstance(inputs, str) else [str(text) for text in inputs or ()]
    data = []
    for index, text in enumerate(texts):
        vector: Any = embedding_of(text)
        if body.get("encoding_format") == "base64":
            vector = base64.b64encode(struct.pack(f"<{len(vector)}f", *vector)).decode()
        data.append({"object": "embedding", "index": index, "embedding": vector})
    tokens = sum(max(1, len(text) // 4) for text in texts)
    return {"object": "list", "data": data, "model": body.get("model") or "text-embedding-3-small",
            "usage": {"prompt_tokens": tokens, "total_tokens": tokens}}


class FakeLLM:
    """The endpoint, served from a thread: `base_url` is where a client points (`…/v1`)."""

    def __init__(self, replies: list[Reply] | list[dict[str, Any]], host: str = "127.0.0.1", port: int = 0) -> None:
        # The transcripts scripted among the replies answer the audio endpoints (`fake_audio`), not the model's calls.
        self.audio = AudioScript([r for r in replies if is_transcript(r)])
        self.script = Script([r if isinstance(r, Reply) else Reply.of(r) for r in replies if not is_transcript(r)])
        script, audio = self.script, self.audio

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def do_GET(self) -> None:  # model listings some clients ask for first
                self._json(200, {"object": "list", "data": [{"id": "gpt-4o", "object": "model"}]})

            def do_POST(self) -> None:
                path = self.path.split("?")[0]
                raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                api = _APIS.get(path)
                if path in _CONVERSATIONS:
                    # The Conversations API's create: an id for Responses calls to name (`conversation=`). No LLM
                    # call, so not logged; the calls naming it are.
                    with script.lock:
                        script.conversations += 1
                        number = script.conversations
                    self._json(200, {"id": f"conv_{number}", "object": "conversation", "created_at": CREATED,
                                     "metadata": {}})
                    return
                if path in _EMBEDDINGS:  # no LLM call: not logged
                    self._json(200, _embeddings_body(json.loads(raw or b"{}")))
                    return
                if path in _COMPACTIONS:  # a compaction: logged apart (`Script.compact`)
                    try:
                        self._json(200, script.compact(json.loads(raw or b"{}"), raw))
                    except LookupError as exc:
                        self._json(400, {"error": {"message": str(exc), "type": "invalid_request_error"}})
                    return
                if path in TRANSCRIPTIONS or path in SPEECH:  # speech to text, text to speech: logged apart
                    self._audio(path, raw)
                    return
                if api is None and path.startswith(_CONVERSE_PATH):
                    self._converse(path, raw)
                    return
                if api is None and path.startswith(_GEMINI_PATH) and ":" in path:
                    self._gemini(path, raw)
                    return
                if api is None:
                    self._json(404, {"error": {"message": f"the fake LLM does not serve {path}"}})
                    return
                body = json.loads(raw or b"{}")
                try:
                    _seq, reply, r = script.take(api, body, raw)
                except LookupError as exc:
                    self._json(400, {"error": {"message": str(exc), "type": "invalid_request_error"}})
                    return
                if reply.error is not None:  # as OpenAI answers a failure, streamed or not: a JSON error body
                    failure = reply.error
                    self._json(int(failure["status"]), {"error": {
                        "message": failure["message"], "type": failure.get("type", "server_error"), "param": None,
                        "code": failure.get("code")}})
                    return
                model = str(body.get("model") or "gpt-4o")
                if not body.get("stream"):
                    answer = (_responses_body(model, r, body) if api == "openai.responses" else
                              {"openai.chat": _chat_body, "anthropic.messages": _anthropic_body}[api](model, r))
                    self._json(200, answer)
                    return
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Cache-Control", "no-cache")
                self.send_header("Connection", "close")
                self.end_headers()
                if api == "openai.chat":
                    include = bool((body.get("stream_options") or {}).get("include_usage"))
                    for chunk in _chat_stream(model, r, include):
                        self.wfile.write(b"data: " + json.dumps(chunk).encode() + b"\n\n")
                    self.wfile.write(b"data: [DONE]\n\n")
                elif api == "openai.responses":
                    for data in _responses_stream(model, r, body):
                        self.wfile.write(f"event: {data['type']}\ndata: {json.dumps(data)}\n\n".encode())
                else:
                    for name, data in _anthropic_stream(model, r):
                        self.wfile.write(f"event: {name}\ndata: {json.dumps(data)}\n\n".encode())
                self.wfile.flush()
                self.close_connection = True

            def _gemini(self, path: str, raw: bytes) -> None:
                """The Gemini API: `/v1beta/models/{model}:generateContent` or `:streamGenerateContent`
                (`?alt=sse`: server-sent events, each `data: <a GenerateContentResponse>`)."""
                model, _, method = path.removeprefix(_GEMINI_PATH).partition(":")
                if method not in _GEMINI_METHODS:
                    self._json(404, {"error": {"code": 404, "message": f"the fake LLM does not serve {method}",
                                               "status": "NOT_FOUND"}})
                    return
                body = json.loads(raw or b"{}")
                stream = _GEMINI_METHODS[method]
                try:
                    _seq, reply, r = script.take("gemini.generate_content", body, raw, model=model, stream=stream)
                except LookupError as exc:
                    self._json(400, {"error": {"code": 400, "message": str(exc), "status": "INVALID_ARGUMENT"}})
                    return
                # The ids the script named go out; the ones the log made up do not.
                named = {call.id for call in reply.tool_calls if call.id}
                if not stream:
                    self._json(200, _gemini_body(model, r, named))
                    return
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Connection", "close")
                self.end_headers()
                for chunk in _gemini_stream(model, r, named):
                    self.wfile.write(b"data: " + json.dumps(chunk).encode() + b"\r\n\r\n")
                self.wfile.flush()
                self.close_connection = True

            def _converse(self, path: str, raw: bytes) -> None:
                """Bedrock Runtime's Converse API: `/model/{modelId}/converse` (one JSON answer) or
                `/model/{modelId}/converse-stream` (the answer's events in AWS's binary event stream framing)."""
                model, _, method = urllib.parse.unquote(path.removeprefix(_CONVERSE_PATH)).rpartition("/")
                if method not in _CONVERSE_METHODS:
                    self._json(404, {"message": f"the fake LLM does not serve {method}"})
                    return
                body = json.loads(raw or b"{}")
                stream = _CONVERSE_METHODS[method]
                try:
                    _seq, _reply, r = script.take("bedrock.converse", body, raw, model=model, stream=stream)
                except LookupError as exc:  # as AWS answers a bad request: the error's type in a header
                    payload = json.dumps({"message": str(exc)}).encode()
                    self.send_response(400)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("x-amzn-ErrorType", "ValidationException")
                    self.send_header("Content-Length", str(len(payload)))
                    self.end_headers()
                    self.wfile.write(payload)
                    return
                if not stream:
                    self._json(200, _converse_body(r))
                    return
                self.send_response(200)
                self.send_header("Content-Type", "application/vnd.amazon.eventstream")
                self.send_header("Connection", "close")
                self.end_headers()
                for event_type, payload in _converse_stream(r):
                    self.wfile.write(_event_stream_message(event_type, payload))
                self.wfile.flush()
                self.close_connection = True

            def _audio(self, path: str, raw: bytes) -> None:
                """OpenAI's transcription (a JSON answer) or speech (PCM, chunked as the API streams it)."""
                if path in TRANSCRIPTIONS:
                    try:
                        self._json(200, audio.transcribe(raw, self.headers.get("Content-Type", ""), len(script.log)))
                    except LookupError as exc:
                        self._json(400, {"error": {"message": str(exc), "type": "invalid_request_error"}})
                    return
                pcm = audio.speak(json.loads(raw or b"{}"), len(script.log))
                self.send_response(200)
                self.send_header("Content-Type", "audio/pcm")
                self.send_header("Transfer-Encoding", "chunked")
                self.end_headers()
                for start in range(0, len(pcm), 4096):
                    piece = pcm[start:start + 4096]
                    self.wfile.write(f"{len(piece):x}\r\n".encode() + piece + b"\r\n")
                self.wfile.write(b"0\r\n\r\n")
                self.wfile.flush()

            def _json(self, status: int, data: Any) -> None:
                payload = json.dumps(data).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

        self.server = ThreadingHTTPServer((host, port), Handler)
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        host, port = self.server.server_address[:2]
        return f"http://{host}:{port}/v1"

    @property
    def log(self) -> list[dict[str, Any]]:
        return self.script.log

    @property
    def unused(self) -> int:
        return len(self.script.replies) + len(self.audio.transcripts)

    def __enter__(self) -> FakeLLM:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()
