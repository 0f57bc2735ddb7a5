"""The capture corpus: real frameworks' OTLP exports, replayed, checked against the fake LLM's log.

A capture is a folder `tests/captures/<name>/` holding what `recording/session.py` wrote
(`exports.jsonl`, `llm_log.jsonl`, `meta.json`) and `record.py`, the script that re-records it in
a throwaway virtualenv (its first lines say how). Nothing here is written by hand.

`replay` posts every trace and log export to a running evalkit, byte for byte (protobuf), or
re-encoded as OTLP/JSON. `GroundTruth` reads the log: what the model answered on each call and
which result it was shown for each tool call. `compare` lists how a trajectory differs from it.
"""

from __future__ import annotations

import base64
import gzip
import json
import urllib.request
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from google.protobuf import json_format
from opentelemetry.proto.collector.logs.v1 import logs_service_pb2
from opentelemetry.proto.collector.trace.v1 import trace_service_pb2

from tests.captures import dspy_react, react_text

HERE = Path(__file__).parent
_ID_KEYS = frozenset({"traceId", "spanId", "parentSpanId"})


@dataclass
class Export:
    signal: str  # "traces" | "logs" | "metrics"
    content_type: str
    content_encoding: str
    body: bytes


@dataclass
class Capture:
    name: str
    path: Path
    meta: dict[str, Any]
    exports: list[Export]
    llm_log: list[dict[str, Any]]

    @property
    def session_id(self) -> str | None:
        return self.meta.get("session_id")


def names() -> list[str]:
    return sorted(p.parent.name for p in HERE.glob("*/meta.json"))


def load(name: str) -> Capture:
    path = HERE / name
    exports = [Export(e["signal"], e["content_type"], e.get("content_encoding", ""),
                      base64.b64decode(e["body_base64"]))
               for e in map(json.loads, (path / "exports.jsonl").read_text().splitlines())]
    log = [json.loads(line) for line in (path / "llm_log.jsonl").read_text().splitlines()]
    return Capture(name, path, json.loads((path / "meta.json").read_text()), exports, log)


def _hex_ids(node: Any) -> Any:
    """proto3 JSON gives ids in base64; OTLP/JSON wants them in hex."""
    if isinstance(node, dict):
        return {k: (base64.b64decode(v).hex() if k in _ID_KEYS and isinstance(v, str) else _hex_ids(v))
                for k, v in node.items()}
    if isinstance(node, list):
        return [_hex_ids(v) for v in node]
    return node


def as_otlp_json(export: Export) -> bytes:
    message: Any = (trace_service_pb2.ExportTraceServiceRequest() if export.signal == "traces"
                    else logs_service_pb2.ExportLogsServiceRequest())
    # Re-encoding reads the protobuf, so a compressed export (the Langfuse SDK gzips by default)
    # is decompressed first; the JSON is then sent uncompressed.
    body = gzip.decompress(export.body) if export.content_encoding == "gzip" else export.body
    if "json" in export.content_type:
        return body
    message.ParseFromString(body)
    return json.dumps(_hex_ids(json_format.MessageToDict(message))).encode()


def replay(capture: Capture, otlp_http: str, key: str, encoding: str = "protobuf") -> int:
    """POST the capture's trace and log exports in the order they were sent; returns how many."""
    sent = 0
    for export in capture.exports:
        if export.signal not in ("traces", "logs"):
            continue
        if encoding == "json":
            body, content_type, content_encoding = as_otlp_json(export), "application/json", ""
        else:
            body, content_type, content_encoding = export.body, export.content_type, export.content_encoding
        request = urllib.request.Request(f"{otlp_http}/v1/{export.signal}", data=body, method="POST")
        request.add_header("Content-Type", content_type)
        if content_encoding:
            request.add_header("Content-Encoding", content_encoding)
        request.add_header("Authorization", f"Bearer {key}")
        with urllib.request.urlopen(request, timeout=60) as response:
            assert response.status == 200, response.read()
        sent += 1
    return sent


def replay_every(otlp_http: str, key: str, only: Iterable[str] | None = None, threads: int = 8) -> int:
    """`replay` each capture (every one unless named), several at once: each capture's exports in their order, the
    captures side by side (a request waits for its batch to be durable; alone, every capture one after another was
    14-20 s of each test that stores them all). Returns how many exports were sent."""
    from concurrent.futures import ThreadPoolExecutor

    captures = [load(name) for name in (only if only is not None else names())]
    with ThreadPoolExecutor(threads) as pool:
        return sum(pool.map(lambda capture: replay(capture, otlp_http, key), captures))


