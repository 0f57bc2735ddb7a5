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
    # The LangSmith SDK's OTel export writes a run's metadata as `langsmith.metadata.<key>`; LangSmith groups
    # a thread's traces by the first of these metadata keys (LangGraph copies `configurable.thread_id` there).
    # Not `langsmith.trace.session_id`: that is the LangSmith project the run was traced to.
    "langsmith.metadata.session_id",
    "langsmith.metadata.thread_id",
    "langsmith.metadata.conversation_id",
    # Firebase Genkit: an agent's session (`ai.defineAgent`), on each turn's root span only (mappers/genkit.py).
    "genkit:metadata:agent:sessionId",
)
OPERATION_KEYS = ("gen_ai.operation.name", "llm.request.type")
PROVIDER_KEYS = ("gen_ai.provider.name", "gen_ai.system", "llm.provider", "llm.system", "ai.model.provider",
                 "mlflow.llm.provider")
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
                    "ai.usage.inputTokenDetails.cacheWriteTokens", "gen_ai.usage.details.cache_write_tokens",
                    # Strands Agents' tracer's only name for them up to 1.53 (from 1.54 beside the first)
                    "gen_ai.usage.cache_write_input_tokens")
# After the first five, the keys the mappers read only where those are missing, in their order (migration 222 set the
# spans stored before): the GenAI conventions' other spelling (trajectory/mappers/otel_genai.py), AI SDK's usage
# breakdown (vercel_ai.py; AI SDK 7's GenAI integration writes only it, vercel_ai_otel_genai.py), pydantic-ai's
# provider-named usage details (Anthropic's, OpenAI's, Google's: pydantic_ai.py) and AG2's (ag2.py).
REASONING_KEYS = ("gen_ai.usage.reasoning.output_tokens", "llm.token_count.completion_details.reasoning",
                  "llm.usage.reasoning_tokens", "gen_ai.usage.reasoning_tokens", "ai.usage.reasoningTokens",
                  "gen_ai.usage.output_tokens.reasoning", "ai.usage.outputTokenDetails.reasoningTokens",
                  "gen_ai.usage.details.thinking_tokens", "gen_ai.usage.details.reasoning_tokens",
                  "gen_ai.usage.details.thoughts_tokens", "gen_ai.usage.thinking_tokens")
