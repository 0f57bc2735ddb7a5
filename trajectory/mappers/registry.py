"""The emitter families in detection order: the most specific convention first."""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Sequence
from dataclasses import dataclass

from evalkit.trajectory.mappers import (
    ag2,
    agent_framework,
    agno_paused_runs,
    anthropic_context_editing,
    autogen,
    claude_code,
    codex_cli,
    crewai_knowledge_memory,
    gemini_cli,
    genkit,
    google_adk,
    google_adk_confirmation,
    haystack,
    langchain_context_editing,
    langchain_failed_attempts,
    langchain_structured_output,
    langchain_summarization,
    langfuse,
    langsmith,
    litellm,
    litellm_call_ids,
    litellm_failed_attempts,
    litellm_raw_request,
    llamaindex,
    logfire_openai_agents,
    mastra,
    mastra_model_outputs,
    mastra_working_memory,
    mcp_semconv,
    mlflow,
    openai_agents_guardrails,
    openai_agents_model_retries,
    openai_agents_voice,
    openai_chat_audio,
    openai_responses_compaction,
    openinference,
    openlit,
    openllmetry,
    openllmetry_langgraph,
    openllmetry_llamaindex,
    openllmetry_openai_agents,
    otel_genai,
    otel_openai_agents,
    pydantic_ai,
    pydantic_ai_attempts,
    pydantic_ai_deferred,
    pydantic_ai_history_processors,
    pydantic_ai_output_tools,
    pydantic_ai_tool_errors,
    pydantic_ai_tool_files,
    semantic_kernel,
    smolagents_planning,
    strands,
    strands_interrupts,
    strands_summarizing,
    vercel_ai,
    vercel_ai_otel_genai,
)
from evalkit.trajectory.mappers.reader import SpanReader
from evalkit.trajectory.operations import AgentRun, LlmCall, Operation, Usage
from evalkit.trajectory.span import LogRecord, Span


@dataclass(frozen=True)
class Emitter:
    name: str
    detect: Callable[[Span], bool]
    map_span: Callable[[SpanReader, Sequence[LogRecord]], Operation | None]
    # Emitters whose reading this one already includes (it delegates to them).
    covers: frozenset[str] = frozenset()
    # For an emitter that links a log record to another span than the one it is about: the session's records,
    # each linked to the span it is about (run before mapping, for a session with a span it detects).
    relink_logs: Callable[[Sequence[Span], Sequence[LogRecord]], Sequence[LogRecord]] | None = None
    # For an emitter that records a workflow's agents' steps as spans side by side under one span, none holding one
    # agent's work (a LlamaIndex AgentWorkflow's): each such step span of the session, by (trace id, span id), and
    # the agent it names, None where it names none. Asked only for a handoff to an agent no run is named for: the
    # builder makes the steps after it the receiving agent's run (`build._SessionTree`).
    step_agents: Callable[[Sequence[Span]], dict[tuple[str, str], str | None]] | None = None
    # For an emitter whose run of a single agent makes no agent span, the agent named only in the events its steps'
    # spans record (a LlamaIndex workflow agent's run): the agent the session's spans name so, None where none does.
    # Asked only for a session no agent run names (`build._agent_name`).
    lone_agent: Callable[[Sequence[Span]], str | None] | None = None
    # For an emitter whose agent spans record no answer where the agent's model wrote none (an AgentChat turn ending
    # on its tool calls), but another span of the session does (its team's TaskResult): each such agent span, by
    # (trace id, span id), and what it answered. Asked only for a nested run whose steps give no answer.
    run_answers: Callable[[Sequence[Span]], dict[tuple[str, str], str]] | None = None
    # For an emitter whose orchestrator runs an agent of its own to decide who acts next (an Agent Framework group
    # chat's manager), or whose agent has an agent of its own summarize its context (a Strands conversation manager's
    # summarization agent): each such agent span, by (trace id, span id). Its run is no subagent: its calls are the
    # steps of the run holding it (`build._map_session`).
    orchestrator_runs: Callable[[Sequence[Span]], set[tuple[str, str]]] | None = None
    # For an emitter that records part of a call on another span than the call's (LiteLLM's `raw_gen_ai_request`
    # child: the provider's raw request and response, the only record of a reasoning model's thinking and effort):
    # given the session's spans and its calls, completes those calls in place (`build._map_session`, after mapping,
    # for a session with a span it detects).
    complete_calls: Callable[[Sequence[Span], Iterable[LlmCall]], None] | None = None
    # For an emitter that records part of an agent run on other spans than the run's (openai-agents' guardrails under
    # OpenInference: what the run was asked on its input guardrail's agent's call, the tripwire that stopped it on its
    # turn span): given the session's spans and its runs, completes those runs in place (`build._map_session`).
    complete_runs: Callable[[Sequence[Span], Iterable[AgentRun]], None] | None = None
    # For an emitter that records no LLM call's usage, only a run's total (MLflow's DSPy autolog: the program's root
    # span's `mlflow.chat.tokenUsage`): the total a span records, None where it records none. Asked only for the spans
    # holding all the calls of a trace none of whose calls reports usage (trajectory/run_totals.py).
    run_total: Callable[[Span], Usage | None] | None = None