# --- ground truth ---------------------------------------------------------------------------

@dataclass
class Call:
    """One LLM call as the fake endpoint saw it."""

    seq: int
    api: str
    model: str | None
    text: str
    reasoning: str
    tool_calls: list[dict[str, Any]]  # id, name, arguments
    input_tokens: int  # every prompt token, cached or not
    output_tokens: int
    cache_read_tokens: int = 0  # of input_tokens, read from the provider's prompt cache
    cache_write_tokens: int = 0  # of input_tokens, written to it
    reasoning_tokens: int | None = None  # of output_tokens, spent reasoning (None: not reported, or not recorded)
    reasoning_recorded: bool = True  # False: the emitter records no reasoning for this call (its step may show none)
    input_audio_tokens: int = 0  # of input_tokens, audio (an audio model's prompt: a voice note, a spoken answer)
    output_audio_tokens: int = 0  # of output_tokens, audio (a spoken answer)
    web_search_requests: int = 0  # the web searches the provider ran within the answer (Anthropic's server tool)


def _text_of(content: Any) -> str:
    """A tool result's content as the model was shown it, as text: its blocks one a line, as evalkit renders a
    result of several text blocks (`messages._tool_result_text`)."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(_text_of(part.get("text", part.get("content", ""))) if isinstance(part, dict) else str(part)
                         for part in content)
    return json.dumps(content) if content is not None else ""


def _tool_results_of(api: str, request: dict[str, Any]) -> dict[str, str]:
    found: dict[str, str] = {}
    if api == "openai.responses":
        items = request.get("input")
        for item in items if isinstance(items, list) else ():
            if isinstance(item, dict) and item.get("type") == "function_call_output":
                found[str(item.get("call_id"))] = _text_of(item.get("output"))
        return found
    for message in request.get("messages") or ():
        if not isinstance(message, dict):
            continue
        if message.get("role") == "tool" and message.get("tool_call_id"):
            found[str(message["tool_call_id"])] = _text_of(message.get("content"))
        content = message.get("content")
        for block in content if isinstance(content, list) else ():
            if isinstance(block, dict) and block.get("type") == "tool_result":
                found[str(block.get("tool_use_id"))] = _text_of(block.get("content"))
            elif isinstance(block, dict) and isinstance(block.get("toolResult"), dict):  # Bedrock's Converse
                result = block["toolResult"]
                found[str(result.get("toolUseId"))] = _text_of(result.get("content"))
    return found


def _gemini_tool_results(request: dict[str, Any], before: list[dict[str, Any]]) -> dict[str, str]:
    """Gemini's tool results: the `functionResponse` parts of the content after a `model` content's
    `functionCall`s. A call may have no id (gemini-2.5 gives none): then the n-th response named X
    answers the n-th call named X. The log entry that made the model content is the earlier one
    asked the contents before it, with those calls; its log ids key the results."""
    found: dict[str, str] = {}
    contents = [c for c in request.get("contents") or () if isinstance(c, dict)]
    for index, content in enumerate(contents):
        if content.get("role") != "model" or index + 1 >= len(contents) or contents[index + 1].get("role") == "model":
            continue
        # A streamed answer may be re-sent as it came, one content per chunk (google-genai's chat): the `model`
        # contents right before this one are the same answer.
        start = index
        while start > 0 and contents[start - 1].get("role") == "model":
            start -= 1
        calls = [p["functionCall"] for c in contents[start:index + 1] for p in c.get("parts") or ()
                 if isinstance(p, dict) and "functionCall" in p]
        if not calls:
            continue
        wanted = [(c.get("name"), c.get("args") or {}) for c in calls]
        source = next((e for e in reversed(before)
                       if (e["request"].get("contents") or []) == contents[:start]
                       and [(c["name"], c["arguments"]) for c in e["response"]["tool_calls"]] == wanted), None)
        if source is None:
            continue
        responses = [p["functionResponse"] for p in contents[index + 1].get("parts") or ()
                     if isinstance(p, dict) and "functionResponse" in p]
        for position, (call, logged) in enumerate(zip(calls, source["response"]["tool_calls"], strict=True)):
            if call.get("id"):
                response = next((r for r in responses if r.get("id") == call["id"]), None)
            else:
                nth = sum(1 for c in calls[:position] if c.get("name") == call.get("name"))
                named = [r for r in responses if r.get("name") == call.get("name")]
                response = named[nth] if nth < len(named) else None
            if response is not None:
                found[str(logged["id"])] = json.dumps(response.get("response"), ensure_ascii=False)
    return found


def _hosted_tool_calls(response: dict[str, Any]) -> list[dict[str, Any]]:
    """The tools the API ran itself in a call's answer (the Responses API's web searches: the log's
    `web_search_calls`), the model's tool calls all the same: named as the request's tool (`{"type": "web_search"}`),
    their action (`{"type": "search", "query": …}`) their arguments, by their item's id, before the answer's function
    calls as its items come. The model is sent no result of them, so none is expected. Anthropic's server tools (the
    log's `server_tool_uses`) alike: named as the block names them, its input the arguments, by the block's id; what
    they found is in the same answer, no tool result the model was sent later (tests/trajectory checks it). Gemini's
    Google Search grounding (the log's `grounding_metadata`): one `google_search` call of the answer, its
    `webSearchQueries` the arguments' `queries`; the API gives it no id (the log's is the response's). The Responses
    API's file searches (the log's `file_search_calls`): named as the request's tool (`{"type": "file_search"}`), their
    `queries` the arguments, by their item's id, after the answer's web searches as its items come; what they found is
    in the same answer too. A web search's `sources` (its action's, where the request included them) are what it read,
    not what it was asked: no argument. The Responses API's runs of its code interpreter (the log's
    `code_interpreter_calls`): named as the request's tool (`{"type": "code_interpreter"}`), their `code` the
    arguments, by their item's id, after its searches; what they printed is in the same answer."""
    grounded = (response.get("grounding_metadata") or {}).get("webSearchQueries")
    return [*({"id": search["id"], "name": "web_search",
               "arguments": {key: value for key, value in search["action"].items() if key != "sources"}}
              for search in response.get("web_search_calls") or ()),
            *({"id": use["id"], "name": use["name"], "arguments": use["input"]}
              for use in response.get("server_tool_uses") or ()),
            *({"id": search["id"], "name": "file_search", "arguments": {"queries": search["queries"]}}
              for search in response.get("file_search_calls") or ()),
            *({"id": run["id"], "name": "code_interpreter", "arguments": {"code": run["code"]}}
              for run in response.get("code_interpreter_calls") or ()),
            *([{"id": f"{response['id']}-google_search", "name": "google_search", "arguments": {"queries": grounded}}]
              if grounded else [])]


