"""LangChain v1's `SummarizationMiddleware` compacting an agent's context, as OpenInference's LangChain tracer records
it: its summary call marked a compaction (`LlmCall.compaction`, the rule in trajectory/context_compaction.py).

`create_agent(model, tools, middleware=[SummarizationMiddleware(model=…, trigger=…, keep=…)])` runs the middleware's
`before_model` as a graph node of its own before each model call (`SummarizationMiddleware.before_model`, a CHAIN span
under the agent's run). At the trigger it asks its model (`model`, or `summarizer`) for a summary of the older
messages: one user message, its summary prompt around those messages as XML, the call's config metadata marked
`lc_source: "summarization"` (`_summary_config`), which the tracer records in the LLM span's `metadata` (under a
`RunnableRetry` CHAIN span of its own: the middleware's `with_retry`). The node then replaces the thread's messages
(`RemoveMessage(REMOVE_ALL_MESSAGES)`) by a user message of its own, "Here is a summary of the conversation to date:"
and the summary (its `additional_kwargs` marked `lc_source: "summarization"`), and the `keep` latest messages; the
node's span records the state it was given (`input.value`, `{"messages": [...]}`) and that update (`output.value`).

So a call marked `lc_source: "summarization"` is a compaction, by the middleware its node is named for, and the node's
span says how many messages the summary replaced and how many it kept (none where it cannot be read). The agent's
later calls are sent the summary message in place of what it summarized: that message and the kept ones are known to
the builder's rule, no steps.

Seen in a real capture: tests/captures/langgraph_openinference_summarization (LangChain 1.5.2, langchain-openai
1.8.1, OpenInference's LangChain instrumentation 0.1.80; `trigger=("messages", 8)`, `keep=("messages", 4)`:
summarizing twice in three turns, the second time the first summary among what it summarized).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from evalkit.trajectory.mappers.langgraph_openinference import OPENINFERENCE_SCOPE
from evalkit.trajectory.mappers.reader import dig, parse_json
from evalkit.trajectory.operations import ContextCompaction, LlmCall
from evalkit.trajectory.span import Span

# LangChain's `lc_source` of the middleware's summary calls and of the summary message it sends after.
_SUMMARIZATION = "summarization"
# LangChain names a middleware's hook node `<middleware name>.<hook>`.
_NODE_HOOK = ".before_model"


def _metadata(span: Span) -> dict[str, Any] | None:
    raw = span.attributes.get("metadata")
    # Parsed only where it may say so: every LangChain span records its metadata, the summary calls are a few.
    if not isinstance(raw, str) or _SUMMARIZATION not in raw:
        return None
    metadata = parse_json(raw)
    return metadata if isinstance(metadata, dict) else None


def _node_span(span: Span, node: str, spans: dict[tuple[str, str], Span]) -> Span | None:
    """The middleware's node run holding the summary call: its nearest ancestor named as the node."""
    parent = spans.get((span.trace_id, span.parent_span_id))
    while parent is not None:
        if parent.name == node:
            return parent
        parent = spans.get((parent.trace_id, parent.parent_span_id))
    return None


def _state_messages(value: Any) -> list[Any] | None:
    messages = dig(parse_json(value), "messages")
    return messages if isinstance(messages, list) else None


def _counts(node: Span) -> tuple[int | None, int | None]:
    """How many messages the summary replaced and how many were kept after it, from the node's state and update: the
    messages after the summary message in its update are the kept ones."""
    given = _state_messages(node.attributes.get("input.value"))
    update = _state_messages(node.attributes.get("output.value"))
    if given is None or update is None:
        return None, None
    summary_at = next((index for index, message in enumerate(update)
                       if dig(message, "data", "additional_kwargs", "lc_source") == _SUMMARIZATION), None)
    if summary_at is None:
        return None, None
    kept = len(update) - summary_at - 1
    return (len(given) - kept if len(given) >= kept else None), kept


def complete_calls(spans: Sequence[Span], calls: Iterable[LlmCall]) -> None:
    """Each summary call of a LangChain `SummarizationMiddleware` marked a compaction of its agent's context."""
    by_key: dict[tuple[str, str], Span] | None = None
    for call in calls:
        span = call.span
        if span.scope_name != OPENINFERENCE_SCOPE:
            continue
        metadata = _metadata(span)
        if metadata is None or metadata.get("lc_source") != _SUMMARIZATION:
            continue
        node = metadata.get("langgraph_node")
        compaction = ContextCompaction()
        if isinstance(node, str) and node.endswith(_NODE_HOOK):
            compaction.by = node.removesuffix(_NODE_HOOK)
            if by_key is None:
                by_key = {(s.trace_id, s.span_id): s for s in spans}
            node_span = _node_span(span, node, by_key)
            if node_span is not None:
                compaction.summarized_messages, compaction.kept_messages = _counts(node_span)
        call.compaction = compaction