def _complete_litellm_calls(spans: Sequence[Span], calls: Iterable[LlmCall]) -> None:
    """LiteLLM's calls given what their raw provider requests record (reasoning, effort), then the provider's tool
    call ids (from those requests' responses and later calls' histories), then the failed requests made before each
    answered (a Router's fallback)."""
    calls = list(calls)
    litellm_raw_request.complete_calls(spans, calls)
    litellm_call_ids.complete_calls(spans, calls)
    litellm_failed_attempts.complete_calls(spans, calls)


def _complete_pydantic_ai_calls(spans: Sequence[Span], calls: Iterable[LlmCall]) -> None:
    """pydantic-ai's calls given their errored tool returns as the OpenAI adapters sent them, their output tool calls
    and the refusals of them (flagged, and as the OpenAI adapters sent them) and their runs' structured outputs, the
    text the Chat Completions adapter's tool messages sent for returned files, then the failed attempts made before each
    answered (a `FallbackModel`'s)."""
    calls = list(calls)
    pydantic_ai_tool_errors.complete_calls(spans, calls)
    pydantic_ai_output_tools.complete_calls(spans, calls)
    pydantic_ai_tool_files.complete_calls(spans, calls)
    pydantic_ai_attempts.complete_calls(spans, calls)
    # A history processor's summarizing agent: its call a compaction of the context of the call it ran for.
    pydantic_ai_history_processors.complete_calls(spans, calls)


def _complete_openllmetry_runs(spans: Sequence[Span], runs: Iterable[AgentRun]) -> None:
    """OpenLLMetry's runs given what other spans record of them: a LangGraph run resumed with a person's answer,
    openai-agents' guardrails (their agents' spans beside the agents they guard)."""
    runs = list(runs)
    openllmetry_langgraph.complete_runs(spans, runs)
    openllmetry_openai_agents.complete_runs(spans, runs)


def _complete_openinference_calls(spans: Sequence[Span], calls: Iterable[LlmCall]) -> None:
    """OpenInference's calls given what other spans record of them: smolagents' initial plans' tasks, then LangChain's
    failed calls made before each answered (a `RunnableWithFallbacks`'), then openai-agents' failed requests its runner
    retried."""
    calls = list(calls)
    smolagents_planning.complete_calls(spans, calls)
    langchain_failed_attempts.complete_calls(spans, calls)
    # LangChain's structured output: its output tool's calls and the object parsed, read from the agent's model node.
    langchain_structured_output.complete_calls(spans, calls)
    # LangChain's `SummarizationMiddleware`: its summary calls compactions of the agent's context.
    langchain_summarization.complete_calls(spans, calls)
    # LangChain's `ContextEditingMiddleware`: the first call sent each tool result cleared says so.
    langchain_context_editing.complete_calls(spans, calls)
    # Anthropic's server-side context editing: the first call the API cleared each tool result for says so.
    anthropic_context_editing.complete_calls(spans, calls)
    openai_agents_model_retries.complete_calls(spans, calls)
    # openai-agents' sessions compacted by the Responses API's `responses.compact`, a call in no span: the calls sent
    # its compaction item.
    openai_responses_compaction.complete_calls(spans, calls)
    # OpenAI's spoken answers re-sent by their audio's id alone: the transcript of the answer each names.
    openai_chat_audio.complete_calls(spans, calls)
    # openai-agents' voice pipeline: each turn's transcribed question marked spoken, its answers marked said.
    openai_agents_voice.complete_calls(spans, calls)
    # CrewAI's own calls around a task (its knowledge query, its memory's) marked its work; what its knowledge and
    # memory appended to the task prompt listed as retrievals.
    crewai_knowledge_memory.complete_calls(spans, calls)