def _billed_searches(response: dict[str, Any]) -> int:
    """The web searches a Responses API answer is billed for, which its usage does not count: its `web_search_call`
    items whose action is a `search` (OpenAI bills a search per call; an `open_page` or `find_in_page` action is no
    search), as pydantic-ai counts them (`models/openai/_response_fields.py`, `billed_web_searches`)."""
    return sum(1 for search in response.get("web_search_calls") or () if search["action"].get("type") == "search")


@dataclass
class GroundTruth:
    calls: list[Call]
    tool_results: dict[str, str] = field(default_factory=dict)  # tool call id -> what the model was shown

    @staticmethod
    def of(log: list[dict[str, Any]]) -> GroundTruth:
        calls, results = [], {**react_text.observations(log), **dspy_react.observations(log)}
        # A text-format agent's tool calls, in its answers' text.
        written = {**react_text.actions(log), **dspy_react.actions(log)}
        for position, entry in enumerate(log):
            r = entry["response"]
            usage = r["usage"]
            # A spoken answer's words are its audio's transcript (its content is null).
            said = r["text"] or (r.get("audio") or {}).get("transcript", "")
            text, tool_calls = written.get(entry["seq"], (said, r["tool_calls"]))
            tool_calls = [*_hosted_tool_calls(r), *tool_calls]
            calls.append(Call(entry["seq"], entry["api"], entry.get("model"), text, r.get("reasoning", ""),
                              tool_calls, usage["input_tokens"], usage["output_tokens"],
                              usage.get("cache_read_tokens", 0), usage.get("cache_write_tokens", 0),
                              usage.get("reasoning_tokens") or None,
                              input_audio_tokens=usage.get("input_audio_tokens", 0),
                              output_audio_tokens=usage.get("output_audio_tokens", 0),
                              web_search_requests=usage.get("web_search_requests", 0) or _billed_searches(r)))
            shown = (_gemini_tool_results(entry["request"], log[:position]) if entry["api"] == "gemini.generate_content"
                     else _tool_results_of(entry["api"], entry["request"]))
            for call_id, text in shown.items():
                results.setdefault(call_id, text)
        return GroundTruth(calls, results)

    @property
    def input_tokens(self) -> int:
        return sum(c.input_tokens for c in self.calls)

    @property
    def output_tokens(self) -> int:
        return sum(c.output_tokens for c in self.calls)

    @property
    def cache_read_tokens(self) -> int:
        return sum(c.cache_read_tokens for c in self.calls)

    @property
    def cache_write_tokens(self) -> int:
        return sum(c.cache_write_tokens for c in self.calls)

    def without_cache_reads(self) -> GroundTruth:
        """What an emitter that records no cache reads could report: the same prompt tokens, none cached."""
        return GroundTruth([replace(c, cache_read_tokens=0) for c in self.calls], self.tool_results)

    def without_reasoning_tokens(self) -> GroundTruth:
        """What an emitter that records no breakdown of the output tokens could report: no reasoning tokens."""
        return GroundTruth([replace(c, reasoning_tokens=None) for c in self.calls], self.tool_results)

    def without_reasoning_recorded(self, seqs: Iterable[int] | None = None) -> GroundTruth:
        """What an emitter that drops the reasoning of these calls (None: of all) could report: steps with no
        reasoning. What a step does show is still checked, and never as its message."""
        dropped = None if seqs is None else set(seqs)
        return GroundTruth([replace(c, reasoning_recorded=False) if dropped is None or c.seq in dropped else c
                            for c in self.calls], self.tool_results)

    def without_calls(self, seqs: Iterable[int]) -> GroundTruth:
        """What an emitter that records no span of these calls could report: the others, their tokens alone."""
        unrecorded = set(seqs)
        return GroundTruth([c for c in self.calls if c.seq not in unrecorded], self.tool_results)


