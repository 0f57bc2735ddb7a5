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


def _first_str(values: dict[str, Any], keys: tuple[str, ...]) -> str:
    for key in keys:
        value = values.get(key)
        if value is not None and value != "":
            return value if isinstance(value, str) else str(value)
    return ""


def _first_int(values: dict[str, Any], keys: tuple[str, ...]) -> int:
    for key in keys:
        value = values.get(key)
        if value is None or isinstance(value, bool):
            continue
        try:
            number = int(value)
        except (TypeError, ValueError):
            continue
        return max(number, 0)
    return 0


def attribute(name: str, values: dict[str, Any], session_attribute: str = "") -> Attribution:
    """Read the typed columns of one span from its wanted attribute values."""
    session_id = ""
    if session_attribute:
        session_id = _first_str(values, (session_attribute,))
    if not session_id:
        session_id = _first_str(values, SESSION_KEYS)

    kind = _first_str(values, ("openinference.span.kind",)).upper()
    operation = _first_str(values, OPERATION_KEYS) or _OI_OPERATIONS.get(kind, "")
    if not operation and name.startswith("ai."):
        if name.endswith((".doGenerate", ".doStream")):
            operation = "chat"
        elif name == "ai.toolCall":
            operation = "execute_tool"
    observation_type = _first_str(values, ("langfuse.observation.type",))
    mlflow_type = _first_str(values, ("mlflow.spanType",)).strip('"')
    is_llm_call = (
        operation in _LLM_OPERATIONS
        or kind == "LLM"
        or observation_type == "generation"
        or mlflow_type in ("LLM", "CHAT_MODEL")
    )
    if not operation and observation_type == "generation":
        operation = "chat"

    cost: float | None = None
    for key in COST_KEYS:
        raw = values.get(key)
        if isinstance(raw, int | float) and not isinstance(raw, bool):
            cost = float(raw)
            break

    return Attribution(
        session_id=session_id,
        operation=operation,
        provider=_first_str(values, PROVIDER_KEYS),
        model=_first_str(values, MODEL_KEYS),
        is_llm_call=is_llm_call,
        input_tokens=_first_int(values, INPUT_TOKEN_KEYS),
        output_tokens=_first_int(values, OUTPUT_TOKEN_KEYS),
        cache_read_tokens=_first_int(values, CACHE_READ_KEYS),
        cache_write_tokens=_first_int(values, CACHE_WRITE_KEYS),
        reasoning_tokens=_first_int(values, REASONING_KEYS),
        reported_cost_usd=cost,
        tool_name=_first_str(values, TOOL_NAME_KEYS),
        tool_call_id=_first_str(values, TOOL_CALL_ID_KEYS),
    )