def _complete_openinference_runs(spans: Sequence[Span], runs: Iterable[AgentRun]) -> None:
    """OpenInference's runs given what other spans record of them: openai-agents' guardrails, Agno's paused runs and
    the runs carrying them on."""
    runs = list(runs)
    openai_agents_guardrails.complete_runs(spans, runs)
    agno_paused_runs.complete_runs(spans, runs)
    # LangChain's answer accepting a structured output, which only the agent's model node records.
    langchain_structured_output.complete_runs(spans, runs)


def _complete_mastra_calls(spans: Sequence[Span], calls: Iterable[LlmCall]) -> None:
    """Mastra's calls given what their tools' `toModelOutput` sent the model, then the working memory's note a turn's
    first call was sent where it changed."""
    calls = list(calls)
    mastra_model_outputs.complete_calls(spans, calls)
    mastra_working_memory.complete_calls(spans, calls)


EMITTERS: tuple[Emitter, ...] = (
    # Before pydantic-ai, which claims every logfire scope: this one is logfire's openai-agents bridge.
    Emitter(logfire_openai_agents.NAME, logfire_openai_agents.detect, logfire_openai_agents.map_span,
            frozenset({pydantic_ai.NAME, otel_genai.NAME})),
    # Its deferred tools: a run carrying on one that ended asking a person, given their decisions; its errored tool
    # returns as the OpenAI adapters sent them ({"error": …}), from the tool spans' outcomes; its output tool calls (a
    # structured output's `final_result`) marked, a refusal of one flagged and shown as sent, a run's structured output
    # on the step that gave it; the text Chat Completions
    # showed for a tool's files ("See file <id>."), from the returns its calls' inputs record; a request's failed
    # attempts (a FallbackModel's) on the step of the call that answered. A history processor's summarizing agent (run
    # inside the call's span): no subagent, its call a compaction of the context.
    Emitter(pydantic_ai.NAME, pydantic_ai.detect, pydantic_ai.map_span, frozenset({otel_genai.NAME}),
            complete_calls=_complete_pydantic_ai_calls, complete_runs=pydantic_ai_deferred.complete_runs,
            orchestrator_runs=pydantic_ai_history_processors.orchestrator_runs),
    # smolagents' initial plans: the run's task the question its planning template wraps. LangChain's fallbacks: a
    # model that raised listed on the step of the one that answered after it; openai-agents' runner retries alike.
    Emitter(openinference.NAME, openinference.detect, openinference.map_span, step_agents=llamaindex.step_agents,
            lone_agent=llamaindex.lone_agent, run_answers=autogen.turn_answers,
            complete_calls=_complete_openinference_calls, complete_runs=_complete_openinference_runs),
    Emitter(vercel_ai.NAME, vercel_ai.detect, vercel_ai.map_span, frozenset({otel_genai.NAME})),
    # AI SDK 7's GenAI-conventions integration (`@ai-sdk/otel` `OpenTelemetry`): its spans, which hold no
    # `ai.operationId`, and the `ai.*` supplemental keys beside the conventions'.
    Emitter(vercel_ai_otel_genai.NAME, vercel_ai_otel_genai.detect, vercel_ai_otel_genai.map_span,
            frozenset({otel_genai.NAME})),
    # Before OpenLLMetry, which claims its call spans (`llm.request.type`, `gen_ai.completion.0.*`).
    Emitter(litellm.NAME, litellm.detect, litellm.map_span, frozenset({openllmetry.NAME, otel_genai.NAME}),
            complete_calls=_complete_litellm_calls),
    # OpenTelemetry's openai-agents instrumentation, under the scope OpenLLMetry's has too (which leaves it alone).
    # Its guardrails: the runs they guard and start (openai_agents_guardrails' rules, as under OpenInference); its
    # answers' citations, written only in the later calls re-sending them.
    Emitter(otel_openai_agents.NAME, otel_openai_agents.detect, otel_openai_agents.map_span,
            frozenset({otel_genai.NAME}), complete_calls=otel_openai_agents.complete_calls,
            complete_runs=otel_openai_agents.complete_runs),
    Emitter(openllmetry.NAME, openllmetry.detect, openllmetry.map_span, frozenset({otel_genai.NAME}),
            step_agents=openllmetry_llamaindex.step_agents, complete_runs=_complete_openllmetry_runs),
    Emitter(langfuse.NAME, langfuse.detect, langfuse.map_span, frozenset({otel_genai.NAME})),
    # DSPy's usage tracking: the program's total on its root span, no call's (a trace's tokens: run_totals.py).
    Emitter(mlflow.NAME, mlflow.detect, mlflow.map_span, run_total=mlflow.run_total),
    Emitter(haystack.NAME, haystack.detect, haystack.map_span),
    # Firebase Genkit's own spans (scope `genkit-tracer`): its model, tool and agent actions.
    Emitter(genkit.NAME, genkit.detect, genkit.map_span),
    # Its tool confirmation: a run ending to ask a person to confirm calls, the run carrying on with their answers.
    Emitter(google_adk.NAME, google_adk.detect, google_adk.map_span, frozenset({otel_genai.NAME}),
            complete_runs=google_adk_confirmation.complete_runs),
    # Its interrupts: a run stopping to ask a person, the run carrying it on with what they decided. Its
    # SummarizingConversationManager's summarization agent: no subagent, its summary call a compaction of the context.
    Emitter(strands.NAME, strands.detect, strands.map_span, frozenset({otel_genai.NAME}),
            complete_calls=strands_summarizing.complete_calls, complete_runs=strands_interrupts.complete_runs,
            orchestrator_runs=strands_summarizing.summarizer_runs),
    Emitter(autogen.NAME, autogen.detect, autogen.map_span, frozenset({otel_genai.NAME})),
    # AG2 1.x's TelemetryMiddleware (`ag2`, not AutoGen's autogen-core).
    Emitter(ag2.NAME, ag2.detect, ag2.map_span, frozenset({otel_genai.NAME})),
    Emitter(semantic_kernel.NAME, semantic_kernel.detect, semantic_kernel.map_span, frozenset({otel_genai.NAME})),
    Emitter(agent_framework.NAME, agent_framework.detect, agent_framework.map_span, frozenset({otel_genai.NAME}),
            orchestrator_runs=agent_framework.orchestrator_runs),
    # What its tools' `toModelOutput` sent the model (an MCP tool's text beside its structured result); its working
    # memory's system message, one system step, a later turn's note on that turn's first step.
    Emitter(mastra.NAME, mastra.detect, mastra.map_span, frozenset({otel_genai.NAME}),
            complete_calls=_complete_mastra_calls, complete_runs=mastra_working_memory.complete_runs),
    # The LangSmith SDK's OTel export: GenAI keys whose `gen_ai.prompt` / `gen_ai.completion` are LangChain runs.
    Emitter(langsmith.NAME, langsmith.detect, langsmith.map_span, frozenset({otel_genai.NAME})),
    # OpenLIT's instrumentations: the GenAI conventions plus its own (a cost of 0 is no price).
    Emitter(openlit.NAME, openlit.detect, openlit.map_span, frozenset({otel_genai.NAME}),
            relink_logs=openlit.relink_logs),
    # Claude Code's own export: GenAI keys on its spans, its content in log events linked to the turn's span.
    Emitter(claude_code.NAME, claude_code.detect, claude_code.map_span, frozenset({otel_genai.NAME}),
            relink_logs=claude_code.relink_logs),
    # The Codex CLI's own export: tracing spans of its internals, its content in log events linked to the span active
    # (a tool's result to its dispatch's child): relinked to the turn, the tool and the call that asked for it.
    Emitter(codex_cli.NAME, codex_cli.detect, codex_cli.map_span, relink_logs=codex_cli.relink_logs,
            complete_calls=codex_cli.complete_calls),
    # Gemini CLI's own export: Gemini's contents on its `llm_call` spans, each tool's record on its `tool_call` span;
    # a request's role (the CLI's own work: its router) in the `api_request` event linked to its span.
    Emitter(gemini_cli.NAME, gemini_cli.detect, gemini_cli.map_span, frozenset({otel_genai.NAME})),
    # MCP's own requests under the OTel MCP conventions, whichever framework's session holds them: their keys read,
    # no step. It maps nothing and covers no one, so a server's `tools/call` span stays the GenAI mapper's (or that of
    # a framework whose tool span carries the keys) exactly as before.
    Emitter(mcp_semconv.NAME, mcp_semconv.detect, mcp_semconv.map_span),
    Emitter(otel_genai.NAME, otel_genai.detect, otel_genai.map_span),
)