# --- reading a trajectory --------------------------------------------------------------------

def all_trajectories(document: dict[str, Any]) -> list[dict[str, Any]]:
    """The document and its embedded subagent trajectories, depth first."""
    found = [document]
    for sub in document.get("subagent_trajectories") or ():
        found.extend(all_trajectories(sub))
    return found


def llm_steps(document: dict[str, Any]) -> list[dict[str, Any]]:
    """Agent steps that are LLM calls evalkit received (not copied history), in every trajectory."""
    return [step for trajectory in all_trajectories(document) for step in trajectory["steps"]
            if step["source"] == "agent" and not step.get("is_copied_context") and step.get("llm_call_count") != 0]


def message_text(message: Any) -> str:
    if isinstance(message, str):
        return message
    return "".join(part.get("text") or "" for part in message or () if isinstance(part, dict))


def compare(document: dict[str, Any], truth: GroundTruth, *, call_ids: bool = False) -> list[str]:
    """How the trajectory differs from what happened; empty when it is the conversation that happened.

    Checked: one agent step per LLM call with the model's text and tool calls (names and
    arguments, in order); every tool call the model made answered on its own step by the result
    the model was later shown, and no step of its own for a tool the model calls; a subagent a
    step's tool call started referenced from that call's result, not from a result of no call;
    token totals, prompt tokens counting cached ones, cache reads as `total_cached_tokens` and
    cache writes as the steps' `metrics.extra.cache_creation_input_tokens`; each step's `reasoning_content`
    its own call's reasoning (never in its message), its `metrics.extra.reasoning_tokens` the model's count.
    With `call_ids`, also each tool call named by the id the model gave it (for emitters that record it).
    """
    problems: list[str] = []
    steps = llm_steps(document)
    if len(steps) != len(truth.calls):
        problems.append(f"{len(steps)} LLM-call steps for {len(truth.calls)} LLM calls")
    remaining = list(steps)
    for call in truth.calls:
        wanted_tools = [(c["name"], c["arguments"]) for c in call.tool_calls]
        match = next((s for s in remaining
                      if message_text(s.get("message")).strip() == call.text.strip()
                      and [(t["function_name"], t["arguments"]) for t in s.get("tool_calls") or ()] == wanted_tools),
                     None)
        if match is None:
            problems.append(f"call {call.seq}: no step with text {call.text[:60]!r} and tool calls "
                            f"{[n for n, _ in wanted_tools]}")
            continue
        remaining.remove(match)
        problems.extend(_reasoning_problems(call, match))
        observed = (match.get("observation") or {}).get("results") or ()
        unlinked = [r for r in observed if r.get("subagent_trajectory_ref") and not r.get("source_call_id")]
        if call.tool_calls and unlinked:
            problems.append(f"call {call.seq}: a subagent it started is not the result of the call that started it")
        results = {r.get("source_call_id"): r for r in observed}
        for tool_call, wanted in zip(match.get("tool_calls") or (), call.tool_calls, strict=False):
            if call_ids and tool_call["tool_call_id"] != wanted["id"]:
                problems.append(f"call {call.seq}: tool call {wanted['name']} named {tool_call['tool_call_id']!r}, "
                                f"the model named it {wanted['id']!r}")
            shown = truth.tool_results.get(wanted["id"])
            if shown is None:
                continue  # the model was never shown a result for it (the run ended, or a handoff)
            result = results.get(tool_call["tool_call_id"])
            if result is None:
                problems.append(f"call {call.seq}: tool call {wanted['name']} has no observation result")
                continue
            if result.get("subagent_trajectory_ref") and not result.get("content"):
                continue  # answered by a subagent: its steps are checked on their own
            got = message_text(result.get("content")).strip()
            if got != shown.strip():
                problems.append(f"call {call.seq}: tool {wanted['name']} result {got[:80]!r}, "
                                f"the model was shown {shown[:80]!r}")
    # A model's reasoning is its step's reasoning_content, never the text of any step (a re-sent reasoning item read
    # as a question, a thought shown as an answer's text).
    reasoned = [call.reasoning.strip() for call in truth.calls if call.reasoning.strip()]
    for step in (s for t in all_trajectories(document) for s in t["steps"]) if reasoned else ():
        text = message_text(step.get("message"))
        if any(reasoning in text for reasoning in reasoned):
            problems.append(f"step {step['step_id']} ({step['source']}): a model's reasoning as its message")
    # A step no LLM call asked for, running a tool the model calls by name: an execution reported twice
    # (an MCP server's span inside the client's), not a call of its own. Tools a model runs by writing
    # code (smolagents' code agent) are steps of their own and named by no call.
    called = {c["name"] for call in truth.calls for c in call.tool_calls}
    for step in (s for t in all_trajectories(document) for s in t["steps"]):
        if step["source"] == "agent" and step.get("llm_call_count") == 0:
            again = [c["function_name"] for c in step.get("tool_calls") or () if c["function_name"] in called]
            if again:
                problems.append(f"step {step['step_id']}: tool {again[0]} as a step no LLM call asked for")
    final = document.get("final_metrics") or {}
    if final.get("total_prompt_tokens") != truth.input_tokens:
        problems.append(f"total_prompt_tokens {final.get('total_prompt_tokens')} != {truth.input_tokens}")
    if final.get("total_completion_tokens") != truth.output_tokens:
        problems.append(f"total_completion_tokens {final.get('total_completion_tokens')} != {truth.output_tokens}")
    if (final.get("total_cached_tokens") or 0) != truth.cache_read_tokens:
        problems.append(f"total_cached_tokens {final.get('total_cached_tokens')} != {truth.cache_read_tokens} "
                        "read from the cache")
    written = sum(((s.get("metrics") or {}).get("extra") or {}).get("cache_creation_input_tokens") or 0
                  for s in steps)
    total_written = (final.get("extra") or {}).get("total_cache_creation_input_tokens") or 0
    if written != truth.cache_write_tokens or total_written != written:
        problems.append(f"cache_creation_input_tokens {written} (total {total_written}) != "
                        f"{truth.cache_write_tokens} written to the cache")
    return problems


def _reasoning_problems(call: Call, step: dict[str, Any]) -> list[str]:
    """How a step shows its call's reasoning wrongly: its text in the message, another call's (or none where the
    emitter recorded it), reasoning tokens other than the model's."""
    problems = []
    reasoning = call.reasoning.strip()
    shown = (step.get("reasoning_content") or "").strip()
    if shown != reasoning and (shown or call.reasoning_recorded):
        problems.append(f"call {call.seq}: reasoning_content {shown[:60]!r}, the model reasoned {reasoning[:60]!r}")
    counted = ((step.get("metrics") or {}).get("extra") or {}).get("reasoning_tokens")
    if counted != call.reasoning_tokens and (counted or call.reasoning_tokens is not None):
        problems.append(f"call {call.seq}: reasoning_tokens {counted}, the model reported {call.reasoning_tokens}")
    return problems