# The keys migration 222 added (trajectory/tables.py recomputes the column of the spans stored before that hold one).
REASONING_KEYS_ADDED_222 = REASONING_KEYS[5:]
# Of the prompt and completion tokens, the audio ones (an audio model bills them at rates of their own): OpenInference's
# (trajectory/mappers/openinference.py) and the GenAI conventions' per-modality count (otel_genai.py), first hit wins.
# Read by `spans.input_audio_tokens` / `output_audio_tokens` (trajectory/tables.py, migration 225), not here: only a
# few calls hold one, and a column computed as a span is stored costs the rest a key test.
INPUT_AUDIO_KEYS = ("llm.token_count.prompt_details.audio", "gen_ai.usage.audio.input_tokens")
OUTPUT_AUDIO_KEYS = ("llm.token_count.completion_details.audio", "gen_ai.usage.audio.output_tokens")
# OpenLIT's instrumentations' scopes (`openlit.instrumentation.openai`, …): their cost of 0 is no price.
OPENLIT_SCOPE_PREFIX = "openlit.instrumentation."
COST_KEYS = ("llm.cost.total", "gen_ai.usage.cost", "gen_ai.cost.total_cost")  # the last LiteLLM's
# Emitters that record a call's usage or cost as one JSON object rather than a key per figure: Langfuse
# (`usage_details`: its own keys, or the OpenAI usage object its `langfuse.openai` client sends) and MLflow
# (`tokenUsage`, `llm.cost`). Read after the flat keys, with the paths its mapper reads (trajectory/mappers/
# langfuse.py, mlflow.py), so that the list counts what the trajectory counts.
# The LangSmith SDK: LangChain's `usage_metadata`, which its tracer copies into an LLM run's metadata, the only
# place its cache and reasoning counts are recorded as JSON (`input_token_details`, `output_token_details`).
USAGE_JSON_KEYS = ("langfuse.observation.usage_details", "mlflow.chat.tokenUsage", "langsmith.metadata.usage_metadata")
# LiteLLM's own callback keeps its `Usage` object (cache reads and writes too, which under the default
# conventions no other key holds) as a Python repr: `{'prompt_tokens': 1900, 'cache_read_input_tokens': 1500, …}`.
# Numbers, None, booleans and nested dicts of them, so a repr made JSON by swapping the quotes and the literals.
# Read last (trajectory/mappers/litellm.py reads the same object).
PYTHON_USAGE_KEY = "metadata.usage_object"
# Haystack names no model, usage or operation in attributes: a chat generator's outputs (an agent step's
# `haystack.agent.step.llm` span, a pipeline's generator component) hold its replies, and the first reply's
# `meta` has the model and the provider's usage object (trajectory/mappers/haystack.py). Read only from spans
# named `haystack.*`.
HAYSTACK_OUTPUT_KEYS = ("haystack.agent.step.llm.output", "haystack.component.output")
COST_JSON_KEYS = (("langfuse.observation.cost_details", "total"), ("mlflow.llm.cost", "total_cost"))
_JSON_INPUT = ("prompt_tokens", "input_tokens", "promptTokens")  # these count cached prompt tokens too
_JSON_UNCACHED_INPUT = "input"  # Langfuse's own key: uncached prompt tokens only
_JSON_OUTPUT = ("output", "completion_tokens", "output_tokens", "completionTokens")
_JSON_OWN_OUTPUT = "output"  # Langfuse's own key: no reasoning tokens (its usage keys are exclusive, `total` their sum)
_JSON_OWN_REASONING = ("output_reasoning", "output_reasoning_tokens")
_JSON_CACHE_READ = ("input_cached_tokens", "cache_read_input_tokens", "input_cache_read", "cached_tokens",
                    "prompt_tokens_details.cached_tokens", "input_tokens_details.cached_tokens",
                    "input_token_details.cache_read")
_JSON_CACHE_WRITE = ("cache_creation_input_tokens", "input_cache_creation", "input_cache_write",
                     "input_token_details.cache_creation")
_JSON_REASONING = ("output_reasoning_tokens", "reasoning_tokens", "output_reasoning",
                   "completion_tokens_details.reasoning_tokens", "output_tokens_details.reasoning_tokens",
                   "output_token_details.reasoning")
# Strands Agents' tracer writes `AnthropicModel`'s prompt tokens without their cache tokens up to 1.57.1
# (Anthropic's `input_tokens`, with a `totalTokens` that leaves them out too). The `input_tokens` column adds them
# where trajectory/mappers/strands.py (`_usage`) does, by the same signs: an Anthropic API model id (`claude-…`) and
# a Strands older than 1.57.2 (cache tokens under their legacy names only: up to 1.53; or the version
# StrandsTelemetry's resource names).
STRANDS_SCOPE = "strands.telemetry.tracer"
_STRANDS_LEGACY_CACHE_ONLY = ("(_counts['gen_ai.usage.cache_read.input_tokens'] IS NULL "
                              "AND _counts['gen_ai.usage.cache_creation.input_tokens'] IS NULL)")
_STRANDS_VERSION = "splitByChar('.', extract(resource_attributes['service.version'], '^[0-9]+[.][0-9]+[.][0-9]+'))"
_STRANDS_BEFORE_1_57_2 = (f"({_STRANDS_LEGACY_CACHE_ONLY} OR (resource_attributes['service.name'] = "
                          f"'strands-agents' AND length({_STRANDS_VERSION}) = 3 "
                          f"AND arrayMap(x -> toUInt32(x), {_STRANDS_VERSION}) < [1, 57, 2]))")
