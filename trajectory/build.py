"""A session's spans and log records -> one ATIF trajectory.

Each span is read by the emitter mappers into an LLM call, a tool execution or an agent
run; this module assembles those into steps:

- system instructions -> a system step (once per distinct text); new user input -> user steps;
- each leaf LLM call -> one agent step. Calls re-send the history, so only the messages
  not seen before become steps; assistant messages found only in history (an earlier call
  we never received) become agent steps flagged `is_copied_context`, and so do the user
  messages re-sent before such history (what the call was asked comes after it);
- each tool execution -> an observation result on the agent step whose tool call it answers
  (by call id, else by name and order); tool results found only in a later call's history
  fill the calls no tool span answered; a tool execution nobody asked for becomes an agent
  step with `llm_call_count: 0`;
- an agent run nested under another agent -> an embedded subagent trajectory, referenced
  from the result of the tool call that started it (or from the preceding agent step).

Only leaf LLM calls carry usage into metrics; agent/chain spans' aggregates are read and
ignored. Spans whose parent never arrived are kept (their step just has no agent above it).
"""

from __future__ import annotations

import fnmatch
import operator
import time
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta
from functools import partial
from itertools import compress
from operator import attrgetter
from typing import Any

from evalkit.attributes import json_safe
from evalkit.trajectory import run_totals
from evalkit.trajectory.atif import version_for
from evalkit.trajectory.context_compaction import Summaries, step_extra, unrecorded_message
from evalkit.trajectory.mappers import evalkit_sdk, openinference_claude_agent_sdk, tool_results
from evalkit.trajectory.mappers.evalkit_sdk import sdk_runs
from evalkit.trajectory.mappers.failed_attempts import mark_unanswered
from evalkit.trajectory.mappers.messages import MessageMemo, render
from evalkit.trajectory.mappers.reader import SpanReader, pattern_of
from evalkit.trajectory.mappers.registry import (
    Detector,
    complete_calls,
    complete_runs,
    lone_agent,
    orchestrator_runs,
    relink_logs,
    run_answers,
    run_total_reader,
    step_agents,
)
from evalkit.trajectory.mappers.resent_history import Resent
from evalkit.trajectory.mcp_server_calls import names_tool, reported_executions
from evalkit.trajectory.media import input_media, tool_result_content, user_content
from evalkit.trajectory.operations import (
    AgentRun,
    ErrorInfo,
    Interrupt,
    LlmCall,
    Message,
    Operation,
    Part,
    ToolExecution,
)
from evalkit.trajectory.overrides import BUILT_IN_VERSION, MappingOverrides
from evalkit.trajectory.same_call import (
    complete_wrapped,
    duplicate_reports,
    may_repeat,
    one_response,
    wraps_same_request,
)
from evalkit.trajectory.span import LogRecord, Span

SESSION_ID_ATTRIBUTES = (
    "gen_ai.conversation.id",
    "session.id",
    "langfuse.session.id",
    "traceloop.association.properties.session_id",
    "ai.telemetry.metadata.sessionId",
    "ai.telemetry.metadata.session_id",
    # AI SDK 7 dropped telemetry metadata: the session id is runtime context it was told to include.
    "ai.settings.context.sessionId",
    "mlflow.trace.session",
    # LangSmith's thread metadata keys, as its OTel export writes run metadata (ingest/attribution.py, SESSION_KEYS).
    "langsmith.metadata.session_id",
    "langsmith.metadata.thread_id",
    "langsmith.metadata.conversation_id",
    # Firebase Genkit: an agent's session, on each turn's root span only (trajectory/mappers/genkit.py).
    "genkit:metadata:agent:sessionId",
)
AGENT_NAME_ATTRIBUTES = ("gen_ai.agent.name", "agent.name", "agent_name")
_IDENTITY_KEYS = frozenset((*SESSION_ID_ATTRIBUTES, *AGENT_NAME_ATTRIBUTES))
_ROLE_ALIASES = {"model": "assistant", "ai": "assistant", "human": "user", "developer": "system"}
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_YEAR_10000 = 253_402_300_800  # seconds from the epoch

SpanKey = tuple[str, str]
# ATIF objects as the JSON data they are served as: keys in the models' field order, unset fields
# left out, i.e. what `Trajectory.to_json_dict()` gives (building the data directly rather than
# models dumped afterwards took a sixth off the instructions of building and pricing a session).
Json = dict[str, Any]


@dataclass
class BuildResult:
    document: Json  # the ATIF trajectory, not priced yet (`cost.apply_costs`)
    unmapped_attributes: list[str]
    emitters: list[str]
    warnings: list[str]
    mapping_version: str


@dataclass(slots=True)
class _Mapped:
    span: Span
    operation: Operation | None
    overrides: dict[str, Any]  # ATIF target -> value, from MappingOverrides.attribute_map
    unused: list[str]


@dataclass(slots=True)
class _Draft:
    time_ns: int
    seq: int
    source: str
    message: str | list[Json] = ""  # content parts: a user's message with images
    reasoning: str | None = None
    tool_calls: list[Json] = field(default_factory=list)
    results: list[Json] = field(default_factory=list)
    model_name: str | None = None
    reasoning_effort: str | float | None = None
    metrics: Json | None = None
    llm_call_count: int | None = None
    is_copied_context: bool | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    def to_step(self, step_id: int, timestamp: str) -> Json:
        # Unvalidated: the builder types every field, and the document is validated (the JSON
        # Schema's types and the cross-field rules) before it is served.
        step: Json = {"step_id": step_id, "timestamp": timestamp, "source": self.source}
        if self.model_name is not None:
            step["model_name"] = self.model_name
        if self.reasoning_effort is not None:
            step["reasoning_effort"] = self.reasoning_effort
        step["message"] = self.message
        if self.reasoning:
            step["reasoning_content"] = self.reasoning
        if self.tool_calls:
            step["tool_calls"] = self.tool_calls
        if self.results:
            step["observation"] = {"results": self.results}
        if self.metrics is not None:
            step["metrics"] = self.metrics
        if self.llm_call_count is not None:
            step["llm_call_count"] = self.llm_call_count
        if self.is_copied_context is not None:
            step["is_copied_context"] = self.is_copied_context
        if self.extra:
            step["extra"] = self.extra
        return step