def detect(span: Span) -> list[Emitter]:
    return [emitter for emitter in EMITTERS if emitter.detect(span)]


# What every `detect` above reads of a span: its attribute keys, scope name, whether its name
# starts with "ai." (Vercel) and its event names. Spans alike in these are detected alike.
ShapeKey = tuple[str, bool, tuple[str, ...], tuple[str, ...]]


def shape_of(span: Span) -> ShapeKey:
    return (
        span.scope_name,
        span.name.startswith("ai."),
        tuple(span.attributes),
        tuple(event.name for event in span.events) if span.events else (),
    )


class Detector:
    """`detect` remembered per span shape, for one session's build.

    A session's spans come in a few shapes (chat call, tool execution, agent run), and running
    seven detectors, several scanning every attribute key, over each of thousands of spans was a
    tenth of building the steps. Attribute order is part of the key, so differently ordered
    spans of one shape only cost a second detection, never a wrong one.
    """

    def __init__(self, limit: int = 1024) -> None:
        self.limit = limit
        self.found: dict[ShapeKey, list[Emitter]] = {}

    def __call__(self, span: Span) -> list[Emitter]:
        key = shape_of(span)
        found = self.found.get(key)
        if found is None:
            found = detect(span)
            if len(self.found) >= self.limit:
                self.found.clear()  # a session of ever-new shapes: bounded memory, detection as before
            self.found[key] = found
        return found