# OpenLIT's Anthropic instrumentation writes Anthropic's `input_tokens`, which leave the cache reads and writes out
# whatever their size: the `input_tokens` column adds them, as trajectory/mappers/openlit_anthropic.py does (a test
# holds the two scopes equal: ingest imports nothing of trajectory/).
OPENLIT_ANTHROPIC_SCOPE = "openlit.instrumentation.anthropic"
# So does OpenLLMetry's Bedrock instrumentation: Bedrock's `inputTokens` (trajectory/mappers/openllmetry_bedrock.py).
OPENLLMETRY_BEDROCK_SCOPE = "opentelemetry.instrumentation.bedrock"
TOOL_NAME_KEYS = ("gen_ai.tool.name", "tool.name", "ai.toolCall.name", "haystack.tool.name")
TOOL_CALL_ID_KEYS = ("gen_ai.tool.call.id", "tool.id", "tool_call.id", "ai.toolCall.id")

# OpenLIT's ag2 instrumentation (`trajectory/mappers/openlit_ag2.SCOPE`, a test holds the two equal: ingest imports
# nothing of trajectory/) writes operation `chat` on every `ConversableAgent.send`, `receive` and `generate_reply` span,
# the last with made-up usage (`len(str(messages)) // 4`): none is a model call (the client's instrumentation records
# those). `is_llm_call` leaves the scope out; migration 219 corrected the spans stored before (trajectory/tables.py).
OPENLIT_AG2_SCOPE = "openlit.instrumentation.ag2"
NOT_OPENLIT_AG2 = f" AND scope_name != '{OPENLIT_AG2_SCOPE}'"  # what `is_llm_call` adds, after the rest

# LiteLLM writes its call type as the operation (trajectory/mappers/litellm.py, whose list of the call types
# that are a model generating must stay within this one: a test holds it).
LLM_OPERATIONS = ("chat", "text_completion", "generate_content", "completion", "acompletion", "atext_completion",
                  "responses", "aresponses", "anthropic_messages", "aanthropic_messages", "agenerate_content")
# Gemini CLI (trajectory/mappers/gemini_cli.py: SCOPE, LLM_CALL, a test holds them equal) declares its model requests
# as operation `llm_call`, no convention's: an LLM call in its scope only. Its tokens are the conventions' keys.
GEMINI_CLI_SCOPE = "gemini-cli"
GEMINI_CLI_LLM_CALL = "llm_call"
# Firebase Genkit (trajectory/mappers/genkit.py, whose names a test holds equal) writes no GenAI key: a model call is
# an action span of subtype `model` in its scope, its usage only inside its `genkit:output` JSON (the GenerateResponse's
# `usage`, keys of its own: prompt tokens with the cached ones counted, as `gen_ai.usage.input_tokens`), its model the
# provider's raw response's, else the action's name after the plugin's namespace (`openai/gpt-4o-mini`). The JSON is
# read only for such spans (every other span pays the scope comparison); the `generate` spans (type `util`), which
# restate the last call's usage, are no call.
GENKIT_SCOPE = "genkit-tracer"
GENKIT_TYPE, GENKIT_SUBTYPE = "genkit:type", "genkit:metadata:subtype"
GENKIT_NAME, GENKIT_OUTPUT = "genkit:name", "genkit:output"
GENKIT_INPUT_TOKENS, GENKIT_OUTPUT_TOKENS = "inputTokens", "outputTokens"
GENKIT_CACHE_READ_TOKENS, GENKIT_REASONING_TOKENS = "cachedContentTokens", "thoughtsTokens"

# openinference.span.kind -> gen_ai.operation.name
OPENINFERENCE_OPERATIONS = {"LLM": "chat", "TOOL": "execute_tool", "AGENT": "invoke_agent",
                            "EMBEDDING": "embeddings", "RETRIEVER": "retrieval", "CHAIN": "chain"}

NAME_KEYS = SESSION_KEYS + OPERATION_KEYS + PROVIDER_KEYS + MODEL_KEYS + TOOL_NAME_KEYS + TOOL_CALL_ID_KEYS + (
    "openinference.span.kind", "langfuse.observation.type", "mlflow.spanType", "langsmith.span.kind") + tuple(
    key for key, _ in COST_JSON_KEYS)
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