def iso_timestamp(time_ns: int) -> str:
    seconds, micros = divmod(time_ns // 1000, 1_000_000)
    if 0 <= seconds < _YEAR_10000:
        # What the datetime below writes, for the four-digit years of 1970 on, without building one.
        whole = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(seconds))
        return f"{whole}.{micros:06d}Z" if micros else whole + "Z"
    moment = _EPOCH + timedelta(microseconds=time_ns // 1000)
    return moment.isoformat().replace("+00:00", "Z")


def _normal_role(role: str) -> str:
    return _ROLE_ALIASES.get(role, role)


def _fingerprint(message: Message) -> tuple[Any, ...]:
    """What identifies a message when the next call re-sends it (reasoning is often dropped then)."""
    # One pass over the parts for what `text`, `tool_calls` and `tool_results` each walk them for.
    texts: list[str] = []
    calls: list[str] = []
    results: list[tuple[str, str]] = []
    for part in message.parts:
        kind = part.kind
        if kind == "text":
            if part.text:
                texts.append(part.text)
        elif kind == "tool_call":
            calls.append(part.call_id or part.name or "")
        elif kind == "tool_result":
            results.append((part.call_id or "", (part.text or "").strip()))
    role = "tool" if results else _normal_role(message.role)
    return (role, "\n".join(texts).strip(), tuple(calls), tuple(results))


class _Fingerprints:
    """Each message's fingerprint (`_fingerprint`) as a small number, worked out once per message
    object: a message re-sent by later calls is the same object (the mappers read messages through
    one `MessageMemo` per build), and equal fingerprints get the same number.

    Numbers, not the tuples: a re-sent history is looked up in sets and dicts a hundred messages a
    call, and a tuple's hash is computed again (through its nested tuples) at every lookup.
    Keyed by `id()`: every message stays referenced by its call's operation until the build ends.
    """

    def __init__(self, resent: Callable[[list[Message]], Resent | None] = lambda messages: None) -> None:
        self._by_id: dict[int, int] = {}
        self._inputs_by_id: dict[int, int] = {}
        self._numbers: dict[tuple[Any, ...], int] = {}
        self.fields: list[tuple[Any, ...]] = []  # number -> (role, text, tool call ids, tool results)
        # Which of a call's inputs are the call before's (`MessageMemo.resent`), and the keys each
        # list of inputs got, until a list re-sending it takes them (kept with the list, so no other
        # list comes to have its id; taken once, so a session holds a few, not one per call).
        self._resent = resent
        self._keys_of_inputs: dict[int, tuple[list[Message], list[int]]] = {}

    def __call__(self, message: Message) -> int:
        found = self._by_id.get(id(message))
        if found is None:
            fields = _fingerprint(message)
            found = self._numbers.get(fields)
            if found is None:
                found = self._numbers[fields] = len(self.fields)
                self.fields.append(fields)
            self._by_id[id(message)] = found
        return found

    def of_inputs(self, messages: list[Message]) -> list[int]:
        """Each input message's fingerprint, `_SYSTEM` for a system message: the keys of the messages
        re-sent from the list before taken from that list's, in slices; the others looked up in C
        for the messages seen before (a re-sent history is almost all of them)."""
        keys: list[int | None] | None = None
        resent = self._resent(messages)
        if resent is not None:
            before = self._keys_of_inputs.pop(id(resent.before), None)
            if before is not None and before[0] is resent.before:
                keys = resent.carry(before[1])
                for index in resent.rest():
                    keys[index] = self._input_key(messages[index])
        if keys is None:
            by_id = self._inputs_by_id
            keys = list(map(by_id.get, map(id, messages)))
            if None in keys:
                for index, key in enumerate(keys):
                    if key is None:
                        keys[index] = self._input_key(messages[index])
        filled: list[int] = keys  # type: ignore[assignment]  # every None was filled in
        self._keys_of_inputs[id(messages)] = (messages, filled)
        return filled

    def _input_key(self, message: Message) -> int:
        key = self._inputs_by_id.get(id(message))
        if key is None:
            role = message.role
            key = self._inputs_by_id[id(message)] = (
                _SYSTEM if _ROLE_ALIASES.get(role, role) == "system" else self(message)
            )
        return key


_SYSTEM = -1  # never a fingerprint (those number from 0)
_is_none = partial(operator.is_, None)
# From this many input messages a call's history is checked in bulk (`_Fingerprints.of_inputs`);
# for the few of a call that re-sends nothing, the setting up costs more than it saves.
_MANY_MESSAGES = 8
# The mark of a user message that is context a framework handed the agent, no question (`Message.extra`: ADK's).
_HANDED_OVER = "handed_over_context"


def _last_answer_or_result(messages: list[Message]) -> int:
    """The index of a call's input's last answer or tool result (-1: none). The user messages before it are history the
    call re-sends; those after it, what the call was asked."""
    aliases = _ROLE_ALIASES
    for index in range(len(messages) - 1, -1, -1):
        message = messages[index]
        role = message.role
        if aliases.get(role, role) not in ("user", "system"):
            return index
        for part in message.parts:  # no generator: this runs for every call
            if part.kind == "tool_result":
                return index
    return -1


def _asked_last(messages: list[Message], history_end: int) -> list[int]:
    """The indices of the user messages after a call's input's last answer or tool result (`history_end`, from
    `_last_answer_or_result`): what the call was asked."""
    return [index for index in range(history_end + 1, len(messages)) if _normal_role(messages[index].role) == "user"]


def _tool_arguments(value: Any) -> tuple[dict[str, Any], bool]:
    # Arguments may be an attribute's kvlist, bytes anywhere in it: JSON-safe before the document.
    if isinstance(value, dict):
        return json_safe(value), True
    if value is None or value == "":
        return {}, True
    return {"input": json_safe(value)}, False


class _Context:
    """The steps of one trajectory (the session's top level, or one nested agent run)."""

    def __init__(self, key: SpanKey | None, warnings: list[str], fingerprint: _Fingerprints) -> None:
        self.key = key
        self.warnings = warnings
        self.fingerprint = fingerprint
        self.drafts: list[_Draft] = []
        self.seq = 0
        self.known: dict[int, int] = {}  # fingerprint -> copies seen in one call, at most
        self.system_texts: set[str] = set()
        self.calls_by_id: dict[str, tuple[_Draft, Json]] = {}
        self.answered: set[str] = set()
        # Tool results seen in a call's input: when, the result, and for one holding media (`Part.result_parts`) the
        # span whose input holds them and the place of its first there (a reference's `input/<n>`, media.py).
        self.history_results: list[tuple[int, Part, tuple[Span, int] | None]] = []
        self.shown_results: dict[str, str] = {}  # call id -> what a call's input showed for it (`LlmCall`)
        self.tool_definitions: dict[str, dict[str, Any]] = {}
        self.models: Counter[str] = Counter()
        self.result_of_tool_span: dict[SpanKey, Json] = {}
        # What this trajectory's calls produced, item by item: the Responses API re-sends one
        # answer's text and each of its tool calls as separate input items, which no
        # fingerprint of the whole answer matches.
        self.produced_ids: set[str] = set()
        self.produced_texts: set[str] = set()
        # The reasoning the session's received calls answered with, in any trajectory (`build_trajectory`): shown on
        # their steps, never again on a step copied from a later call's input.
        self.received_reasoning: set[str] = set()
        self.asked_texts: set[str] = set()  # what this trajectory's calls were asked (its user steps' texts)
        # A question a call was asked last (after its input's last answer or result) -> that call's input.
        self.asked_last: dict[int, list[Message]] = {}
        # The agent run of that call, and the session's runs that raised: a later run sent a question the run asked it
        # last raised on is the turn run again (`_asked_again`).
        self.asked_last_by: dict[int, SpanKey | None] = {}
        self.raised_runs: set[SpanKey] = set()
        self.parent: _Context | None = None  # the trajectory that delegated to this one
        self.delegated: list[_Context] = []  # the trajectories this one delegated to, not handed off to
        # A handoff's receiving agent carries on the delegating agent's conversation: what that
        # one had seen when this one first calls a model is not new here.
        self.inherits: _Context | None = None
        # A handoff's receiving agents whose run ended in the trace while this one waited (end time, trace, its
        # trajectory): when this agent calls a model again there it carries on the conversation they left.
        self.handed_back: list[tuple[int, str, _Context]] = []
        self.traces: set[str] = set()  # traces whose LLM calls this trajectory has read
        self.runs: set[SpanKey] = set()  # agent runs whose LLM calls this trajectory has read
        self.call_under: dict[SpanKey, _Draft] = {}  # an LLM call's step, by its span's parent
        # What this trajectory's compaction calls summarized its context into (trajectory/context_compaction.py).
        self.summaries = Summaries()
        # Whether a step's message or a result holds content parts (media): only then can it hold audio, which the
        # document's version depends on (`atif.version_for`), so that no other document's steps are walked for it.
        self.media_content = False

    def draft(self, time_ns: int, source: str, **fields: Any) -> _Draft:
        self.seq += 1
        draft = _Draft(time_ns, self.seq, source, **fields)
        self.drafts.append(draft)
        return draft

    def system(self, texts: Iterable[str], time_ns: int) -> None:
        for text in texts:
            if text and text not in self.system_texts:
                self.system_texts.add(text)
                self.draft(time_ns, "system", message=text)

    def _register_calls(self, draft: _Draft, parts: list[Part], span_id: str) -> None:
        for index, part in enumerate(parts):
            arguments, is_object = _tool_arguments(part.arguments)
            extra: dict[str, Any] = {}
            call_id = part.call_id
            if call_id is None:
                call_id = f"{span_id}-{index}"
                extra["synthesized_id"] = True
            if not is_object:
                extra["arguments_not_object"] = True
            if part.extra:
                extra.update(part.extra)  # what the emitter records of the call itself
            # Unvalidated, as the step holding it: `_tool_arguments` makes the arguments an object.
            call: Json = {"tool_call_id": call_id, "function_name": part.name or "unknown", "arguments": arguments}
            if extra:
                call["extra"] = extra
            draft.tool_calls.append(call)
            self.calls_by_id.setdefault(call_id, (draft, call))
            self.produced_ids.add(call_id)

    def _provider_result(self, draft: _Draft, part: Part) -> None:
        """A result an answer holds for a call of it the provider ran (`extra.run_by`: Anthropic's server tools, whose
        results come in the same answer): that call's result, on the answer's step, with what the emitter records of it
        (`Part.extra`: a failure flagged, a command's non-zero return code)."""
        found = self.calls_by_id.get(part.call_id or "")
        if found is None or found[0] is not draft or part.call_id in self.answered \
                or (found[1].get("extra") or {}).get("run_by") != "provider":
            return
        draft.results.append({"source_call_id": part.call_id, "content": part.text or "",
                              "extra": {"from": "answer", **(part.extra or {})}})
        self.answered.add(found[1]["tool_call_id"])

    def _already_produced(self, fingerprint: int) -> bool:
        """An assistant message in a call's input made only of text and tool calls this
        trajectory's calls already produced (one answer re-sent split into items), or a delegation's work."""
        role, text, calls, results = self.fingerprint.fields[fingerprint]
        if role == "tool" and results and self.delegated:
            # The results of a delegated agent's calls, re-sent to this one with them (Magentic's manager is shown
            # a participant's whole response): that agent's work, each result on its call in its trajectory.
            return all(any(call_id in sub.produced_ids for sub in self.delegated) for call_id, _ in results)
        if role != "assistant" or results or not (text or calls):
            return False
        if (not text or text in self.produced_texts) and all(c in self.produced_ids for c in calls):
            return True
        # The answer of an agent this one delegated to, re-sent to it (an Agent Framework group chat's manager shown
        # what the participant it chose said), or its tool calls (Magentic's): that delegation's work, not new here.
        # Nor what this one asked it (Magentic's instruction to the participant its decision chose, re-sent to the
        # manager as its own message): that delegation's request, its subagent's user step.
        return any((not text or text in sub.produced_texts or (not calls and text in sub.asked_texts))
                   and all(c in sub.produced_ids for c in calls) for sub in self.delegated)

    def _answers_own_call(self, message: Message) -> bool:
        """Whether a message gives the result of a tool call this trajectory's calls made."""
        return any(part.kind == "tool_result" and part.call_id in self.produced_ids for part in message.parts)

    def _asked_again(self, messages: list[Message], asked: list[tuple[int, int]], run: SpanKey | None) -> set[int]:
        """The indices of the questions a call was asked last (`_asked_last`) that an earlier call of this trajectory
        was asked last too, when this call was sent what the latest such call was not: the question is asked again on
        a context that changed before it, not re-sent. A chain re-sends each earlier asking where it was (the n-th
        copy rule); a context rebuilt around the same question does not (Magentic's orchestrator starts each progress
        ledger's call on a fresh session of the context it keeps, ending in the same prompt), nor a window that
        dropped the earlier asking. Not asked again: a retry sent the same, nor a call whose emitter records the run's
        input alone (OpenTelemetry's and OpenLIT's openai-agents: each call of the run recorded as sent the question
        alone, the same each time). Asked again though sent the same: by another agent run (`run`) than the one asked
        it last, which raised (the app ran the turn again after openai-agents' run raised on the model's HTTP 500).
        A question the call asks more after is re-sent unless what came before it changed, instructions aside: a
        LangGraph reduce node sends the thread's messages, then the findings, under a system prompt of its own."""
        again: set[int] = set()
        sent: set[int] | None = None
        last = asked[-1][0]
        for index, key in asked:
            earlier = self.asked_last.get(key)
            if earlier is None:
                continue
            asked_by = self.asked_last_by.get(key)
            if run is not None and run != asked_by and asked_by in self.raised_runs:
                again.add(index)
                continue
            if index < last:
                before = {self.fingerprint(m) for m in messages[:index + 1] if _normal_role(m.role) != "system"}
                if not before <= set(map(self.fingerprint, earlier)):
                    again.add(index)
                continue
            if sent is None:
                sent = set(map(self.fingerprint, messages))
            if not sent <= set(map(self.fingerprint, earlier)):
                again.add(index)
        return again

    def _take_back(self, span: Span) -> None:
        """The conversation back from a handoff's receiving agent that ran in this call's trace and ended before it
        (langgraph-supervisor's worker, after which the supervisor's graph runs again on the shared history): what
        that agent saw and answered is its trajectory's, not new here."""
        for returned in [item for item in self.handed_back
                         if item[1] == span.trace_id and item[0] <= span.start_time_unix_nano]:
            self.handed_back.remove(returned)
            self.inherits = returned[2]
            self._inherit()

    def _inherit(self) -> None:
        source = self.inherits
        assert source is not None
        self.inherits = None
        for fingerprint, count in source.known.items():
            if count > self.known.get(fingerprint, 0):
                self.known[fingerprint] = count
        self.produced_ids |= source.produced_ids
        self.produced_texts |= source.produced_texts

    def llm_call(self, call: LlmCall, overrides: dict[str, Any], run: SpanKey | None = None) -> None:
        """Read one LLM call of this trajectory; `run`: the agent run it belongs to, if any."""
        span = call.span
        start = call.sent_ns or span.start_time_unix_nano
        system = list(call.system_instructions)
        self.shown_results.update(call.shown_tool_results)
        handed_over = self.inherits is not None
        if handed_over:
            self._inherit()
        if self.handed_back:
            self._take_back(span)
        # History is de-duplicated within a call chain, not across independent runs: the first call of
        # a trace that re-sends no answer (no assistant message) starts a run afresh, so what it asks is
        # new even when an earlier trace asked the same (the same question asked again). Not a handoff's
        # receiving agent: it carries on the conversation, even when its input shows no answer
        # (openai-agents-v2 drops the `transfer_to_…` call and its output from the input it records).
        # Nor a call re-sending a result of this trajectory's calls: it carries on their run, even when its
        # input shows no answer (OpenLIT's OpenAI instrumentation leaves out an answer of tool calls alone, and
        # a Haystack Agent under OpenLIT has no span holding its run: each call a trace of its own).
        # An agent run's first call in a trace holding several runs is such a start too, the same ones excepted:
        # openai-agents' docs group a conversation's runs in one `trace(…, group_id=…)`, and a run chained to the
        # API's copy of the conversation (`previous_response_id`, `conversation_id`) sends only its new question,
        # recorded by OpenTelemetry's openai-agents-v2 with no word of the state it continued.
        fresh = False
        first_of_run = run is not None and run not in self.runs
        if span.trace_id not in self.traces or first_of_run:
            self.traces.add(span.trace_id)
            if run is not None:
                self.runs.add(run)
            fresh = not handed_over and not any(
                _normal_role(m.role) == "assistant" or self._answers_own_call(m) for m in call.input_messages)
        # A call continuing the provider's copy of the conversation re-sends nothing: a question asked again is new.
        fresh = fresh or call.input_all_new
        # The n-th copy of a message in this call is new if fewer than n were seen before. Runs over
        # every message of every call, i.e. over the whole re-sent history.
        known = self.known
        messages = call.input_messages
        # What the call was asked last (the user messages after its input's last answer or result), by fingerprint.
        history_end = _last_answer_or_result(messages)
        asked = [(index, self.fingerprint(messages[index])) for index in _asked_last(messages, history_end)]
        # A compaction call was asked last the framework's summary prompt (the conversation in it): no question; so was
        # a call of the framework's own work (CrewAI's knowledge query rewrite, its memory's analyses) its prompt.
        framework_prompt = call.compaction is not None or call.framework_work is not None
        summary_prompt = {index for index, _ in asked} if framework_prompt else set()
        # What a call of the framework's own work was sent last is not yet the conversation's: the agent's call that is
        # sent it next is asked it anew (Gemini CLI's router is sent the person's question before the agent is).
        unheard = {key: known.get(key) for _, key in asked} if call.framework_work is not None else {}
        if summary_prompt:
            asked = []
        again = self._asked_again(messages, asked, run) if asked and self.asked_last and not fresh else set()
        keys = self.fingerprint.of_inputs(messages) if not fresh and len(messages) >= _MANY_MESSAGES else None
        new: list[int] = []  # the indices of the messages new here
        if keys is not None and _SYSTEM not in keys and len(set(keys)) == len(keys):
            # Each message once in this call (the usual): new is never seen before, found in C for
            # the re-sent ones; what the loop below does, without a Python step per message.
            befores = list(map(known.get, keys))  # None: never seen (a count is at least 1)
            if None in befores or again:
                # The never-seen ones picked out in C (a re-sent history is all but a message or two of the call).
                candidates = list(compress(range(len(befores)), map(_is_none, befores)))
                for index in sorted(again.union(candidates)) if again else candidates:
                    key, before = keys[index], befores[index]
                    if messages[index].role != "user" and self._already_produced(key):
                        continue
                    known[key] = before or 1
                    new.append(index)
        else:
            seen: dict[int, int] = {}
            for index, message in enumerate(messages):
                role = message.role
                if _ROLE_ALIASES.get(role, role) == "system":
                    if message.text:
                        system.append(message.text)
                    continue
                fingerprint = self.fingerprint(message)
                count = seen[fingerprint] = seen.get(fingerprint, 0) + 1
                before = known.get(fingerprint, 0)
                if fresh or count > before or (again and index in again):
                    if role != "user" and self._already_produced(fingerprint):
                        continue
                    known[fingerprint] = max(count, before)
                    new.append(index)
        for key, before in unheard.items():
            if before is None:
                known.pop(key, None)
            else:
                known[key] = before
        # A compaction call's instructions are its summary prompt's (a Strands summarization agent's system prompt), not
        # the agent's: no system step; nor are a call of the framework's own work's.
        if system and not framework_prompt:
            self.system(system, start)
        # A compaction no recorded call made, sent in place of the conversation before it (the Responses API's
        # compaction item): its step where it happened, once; what its output re-sends (the user messages) no step.
        compacted = call.sent_compaction
        if compacted is not None:
            if self.summaries.first_sent(compacted):
                # Its span the call whose input records it (none lasted the compaction: no duration).
                self.draft(compacted.time_ns or start, "agent", message=unrecorded_message(compacted), llm_call_count=0,
                           extra={"context_compaction": step_extra(compacted), "from": "a later call's input",
                                  "span_id": span.span_id, "trace_id": span.trace_id, "emitter": call.emitter})
        resent = range(call.sent_compaction_at if compacted is not None else 0)
        # A new user message before an answer or result the call re-sends is history, not asked by this call: an
        # earlier run's (the same agent run again in a later turn) or another agent's, copied context as the answers.
        for index in new:
            if index in summary_prompt or index in resent:
                continue
            self._new_input(messages[index], start, span, copied=index < history_end, inputs=messages, at=index,
                            media_span=call.input_span)
        for definition in call.tool_definitions:
            name = str(definition.get("function", {}).get("name", ""))
            self.tool_definitions.setdefault(name, definition)

        aliases = _ROLE_ALIASES
        outputs = [
            m for m in call.output_messages if aliases.get(m.role, m.role) == "assistant"
        ] or call.output_messages
        output = outputs[0] if outputs else Message("assistant")
        draft = self.draft(
            start,
            "agent",
            message=output.text,
            reasoning=output.reasoning or None,
            model_name=call.model,
            reasoning_effort=call.reasoning_effort,
            llm_call_count=1 if call.answered else 0,  # a request the model answered nothing to: no call billed
            metrics=_metrics(call),
            extra=_span_extra(span, call.emitter),
        )
        self._register_calls(draft, output.tool_calls, span.span_id)
        for part in output.tool_results:  # a tool the provider ran answered within the answer (Anthropic's web search)
            self._provider_result(draft, part)
        self.call_under[(span.trace_id, span.parent_span_id)] = draft
        if call.model:
            self.models[call.model] += 1
        if call.provider:
            draft.extra["provider"] = call.provider
        if call.finish_reasons:
            draft.extra["finish_reasons"] = call.finish_reasons
        if call.extra:
            draft.extra.update(json_safe(call.extra))  # request parameters are attribute values
        if len(outputs) > 1:
            draft.extra["other_choices"] = [m.text for m in outputs[1:]]
        media = [part.uri or part.media_type for part in output.parts if part.kind == "media"]
        if media:
            draft.extra["media"] = media
        if call.error is not None:
            draft.extra["error"] = json_safe(call.error.as_extra())
        if call.framework_work is not None:
            draft.extra["framework_work"] = json_safe(call.framework_work)
        if call.compaction is not None:
            draft.extra["context_compaction"] = step_extra(call.compaction)
            # What later calls are sent of it: the answer, or the part of it the framework re-sends.
            self.summaries.add(call.compaction.resent_summary or output.text)
        _apply_step_overrides(draft, overrides)
        for _index, key in asked:
            self.asked_last[key] = messages
            self.asked_last_by[key] = run
        for message in call.output_messages:
            fingerprint = self.fingerprint(message)
            self.known[fingerprint] = self.known.get(fingerprint, 0) + 1
            text = self.fingerprint.fields[fingerprint][1]
            if text:
                self.produced_texts.add(text)

    def _new_input(self, message: Message, time_ns: int, span: Span, *, copied: bool = False,
                   inputs: Sequence[Message] = (), at: int = 0, media_span: Span | None = None) -> None:
        """`message`, `inputs[at]` of the call of `span`, new in this trajectory (its media held by `media_span`'s
        input where the call's messages were read there, `LlmCall.input_span`)."""
        role = _normal_role(message.role)
        holder = media_span or span
        # A referenced image is named by its place among all the media of the span's input (media.py), a tool
        # result's at its place (Anthropic's tool_result blocks come first in their message). Counted only for a
        # message holding media: most hold none, and a re-sent history is long.
        holds_media = any(part.kind == "media" or part.result_parts for part in message.parts)
        position = len(input_media(inputs[:at])) if holds_media else 0
        for part in message.parts:
            if part.kind == "tool_result":
                self.history_results.append((time_ns, part, (holder, position) if part.result_parts else None))
                position += sum(media.kind == "media" for media in part.result_parts or ())
        if self.summaries.resent(message):
            return  # a compaction's summary sent again in place of what it summarized: that call's answer, no step
        if role == "assistant":
            if self._completes_answer(message):
                return
            # Produced by a call we never received: keep it, flagged as context. The reasoning re-sent with it is
            # that call's thinking where no received call answered with it (openai-agents' run resumed after an
            # approval, which OpenInference does not trace), else a copy of another step's.
            draft = self.draft(
                time_ns,
                "agent",
                message=message.text,
                reasoning=(message.reasoning or None) if message.reasoning not in self.received_reasoning else None,
                is_copied_context=True,
                extra={"reconstructed_from": "input history", "span_id": span.span_id},
            )
            self._register_calls(draft, message.tool_calls, f"{span.span_id}-history-{self.seq}")
            return
        text = message.text
        # Context a framework handed the agent on the user channel, no one's question (ADK's "For context:" rewrites
        # of another agent's events, marked by its mapper): a system step of copied context, as the model was sent it.
        handed_over = message.extra is not None and _HANDED_OVER in message.extra
        source = "system" if handed_over else "user"
        copied = copied or handed_over
        media = [part for part in message.parts if part.kind == "media"]
        if media:
            # Images as ATIF image parts, a large data URL referenced (trajectory/media.py).
            content, referenced = user_content(text, media, holder, first=position)
            self.media_content = True
            draft = self.draft(time_ns, source, message=content, is_copied_context=copied or None)
            if referenced:
                draft.extra["media"] = referenced
        elif text:
            draft = self.draft(time_ns, source, message=text, is_copied_context=copied or None)
            if not handed_over:
                self.asked_texts.add(text)
        else:
            return
        if message.extra:  # what the emitter records of the question beyond its text (spoken: openai_agents_voice.py)
            draft.extra.update(json_safe(message.extra))

    def _completes_answer(self, message: Message) -> bool:
        """Whether a re-sent answer with tool calls is this trajectory's latest received answer, whose span
        recorded its text alone (openai-agents-v2 0.1.0 writes a Chat Completions message that has text so):
        its calls are then registered on that answer's step, not on a copied step after the tools ran."""
        text = message.text.strip()
        calls = message.tool_calls
        if not text or not calls:
            return False
        latest = max((d for d in self.drafts if d.source == "agent" and d.llm_call_count == 1),
                     key=_DRAFT_ORDER, default=None)
        if latest is None or latest.tool_calls or not isinstance(latest.message, str) or latest.message.strip() != text:
            return False
        self._register_calls(latest, calls, str(latest.extra.get("span_id", "")))
        latest.extra["tool_calls_from"] = "input history"
        return True

    def tool_execution(self, execution: ToolExecution, overrides: dict[str, Any]) -> None:
        span = execution.span
        # A framework's wrapper (LangChain ToolMessage, LlamaIndex ToolOutput) taken off: its
        # content is what the model was shown; its call id and error flag count as the span's.
        output = tool_results.unwrap(execution.result)
        content = render(output.value)
        call_id = execution.call_id or output.call_id
        extra: dict[str, Any] = dict(_span_extra(span, execution.emitter))
        extra.update(_failure_extra(execution, output))
        for target, value in overrides.items():
            if target.startswith("step.extra."):
                extra[target.removeprefix("step.extra.")] = value
        if execution.handoff_to is not None and execution.call_id is None:
            found = self._find_handoff_call(execution.handoff_to, span.start_time_unix_nano, execution.name)
            if execution.handoff_to:
                extra["handoff_to"] = execution.handoff_to
        else:
            found = self._find_call(call_id, execution.name, span.start_time_unix_nano, execution.arguments)
            if found is None and call_id is not None and call_id not in self.calls_by_id:
                found = self._call_under_another_id(execution)
        if found is None and execution.asked_by_call_beside:
            found = self._unrecorded_call_beside(execution)
        if found is None and execution.only_if_called:
            return
        if execution.definition is not None:  # after its calls': a call's own definitions come first
            self.tool_definitions.setdefault(str(execution.definition["function"]["name"]), execution.definition)
        if found is None:
            draft = self.draft(
                span.start_time_unix_nano,
                "agent",
                llm_call_count=0,
                extra={
                    "dispatch": "tool execution without an LLM call requesting it",
                    **_span_extra(span, execution.emitter),
                },
            )
            part = Part("tool_call", call_id=call_id, name=execution.name, arguments=execution.arguments)
            self._register_calls(draft, [part], span.span_id)
            found = (draft, draft.tool_calls[-1])
        draft, call = found
        result: Json = {"source_call_id": call["tool_call_id"], "content": content}
        if execution.result_parts is not None:
            # Media the tool returned (a screenshot): content parts, the images referenced (trajectory/media.py).
            result["content"], referenced = tool_result_content(execution.result_parts, span)
            self.media_content = True
            if referenced:
                extra["media"] = referenced
        if extra:
            result["extra"] = extra
        for retrieval in execution.retrievals:  # run within the tool's own span (Agno's knowledge search)
            _list_retrieval(result, span.span_id, retrieval)
        draft.results.append(result)
        self.answered.add(call["tool_call_id"])
        self.result_of_tool_span[(span.trace_id, span.span_id)] = result

    def _call_under_another_id(self, execution: ToolExecution) -> tuple[_Draft, Json] | None:
        """The call a tool span naming an id no call of the trajectory has answers, its emitter having recorded the
        call under another id (OpenLLMetry's openai instrumentation names a Responses function call by its item's
        `id`, `fc_…`; the app's tool span by its `call_id`, `call_…`): the earliest unanswered call a received answer
        made of the span's tool with the span's arguments; none where the span records no arguments."""
        if execution.name is None or execution.arguments is None:
            return None
        wanted = _tool_arguments(execution.arguments)[0]
        time_ns = execution.span.start_time_unix_nano
        return min(((draft, call) for draft, call in self.calls_by_id.values()
                    if call["tool_call_id"] not in self.answered and not draft.is_copied_context
                    and draft.time_ns <= time_ns and call["function_name"] == execution.name
                    and call["arguments"] == wanted),
                   key=lambda item: (item[0].time_ns, item[0].seq), default=None)

    def _unrecorded_call_beside(self, execution: ToolExecution) -> tuple[_Draft, Json] | None:
        """The call a tool span answers (`ToolExecution.asked_by_call_beside`) of the answer under its parent,
        which that answer's span did not record: registered from the tool span (its id made up), before the
        answer's calls not yet answered: the tools run in the answer's order, and the call OpenLIT keeps of a
        Responses answer is its last."""
        span = execution.span
        draft = self.call_under.get((span.trace_id, span.parent_span_id)) if span.parent_span_id else None
        if draft is None or draft.time_ns > span.start_time_unix_nano:
            return None
        calls = draft.tool_calls
        position = next((i for i, c in enumerate(calls) if c["tool_call_id"] not in self.answered), len(calls))
        self._register_calls(draft, [Part("tool_call", name=execution.name, arguments=execution.arguments)],
                             span.span_id)
        call = calls.pop()
        call.setdefault("extra", {})["from"] = "tool span"
        calls.insert(position, call)
        return draft, call

    def same_execution(self, outer: SpanKey, execution: ToolExecution) -> bool:
        """Whether a tool span inside the span that answered a call of the same tool (no LLM call or
        agent run between them) is another report of that execution, not a call of its own: an MCP
        server's `tools/call <name>` span (mcp 2's own tracing, joined to the client's trace by the
        `_meta` trace context, else put there by `mcp_server_calls`) inside the agent framework's span of the
        model's call, which may name the tool under the client's prefix (`mcp__<server>__<tool>`). It adds no step;
        its failure flags that call's result (an `isError` result is no failure on the client's span),
        its result fills an empty one."""
        result = self.result_of_tool_span.get(outer)
        if result is None or execution.handoff_to is not None or not execution.name:
            return False
        found = self.calls_by_id.get(str(result.get("source_call_id")))
        if found is None or not names_tool(found[1]["function_name"], execution):
            return False
        output = tool_results.unwrap(execution.result)
        failure = _failure_extra(execution, output)
        extra = result.setdefault("extra", {})
        if failure and not extra.get("is_error"):
            extra.update(failure, error_from_span=execution.span.span_id)
        if not result.get("content") and output.value is not None:
            result["content"] = render(output.value)
        return True

    def retrieved_by(self, outer: SpanKey, key: SpanKey, execution: ToolExecution) -> bool:
        """Whether a retrieval (`ToolExecution.retrieval`, span `key`) inside the span that answered a call is that
        call's own work (a LangChain retriever tool running its retriever): then it adds no step, and is listed on the
        call's result (`extra.retrievals`: the retriever, the query, the documents found, its span), where the model
        was shown their text; a retrieval inside it (a retriever combining others) is listed there too."""
        result = self.result_of_tool_span.get(outer)
        if result is None:
            return False
        _list_retrieval(result, key[1], execution)
        self.result_of_tool_span[key] = result
        return True

    def _find_handoff_call(self, target: str, time_ns: int, tool: str | None = None) -> tuple[_Draft, Json] | None:
        """The model's call a handoff span carries out: the latest unanswered call before it named
        for the receiving agent (openai-agents' `transfer_to_<agent>`), else any `transfer_to_…` or
        call of the tool the span names (LlamaIndex's `handoff`, the agent in its arguments)."""
        snake = "".join(c if c.isalnum() else "_" for c in target.lower())
        own = tool.lower() if tool else None
        best: tuple[int, int, int, tuple[_Draft, Json]] | None = None
        for draft, call in self.calls_by_id.values():
            if call["tool_call_id"] in self.answered or draft.time_ns > time_ns or draft.is_copied_context:
                continue
            name = call["function_name"].lower()
            fit = 2 if snake and snake in name else 1 if name.startswith("transfer_to") or name == own else 0
            if fit and (best is None or (fit, draft.time_ns, draft.seq) > best[:3]):
                best = (fit, draft.time_ns, draft.seq, (draft, call))
        return best[3] if best is not None else None

    def _find_call(
        self, call_id: str | None, name: str | None, time_ns: int, arguments: Any = None
    ) -> tuple[_Draft, Json] | None:
        if call_id is not None:
            found = self.calls_by_id.get(call_id)
            if found is not None and call_id not in self.answered:
                return found
            if found is not None:
                return None
        # No id on one side: the earliest unanswered call of that name issued before the execution.
        candidates = [
            (draft, call)
            for draft, call in self.calls_by_id.values()
            if call["tool_call_id"] not in self.answered
            and (name is None or call["function_name"] == name)
            and draft.time_ns <= time_ns
            and (call_id is None or call.get("extra", {}).get("synthesized_id"))
        ]
        if len(candidates) > 1 or (candidates and arguments is not None):
            # A tool span answers the call that asked for its arguments, made by a call we received;
            # a call copied from history only when no received call asked for them, and never
            # one that asked for other arguments.
            wanted = _tool_arguments(arguments)[0] if arguments is not None else None

            def fits(item: tuple[_Draft, Json]) -> bool:
                return not (item[0].is_copied_context and wanted is not None and item[1]["arguments"] != wanted)

            candidates = [item for item in candidates if fits(item)]
            return min(
                candidates,
                key=lambda item: (
                    wanted is not None and item[1]["arguments"] != wanted,
                    bool(item[0].is_copied_context),
                    item[0].time_ns,
                    item[0].seq,
                ),
                default=None,
            )
        if candidates:
            return candidates[0]
        return None

    def results_from_run(self, run: AgentRun) -> None:
        """Results an agent run's span recorded (`AgentRun.tool_results`) answer the calls nothing else answered."""
        for part in run.tool_results:
            found = self.calls_by_id.get(part.call_id or "")
            if found is None or part.call_id in self.answered:
                continue
            draft, call = found
            extra = {"from": "agent span", "span_id": run.span.span_id, "trace_id": run.span.trace_id,
                     "emitter": run.emitter}
            draft.results.append({"source_call_id": call["tool_call_id"], "content": part.text or "", "extra": extra})
            self.answered.add(call["tool_call_id"])

    def settle_history_results(self) -> None:
        """Tool results seen only in a later call's input answer the calls no tool span answered; what a call's
        input showed the model (`LlmCall.shown_tool_results`) replaces what a tool span recorded."""
        for time_ns, part, media_at in self.history_results:
            if part.call_id is not None and part.call_id in self.answered:
                self._fill_empty_result(part, media_at)
                if part.error:
                    self._flag_history_failure(part)
                continue
            found = self._find_call(part.call_id, part.name, time_ns)
            if found is None and part.call_id is not None and part.call_id not in self.calls_by_id:
                found = self._find_call(None, part.name, time_ns)
            if found is None:
                if part.call_id is None:
                    # No id, and every call before it has a result: the re-sent form of results
                    # already on their calls, or what the model was shown for a failed one.
                    self._fill_latest_empty(part, time_ns, media_at)
                    continue
                if part.call_id not in self.answered and not self._fill_delegator(part):
                    self.warnings.append(
                        f"tool result for call {part.call_id!r} matches no tool call; dropped"
                    )
                continue
            draft, call = found
            extra: dict[str, Any] = {"from": "input history"}
            if part.error:
                extra.update(_history_failure())
            content, referenced = _history_content(part, media_at)
            self.media_content = self.media_content or not isinstance(content, str)
            if referenced:
                extra["media"] = referenced
            draft.results.append({"source_call_id": call["tool_call_id"], "content": content, "extra": extra})
            self.answered.add(call["tool_call_id"])
        for call_id, text in self.shown_results.items():
            found = self.calls_by_id.get(call_id)
            for result in found[0].results if found is not None else ():
                shown = _shown_result(result.get("content"), text)
                if result.get("source_call_id") == call_id and result.get("content") != shown:
                    result["content"] = shown
                    result.setdefault("extra", {})["content_from"] = "input history"

    def _flag_history_failure(self, part: Part) -> None:
        """A result the next call's input says failed (`Part.error`) flags the call's result when its tool span
        did not."""
        found = self.calls_by_id.get(part.call_id or "")
        for result in found[0].results if found is not None else ():
            extra = result.setdefault("extra", {})
            if result.get("source_call_id") == part.call_id and not extra.get("is_error"):
                extra.update(_history_failure())

    def _fill_empty_result(self, part: Part, media_at: tuple[Span, int] | None = None) -> None:
        """A tool span that failed with no output (or recorded none: an image is no attribute value), or recorded as
        text a result the model was shown images of (the AI SDK's tool span: what `execute` returned, base64 and all,
        not what `toModelOutput` made of it): the next call's input shows what the model saw."""
        found = self.calls_by_id.get(part.call_id or "")
        if found is None or not (part.text or part.result_parts):
            return
        shows_media = any(media.kind == "media" for media in part.result_parts or ())
        for result in found[0].results:
            recorded = result.get("content")
            if result.get("source_call_id") == part.call_id and (
                    not recorded or (shows_media and isinstance(recorded, str))):
                content, referenced = _history_content(part, media_at)
                self.media_content = self.media_content or not isinstance(content, str)
                if recorded and content == recorded:
                    return  # recorded as the input shows it (an image whose bytes no span holds, as its marker)
                result["content"] = content
                extra = result.setdefault("extra", {})
                extra["content_from"] = "input history"
                if referenced:
                    extra["media"] = referenced
                return

    def _fill_latest_empty(self, part: Part, time_ns: int, media_at: tuple[Span, int] | None = None) -> None:
        """An id-less result (smolagents' `tool-response` after a failed call) fills the empty
        result of the latest call before it; the images shown with one after a step of several calls
        (smolagents' observation images) are a result of no call on that step."""
        if not part.text:
            return
        if any(result.get("content") == part.text for draft, _ in self.calls_by_id.values()
               for result in draft.results):
            return  # a result already on its call, re-sent with no id (OpenLIT's LangChain messages name no call)
        latest: tuple[int, int, Json] | None = None
        for draft, call in self.calls_by_id.values():
            # Not the received call whose input holds the result (its step starts then): it was made after.
            made_with = draft.time_ns == time_ns and not draft.is_copied_context and draft.llm_call_count == 1
            if draft.time_ns > time_ns or made_with or (
                    latest is not None and (draft.time_ns, draft.seq) <= latest[:2]):
                continue
            for result in draft.results:
                if result.get("source_call_id") == call["tool_call_id"] and not result.get("content"):
                    latest = (draft.time_ns, draft.seq, result)
        if latest is not None:
            content, referenced = _history_content(part, media_at)
            self.media_content = self.media_content or not isinstance(content, str)
            latest[2]["content"] = content
            latest[2].setdefault("extra", {})["content_from"] = "input history"
            if referenced:
                latest[2]["extra"]["media"] = referenced
            return
        if part.name and not any(call["function_name"] == part.name for _, call in self.calls_by_id.values()):
            # The result of an action the model wrote rather than called (a smolagents CodeAgent's
            # code, re-stated as a `python_interpreter` call): the observation of the step that wrote it.
            steps = [d for d in self.drafts if d.source == "agent" and not d.tool_calls
                     and not d.is_copied_context and d.llm_call_count and d.time_ns < time_ns]
            if steps:
                step = max(steps, key=lambda d: (d.time_ns, d.seq))
                content, referenced = _history_content(part, media_at)  # with the images shown with it
                self.media_content = self.media_content or not isinstance(content, str)
                extra: Json = {"from": "input history", "tool": part.name}
                if referenced:
                    extra["media"] = referenced
                step.results.append({"content": content, "extra": extra})
            return
        media = [shown for shown in part.result_parts or () if shown.kind == "media"]
        if media and media_at is not None:
            # Every call of the step has its result (its tool span's): the images are the step's observation, no one
            # call's result.
            made = [d for d in self.drafts if d.source == "agent" and d.tool_calls and not d.is_copied_context
                    and d.llm_call_count and d.time_ns < time_ns]
            if made:
                content, referenced = tool_result_content(media, media_at[0], where="input", first=media_at[1])
                self.media_content = True
                shown_with: Json = {"from": "input history"}
                if referenced:
                    shown_with["media"] = referenced
                max(made, key=lambda d: (d.time_ns, d.seq)).results.append({"content": content, "extra": shown_with})

    def _fill_delegator(self, part: Part) -> bool:
        """A result in this trajectory's input for a call the delegating agent made (the handoff
        call itself, re-sent to the agent taking over): what the model was shown for it."""
        context = self.parent
        while context is not None and part.call_id is not None:
            found = context.calls_by_id.get(part.call_id)
            if found is not None:
                draft = found[0]
                result = next((r for r in draft.results if r.get("source_call_id") == part.call_id), None)
                if result is None:
                    draft.results.append(
                        {"source_call_id": part.call_id, "content": part.text or "", "extra": {"from": "input history"}}
                    )
                    context.answered.add(part.call_id)
                elif not result.get("content"):
                    result["content"] = part.text or ""
                return True
            context = context.parent
        return False

    def attach_subagent(self, ref: Json, tool_span: SpanKey | None, run: AgentRun) -> None:
        if tool_span is not None and tool_span in self.result_of_tool_span:
            result = self.result_of_tool_span[tool_span]
            extra = result.pop("extra", None)  # re-added after the refs: field order
            result["subagent_trajectory_ref"] = [*result.get("subagent_trajectory_ref", ()), ref]
            if extra is not None:
                result["extra"] = extra
            return
        start = run.span.start_time_unix_nano
        # A run no call started (`AgentRun.started_by`: openai-agents' guardrail's agent) is no earlier step's result.
        earlier = ([d for d in self.drafts if d.source == "agent" and d.time_ns <= start]
                   if run.started_by is None else [])
        result = {"subagent_trajectory_ref": [ref]}
        if run.output_text is not None:
            result = {"content": run.output_text, **result}
        if earlier:
            step = max(earlier, key=lambda d: (d.time_ns, d.seq))
            call = _call_starting(step, run)
            if call is None:
                step.results.append(result)
                return
            # The call that started it (a smolagents managed agent is a tool call named after it):
            # the run's answer is that call's result, unless what the model was shown already is.
            call_id = call["tool_call_id"]
            shown = next((r for r in step.results if r.get("source_call_id") == call_id), None)
            if shown is None:
                step.results.append({"source_call_id": call_id, **result})
                self.answered.add(call_id)
            else:
                extra = shown.pop("extra", None)  # re-added after the refs: field order
                shown["subagent_trajectory_ref"] = [*shown.get("subagent_trajectory_ref", ()), ref]
                if extra is not None:
                    shown["extra"] = extra
        else:
            started_by = f" by {run.started_by}" if run.started_by else ""
            self.draft(
                start, "system", message=f"Delegated to subagent {run.name or ''}".strip() + started_by,
                results=[result],
            )

    def steps(self) -> list[Json]:
        ordered = sorted(self.drafts, key=_DRAFT_ORDER)
        # A call's input and its answer are steps at one time: each time written once.
        stamps: dict[int, str] = {}
        steps = []
        for index, draft in enumerate(ordered, start=1):
            stamp = stamps.get(draft.time_ns)
            if stamp is None:
                stamp = stamps[draft.time_ns] = iso_timestamp(draft.time_ns)
            steps.append(draft.to_step(index, stamp))
        return steps


_DRAFT_ORDER = attrgetter("time_ns", "seq")
_SPAN_ORDER = attrgetter("start_time_unix_nano", "end_time_unix_nano", "span_id")


def _call_starting(step: _Draft, run: AgentRun) -> Json | None:
    """The tool call of `step` that started the nested `run` with no tool span between them: the
    one named after the agent, else the step's only call no tool span answered."""
    referenced = {r.get("source_call_id") for r in step.results if r.get("subagent_trajectory_ref")}
    calls = [c for c in step.tool_calls if c["tool_call_id"] not in referenced]
    named = [c for c in calls if run.name and c["function_name"] == run.name]
    if named:
        return named[0]
    answered_by_span = {r.get("source_call_id") for r in step.results if "from" not in (r.get("extra") or {})}
    open_calls = [c for c in calls if c["tool_call_id"] not in answered_by_span]
    return open_calls[0] if len(open_calls) == 1 else None


def _metrics(call: LlmCall) -> Json | None:
    usage = call.usage
    extra: dict[str, Any] = {}
    if usage.cache_write_tokens:
        extra["cache_creation_input_tokens"] = usage.cache_write_tokens
    if usage.reasoning_tokens:
        extra["reasoning_tokens"] = usage.reasoning_tokens
    if usage.normalisation:
        extra["prompt_tokens_normalisation"] = usage.normalisation
    if usage.web_search_requests:
        extra["web_search_requests"] = usage.web_search_requests
    if usage.web_fetch_requests:
        extra["web_fetch_requests"] = usage.web_fetch_requests
    if usage.input_audio_tokens:
        extra["input_audio_tokens"] = usage.input_audio_tokens
    if usage.output_audio_tokens:
        extra["output_audio_tokens"] = usage.output_audio_tokens
    if usage.input_tokens_by_modality:
        extra["prompt_tokens_by_modality"] = usage.input_tokens_by_modality
    if usage.output_tokens_by_modality:
        extra["completion_tokens_by_modality"] = usage.output_tokens_by_modality
    cost = None
    if call.reported_cost is not None:
        cost = float(call.reported_cost)
        extra["price_source"] = "reported"
    if usage.empty and cost is None and not extra:
        return None
    # Unvalidated: the counts come from `as_int`, the cost from float().
    metrics: Json = {}
    if usage.input_tokens is not None:
        metrics["prompt_tokens"] = usage.input_tokens
    if usage.output_tokens is not None:
        metrics["completion_tokens"] = usage.output_tokens
    if usage.cache_read_tokens is not None:
        metrics["cached_tokens"] = usage.cache_read_tokens
    if cost is not None:
        metrics["cost_usd"] = cost
    if extra:
        metrics["extra"] = extra
    return metrics


def _history_content(part: Part, media_at: tuple[Span, int] | None) -> tuple[str | list[Json], list[Json]]:
    """A tool result as a call's input showed it: its text, or where it holds media (a screenshot's image) content
    parts, a large image referenced in the input of the span that holds it (`media_at`); the `extra.media` entries."""
    if part.result_parts is None or media_at is None:
        return part.text or "", []
    span, first = media_at
    return tool_result_content(part.result_parts, span, where="input", first=first)


def _shown_result(content: Any, text: str) -> str | list[Json]:
    """A tool result's content given the text its call's input showed the model for it: that text, and the result's
    images after it where it is content parts holding any (a tool's file sent beside its text on a text-only tool
    channel: pydantic-ai's "See file <id>." on OpenAI's Chat Completions); the text alone otherwise."""
    media = [part for part in content if part.get("type") != "text"] if isinstance(content, list) else []
    return [{"type": "text", "text": text}, *media] if media else text


def _history_failure() -> dict[str, Any]:
    """The flag of a tool result the message that carried it to the model says failed (`Part.error`)."""
    return {"is_error": True, "error": {"status": "error", "from": "input history"}}


def _list_retrieval(result: Json, span_id: str, retrieval: ToolExecution) -> None:
    """A retrieval listed on the result of the call whose work it was (`extra.retrievals`): the retriever, the query,
    the documents found, the span recording it, its failure."""
    arguments = retrieval.arguments
    listed: Json = {"retriever": retrieval.name,
                    "query": arguments.get("query") if isinstance(arguments, dict) else arguments,
                    "documents": retrieval.result, "span_id": span_id}
    if retrieval.error is not None:
        listed["error"] = json_safe(retrieval.error.as_extra())
    result.setdefault("extra", {}).setdefault("retrievals", []).append(listed)


def _failure_extra(execution: ToolExecution, output: tool_results.ToolOutput) -> dict[str, Any]:
    """A tool result's failure flag: the span's error, else its framework wrapper's."""
    if execution.error is not None:
        return {"is_error": True, "error": json_safe(execution.error.as_extra())}
    if output.is_error:
        return {"is_error": True, "error": {"status": "error", "from": output.wrapper}}
    return {}


def _span_extra(span: Span, emitter: str) -> dict[str, Any]:
    duration = span.end_time_unix_nano - span.start_time_unix_nano  # `span.duration_ns`, one call less
    return {
        "span_id": span.span_id,
        "trace_id": span.trace_id,
        "emitter": emitter,
        "duration_ms": round((duration if duration > 0 else 0) / 1e6, 3),
    }


def _apply_step_overrides(draft: _Draft, overrides: dict[str, Any]) -> None:
    for target, value in overrides.items():
        if target.startswith("step.extra."):
            draft.extra[target.removeprefix("step.extra.")] = value
        elif target == "step.model_name":
            draft.model_name = str(value)
        elif target == "step.reasoning_effort":
            draft.reasoning_effort = value if isinstance(value, str | float) else str(value)
        elif target.startswith("metrics.extra.") and draft.metrics is not None:
            # `extra` is the last of a metrics object's fields: adding it keeps the field order.
            draft.metrics["extra"] = {
                **draft.metrics.get("extra", {}),
                target.removeprefix("metrics.extra."): value,
            }


_RUN_INSIDE_TOOL = "/run"  # the key of the run a delegation's tool span holds: `<span id>/run`


class _SessionTree:
    def __init__(self, mapped: list[_Mapped]) -> None:
        self.by_key: dict[SpanKey, _Mapped] = {(m.span.trace_id, m.span.span_id): m for m in mapped}
        self.adopted: dict[SpanKey, SpanKey] = {}  # span -> the empty agent or tool span whose work it is
        # The rules below start from the agent runs under another span: one pass over every span of every
        # build finds them, and most sessions have none.
        nested_runs = [key for key, m in self.by_key.items() if m.span.parent_span_id and type(m.operation) is AgentRun]
        if nested_runs:
            self._adopt_for_empty_agents(nested_runs)
            self._adopt_runs_of_empty_tools(nested_runs)
            # A run its emitter put beside the run it is part of (`AgentRun.inside_run`): that run's.
            for key in nested_runs:
                run = self.by_key[key].operation
                if isinstance(run, AgentRun) and (inside := run.inside_run) is not None and inside in self.by_key:
                    self.adopted[key] = inside
        # The rules below start from tool spans (one more pass): handoffs naming their agent, delegations running
        # their agent inside the tool. Most sessions have neither.
        tools = [(key, operation) for key, m in self.by_key.items() if type(operation := m.operation) is ToolExecution]
        handoffs = [(key, tool) for key, tool in tools if tool.handoff_to]
        if handoffs:
            self._runs_of_flat_steps(handoffs)
        delegations = [(key, tool) for key, tool in tools if tool.runs_agent is not None]
        if delegations:
            self._runs_inside_tools(delegations)
        # An MCP server's span of a tool call its client sent no trace context for (the Claude Agent SDK's in-process
        # server): the work of the tool span running that tool, as the context would have made it.
        self.adopted.update(reported_executions(
            tools, lambda key: self.nearest(key, ToolExecution, stop=(LlmCall, AgentRun)) is not None))

    def _runs_inside_tools(self, delegations: list[tuple[SpanKey, ToolExecution]]) -> None:
        """A delegation whose agent runs inside the tool's span, with no span of its own (`ToolExecution.runs_agent`):
        a run of that agent, over the tool's span, stands between the tool and the spans under it and adopts them. The
        tool's call then started a subagent (its result references it), whose calls and tools are not the delegating
        agent's. A tool with nothing under it ran no agent (CrewAI's answer that no coworker has that role): no run.
        """
        below: dict[SpanKey, list[SpanKey]] = {key: [] for key, _tool in delegations}
        for key, m in self.by_key.items():
            under = below.get((key[0], m.span.parent_span_id))
            if under is not None:
                under.append(key)
        for key, tool in delegations:
            if not below[key]:
                continue
            # Its own key, the tool's span: the tool's key stays the tool's execution.
            run_key = (key[0], f"{key[1]}{_RUN_INSIDE_TOOL}")
            run = AgentRun(span=tool.span, emitter=tool.emitter, name=tool.runs_agent or None)
            self.by_key[run_key] = _Mapped(tool.span, run, {}, [])
            self.adopted[run_key] = key
            for child in below[key]:
                self.adopted.setdefault(child, run_key)

    def _runs_of_flat_steps(self, handoffs: list[tuple[SpanKey, ToolExecution]]) -> None:
        """A handoff to an agent no agent span is named for, whose emitter records each agent's steps as spans
        side by side under one span, none holding one agent's work (a LlamaIndex AgentWorkflow's), naming the
        agent of each (`registry.step_agents`): the steps after the handoff's, from the first naming the
        receiving agent up to one naming another, are that agent's run. In the session's later traces too: the
        workflow keeps the agent current into its next run (LlamaIndex's Context does), and a handoff is what
        starts another agent. The run's first step with no operation of its own stands for it, its span
        stretched over the run's steps, and adopts the others: the handoff pairing then makes it a subagent the
        handoff call started, and the steps (and the calls and tools under them) are out of the delegating
        agent's trajectory.
        """
        by_key = self.by_key
        named = {m.operation.name for m in by_key.values() if type(m.operation) is AgentRun}
        handoffs = [(key, handoff) for key, handoff in handoffs if handoff.handoff_to not in named]
        agents = step_agents([m.span for m in by_key.values()]) if handoffs else {}
        if not agents:
            return
        steps = sorted(agents, key=lambda key: _SPAN_ORDER(by_key[key].span))
        position = {key: index for index, key in enumerate(steps)}
        taken: set[SpanKey] = set()
        for handoff_key, handoff in handoffs:
            holding = self._step_holding(handoff_key, position)
            if holding is None:
                continue
            members: list[SpanKey] = []
            for key in steps[position[holding] + 1:]:
                agent = agents[key]
                if not members and agent is None:
                    continue  # still the agent handing off (a step of its other tools' calls)
                if agent not in (None, handoff.handoff_to) or key in taken:
                    break  # another agent's (or, first, the handoff did not take: the agent handing off goes on)
                members.append(key)
            stand_in = next((key for key in members if by_key[key].operation is None), None)
            if stand_in is None:
                continue
            spans = [by_key[key].span for key in members]
            span = replace(by_key[stand_in].span, start_time_unix_nano=min(s.start_time_unix_nano for s in spans),
                           end_time_unix_nano=max(s.end_time_unix_nano for s in spans))
            run = AgentRun(span=span, emitter=handoff.emitter, name=handoff.handoff_to)
            by_key[stand_in] = _Mapped(span, run, {}, [])
            taken.update(members)
            for key in members:
                if key != stand_in:
                    self.adopted[key] = stand_in

    def _step_holding(self, key: SpanKey, steps: dict[SpanKey, int]) -> SpanKey | None:
        """The flat step that is `key`'s span or holds it."""
        seen: set[SpanKey] = set()
        current: SpanKey | None = key
        while current is not None and current not in seen:
            if current in steps:
                return current
            seen.add(current)
            current = self.parent(current)
        return None

    def _adopt_for_empty_agents(self, nested_runs: list[SpanKey]) -> None:
        """An agent span with no child spans, beside a span that ran within its time, is that span's agent.

        OpenLLMetry's LangChain callback opens a nested agent's `invoke_agent` span without making it
        the current span: the graph's work (its model calls and tools) hangs beside it, under the
        same parent, not under it. That sibling (no LLM call, tool or agent itself) and everything
        below it are the agent's.
        """
        # Keyed by span id strings (no tuple per span): this runs over every span of the build.
        childless = {key[1]: key for key in nested_runs}  # span id -> agent span with a parent, until a child shows
        for m in self.by_key.values():
            agent = childless.get(m.span.parent_span_id)
            if agent is not None and agent[0] == m.span.trace_id:
                del childless[agent[1]]
                if not childless:
                    return
        empty: dict[str, list[SpanKey]] = {}  # parent span id -> its childless agent spans
        for key in childless.values():
            empty.setdefault(self.by_key[key].span.parent_span_id, []).append(key)
        for key, m in self.by_key.items():
            beside = empty.get(m.span.parent_span_id) if m.operation is None else None
            for agent in beside or ():
                agent_span = self.by_key[agent].span
                if (
                    agent[0] == key[0]
                    and agent_span.start_time_unix_nano <= m.span.start_time_unix_nano
                    and m.span.end_time_unix_nano <= agent_span.end_time_unix_nano
                ):
                    self.adopted[key] = agent
                    break

    def _adopt_runs_of_empty_tools(self, nested_runs: list[SpanKey]) -> None:
        """A tool span with no child spans, beside an agent run that ran within its time, started that run.

        OpenInference's Agno instrumentation keeps a tool span current only while the function is
        called: a function returning a generator (a Team's `delegate_task_to_member`) runs the
        member agent as Agno drains the generator, and the span ends then. The member's run hangs
        beside the tool span, under the team's run, within the tool span's time. Adopted only when
        one such tool span holds the run: of overlapping ones (concurrent calls) none is known to
        have started it.
        """
        parents = {(key[0], self.by_key[key].span.parent_span_id) for key in nested_runs}
        tools: dict[SpanKey, list[SpanKey]] = {}  # a nested run's parent span -> its tool spans (no handoffs)
        for key, m in self.by_key.items():
            operation = m.operation
            if type(operation) is ToolExecution and operation.handoff_to is None:
                parent = (key[0], m.span.parent_span_id)
                if parent in parents:
                    tools.setdefault(parent, []).append(key)
        if not tools:
            return
        with_children = {(m.span.trace_id, m.span.parent_span_id) for m in self.by_key.values()}
        for key in nested_runs:
            span = self.by_key[key].span
            holding = [
                tool
                for tool in tools.get((key[0], span.parent_span_id), ())
                if tool not in with_children
                and self.by_key[tool].span.start_time_unix_nano <= span.start_time_unix_nano
                and span.end_time_unix_nano <= self.by_key[tool].span.end_time_unix_nano
            ]
            if len(holding) == 1:
                self.adopted[key] = holding[0]

    def parent(self, key: SpanKey) -> SpanKey | None:
        if self.adopted:  # rarely any: no lookup per ancestor step otherwise
            adopter = self.adopted.get(key)
            if adopter is not None:
                return adopter
        span = self.by_key[key].span
        if not span.parent_span_id:
            return None
        parent = (span.trace_id, span.parent_span_id)
        return parent if parent in self.by_key else None

    def nearest(self, key: SpanKey, kind: type, stop: type | tuple[type, ...] | None = None) -> SpanKey | None:
        # The ancestors walked (a cycle stops the walk) without a generator: asked for every span,
        # most of them one step below their agent.
        by_key, parent = self.by_key, self.parent
        seen = {key}
        current = parent(key)
        while current is not None and current not in seen:
            seen.add(current)
            operation = by_key[current].operation
            if isinstance(operation, kind):
                return current
            if stop is not None and isinstance(operation, stop):
                return None
            current = parent(current)
        return None


def _run_between(tree: _SessionTree, key: SpanKey, ancestor: SpanKey, runs: set[SpanKey]) -> bool:
    """Whether a run of `runs` (spans no longer runs: an orchestrator's own) is between a span and its ancestor."""
    current = tree.parent(key)
    while current is not None and current != ancestor:
        if current in runs:
            return True
        current = tree.parent(current)
    return False


@dataclass
class _MappedSession:
    """A session's spans read by the mappers, before any step is assembled."""

    ordered: list[Span]
    mapped: list[_Mapped]
    tree: _SessionTree
    wrappers: set[SpanKey]  # LLM spans not counted: wrapping another, or reporting another's call
    warnings: list[str]
    unmapped: Counter[str]
    emitters: dict[str, None]


def _map_session(spans: Sequence[Span], logs: Sequence[LogRecord], overrides: MappingOverrides,
                 memo: MessageMemo) -> _MappedSession | None:
    """The session's spans mapped and put in a tree, its wrapping and repeated LLM reports found; None
    when `memo` reads only first inputs and telling repeated reports apart needs the whole inputs."""
    warnings: list[str] = []
    unmapped: Counter[str] = Counter()
    emitters: dict[str, None] = {}

    unique: dict[SpanKey, Span] = {}
    ignored = overrides.ignore_span_names
    for span in spans:
        if ignored and any(fnmatch.fnmatchcase(span.name, pattern) for pattern in ignored):
            continue
        unique.setdefault((span.trace_id, span.span_id), span)
    # OpenInference's Claude Agent SDK turns record their model calls' answers and no span of a call: one derived a
    # call (trajectory/mappers/openinference_claude_agent_sdk.py).
    ordered = sorted(openinference_claude_agent_sdk.with_call_spans(list(unique.values())), key=_SPAN_ORDER)
    logs_by_span: dict[SpanKey, list[LogRecord]] = {}
    for log in relink_logs(ordered, logs):
        if log.span_id:
            logs_by_span.setdefault((log.trace_id, log.span_id), []).append(log)

    mapped: list[_Mapped] = []
    detect = Detector()
    for span in ordered:
        item = _map_span(
            span, logs_by_span.get((span.trace_id, span.span_id), []), overrides, emitters, detect, memo
        )
        mapped.append(item)
        if item.unused:
            unmapped.update(pattern_of(key) for key in item.unused)
    # What an emitter records of a call on a span beside the call's (LiteLLM's raw provider response), read into it.
    complete_calls(ordered, (m.operation for m in mapped if isinstance(m.operation, LlmCall)), emitters)
    # A failed attempt at a request a later call answered is listed on that call's step: no step of its own. A failed
    # request no answer follows is a step of its failure, of no LLM call (trajectory/mappers/failed_attempts.py).
    mark_unanswered(m.operation for m in mapped if isinstance(m.operation, LlmCall))
    # A call whose request was sent later than its span started (`LlmCall.sent_ns`) is read where it was sent.
    if any(isinstance(m.operation, LlmCall) and m.operation.sent_ns for m in mapped):
        mapped.sort(key=_read_start)
    for item in mapped:
        if isinstance(item.operation, LlmCall) and item.operation.failed_attempt:
            item.operation = None
    # What an emitter records of a run on spans beside the run's (openai-agents' input guardrail's agent: its question).
    complete_runs(ordered, (m.operation for m in mapped if isinstance(m.operation, AgentRun)), emitters)
    # An agent an orchestrator runs to decide who acts next (an Agent Framework group chat's manager) is no subagent:
    # its calls are the steps of the run holding it.
    own_decisions = orchestrator_runs(ordered, emitters)
    for item in mapped if own_decisions else ():
        if type(item.operation) is AgentRun and (item.span.trace_id, item.span.span_id) in own_decisions:
            item.operation = None
    mapped = _tie_ordered(mapped)
    tree = _SessionTree(mapped)
    orphans = [
        m.span
        for m in mapped
        if m.span.parent_span_id and tree.parent((m.span.trace_id, m.span.span_id)) is None
    ]
    if orphans:
        warnings.append(f"{len(orphans)} span(s) whose parent never arrived were kept at the top level")

    # A wrapper LLM span (a framework's LLM span around the client library's) would double count. One with the
    # response id of the span inside is another report of that very call (OpenInference's span around the
    # Anthropic SDK's own): which of the two is kept is the rule for reports of one call's (below), not
    # always the inner one, which may have recorded no messages.
    wrappers: set[SpanKey] = set()
    for key, item in tree.by_key.items():
        if isinstance(call := item.operation, LlmCall):
            # Not past a tool's execution: a call under it is the tool's work (a subagent it runs), never the call
            # that asked for the tool reported again (AI SDK 7 puts its tool spans under the LLM call's). Nor past an
            # agent's run, a subagent's or one its framework ran as its own (an orchestrator's): a call of another
            # run (pydantic-ai runs a history processor's summarizing agent inside the request's span).
            wrapper = tree.nearest(key, LlmCall, stop=(ToolExecution, AgentRun))
            if wrapper is None or (own_decisions and _run_between(tree, key, wrapper, own_decisions)):
                continue
            outer = tree.by_key[wrapper].operation
            if not (isinstance(outer, LlmCall) and one_response(call, outer)):
                wrappers.add(wrapper)
                if isinstance(outer, LlmCall) and wraps_same_request(call, outer):
                    complete_wrapped(call, outer)  # another instrumentation's report of the call: what it adds
    if wrappers:
        warnings.append(f"{len(wrappers)} LLM span(s) wrapping another LLM span were not counted again")
    # One call reported by several instrumentations (siblings with one response id): counted once.
    calls = [(key, op) for m in mapped if isinstance(op := m.operation, LlmCall)
             and (key := (m.span.trace_id, m.span.span_id)) not in wrappers]
    if memo.first_inputs_only and may_repeat(calls):
        return None
    reported_again = duplicate_reports(calls)
    if reported_again:
        wrappers.update(reported_again)
        warnings.append(f"{len(reported_again)} LLM span(s) reporting a call another span reports were not "
                        "counted again")
    return _MappedSession(ordered, mapped, tree, wrappers, warnings, unmapped, emitters)


@dataclass
class MappingSummary:
    """What the mappers made of a session, without its steps (a session's spans view shows it)."""

    llm_calls: int  # the trajectory's LLM calls: each becomes one agent step with `llm_call_count: 1`
    emitters: list[str]
    unmapped_attributes: list[str]
    mapping_version: str


def summarise_mapping(
    spans: Sequence[Span], logs: Sequence[LogRecord] = (), *, overrides: MappingOverrides | None = None
) -> MappingSummary:
    """`build_trajectory`'s emitters, unmapped attributes and mapping version, and the number of LLM
    calls its document holds, without assembling the steps (a third of the build)."""
    overrides = overrides or MappingOverrides()
    # The count needs whether each call had input, not what (`parse_input_messages`), unless some
    # calls may be one call reported twice: those are told apart by their inputs, read whole then.
    session = (_map_session(spans, logs, overrides, MessageMemo(first_inputs_only=True))
               or _map_session(spans, logs, overrides, MessageMemo()))
    assert session is not None  # a memo reading whole inputs always maps the session
    wrappers = session.wrappers
    calls = sum(1 for m in session.mapped
                if isinstance(m.operation, LlmCall) and (m.span.trace_id, m.span.span_id) not in wrappers)
    return MappingSummary(calls, list(session.emitters), sorted(session.unmapped), _mapping_version(overrides))


def _mapping_version(overrides: MappingOverrides) -> str:
    return overrides.label if overrides != MappingOverrides() else BUILT_IN_VERSION


def map_one_span(span: Span, logs: Sequence[LogRecord] = ()) -> Operation | None:
    """What the mappers make of `span` alone (its own log records given), as a session's build maps it before other
    spans complete it: where a trajectory's reference into that span is read back (`media.referenced_image`)."""
    own = [log for log in logs if log.span_id == span.span_id]
    return _map_span(span, own, MappingOverrides(), {}, Detector(), MessageMemo()).operation


def build_trajectory(
    spans: Sequence[Span],
    logs: Sequence[LogRecord] = (),
    *,
    overrides: MappingOverrides | None = None,
    agent_name: str | None = None,
    agent_version: str | None = None,
    session_id: str | None = None,
) -> BuildResult:
    """The session's ATIF trajectory (steps, tokens; no prices yet) and what the mappers made of it."""
    overrides = overrides or MappingOverrides()
    memo = MessageMemo()
    session_spans = _map_session(spans, logs, overrides, memo)
    assert session_spans is not None  # a memo reading whole inputs always maps the session
    ordered, mapped, tree = session_spans.ordered, session_spans.mapped, session_spans.tree
    wrappers, warnings = session_spans.wrappers, session_spans.warnings
    unmapped, emitters = session_spans.unmapped, session_spans.emitters

    nearest_runs: dict[SpanKey, SpanKey | None] = {}

    def nearest_run(key: SpanKey) -> SpanKey | None:
        # Asked several times per span (context, LLM owners, nesting): walk the ancestors once.
        if key not in nearest_runs:
            nearest_runs[key] = tree.nearest(key, AgentRun)
        return nearest_runs[key]

    all_runs: list[tuple[SpanKey, AgentRun]] = []
    handoffs: list[tuple[SpanKey, ToolExecution]] = []
    working: set[SpanKey | None] = set()  # runs with an LLM call or a tool execution of their own
    loose_traces: set[str] = set()  # traces with an LLM call or tool execution in no agent run
    for key, item in tree.by_key.items():
        operation = item.operation
        if operation is None:
            continue
        if type(operation) is AgentRun:
            all_runs.append((key, operation))
            continue
        run_above = nearest_run(key)
        working.add(run_above)
        if run_above is None:
            loose_traces.add(key[0])
        if type(operation) is ToolExecution and (operation.handoff_to, operation.delegates_to) != (None, None):
            handoffs.append((key, operation))
    # A synthetic root (OpenInference's AGENT span named after the openai-agents workflow, one per
    # turn) groups agent runs and does nothing itself: not an agent, its runs are its parent's.
    holding = {nearest_run(key) for key, _run in all_runs} if len(all_runs) > 1 else set()  # runs holding runs
    synthetic = {
        key
        for key, run in all_runs
        if key in holding and key not in working and not run.input_text and not run.output_text
        and not run.app_agent
    }
    runs = [(key, run) for key, run in all_runs if key not in synthetic] if synthetic else all_runs
    owners: dict[SpanKey, SpanKey | None] = {}

    def owner_past_synthetic(key: SpanKey) -> SpanKey | None:
        if key not in owners:
            run = nearest_run(key)
            while run in synthetic:
                run = nearest_run(run)  # type: ignore[arg-type]
            owners[key] = run
        return owners[key]

    owner = owner_past_synthetic if synthetic else nearest_run

    # A handoff hands the conversation to another agent, whose run follows the handoff span in
    # its trace (a sibling, not a child): that run is a subagent started by the handoff call. A handoff
    # that does not name the agent ("": OpenLLMetry's openai-agents spans are named before the SDK knows
    # it) is taken by the first agent run after it. A delegation's run follows its tool span so too
    # (`ToolExecution.delegates_to`), but with a conversation of its own: it inherits none. Where no span holds
    # the receiving agent's work (a LlamaIndex AgentWorkflow's), the run is its steps' (`_runs_of_flat_steps`).
    handed_off: dict[SpanKey, SpanKey] = {}  # receiving run -> handoff tool span
    for tool_key, handoff in handoffs:
        start = handoff.span.start_time_unix_nano
        target = handoff.handoff_to if handoff.handoff_to is not None else handoff.delegates_to
        later = [
            (key, run)
            for key, run in runs
            if key[0] == tool_key[0]
            and key not in handed_off
            and run.span.start_time_unix_nano >= start
            and key != owner(tool_key)
        ]
        receiver = next((key for key, run in later if run.name == target or not target), None)
        if receiver is None and handoff.handoff_to is None and later:
            # A delegation names the member by its id (Agno's: its name made URL-safe, unless it was given one),
            # which need not be its run's name: then the first run after it.
            receiver = later[0][0]
        if receiver is not None:
            handed_off[receiver] = tool_key

    fingerprint = _Fingerprints(memo.resent)
    contexts: dict[SpanKey | None, _Context] = {None: _Context(None, warnings, fingerprint)}
    for key, _run in runs:
        # An agent run inside a span that also holds work of no agent (a LangGraph graph's node
        # calling the model, then an agent graph as its next node) is delegated to by that work.
        if owner(key) is not None or key in handed_off or (key[0] in loose_traces and tree.parent(key) is not None):
            contexts[key] = _Context(key, warnings, fingerprint)
    # The agent a handoff left the conversation with takes the session's next turn (a langgraph-swarm starts each
    # with its active agent, which its checkpointer keeps): that agent's run opening a later trace carries on its
    # trajectory, as the same context.
    resumed = _resumed_receivers(runs, handed_off, contexts)
    contexts.update((key, contexts[receiver]) for key, receiver in resumed.items())
    received_reasoning = {message.reasoning for item in mapped if isinstance(item.operation, LlmCall)
                          for message in item.operation.output_messages if message.reasoning}
    raised_runs = {key for key, run in runs if run.error is not None}
    for context in contexts.values():
        context.received_reasoning = received_reasoning
        context.raised_runs = raised_runs

    def context_of(key: SpanKey) -> _Context:
        run = owner(key)
        while run is not None and run not in contexts:
            run = owner(run)
        return contexts[run]

    def delegator(key: SpanKey) -> _Context:
        """The trajectory a nested run was started from: its handoff's, else its enclosing run's."""
        tool_key = handed_off.get(key)
        return context_of(tool_key if tool_key is not None else key)

    for run_key, context in contexts.items():
        if run_key is not None and run_key not in resumed:
            context.parent = delegator(run_key)
            started_by = tree.by_key[handed_off[run_key]].operation if run_key in handed_off else None
            if isinstance(started_by, ToolExecution) and started_by.handoff_to is not None:  # not a delegation's run
                context.inherits = context.parent
                context.parent.handed_back.append((tree.by_key[run_key].span.end_time_unix_nano, run_key[0], context))
            else:
                context.parent.delegated.append(context)

    llm_owners: set[SpanKey | None] = set()
    asked: set[SpanKey | None] = set()  # runs some call of which recorded what it was sent
    for item in mapped:
        key = (item.span.trace_id, item.span.span_id)
        operation = item.operation
        if isinstance(operation, LlmCall) and key not in wrappers:
            run_key = owner(key)
            context_of(key).llm_call(operation, item.overrides, run_key)
            llm_owners.add(run_key)
            if run_key not in asked and _sends_more_than_instructions(operation):
                asked.add(run_key)
        elif isinstance(operation, Interrupt):
            _interrupt_step(context_of(key), operation)
    for item in mapped:
        key = (item.span.trace_id, item.span.span_id)
        if isinstance(item.operation, ToolExecution):
            # Another report of an execution has no call id (an MCP server never sees the model's): only
            # those are looked for inside another tool's span, which spares most tool spans the walk.
            outer = None
            if item.operation.call_id is None:
                outer = tree.nearest(key, ToolExecution, stop=(LlmCall, AgentRun))
            if outer is not None and item.operation.retrieval:
                holder = tree.by_key[outer].operation
                # A retrieval inside a tool the model called is that call's own work (a LangChain retriever tool);
                # inside a tool running an agent (a LlamaIndex query engine), a step of that agent's run.
                if (isinstance(holder, ToolExecution) and holder.runs_agent is None
                        and context_of(outer).retrieved_by(outer, key, item.operation)):
                    continue
            if outer is not None and context_of(outer).same_execution(outer, item.operation):
                continue
            context_of(key).tool_execution(item.operation, item.overrides)
    # A run that delegated to runs (a CrewAI crew) answers with its last subagent's answer: no step of its own.
    delegating = {context.parent.key for context in contexts.values() if context.parent is not None}
    for key, run in runs:
        run_context = contexts[key] if key in contexts else context_of(key)
        # The instructions first: a run with no LLM call drafts its user step at the same (start) time.
        run_context.system(run.system_instructions, run.span.start_time_unix_nano)
        if key not in llm_owners and (run.input_text or run.output_text):
            _steps_from_run_alone(run_context, run, answer=run_context.key not in delegating)
        for definition in run.tool_definitions:  # after its calls': a call's own definitions come first
            run_context.tool_definitions.setdefault(str(definition.get("function", {}).get("name", "")), definition)
        if run.resumed_with is not None:
            _resume_step(run_context, run, run.resumed_with)
        if run.interrupt is not None:
            _interrupt_step(run_context, run.interrupt)
        if run.input_text and key in llm_owners and key not in asked:
            # None of its calls recorded their input (pydantic-ai writes a call's messages once the model
            # answers: a first call that raised, on a provider's 500 or a refused connection, has none).
            _prompt_from_run(run_context, run)
        if run.asked:  # recorded by a check of its input before its model was called (openai-agents' guardrail)
            _asked_at_start(run_context, run, stopped=key not in llm_owners)
        if run.error is not None and (key in llm_owners or run.asked):  # asked, then stopped before its model
            _run_error_step(run_context, run, run.error)
    for run_key, context in contexts.items():
        if run_key not in resumed:  # an agent's turn it carries on is its trajectory, settled once
            context.settle_history_results()
    # After the results the model was shown: a run's own record of its calls' results answers only those left.
    for key, run in runs:
        if run.tool_results:
            (contexts[key] if key in contexts else context_of(key)).results_from_run(run)

    session = session_id or _session_id(ordered, overrides)
    global_overrides: dict[str, Any] = {}
    for item in mapped:
        for target, value in item.overrides.items():
            global_overrides.setdefault(target, value)
    if "session_id" in global_overrides:
        session = str(global_overrides["session_id"])

    top_runs = [run for key, run in runs if key not in contexts]
    name = agent_name or global_overrides.get("agent.name") or _agent_name(ordered, top_runs, overrides)
    version = (
        agent_version
        or global_overrides.get("agent.version")
        or next((run.version for run in top_runs if run.version), None)
    )

    def depth(key: SpanKey | None) -> int:
        levels = 0
        while key is not None:
            levels += 1
            key = contexts[key].parent.key  # type: ignore[union-attr]
        return levels

    # Nested runs innermost first, so a subagent's own subagents are embedded before it is.
    subagents: dict[SpanKey, Json] = {}
    answers: dict[SpanKey, str] | None = None  # `registry.run_answers`, read once a run needs it
    nested = sorted((key for key in contexts if key is not None and key not in resumed), key=lambda k: -depth(k))
    for key in nested:
        nested_run = tree.by_key[key].operation
        assert isinstance(nested_run, AgentRun)
        label = nested_run.name or nested_run.span.name or "subagent"
        sub_id = f"{label}:{key[1]}"
        parent_context = contexts[key].parent
        assert parent_context is not None
        children = [subagents.pop(child) for child in list(subagents) if contexts[child].parent is contexts[key]]
        subagents[key] = _trajectory(
            contexts[key], label, nested_run.version, session, sub_id, children, warnings
        )
        tool_span = handed_off.get(key) or tree.nearest(key, ToolExecution, stop=AgentRun)
        ref: Json = {"trajectory_id": sub_id} if session is None else {"trajectory_id": sub_id, "session_id": session}
        if nested_run.output_text is None:
            # An agent span that records no output (OpenLLMetry's invoke_agent): its last answer is.
            nested_run.output_text = _last_answer(contexts[key])
        if nested_run.output_text is None:
            # Nor did its model write one (an AgentChat turn ending on its tool calls): what another span recorded.
            answers = run_answers(ordered) if answers is None else answers
            nested_run.output_text = answers.get(key)
        parent_context.attach_subagent(ref, tool_span, nested_run)

    if not contexts[None].drafts and not subagents:
        _steps_from_sdk_runs(contexts[None], ordered, warnings)
    trajectory = _trajectory(
        contexts[None], str(name), version, session, None, list(subagents.values()), warnings
    )
    # A trace whose calls report no usage where a run holding them all records its total: the document's, to price.
    read_run_total = run_total_reader(emitters)
    if read_run_total is not None:
        totals = run_totals.of_session(
            ((key, op) for m in mapped if isinstance(op := m.operation, LlmCall)
             and (key := (m.span.trace_id, m.span.span_id)) not in wrappers),
            {key: m.span for key, m in tree.by_key.items()}, tree.parent, read_run_total)
        if totals:
            trajectory["final_metrics"] = {"extra": {"run_totals": totals}}
    agent = trajectory["agent"]
    if "agent.model_name" in global_overrides:
        agent["model_name"] = str(global_overrides["agent.model_name"])
        agent = trajectory["agent"] = _ordered(agent, _AGENT_FIELDS)
    agent_extra = {
        k.removeprefix("agent.extra."): v for k, v in global_overrides.items() if k.startswith("agent.extra.")
    }
    if agent_extra:
        agent["extra"] = {**agent.get("extra", {}), **agent_extra}  # the last field: order kept
    mapping_version = _mapping_version(overrides)
    extra: dict[str, Any] = {
        "emitters": list(emitters),
        "unmapped_attributes": sorted(unmapped),
        "mapping_version": mapping_version,
        "span_count": len(ordered),
    }
    extra.update(
        {
            k.removeprefix("trajectory.extra."): v
            for k, v in global_overrides.items()
            if k.startswith("trajectory.extra.")
        }
    )
    if warnings:
        extra["warnings"] = list(warnings)
    trajectory["extra"] = extra
    return BuildResult(
        document=ordered_trajectory(trajectory),
        unmapped_attributes=sorted(unmapped),
        emitters=list(emitters),
        warnings=warnings,
        mapping_version=mapping_version,
    )


def _resumed_receivers(runs: list[tuple[SpanKey, AgentRun]], handed_off: dict[SpanKey, SpanKey],
                       contexts: dict[SpanKey | None, _Context]) -> dict[SpanKey, SpanKey]:
    """Each top-level run that opens a later trace as the agent the session's latest handoff left the
    conversation with, and that handoff's receiving run, whose trajectory it carries on. A top-level run of
    any other agent, or in the handoff's own trace (langgraph-supervisor's supervisor, run again once its worker
    is done), has the conversation back."""
    resumed: dict[SpanKey, SpanKey] = {}
    holder: tuple[SpanKey, AgentRun] | None = None
    for key, run in sorted(((key, run) for key, run in runs if key in handed_off or key not in contexts),
                           key=lambda item: _SPAN_ORDER(item[1].span)):
        if key in handed_off:
            holder = (key, run)
        elif holder is not None and key[0] != holder[0][0] and run.name is not None and run.name == holder[1].name:
            resumed[key] = holder[0]
        else:
            holder = None
    return resumed


def _read_start(m: _Mapped) -> int:
    """When a mapped span's work happened: a call's request when sent after its span started (`LlmCall.sent_ns`)."""
    operation = m.operation
    if isinstance(operation, LlmCall) and operation.sent_ns:
        return operation.sent_ns
    return m.span.start_time_unix_nano


def _tie_ordered(mapped: list[_Mapped]) -> list[_Mapped]:
    """The spans in the order they ran where their clocks tie (OTel JS stamps milliseconds).

    Sorted by start, then end: when starts tie, a parent goes before its descendants and, of two
    LLM calls, the one re-sending less history before the one re-sending more (it came first in
    the conversation), whatever their ends and ids say. Nanosecond clocks rarely tie: then nothing
    is re-sorted.
    """
    starts = {m.span.start_time_unix_nano for m in mapped}
    if len(starts) == len(mapped):
        return mapped
    parents = {(m.span.trace_id, m.span.span_id): m.span.parent_span_id for m in mapped}
    depths: dict[SpanKey, int] = {}

    def depth(key: SpanKey) -> int:
        chain: list[SpanKey] = []
        while key not in depths:
            parent = parents.get(key)
            if not parent or len(chain) > len(parents):  # a root, a parent not received, or a cycle
                depths[key] = 0
                break
            chain.append(key)
            key = (key[0], parent)
        found = depths[key]
        for link in reversed(chain):
            found += 1
            depths[link] = found
        return depths[chain[0]] if chain else found

    def key(m: _Mapped) -> tuple[int, int, int, int, str]:
        span = m.span
        history = len(m.operation.input_messages) if isinstance(m.operation, LlmCall) else 0
        return (_read_start(m), depth((span.trace_id, span.span_id)), history, span.end_time_unix_nano, span.span_id)

    return sorted(mapped, key=key)


def _map_span(
    span: Span,
    logs: list[LogRecord],
    overrides: MappingOverrides,
    emitters: dict[str, None],
    detect: Detector,
    memo: MessageMemo,
) -> _Mapped:
    reader = SpanReader(span, memo)
    found = detect(span)
    operation: Operation | None = None
    if len(found) == 1:  # most spans: one convention, nothing to cover or fill in
        emitter = found[0]
        emitters.setdefault(emitter.name, None)
        operation = emitter.map_span(reader, logs)
    else:
        covered: set[str] = set()
        for emitter in found:
            emitters.setdefault(emitter.name, None)
            if emitter.name in covered:
                continue
            covered |= emitter.covers
            candidate = emitter.map_span(reader, logs)
            if operation is None:
                operation = candidate
            elif candidate is not None and type(candidate) is type(operation):
                _fill_gaps(operation, candidate)
    targets: dict[str, Any] = {}
    for attribute, target in overrides.attribute_map.items():
        if attribute in span.attributes:
            reader.used.add(attribute)
            targets[target] = json_safe(span.attributes[attribute])
    # Identity attributes are read by the builder; the SDK's own bookkeeping on its `evalkit.run`
    # root (case, repetition, input, output…) is already on the run record. Neither is an attribute
    # the mapper failed to understand. (Set differences: the list is sorted below, so order is moot.)
    left = span.attributes.keys() - reader.used - _IDENTITY_KEYS
    if left:
        for name in (overrides.session_id_attribute, overrides.agent_name_attribute):
            if name:
                left.discard(name)
    unused = [key for key in left if not key.startswith("evalkit.")] if left else []
    if span.events:
        # Attributes of events no mapper read (Strands' event-loop spans, ...), named by their event.
        unused.extend(f"event {event.name}: {key}" for event in span.events
                      if event.name not in reader.events_read for key in event.attributes)
    if unused:
        unused.sort()
    return _Mapped(span, operation, targets, unused)


def _fill_gaps(primary: Operation, secondary: Operation) -> None:
    """A second convention on the same span fills what the first one lacked (never adds usage)."""
    if isinstance(primary, LlmCall) and isinstance(secondary, LlmCall):
        primary.model = primary.model or secondary.model
        primary.provider = primary.provider or secondary.provider
        if primary.usage.empty:
            primary.usage = secondary.usage
        if primary.reported_cost is None:
            primary.reported_cost = secondary.reported_cost
        if not primary.input_messages and not primary.output_messages:
            primary.input_messages = secondary.input_messages
            primary.output_messages = secondary.output_messages
        primary.tool_definitions = primary.tool_definitions or secondary.tool_definitions
    elif isinstance(primary, ToolExecution) and isinstance(secondary, ToolExecution):
        primary.call_id = primary.call_id or secondary.call_id
        primary.name = primary.name or secondary.name
        if primary.arguments is None:
            primary.arguments = secondary.arguments
        if primary.result is None:
            primary.result = secondary.result
    elif isinstance(primary, AgentRun) and isinstance(secondary, AgentRun):
        primary.name = primary.name or secondary.name
        primary.input_text = primary.input_text or secondary.input_text
        primary.output_text = primary.output_text or secondary.output_text
        primary.tool_definitions = primary.tool_definitions or secondary.tool_definitions


def _last_answer(context: _Context) -> str | None:
    """The text of a trajectory's last agent step that is a received LLM call's answer."""
    answers = [d for d in context.drafts if d.source == "agent" and d.llm_call_count and d.message]
    last = max(answers, key=lambda d: (d.time_ns, d.seq)).message if answers else None
    return last if isinstance(last, str) else None


def _steps_from_run_alone(context: _Context, run: AgentRun, answer: bool = True) -> None:
    """An agent span with input and output but no LLM span under it still says what happened."""
    start = run.span.start_time_unix_nano
    if run.input_text:
        context.draft(start, "user", message=run.input_text)
    if run.output_text and answer:
        extra: dict[str, Any] = {"from": "agent span", **_span_extra(run.span, run.emitter)}
        if run.error is not None:
            extra["error"] = json_safe(run.error.as_extra())
        context.draft(
            run.span.end_time_unix_nano, "agent", message=run.output_text, model_name=run.model, extra=extra
        )


def _run_error_step(context: _Context, run: AgentRun, error: ErrorInfo) -> None:
    """A run that worked and then raised (openai-agents' MaxTurnsExceeded after a turn's tool calls
    went well): without this its steps just stop, as if the agent were done. A step at the run's end
    says what it raised, unless its last step already shows the failure that ended it (its call
    failed, or a tool's error nothing answered: pydantic-ai and openai-agents raise those)."""
    start, end = run.span.start_time_unix_nano, run.span.end_time_unix_nano
    within = [d for d in context.drafts if start <= d.time_ns <= end and d.source == "agent"]
    if within:
        last = max(within, key=lambda d: (d.time_ns, d.seq))
        if "error" in last.extra or any((r.get("extra") or {}).get("is_error") for r in last.results):
            return
    context.draft(end, "agent", llm_call_count=0,
                  extra={"from": "agent span", "run_error": True, **_span_extra(run.span, run.emitter),
                         "error": json_safe(error.as_extra())})


def _interrupt_step(context: _Context, interrupt: Interrupt) -> None:
    """A run stopping to ask a person (a tool call to approve): what it asked, an agent step of no LLM call, when it
    asked. Their answer is the user step of the run carrying it on (`_resume_step`)."""
    context.draft(interrupt.time_ns, "agent", message=interrupt.asked, llm_call_count=0,
                  extra={"interrupt": json_safe(interrupt.requests), **_span_extra(interrupt.span, interrupt.emitter)})


def _resume_step(context: _Context, run: AgentRun, answer: str) -> None:
    """The answer a person gave a run that stopped to ask them: a user step where the run carrying it on starts."""
    context.draft(run.span.start_time_unix_nano, "user", message=answer,
                  extra={"from": "resume", "span_id": run.span.span_id, "emitter": run.emitter})


def _sends_more_than_instructions(call: LlmCall) -> bool:
    """Whether a call recorded input beyond system instructions (its first such message is early)."""
    return any(_normal_role(message.role) != "system" for message in call.input_messages)


def _prompt_from_run(context: _Context, run: AgentRun) -> None:
    """What a run was asked, from its agent span, when no call of it recorded its input: a user step at
    the run's start, after its instructions (drafted at its start too), before its calls' steps (but
    after a call's that starts in the same instant, which only a millisecond clock gives)."""
    context.draft(run.span.start_time_unix_nano, "user", message=run.input_text,
                  extra={"from": "agent span", "span_id": run.span.span_id, "emitter": run.emitter})


def _asked_at_start(context: _Context, run: AgentRun, *, stopped: bool) -> None:
    """What a run was asked, recorded by a check of its input before its model was called (`AgentRun.asked`), at the
    run's start, before that check's subagent: the user step its first call drafted moved there, with the instructions
    that call drafted before it. A run the check stopped (`stopped`: no call of its own) was asked it all the same: the
    step a later run's call drafted where it re-sent the question (openai-agents keeps it in the session) moved back
    to it, else drafted there. A question shown before the run is history its input re-sends: left where it is."""
    start, end = run.span.start_time_unix_nano, run.span.end_time_unix_nano
    for text in run.asked:
        shown = sorted((d for d in context.drafts if d.source == "user" and d.message == text
                        and not d.is_copied_context), key=_DRAFT_ORDER)
        if any(d.time_ns < start for d in shown):
            continue
        step = next((d for d in shown if stopped or d.time_ns <= end), None)
        if step is None:
            if stopped:
                context.draft(start, "user", message=text)
            continue
        if not stopped:
            for draft in context.drafts:
                if draft.source == "system" and draft.time_ns == step.time_ns and draft.seq < step.seq:
                    draft.time_ns = start
        step.time_ns = start


def _steps_from_sdk_runs(context: _Context, spans: Sequence[Span], warnings: list[str]) -> None:
    """Nothing of an agent's recorded: the evalkit SDK's run spans still say what each run was asked, what it
    answered and how it failed (trajectory/mappers/evalkit_sdk.py)."""
    runs = sdk_runs(spans)
    for run in runs:
        span = run.span
        if run.input_text is not None:
            context.draft(span.start_time_unix_nano, "user", message=run.input_text)
        if run.output_text is None and run.error is None:
            continue
        extra: dict[str, Any] = {"from": "evalkit run span", **_span_extra(span, evalkit_sdk.NAME)}
        if run.error is not None:
            extra["error"] = json_safe(run.error.as_extra())
        context.draft(span.end_time_unix_nano, "agent", message=run.output_text or "", extra=extra)
    if runs:
        warnings.append("no LLM call or tool execution was recorded: the steps are the evalkit SDK's run span's "
                        "(what the task was asked, answered, raised); instrument the agent to see its own steps")


def _session_id(spans: Sequence[Span], overrides: MappingOverrides) -> str | None:
    keys = (
        (overrides.session_id_attribute,) if overrides.session_id_attribute else ()
    ) + SESSION_ID_ATTRIBUTES
    for key in keys:
        for span in spans:
            value = span.attributes.get(key)
            if value not in (None, ""):
                return str(value)
    for span in spans:
        if span.session_id:
            return span.session_id
    return None


def _agent_name(spans: Sequence[Span], runs: list[AgentRun], overrides: MappingOverrides) -> str:
    if overrides.agent_name_attribute:
        for span in spans:
            value = span.attributes.get(overrides.agent_name_attribute)
            if value not in (None, ""):
                return str(value)
    for run in runs:
        if run.name:
            return run.name
    # Runs naming no agent (their mappers read their spans: a framework's default name is none) leave the service to
    # name it: an agent-name attribute then is theirs again (OpenLLMetry's `LangGraph` on a graph's workflow span too)
    # or a subagent's, or an agent's set up in a trace of its own (OpenLLMetry's `create_agent`).
    if not runs:
        for key in AGENT_NAME_ATTRIBUTES:
            for span in spans:
                value = span.attributes.get(key)
                if value not in (None, ""):
                    return str(value)
    named = lone_agent(spans)  # a lone agent's run no span of which names it: its steps' spans do
    if named:
        return named
    for span in spans:
        service = span.resource_attributes.get("service.name")
        if service:
            return str(service)
    return "unknown"


def _trajectory(
    context: _Context,
    name: str,
    version: str | None,
    session_id: str | None,
    trajectory_id: str | None,
    subagents: list[Json],
    warnings: list[str],
) -> Json:
    steps = context.steps()
    if not steps:
        warnings.append(f"agent {name!r}: no LLM call, tool execution or agent input found; placeholder step")
        steps = [{"step_id": 1, "source": "system", "message": "No LLM activity was recorded for this session."}]
    model = context.models.most_common(1)[0][0] if context.models else None
    agent: Json = {"name": name, "version": version or "unknown"}
    if model is not None:
        agent["model_name"] = model
    if context.tool_definitions:
        agent["tool_definitions"] = list(context.tool_definitions.values())
    # v1.8 where it holds audio (a part of media content only), or a subagent does.
    trajectory: Json = {"schema_version": version_for(steps if context.media_content else (), subagents)}
    if session_id is not None:
        trajectory["session_id"] = session_id
    if trajectory_id is not None:
        trajectory["trajectory_id"] = trajectory_id
    trajectory["agent"] = agent
    trajectory["steps"] = steps
    if subagents:
        trajectory["subagent_trajectories"] = subagents
    return trajectory


_AGENT_FIELDS = ("name", "version", "model_name", "tool_definitions", "extra")
_TRAJECTORY_FIELDS = (
    "schema_version",
    "session_id",
    "trajectory_id",
    "agent",
    "steps",
    "notes",
    "final_metrics",
    "continued_trajectory_ref",
    "extra",
    "subagent_trajectories",
)


def _ordered(data: Json, fields: Sequence[str]) -> Json:
    return {name: data[name] for name in fields if name in data}


def ordered_trajectory(document: Json) -> Json:
    """The trajectory's keys in the model's field order (fields added late, like `final_metrics`)."""
    return _ordered(document, _TRAJECTORY_FIELDS)


__all__ = ["BuildResult", "ErrorInfo", "MappingSummary", "build_trajectory", "iso_timestamp", "summarise_mapping"]
