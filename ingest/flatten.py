"""The SQL that turns one row per export request into one row per span.

It runs inside ClickHouse, as the materialized view between the staging table
(`span_exports`, a Null table: nothing is kept there) and `spans`, so the
per-attribute work of ingest is vectorised C++ rather than Python. Attribute
lists become the lossless text and type maps of `evalkit/attributes.py`; values
over the cap are cut at a character boundary with their original length kept in
`truncated`; the typed columns come from `ingest/attribution.py`.

The view is planned again on every insert, so its SQL is kept small for the
analyser as well as cheap to run (see `span_rows`).
"""

from __future__ import annotations

from evalkit.ingest.attribution import operation_columns, typed_columns, wanted_maps
from evalkit.ingest.export_schema import ARRAY, BOOL, BYTES, DOUBLE, INT, KVLIST, STRING

SPAN_COLUMNS = (
    "agent_id", "trace_id", "span_id", "parent_span_id", "session_id", "name", "kind", "start_time",
    "end_time", "status_code", "status_message", "service_name", "scope_name", "scope_version",
    "operation", "provider", "model", "is_llm_call", "input_tokens", "output_tokens", "cache_read_tokens",
    "cache_write_tokens", "reasoning_tokens", "reported_cost_usd", "tool_name", "tool_call_id",
    "attributes", "payloads", "attribute_types", "truncated", "resource_attributes",
    "resource_attribute_types", "event_times", "event_names", "event_attributes", "event_attribute_types",
    "link_trace_ids", "link_span_ids", "link_attributes", "link_attribute_types", "received_at",
)

# ClickHouse's oneof presence number (ingest/export_schema.py) -> evalkit's stored type code
# (evalkit/attributes.py).
# none, string, bool, int, double, array (protobuf), kvlist (protobuf), bytes
_TYPE_CODES = "[1, 1, 4, 2, 3, 8, 9, 5]"
_CUT = ("t -> if(length(t) <= max_attribute_bytes, t, multiIf("
        "isValidUTF8(left(t, max_attribute_bytes)), left(t, max_attribute_bytes), "
        "isValidUTF8(left(t, max_attribute_bytes - 1)), left(t, max_attribute_bytes - 1), "
        "isValidUTF8(left(t, max_attribute_bytes - 2)), left(t, max_attribute_bytes - 2), "
        "left(t, max_attribute_bytes - 3)))")


# The lambdas below take an attribute list's parts (`list.key`, `list.value.string_value`, ...)
# as separate arrays: the analyser then works with plain types, which keeps the per-insert
# cost of planning this view small.

def texts(attributes: str) -> str:
    """Array of an attribute list's values as stored text."""
    v = f"{attributes}.value"
    return (f"arrayMap((w, s, i, d, b, y, a, l) -> multiIf(w = {STRING}, s, w = {INT}, toString(i), "
            f"w = {DOUBLE}, toString(d), w = {BOOL}, if(b, 'true', 'false'), w = {BYTES}, base64Encode(y), "
            f"w = {ARRAY}, base64Encode(a), w = {KVLIST}, base64Encode(l), ''), "
            f"{v}.value, {v}.string_value, {v}.int_value, {v}.double_value, {v}.bool_value, {v}.bytes_value, "
            f"{v}.array_value, {v}.kvlist_value)")


def cut(texts_array: str) -> str:
    """Each text cut to at most max_attribute_bytes, never inside a character."""
    return f"arrayMap({_CUT}, {texts_array})"


def type_map(attributes: str) -> str:
    """Map(key, type code) of the values that are not strings."""
    kinds = f"{attributes}.value.value"
    return (f"mapFromArrays(arrayFilter((k, w) -> w != {STRING}, {attributes}.key, {kinds}), "
            f"arrayMap(w -> arrayElement({_TYPE_CODES}, w + 1), arrayFilter(w -> w != {STRING}, {kinds})))")


def text_map(attributes: str) -> str:
    """Map(key, text) of an attribute list kept whole (resource, event, link), values cut."""
    return f"mapFromArrays({attributes}.key, {cut(texts(attributes))})"


def _unless_empty(array: str, expression: str) -> str:
    # Most spans have no events or links: skip the lambdas for them.
    return f"if(empty({array}), [], {expression})"


def _aliased(columns: list[tuple[str, str]], indent: str) -> str:
    return f",\n{indent}".join(f"{expression} AS {column}" for column, expression in columns)