def wanted_maps(attributes: str, session_attribute: str, name: str, scope: str = "scope_name") -> list[tuple[str, str]]:
    """The small maps the typed columns are read from, from a span's attribute list (the
    `KeyValue` tuples of `ingest/export_schema.py`), the agent's session attribute
    override ('' for none), the span's name and its scope's name.

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
        # The first usage JSON object's text, '' for the usual span that has none (a column, so that the several
        # count columns reading it do not each plan the lookup again).
        ("_usage_json", "coalesce(" + ", ".join(
            f"nullIf(arrayElement({attributes}.value.string_value, indexOf({attributes}.key, {_literal(k)})), '')"
            for k in USAGE_JSON_KEYS)
            + f", {_python_usage(attributes)}, {_genkit_usage(attributes)}, "
            + f"{_haystack_reply(attributes, name, 'usage')})"),
        ("_haystack_model", _haystack_reply(attributes, name, "model")),
        # A Genkit model call (`GENKIT_SCOPE`), and its model, '' for any other span.
        ("_genkit_call", f"if({scope} = {_literal(GENKIT_SCOPE)}, {_string_of(attributes, GENKIT_SUBTYPE)} = 'model' "
                         f"AND {_string_of(attributes, GENKIT_TYPE)} = 'action', false)"),
        ("_genkit_model", f"if(_genkit_call, coalesce(nullIf(JSONExtractString("
                          f"{_string_of(attributes, GENKIT_OUTPUT)}, 'raw', 'model'), ''), "
                          f"arrayElement(splitByChar('/', {_string_of(attributes, GENKIT_NAME)}), -1)), '')"),
    ]


def _string_of(attributes: str, key: str) -> str:
    """The string value of the span's `key`, '' where it has none (or another type)."""
    return f"arrayElement({attributes}.value.string_value, indexOf({attributes}.key, {_literal(key)}))"


def _genkit_usage(attributes: str) -> str:
    """The `usage` object of a Genkit model call's output (`GENKIT_SCOPE`), NULL for any other span (a
    short-circuited `if`: the JSON is parsed only for those calls)."""
    return f"if(_genkit_call, nullIf(JSONExtractRaw({_string_of(attributes, GENKIT_OUTPUT)}, 'usage'), ''), NULL)"


def _python_usage(attributes: str) -> str:
    """`PYTHON_USAGE_KEY`'s repr as JSON, NULL for a span without it (a short-circuited `if`: most spans)."""
    text = f"arrayElement({attributes}.value.string_value, indexOf({attributes}.key, {_literal(PYTHON_USAGE_KEY)}))"
    as_json = text
    for python, json in (("'", '"'), ("None", "null"), ("True", "true"), ("False", "false")):
        as_json = f"replaceAll({as_json}, {_literal(python)}, {_literal(json)})"
    return f"if(has({attributes}.key, {_literal(PYTHON_USAGE_KEY)}), nullIf({as_json}, ''), NULL)"


def _haystack_reply(attributes: str, name: str, field: str) -> str:
    """The raw JSON of `field` in the first reply's `meta` of a Haystack chat generator's outputs, '' for any
    other span (a short-circuited `if`: the JSON is parsed only for spans named `haystack.*`)."""
    outputs = "coalesce(" + ", ".join(
        f"nullIf(arrayElement({attributes}.value.string_value, indexOf({attributes}.key, {_literal(k)})), '')"
        for k in HAYSTACK_OUTPUT_KEYS) + ", '')"
    reply_meta = f"JSONExtractRaw({outputs}, 'replies', 1, 'meta', {_literal(field)})"
    return f"if(startsWith({name}, 'haystack.'), {reply_meta}, '')"


def _json_path(path: str) -> str:
    return ", ".join(_literal(part) for part in path.split("."))


