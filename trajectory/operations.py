"""The common shape every mapper normalises a span into: an LLM call, a tool execution, an agent run.

Plain dataclasses: they live only between a mapper and the trajectory builder. With slots: thousands
are made per session, and a slotted instance is made and read faster than one with a `__dict__`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any, Literal

from evalkit.trajectory.span import Span

PartKind = Literal["text", "reasoning", "tool_call", "tool_result", "media", "other"]


@dataclass(slots=True)
class Part:
    kind: PartKind
    text: str | None = None  # text, reasoning, the rendered result of a tool, or why media has no uri (redacted)
    call_id: str | None = None  # tool_call / tool_result
    name: str | None = None  # tool name; media: its file name (an Anthropic document's title)
    arguments: Any = None  # tool_call: parsed when it was JSON
    media_type: str | None = None  # media: MIME type or modality
    uri: str | None = None  # media: URL or data URL
    # tool_result: the emitter recorded that the tool failed, in the message itself and nowhere else (Haystack's
    # `ToolCallResult.error`, which OpenInference's instrumentor keeps only in the next call's input).
    error: bool = False
    # tool_call: what the emitter records of the call beyond its name and arguments, kept as its ATIF `extra` (a tool
    # the provider ran itself, the Responses API's web search: `{"run_by": "provider", "status": …}`). tool_result of
    # such a call, in the answer: its result's `extra` (a failure: `is_error` and `error`; Anthropic's code execution).
    extra: dict[str, Any] | None = None
    # tool_result: the result as parts where it holds media (an Anthropic `tool_result` with a screenshot's `image`
    # block), as `ToolExecution.result_parts` is a tool span's: its call's result is then ATIF content parts.
    result_parts: list[Part] | None = None


@dataclass(slots=True)
class Message:
    role: str  # system / user / assistant / tool (free string, lower-cased)
    parts: list[Part] = field(default_factory=list)
    name: str | None = None
    # What the emitter records of the message beyond its parts, kept as its step's `extra` where it is a new question
    # (a spoken one's `spoken`: openai_agents_voice.py). None for nearly all: set only by an emitter's `complete_calls`.
    extra: dict[str, Any] | None = None

    @property
    def text(self) -> str:
        # Lists, not generators, for `join`: read for every message of every call.
        return "\n".join([part.text for part in self.parts if part.kind == "text" and part.text])

    @property
    def reasoning(self) -> str:
        return "\n".join([part.text for part in self.parts if part.kind == "reasoning" and part.text])

    @property
    def tool_calls(self) -> list[Part]:
        return [part for part in self.parts if part.kind == "tool_call"]

    @property
    def tool_results(self) -> list[Part]:
        return [part for part in self.parts if part.kind == "tool_result"]


@dataclass(slots=True)
class Usage:
    """Token counts of one LLM call, normalised: `input_tokens` includes cached and cache-write tokens."""

    input_tokens: int | None = None
    output_tokens: int | None = None
    cache_read_tokens: int | None = None
    cache_write_tokens: int | None = None
    reasoning_tokens: int | None = None
    # How input_tokens was obtained when the emitter excluded cache tokens, else None.
    normalisation: str | None = None
    # The web searches the provider ran within the answer (Anthropic's `usage.server_tool_use.web_search_requests`;
    # OpenAI's Responses answer's `search` actions: `openai_agents_hosted_tools`), billed apart from the tokens.
    web_search_requests: int | None = None
    # The web fetches the provider ran within the answer (Anthropic's `usage.server_tool_use.web_fetch_requests`): no
    # fee of their own, the text fetched billed as input tokens.
    web_fetch_requests: int | None = None
    # Of input_tokens and output_tokens, the audio ones (an audio model's: OpenAI's `audio_tokens` details).
    input_audio_tokens: int | None = None
    output_audio_tokens: int | None = None
    # Of input_tokens and output_tokens, each modality's (`{"text": 251, "image": 1032}`: a prompt's images apart from
    # its words), where the emitter breaks them down; None where it does not.
    input_tokens_by_modality: dict[str, int] | None = None
    output_tokens_by_modality: dict[str, int] | None = None

    @property
    def empty(self) -> bool:
        return self.input_tokens is None and self.output_tokens is None


@dataclass(slots=True)
class ErrorInfo:
    status_message: str = ""
    error_type: str | None = None
    exceptions: list[dict[str, Any]] = field(default_factory=list)

    def as_extra(self) -> dict[str, Any]:
        extra: dict[str, Any] = {"status": "error"}
        if self.status_message:
            extra["message"] = self.status_message
        if self.error_type:
            extra["type"] = self.error_type
        if self.exceptions:
            extra["exceptions"] = self.exceptions
        return extra


@dataclass(slots=True)
class ContextCompaction:
    """What the emitter records of an LLM call that compacted its agent's context (`LlmCall.compaction`): its answer is
    the summary."""

    by: str | None = None  # what compacted it, as the framework names it (LangChain's `SummarizationMiddleware`)
    summarized_messages: int | None = None  # how many messages the summary replaced, where the emitter records it
    kept_messages: int | None = None  # how many of the latest messages were kept after it, where recorded
    # The summary as the framework sends it to later calls where that is not the answer as written: the part of the
    # answer it keeps (Claude Code re-sends its `<summary>` block's content, not its `<analysis>`). None: the answer.
    resent_summary: str | None = None
    # The agent the framework had write the summary, where it has one of its own do it (a Strands
    # `SummarizingConversationManager`'s `summarization_agent`): no subagent, named on the compaction's step.
    agent: str | None = None
    # A compaction whose call no span records, known from the later calls sent its output (the Responses API's
    # `responses.compact`, which openai-agents' `OpenAIResponsesCompactionSession` calls outside any span): the summary
    # is the provider's compaction item, encrypted (its id, its content's length); the conversation's user messages
    # its output re-sends before it; when it happened (after the last call not sent it).
    item_id: str | None = None
    encrypted_chars: int | None = None
    kept_user_messages: int | None = None
    time_ns: int | None = None
    # A compaction whose call no span records but whose summary the later calls are sent as written (Strands'
    # `SummarizingConversationManager` with no summarization agent calls the agent's model outside its tracing): that
    # summary, its step's message (item_id None).
    summary: str | None = None


@dataclass(slots=True)
class LlmCall:
    span: Span
    emitter: str
    input_messages: list[Message] = field(default_factory=list)
    output_messages: list[Message] = field(default_factory=list)
    system_instructions: list[str] = field(default_factory=list)
    model: str | None = None
    request_model: str | None = None
    provider: str | None = None
    usage: Usage = field(default_factory=Usage)
    reported_cost: Decimal | None = None
    tool_definitions: list[dict[str, Any]] = field(default_factory=list)
    reasoning_effort: str | float | None = None
    finish_reasons: list[str] = field(default_factory=list)
    error: ErrorInfo | None = None
    extra: dict[str, Any] = field(default_factory=dict)
    # The provider's response id where an emitter records it other than as an attribute (trajectory/same_call.py
    # reads the attributes it knows itself).
    response_id: str | None = None
    # The span whose input attributes hold `input_messages` where they were taken from another report of the call
    # (trajectory/same_call.py): an image the input holds is referenced there, not at `span`. None: `span`.
    input_span: Span | None = None
    # The provider keeps the conversation (a Responses API call naming `previous_response_id`): the input holds only
    # what the model is shown anew, each message new however like an earlier one it is.
    input_all_new: bool = False
    # What the call's input showed the model for tool calls whose tool spans recorded the tool's return otherwise, by
    # call id: the emitter's adapter for this provider renders that return its own way (pydantic-ai on Anthropic: a
    # list, one text block an item). The text replaces the recorded result on the call's step, the images of a result
    # holding some kept after it (pydantic-ai's "See file <id>." beside a tool's file on OpenAI's Chat Completions).
    shown_tool_results: dict[str, str] = field(default_factory=dict)
    # False: the request failed before the model answered, and the emitter recorded nothing of it but its error
    # (openai-agents' response span under OpenInference): its step shows the failure and counts no LLM call.
    answered: bool = True
    # True: a failed attempt at a request that a later call answered (a LiteLLM Router falling back to another model),
    # listed on that call's step (`extra.failed_attempts`), no step of its own (set by an emitter's `complete_calls`).
    failed_attempt: bool = False
    # The call compacted its agent's context: the framework had the model summarize the conversation so far, and sends
    # its later calls that summary in place of the messages summarized (trajectory/context_compaction.py). Set by the
    # emitter's mapper (LangChain's `SummarizationMiddleware`: `langchain_summarization.py`).
    compaction: ContextCompaction | None = None
    # When the request was sent, where the emitter records that later than the call's span started: pydantic-ai runs a
    # request's history processors inside its span, a summarizing agent's run among them, and sends the request after
    # (`pydantic_ai_history_processors.py`). The call's step is then there, and the call read after that work. None:
    # the span's start.
    sent_ns: int | None = None
    # The call was sent a compaction no recorded call made (`ContextCompaction.item_id`: the Responses API's compaction
    # item) in place of the conversation before it: its input messages before `sent_compaction_at` are that
    # compaction's output re-sent (the conversation's user messages), no question; the compaction a step of no LLM call
    # where it happened, once (trajectory/context_compaction.py). Set by the emitter's `complete_calls`
    # (`openai_responses_compaction.py`; `strands_summarizing.py`: a readable summary, `ContextCompaction.summary`, the
    # message before `sent_compaction_at`).
    sent_compaction: ContextCompaction | None = None
    sent_compaction_at: int = 0
    # The call is its framework's own work around the agent's task, not the agent's conversation (CrewAI's knowledge
    # search query rewrite, its memory's extraction and analyses: `crewai_knowledge_memory.py`): its prompt and
    # instructions are the framework's, no question and no system step; its step says what it was for
    # (`extra.framework_work`: by, purpose, what it was given to store). Set by the emitter's `complete_calls`.
    framework_work: dict[str, Any] | None = None


@dataclass(slots=True)
class ToolExecution:
    span: Span
    emitter: str
    name: str | None = None
    call_id: str | None = None
    arguments: Any = None
    result: Any = None
    error: ErrorInfo | None = None
    # A handoff: the agent this call hands the conversation to (openai-agents' `transfer_to_…`).
    # ("" when the span does not name it: the first agent run after it takes over.)
    handoff_to: str | None = None
    # A delegation: the agent whose run this call starts, a run that follows the tool's span beside it rather than
    # under it (an Agno team's `delegate_task_to_member` under OpenLIT: its span ends when the function returns the
    # generator the team drains later). Unlike a handoff's, the run has a conversation of its own; its answer is
    # the call's result. Named as the call names it, else "": the first agent run after it.
    delegates_to: str | None = None
    # A delegation whose agent runs inside the tool's own span, with no agent span of its own (CrewAI's "Delegate
    # work to coworker": the coworker's `execute_task` runs in the tool's `run`): the spans under the tool are that
    # agent's run, a subagent the call started. Named as the call names it, else "" (then by the tool's span).
    runs_agent: str | None = None
    # A span that is a tool's execution only if the model asked for a tool of its name (OpenLIT's
    # `@openlit.trace` spans name a function, of any kind): otherwise it is no step at all.
    only_if_called: bool = False
    # A tool its framework runs only when the model asked for it, under the span that also holds the model call
    # that asked (openai-agents' turn span): when no recorded call asks for it (OpenLIT keeps one function call
    # of a Responses answer), it is a call of the answer beside it, whose span did not say so.
    asked_by_call_beside: bool = False
    # The tool's definition as its span recorded it (Strands' `execute_tool`: its description and JSON schema), in
    # the OpenAI function-calling shape: one of the tools of the agent whose call it answers.
    definition: dict[str, Any] | None = None
    # The result as parts, where it holds media (a screenshot tool's image, shown the model as an image): its call's
    # result is then ATIF content parts, the media referenced (trajectory/media.py), never their base64 as text.
    # None: the result is `result`, shown as text.
    result_parts: list[Part] | None = None
    # A retriever's execution (OpenInference's RETRIEVER span), its arguments the query, its result the documents found:
    # inside a tool the model called that runs no agent of its own (a LangChain retriever tool), that call's own work,
    # no step: its documents are listed on the call's result (`extra.retrievals`, build.py).
    retrieval: bool = False
    # The retrievals the tool ran within its own span, where none has a span of its own (Agno's `search_knowledge_base`:
    # the documents found, read from its result): each a retriever's execution as above, listed on the call's result
    # alike (`extra.retrievals`, its span the tool's).
    retrievals: list[ToolExecution] = field(default_factory=list)


@dataclass(slots=True)
class AgentRun:
    """An agent invocation (invoke_agent, OpenInference AGENT, a Vercel generateText call, ...)."""

    span: Span
    emitter: str
    name: str | None = None
    version: str | None = None
    input_text: str | None = None
    output_text: str | None = None
    system_instructions: list[str] = field(default_factory=list)
    model: str | None = None
    error: ErrorInfo | None = None
    # The tools the agent was given (`gen_ai.tool.definitions` on its span: Semantic Kernel records them
    # there only), in the OpenAI function-calling shape.
    tool_definitions: list[dict[str, Any]] = field(default_factory=list)
    # Results of its calls its span recorded (its response's tool messages): each answers its call when no tool span
    # and no later input did (Agent Framework's handoff middleware answers a handoff call, running no tool).
    tool_results: list[Part] = field(default_factory=list)
    # An agent the app built, whose emitter records no other (Google ADK's `invoke_agent`): one that only runs other
    # agents (an ADK SequentialAgent's or ParallelAgent's run) is a trajectory of its own, their runs its subagents,
    # not a synthetic root grouping them (build.py).
    app_agent: bool = False
    # What the run was asked, as recorded by a check its framework ran on the run's input before its model was called
    # (openai-agents' input guardrail running an agent: that agent's first call): the steps showing it are the run's
    # first, and a run the check stopped, its model never called, shows it all the same (build.py).
    asked: list[str] = field(default_factory=list)
    # What started the run where no call of the agent delegating to it did (openai-agents' guardrail running an agent
    # of its own: "input guardrail <name>"): its delegation step says so, no call's result.
    started_by: str | None = None
    # The run (its span's trace id and span id) this run is part of where the emitter put its span beside that run's,
    # not under it (OpenLLMetry's openai-agents processor starts every agent span under the trace's workflow span: a
    # guardrail's agent beside the agent it guards): the builder nests it there, a subagent of that run.
    inside_run: tuple[str, str] | None = None
    # The answer a person gave a run that stopped to ask them (`Interrupt`), which this run carries on with (LangGraph's
    # `Command(resume=…)`): a user step at its start.
    resumed_with: str | None = None
    # The run ended asking a person, where its own span records what (pydantic-ai's `DeferredToolRequests` output):
    # a step at its end, as another span's `Interrupt` is.
    interrupt: Interrupt | None = None


@dataclass(slots=True)
class Interrupt:
    """A run stopping to ask a person and wait for their answer (LangGraph's `interrupt()`: a tool call to approve):
    what it asked, when. The answer is the `resumed_with` of the run that carries it on."""

    span: Span
    emitter: str
    time_ns: int
    asked: str
    requests: list[Any] = field(default_factory=list)  # as the emitter recorded them


Operation = LlmCall | ToolExecution | AgentRun | Interrupt