def step_agents(spans: Sequence[Span]) -> dict[tuple[str, str], str | None]:
    """The session's flat step spans and the agent each names, by the emitters that record agents' steps so."""
    found: dict[tuple[str, str], str | None] = {}
    for emitter in EMITTERS:
        if emitter.step_agents is not None:
            found.update(emitter.step_agents(spans))
    return found


def lone_agent(spans: Sequence[Span]) -> str | None:
    """The agent the session's spans name where no span is its run, by the emitters that record a lone agent's run
    so."""
    for emitter in EMITTERS:
        name = emitter.lone_agent(spans) if emitter.lone_agent is not None else None
        if name:
            return name
    return None


def run_answers(spans: Sequence[Span]) -> dict[tuple[str, str], str]:
    """The session's agent spans that record no answer and what each answered, by the emitters that record it
    elsewhere."""
    found: dict[tuple[str, str], str] = {}
    for emitter in EMITTERS:
        if emitter.run_answers is not None:
            found.update(emitter.run_answers(spans))
    return found


def orchestrator_runs(spans: Sequence[Span], emitters: Collection[str]) -> set[tuple[str, str]]:
    """The session's agent spans an orchestrator ran as its own decision, by the emitters found (`emitters`, by name)
    that record them so."""
    found: set[tuple[str, str]] = set()
    for emitter in EMITTERS:
        if emitter.orchestrator_runs is not None and emitter.name in emitters:
            found |= emitter.orchestrator_runs(spans)
    return found


def complete_calls(spans: Sequence[Span], calls: Iterable[LlmCall], emitters: Collection[str]) -> None:
    """The session's calls completed from the other spans recording part of them, by the emitters found (`emitters`,
    by name) that record calls so."""
    completing = [e.complete_calls for e in EMITTERS if e.complete_calls is not None and e.name in emitters]
    if completing:
        calls = list(calls)
        for complete in completing:
            complete(spans, calls)


def complete_runs(spans: Sequence[Span], runs: Iterable[AgentRun], emitters: Collection[str]) -> None:
    """The session's agent runs completed from the other spans recording part of them, by the emitters found
    (`emitters`, by name) that record runs so."""
    completing = [e.complete_runs for e in EMITTERS if e.complete_runs is not None and e.name in emitters]
    if completing:
        runs = list(runs)
        for complete in completing:
            complete(spans, runs)


def run_total_reader(emitters: Collection[str]) -> Callable[[Span], Usage | None] | None:
    """What reads a run's total off a span for the emitters found (`emitters`, by name) that record one where no call's
    usage is recorded; None where none of them does (almost every session: no span is looked at)."""
    readers = [e for e in EMITTERS if e.run_total is not None and e.name in emitters]
    if not readers:
        return None

    def run_total(span: Span) -> Usage | None:
        for emitter in readers:
            if emitter.run_total is not None and emitter.detect(span):
                usage = emitter.run_total(span)
                if usage is not None:
                    return usage
        return None

    return run_total


def relink_logs(spans: Sequence[Span], logs: Sequence[LogRecord]) -> Sequence[LogRecord]:
    """The session's log records, each linked to the span it is about by the emitters that link them otherwise."""
    for emitter in EMITTERS:
        if emitter.relink_logs is not None and logs and any(emitter.detect(span) for span in spans):
            logs = emitter.relink_logs(spans, logs)
    return logs