def _json_counts(paths: tuple[str, ...], genkit: str | None = None) -> str:
    """The first of `paths` (dotted: nested objects) holding an integer in the span's usage JSON (`_usage_json`
    of `wanted_maps`), or NULL; a Genkit call's own key `genkit` instead (its usage has keys of its own: read
    alone, so that the other emitters' usage JSON is searched for no more paths)."""
    found = f"coalesce({', '.join(f'JSONExtract(_usage_json, {_json_path(p)}, {_NULLABLE_INT})' for p in paths)})"
    if genkit is not None:
        found = f"if(_genkit_call, JSONExtract(_usage_json, {_literal(genkit)}, {_NULLABLE_INT}), {found})"
    return f"if(_usage_json = '', NULL, {found})"


_NULLABLE_INT = "'Nullable(Int64)'"


def _json_input() -> str:
    """Prompt tokens, cached ones included (as `gen_ai.usage.input_tokens` counts them): Langfuse's own `input`
    counts uncached ones only, so its cache reads and writes are added to it."""
    uncached = f"JSONExtract(_usage_json, {_literal(_JSON_UNCACHED_INPUT)}, 'Nullable(Int64)')"
    return (f"if(isNotNull({uncached}), {uncached} + coalesce({_json_counts(_JSON_CACHE_READ)}, 0) "
            f"+ coalesce({_json_counts(_JSON_CACHE_WRITE)}, 0), {_json_counts(_JSON_INPUT, GENKIT_INPUT_TOKENS)})")


def _json_output() -> str:
    """Completion tokens, reasoning ones included (as `gen_ai.usage.output_tokens` counts them): Langfuse's own
    `output` leaves them out (its LangChain CallbackHandler writes `output_reasoning` beside it), so they are added
    to it, as trajectory/mappers/langfuse.py does."""
    own = f"JSONExtract(_usage_json, {_literal(_JSON_OWN_OUTPUT)}, 'Nullable(Int64)')"
    reasoning = f"coalesce({_json_counts(_JSON_OWN_REASONING)}, 0)"
    counted = _json_counts(_JSON_OUTPUT, GENKIT_OUTPUT_TOKENS)
    return f"if(_usage_json = '', NULL, if(isNotNull({own}), {own} + {reasoning}, {counted}))"


def _strands_cache_left_out() -> str:
    """The cache tokens a Strands span's prompt tokens leave out (`STRANDS_SCOPE`), else 0."""
    cached = f"({_first('_counts', CACHE_READ_KEYS, '0')} + {_first('_counts', CACHE_WRITE_KEYS, '0')})"
    model = _first("_names", ("gen_ai.request.model",), "''")
    # Nested, so that other spans pay the scope's comparison alone.
    return (f"if(scope_name != {_literal(STRANDS_SCOPE)}, 0, if({cached} > 0 AND startsWith({model}, 'claude-') "
            f"AND {_STRANDS_BEFORE_1_57_2}, {cached}, 0))")


def _cache_left_out_by_scope() -> str:
    """The cache tokens an OpenLIT Anthropic or OpenLLMetry Bedrock call span's prompt tokens leave out
    (`OPENLIT_ANTHROPIC_SCOPE`, `OPENLLMETRY_BEDROCK_SCOPE`), else 0."""
    cached = f"({_first('_counts', CACHE_READ_KEYS, '0')} + {_first('_counts', CACHE_WRITE_KEYS, '0')})"
    scopes = f"{_literal(OPENLIT_ANTHROPIC_SCOPE)}, {_literal(OPENLLMETRY_BEDROCK_SCOPE)}"
    return f"if(scope_name NOT IN ({scopes}), 0, {cached})"