def span_rows() -> str:
    """SELECT over `{source}` (the staging table) producing the columns of `spans`.

    Two levels: per span, the attribute texts and the small maps attribution reads; then
    the columns of `spans` from those. ClickHouse plans the view again for every insert, so
    no large expression is referenced by alias more than once (an alias is re-planned
    wherever it is used): what several columns read is a column of the inner level."""
    maps = _aliased(wanted_maps("span.attributes", "session_attribute", "span.name"), "        ")
    typed = _aliased(typed_columns("name", "session_attribute"), "    ")
    operation = _aliased(operation_columns("name"), "    ")
    return f"""
SELECT {", ".join(SPAN_COLUMNS)} FROM (
SELECT
    agent_id, received_at, resource_attributes, resource_attribute_types, service_name, scope_name,
    scope_version, trace_id, span_id, parent_span_id, name, kind, start_time, end_time, status_code,
    status_message, attribute_types, event_times, event_names, event_attributes, event_attribute_types,
    link_trace_ids, link_span_ids, link_attributes, link_attribute_types,
    {cut('_full_texts')} AS _cut_texts,
    mapFromArrays(arrayFilter((k, t) -> length(t) < payload_threshold_bytes, _keys, _cut_texts),
                  arrayFilter(t -> length(t) < payload_threshold_bytes, _cut_texts)) AS attributes,
    mapFromArrays(arrayFilter((k, t) -> length(t) >= payload_threshold_bytes, _keys, _cut_texts),
                  arrayFilter(t -> length(t) >= payload_threshold_bytes, _cut_texts)) AS payloads,
    mapFromArrays(arrayFilter((k, t) -> length(t) > max_attribute_bytes, _keys, _full_texts),
                  arrayMap(t -> toUInt64(length(t)), arrayFilter(t -> length(t) > max_attribute_bytes, _full_texts)))
        AS truncated,
    {typed},
    {operation}
FROM (
    SELECT
        agent_id, session_attribute, max_attribute_bytes, payload_threshold_bytes,
        fromUnixTimestamp64Milli(toInt64(received_ms), 'UTC') AS received_at,
        {text_map('resource.resource.attributes')} AS resource_attributes,
        {type_map('resource.resource.attributes')} AS resource_attribute_types,
        arrayElement(resource.resource.attributes.value.string_value,
                     indexOf(resource.resource.attributes.key, 'service.name')) AS service_name,
        scope.scope.name AS scope_name,
        scope.scope.version AS scope_version,
        lower(hex(span.trace_id)) AS trace_id,
        lower(hex(span.span_id)) AS span_id,
        lower(hex(span.parent_span_id)) AS parent_span_id,
        span.name AS name,
        toUInt8(span.kind) AS kind,
        fromUnixTimestamp64Nano(toInt64(span.start_time_unix_nano), 'UTC') AS start_time,
        fromUnixTimestamp64Nano(toInt64(span.end_time_unix_nano), 'UTC') AS end_time,
        toUInt8(span.status.code) AS status_code,
        span.status.message AS status_message,
        span.attributes.key AS _keys,
        {texts('span.attributes')} AS _full_texts,
        {type_map('span.attributes')} AS attribute_types,
        {maps},
        arrayMap(t -> fromUnixTimestamp64Nano(toInt64(t), 'UTC'), span.events.time_unix_nano) AS event_times,
        span.events.name AS event_names,
        {_unless_empty('span.events', f"arrayMap(e -> {text_map('e.attributes')}, span.events)")}
            AS event_attributes,
        {_unless_empty('span.events', f"arrayMap(e -> {type_map('e.attributes')}, span.events)")}
            AS event_attribute_types,
        arrayMap(x -> lower(hex(x)), span.links.trace_id) AS link_trace_ids,
        arrayMap(x -> lower(hex(x)), span.links.span_id) AS link_span_ids,
        {_unless_empty('span.links', f"arrayMap(l -> {text_map('l.attributes')}, span.links)")}
            AS link_attributes,
        {_unless_empty('span.links', f"arrayMap(l -> {type_map('l.attributes')}, span.links)")}
            AS link_attribute_types
    FROM {{source}}
    ARRAY JOIN resource_spans AS resource
    ARRAY JOIN resource.scope_spans AS scope
    ARRAY JOIN scope.spans AS span
)
)"""
