"""What a span is, read from whichever convention its emitter used.

Fills the typed columns the session list and scoring filter and sum on: session
id, operation, provider, model, token counts, reported cost, tool name and call
id, and whether the span is a leaf LLM call. The mapper in `trajectory/` reads
the full attributes; these columns only have to be right for summaries.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

# First hit wins; the order follows reference/semconv_atif.md §3.8.
SESSION_KEYS = (
    "session.id",
    "gen_ai.conversation.id",
    "langfuse.session.id",
    "traceloop.association.properties.session_id",
    "ai.telemetry.metadata.sessionId",
    "mlflow.trace.session",
)
OPERATION_KEYS = ("gen_ai.operation.name", "llm.request.type")
PROVIDER_KEYS = ("gen_ai.provider.name", "gen_ai.system", "llm.provider", "llm.system", "ai.model.provider")
MODEL_KEYS = ("gen_ai.response.model", "gen_ai.request.model", "llm.model_name", "llm.response.model_name",
              "ai.response.model", "ai.model.id", "langfuse.observation.model.name", "mlflow.llm.model")
INPUT_TOKEN_KEYS = ("gen_ai.usage.input_tokens", "gen_ai.usage.prompt_tokens", "llm.token_count.prompt",
                    "ai.usage.inputTokens", "ai.usage.promptTokens")
OUTPUT_TOKEN_KEYS = ("gen_ai.usage.output_tokens", "gen_ai.usage.completion_tokens",
                     "llm.token_count.completion", "ai.usage.outputTokens", "ai.usage.completionTokens")
CACHE_READ_KEYS = ("gen_ai.usage.cache_read.input_tokens", "llm.token_count.prompt_details.cache_read",
                   "gen_ai.usage.cache_read_input_tokens", "ai.usage.inputTokenDetails.cacheReadTokens",
                   "ai.usage.cachedInputTokens", "gen_ai.usage.details.cache_read_tokens")
CACHE_WRITE_KEYS = ("gen_ai.usage.cache_creation.input_tokens", "gen_ai.usage.cache_write.input_tokens",
                    "llm.token_count.prompt_details.cache_write", "gen_ai.usage.cache_creation_input_tokens",
                    "ai.usage.inputTokenDetails.cacheWriteTokens", "gen_ai.usage.details.cache_write_tokens")
REASONING_KEYS = ("gen_ai.usage.reasoning.output_tokens", "llm.token_count.completion_details.reasoning",
                  "llm.usage.reasoning_tokens", "gen_ai.usage.reasoning_tokens", "ai.usage.reasoningTokens")
COST_KEYS = ("llm.cost.total", "gen_ai.usage.cost")
TOOL_NAME_KEYS = ("gen_ai.tool.name", "tool.name", "ai.toolCall.name")
TOOL_CALL_ID_KEYS = ("gen_ai.tool.call.id", "tool.id", "tool_call.id", "ai.toolCall.id")
KIND_KEYS = ("openinference.span.kind", "traceloop.span.kind", "langfuse.observation.type", "mlflow.spanType")

WANTED_KEYS = frozenset(
    SESSION_KEYS + OPERATION_KEYS + PROVIDER_KEYS + MODEL_KEYS + INPUT_TOKEN_KEYS + OUTPUT_TOKEN_KEYS
    + CACHE_READ_KEYS + CACHE_WRITE_KEYS + REASONING_KEYS + COST_KEYS + TOOL_NAME_KEYS + TOOL_CALL_ID_KEYS
    + KIND_KEYS
)

_LLM_OPERATIONS = frozenset({"chat", "text_completion", "generate_content", "completion"})
_OI_OPERATIONS = {"LLM": "chat", "TOOL": "execute_tool", "AGENT": "invoke_agent", "EMBEDDING": "embeddings",
                  "RETRIEVER": "retrieval", "CHAIN": "chain"}


@dataclass(frozen=True)
class Attribution:
    session_id: str
    operation: str
    provider: str
    model: str
    is_llm_call: bool
    input_tokens: int
    output_tokens: int
    cache_read_tokens: int
    cache_write_tokens: int
    reasoning_tokens: int
    reported_cost_usd: float | None
    tool_name: str
    tool_call_id: str


# Each wanted key -> (field, rank): one pass over a span's few wanted values finds the
# best-ranked value of every field (this runs for every span on the ingest path).
_FIELDS: dict[str, tuple[str, ...]] = {
    "session": SESSION_KEYS, "operation": OPERATION_KEYS, "provider": PROVIDER_KEYS, "model": MODEL_KEYS,
    "input": INPUT_TOKEN_KEYS, "output": OUTPUT_TOKEN_KEYS, "cache_read": CACHE_READ_KEYS,
    "cache_write": CACHE_WRITE_KEYS, "reasoning": REASONING_KEYS, "cost": COST_KEYS, "tool_name": TOOL_NAME_KEYS,
    "tool_call_id": TOOL_CALL_ID_KEYS, "oi_kind": ("openinference.span.kind",),
    "observation_type": ("langfuse.observation.type",), "mlflow_type": ("mlflow.spanType",),
}
_KEY_SLOTS: dict[str, list[tuple[str, int]]] = {}
for _field, _keys in _FIELDS.items():
    for _rank, _key in enumerate(_keys):
        _KEY_SLOTS.setdefault(_key, []).append((_field, _rank))

_NUMERIC = frozenset({"input", "output", "cache_read", "cache_write", "reasoning", "cost"})


def _usable(field: str, value: Any) -> bool:
    if value is None or value == "":
        return False
    if field in _NUMERIC:
        if isinstance(value, bool):
            return False
        if field != "cost" and not isinstance(value, int):
            try:
                int(value)
            except (TypeError, ValueError):
                return False
        if field == "cost" and not isinstance(value, int | float):
            return False
    return True


_NOTHING = Attribution("", "", "", "", False, 0, 0, 0, 0, 0, None, "", "")


def _str(value: Any) -> str:
    return value if isinstance(value, str) else ("" if value is None else str(value))


def _count(value: Any) -> int:
    return 0 if value is None else max(int(value), 0)


def attribute(name: str, values: dict[str, Any], session_attribute: str = "") -> Attribution:
    """Read the typed columns of one span from its wanted attribute values."""
    if not values and not name.startswith("ai."):
        return _NOTHING
    best: dict[str, tuple[int, Any]] = {}
    for key, value in values.items():
        for field, rank in _KEY_SLOTS.get(key, ()):
            current = best.get(field)
            if current is not None and rank > current[0]:
                continue
            # Strings are usable as they are for every text field; check only what is not.
            if (type(value) is str and value and field not in _NUMERIC) or _usable(field, value):
                best[field] = (rank, value)
    found = {field: value for field, (_, value) in best.items()}
    get = found.get

    session_id = _str(values.get(session_attribute)) if session_attribute else ""
    if not session_id:
        session_id = _str(get("session"))
    kind = _str(get("oi_kind")).upper()
    operation = _str(get("operation")) or _OI_OPERATIONS.get(kind, "")
    if not operation and name.startswith("ai."):
        if name.endswith((".doGenerate", ".doStream")):
            operation = "chat"
        elif name == "ai.toolCall":
            operation = "execute_tool"
    observation_type = _str(get("observation_type"))
    is_llm_call = (
        operation in _LLM_OPERATIONS
        or kind == "LLM"
        or observation_type == "generation"
        or _str(get("mlflow_type")).strip('"') in ("LLM", "CHAT_MODEL")
    )
    if not operation and observation_type == "generation":
        operation = "chat"
    cost = get("cost")
    return Attribution(
        session_id=session_id,
        operation=operation,
        provider=_str(get("provider")),
        model=_str(get("model")),
        is_llm_call=is_llm_call,
        input_tokens=_count(get("input")),
        output_tokens=_count(get("output")),
        cache_read_tokens=_count(get("cache_read")),
        cache_write_tokens=_count(get("cache_write")),
        reasoning_tokens=_count(get("reasoning")),
        reported_cost_usd=None if cost is None else float(cost),
        tool_name=_str(get("tool_name")),
        tool_call_id=_str(get("tool_call_id")),
    )