def typed_columns(name: str, session_attribute: str) -> list[tuple[str, str]]:
    """(column, SQL expression) for the typed columns read straight from the maps of
    `wanted_maps`, plus the hints `operation_columns` decides from. Of several keys for
    one column, the first in the lists above wins."""
    def text(keys: tuple[str, ...]) -> str:
        return _first("_names", keys, "''")

    def tokens(keys: tuple[str, ...], in_json: str) -> str:
        return f"toUInt64(greatest({_first('_counts', keys, f'coalesce({in_json}, 0)')}, 0))"

    json_cost = ", ".join(f"JSONExtract(coalesce(_names[{_literal(k)}], ''), {_literal(path)}, 'Nullable(Float64)')"
                          for k, path in COST_JSON_KEYS)
    reported = _first("_costs", COST_KEYS, f"coalesce({json_cost})")

    return [
        ("session_id", f"if({session_attribute} != '', coalesce(_names[{session_attribute}], {text(SESSION_KEYS)}), "
                       f"{text(SESSION_KEYS)})"),
        # MLflow writes every attribute as JSON: its model is a quoted string ('"gpt-4o"').
        ("provider", f"trimBoth({text(PROVIDER_KEYS)}, '\"')"),
        ("model", f"multiIf(_haystack_model != '', JSONExtractString(_haystack_model), "
                  f"_genkit_model != '', _genkit_model, trimBoth({text(MODEL_KEYS)}, '\"'))"),
        ("input_tokens", f"{tokens(INPUT_TOKEN_KEYS, _json_input())} "
                         f"+ toUInt64(greatest({_strands_cache_left_out()}, 0)) "
                         f"+ toUInt64(greatest({_cache_left_out_by_scope()}, 0))"),
        ("output_tokens", tokens(OUTPUT_TOKEN_KEYS, _json_output())),
        ("cache_read_tokens", tokens(CACHE_READ_KEYS, _json_counts(_JSON_CACHE_READ, GENKIT_CACHE_READ_TOKENS))),
        ("cache_write_tokens", tokens(CACHE_WRITE_KEYS, _json_counts(_JSON_CACHE_WRITE))),
        ("reasoning_tokens", tokens(REASONING_KEYS, _json_counts(_JSON_REASONING, GENKIT_REASONING_TOKENS))),
        # OpenLIT reports 0 where its pricing table has no price (a model it does not list, the table
        # unreachable): no price, as its mapper reads it (trajectory/mappers/openlit.py), not a free call.
        ("reported_cost_usd", f"if(startsWith(scope_name, {_literal(OPENLIT_SCOPE_PREFIX)}), nullIf({reported}, 0), "
                              f"{reported})"),
        ("tool_name", text(TOOL_NAME_KEYS)),
        ("tool_call_id", text(TOOL_CALL_ID_KEYS)),
        ("_declared_operation", _first("_names", OPERATION_KEYS, "''")),
        ("_openinference_kind", f"upper({text(('openinference.span.kind',))})"),
        ("_observation_type", text(("langfuse.observation.type",))),
        ("_mlflow_type", f"trimBoth({text(('mlflow.spanType',))}, '\"')"),
        # The LangSmith SDK writes a prompt template's run (`langsmith.span.kind` `prompt`) as operation `chat`
        # too (its `WELL_KNOWN_OPERATION_NAMES`); it calls no model (trajectory/mappers/langsmith.py).
        ("_langsmith_kind", text(("langsmith.span.kind",))),
        # An agent step's LLM span (without content tracing it has no attributes at all), or a component whose
        # first reply names its model: a chat generator's call.
        ("_haystack_call", f"({name} = 'haystack.agent.step.llm' OR _haystack_model != '')"),
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
        ("operation", f"multiIf({declared} != '', {declared}, _vercel_call OR _haystack_call OR _genkit_call, 'chat', "
                      f"{name} IN ('ai.toolCall', 'haystack.agent.step.tool'), 'execute_tool', "
                      f"_observation_type = 'generation', 'chat', '')"),
        ("is_llm_call", f"(has({_array(LLM_OPERATIONS)}, {declared}) AND _langsmith_kind != 'prompt' "
                        f"OR ({declared} = '' AND _vercel_call) OR _openinference_kind = 'LLM' "
                        f"OR _observation_type = 'generation' OR _mlflow_type IN ('LLM', 'CHAT_MODEL') "
                        f"OR _haystack_call OR _genkit_call OR (scope_name = {_literal(GEMINI_CLI_SCOPE)} "
                        f"AND _declared_operation = {_literal(GEMINI_CLI_LLM_CALL)})){NOT_OPENLIT_AG2}"),
    ]
