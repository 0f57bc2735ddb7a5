"""What a span is, read from whichever convention its emitter used.

The typed columns the session list and scoring filter and sum on (session id,
operation, provider, model, token counts, reported cost, tool name and call id,
whether the span is a leaf LLM call) are computed by ClickHouse while it reads
the export (see `ingest/flatten.py`): this module turns the ranked key lists
below into SQL over a span's attribute text map (`{texts}`) and OTLP type map
(`{types}`, see `evalkit/attributes.py`). The mapper in `trajectory/` reads the
full attributes; these columns only have to be right for summaries.
"""

from __future__ import annotations

from evalkit.ingest.export_schema import BOOL, DOUBLE, INT, STRING

# First hit wins; the order follows reference/semconv_atif.md §3.8.
SESSION_KEYS = (
    "session.id",
    "gen_ai.conversation.id",
    "langfuse.session.id",
    "traceloop.association.properties.session_id",
    "ai.telemetry.metadata.sessionId",
    "ai.settings.context.sessionId",  # AI SDK 7: runtime context (it has no telemetry metadata any more)
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

LLM_OPERATIONS = ("chat", "text_completion", "generate_content", "completion")
# openinference.span.kind -> gen_ai.operation.name
OPENINFERENCE_OPERATIONS = {"LLM": "chat", "TOOL": "execute_tool", "AGENT": "invoke_agent",
                            "EMBEDDING": "embeddings", "RETRIEVER": "retrieval", "CHAIN": "chain"}

NAME_KEYS = SESSION_KEYS + OPERATION_KEYS + PROVIDER_KEYS + MODEL_KEYS + TOOL_NAME_KEYS + TOOL_CALL_ID_KEYS + (
    "openinference.span.kind", "langfuse.observation.type", "mlflow.spanType")
COUNT_KEYS = INPUT_TOKEN_KEYS + OUTPUT_TOKEN_KEYS + CACHE_READ_KEYS + CACHE_WRITE_KEYS + REASONING_KEYS


def _literal(text: str) -> str:
    return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"


def _array(keys: tuple[str, ...]) -> str:
    return "[" + ", ".join(_literal(k) for k in keys) + "]"


def _map_of(attributes: str, wanted: str, value: str) -> str:
    """Map(key -> Nullable value) of a span's wanted attributes; NULL where the value is unusable.

    `wanted` is SQL over `k` (a key), `value` SQL over the value's parts (`w` which one is
    set, `s` string, `i` int, `d` double, `b` bool). Built once per span from its few wanted
    attributes, so that each typed column is a handful of lookups in a small map rather
    than a scan of every attribute."""
    v = f"{attributes}.value"
    values = (f"arrayMap((w, s, i, d, b) -> {value}, {v}.value, {v}.string_value, {v}.int_value, "
              f"{v}.double_value, {v}.bool_value)")
    return (f"mapFromArrays(arrayFilter(k -> {wanted}, {attributes}.key), "
            f"arrayFilter((x, k) -> {wanted}, {values}, {attributes}.key))")


def _first(found: str, keys: tuple[str, ...], otherwise: str) -> str:
    """The usable value of the best-ranked key in `found` (a missing key reads as NULL)."""
    return f"coalesce({', '.join(f'{found}[{_literal(k)}]' for k in keys)}, {otherwise})"


def wanted_maps(attributes: str, session_attribute: str) -> list[tuple[str, str]]:
    """The small maps the typed columns are read from, from a span's attribute list (the
    `KeyValue` tuples of `ingest/export_schema.py`) and the agent's session attribute
    override ('' for none).

    A name (session id, model, ...) is any non-empty scalar value, as text; a token count
    is an int, a finite double (truncated) or a string holding an integer; a reported cost
    is a number."""
    name_text = (f"multiIf(w = {STRING}, nullIf(s, ''), w = {INT}, toString(i), w = {DOUBLE}, toString(d), "
                 f"w = {BOOL}, if(b, 'true', 'false'), NULL)")
    count = (f"multiIf(w = {INT}, i, w = {DOUBLE} AND abs(d) < 9e18, toInt64(trunc(d)), "
             f"w = {STRING}, toInt64OrNull(trimBoth(s)), NULL)")
    cost = f"multiIf(w = {INT}, toFloat64(i), w = {DOUBLE}, d, NULL)"
    return [
        ("_names", _map_of(attributes, f"has({_array(NAME_KEYS)}, k) OR k = {session_attribute}", name_text)),
        ("_counts", _map_of(attributes, f"has({_array(COUNT_KEYS)}, k)", count)),
        ("_costs", _map_of(attributes, f"has({_array(COST_KEYS)}, k)", cost)),
    ]


def typed_columns(name: str, session_attribute: str) -> list[tuple[str, str]]:
    """(column, SQL expression) for the typed columns read straight from the maps of
    `wanted_maps`, plus the hints `operation_columns` decides from. Of several keys for
    one column, the first in the lists above wins."""
    def text(keys: tuple[str, ...]) -> str:
        return _first("_names", keys, "''")

    def tokens(keys: tuple[str, ...]) -> str:
        return f"toUInt64(greatest({_first('_counts', keys, '0')}, 0))"

    return [
        ("session_id", f"if({session_attribute} != '', coalesce(_names[{session_attribute}], {text(SESSION_KEYS)}), "
                       f"{text(SESSION_KEYS)})"),
        ("provider", text(PROVIDER_KEYS)),
        ("model", text(MODEL_KEYS)),
        ("input_tokens", tokens(INPUT_TOKEN_KEYS)),
        ("output_tokens", tokens(OUTPUT_TOKEN_KEYS)),
        ("cache_read_tokens", tokens(CACHE_READ_KEYS)),
        ("cache_write_tokens", tokens(CACHE_WRITE_KEYS)),
        ("reasoning_tokens", tokens(REASONING_KEYS)),
        ("reported_cost_usd", _first("_costs", COST_KEYS, "NULL")),
        ("tool_name", text(TOOL_NAME_KEYS)),
        ("tool_call_id", text(TOOL_CALL_ID_KEYS)),
        ("_declared_operation", _first("_names", OPERATION_KEYS, "''")),
        ("_openinference_kind", f"upper({text(('openinference.span.kind',))})"),
        ("_observation_type", text(("langfuse.observation.type",))),
        ("_mlflow_type", f"trimBoth({text(('mlflow.spanType',))}, '\"')"),
        ("_vercel_call", f"(startsWith({name}, 'ai.') AND (endsWith({name}, '.doGenerate') "
                         f"OR endsWith({name}, '.doStream')))"),
    ]


def operation_columns(name: str) -> list[tuple[str, str]]:
    """`operation` and `is_llm_call`, from the hints of `typed_columns` (a level below)."""
    oi_names = _array(tuple(OPENINFERENCE_OPERATIONS))
    oi_operations = _array(tuple(OPENINFERENCE_OPERATIONS.values()))
    declared = (f"if(_declared_operation != '', _declared_operation, "
                f"transform(_openinference_kind, {oi_names}, {oi_operations}, ''))")
    return [
        ("operation", f"multiIf({declared} != '', {declared}, _vercel_call, 'chat', "
                      f"{name} = 'ai.toolCall', 'execute_tool', _observation_type = 'generation', 'chat', '')"),
        ("is_llm_call", f"(has({_array(LLM_OPERATIONS)}, {declared}) "
                        f"OR ({declared} = '' AND _vercel_call) OR _openinference_kind = 'LLM' "
                        f"OR _observation_type = 'generation' OR _mlflow_type IN ('LLM', 'CHAT_MODEL'))"),
    ]
