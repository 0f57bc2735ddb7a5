"""Token prices: the user's `prices.yaml` first, then the pinned `genai-prices` snapshot.

`genai-prices` is used only as installed (its bundled data); nothing is fetched at run time.
A `prices.yaml`:

    rules:
      - provider: "openai"        # shell glob on the normalised provider id, default "*"
        model: "gpt-4o*"          # shell glob on the model id (as sent, or normalised)
        input: 2.5                # USD per million prompt tokens not read from / written to cache
        output: 10                # USD per million completion tokens (reasoning included)
        cache_read: 1.25          # optional, defaults to input
        cache_write: 3.125        # optional, defaults to input
        input_audio: 40           # optional, USD per million audio prompt tokens, defaults to input
        output_audio: 80          # optional, USD per million audio completion tokens, defaults to output
        web_search: 10            # optional, USD per thousand web searches the provider ran, defaults to 0
        valid_from: 2025-01-01    # optional; the newest rule in force at the call's time wins
"""

from __future__ import annotations

import fnmatch
import hashlib
import json
import re
import warnings
from dataclasses import dataclass
from datetime import UTC, date, datetime
from decimal import Decimal
from functools import lru_cache
from pathlib import Path
from typing import Any, NamedTuple

import genai_prices
import yaml
from pydantic import BaseModel, ConfigDict, Field

GENAI_PRICES_SOURCE = f"genai-prices@{genai_prices.__version__}"
PRICE_FILE_SOURCE = "prices.yaml"
_MILLION = Decimal(1_000_000)

# Provider ids as emitters write them -> genai-prices provider ids.
PROVIDER_ALIASES: dict[str, str] = {
    "gcp.gen_ai": "google",
    "gcp.vertex_ai": "google",
    "gcp.gemini": "google",
    "vertex_ai": "google",
    "vertexai": "google",
    "gemini": "google",
    "google.generative-ai": "google",
    "google.vertex": "google",
    "x_ai": "x-ai",
    "xai": "x-ai",
    "azure.ai.inference": "azure",
    "azure.ai.openai": "azure",
    "az.ai.inference": "azure",
    "az.ai.openai": "azure",
    "azure_openai": "azure",
    "aws.bedrock": "aws",
    "bedrock": "aws",
    "amazon-bedrock": "aws",
    "mistral_ai": "mistral",
    "mistralai": "mistral",
    "moonshot_ai": "moonshotai",
    "moonshot": "moonshotai",
    "together_ai": "together",
    "together-ai": "together",
    "fireworks_ai": "fireworks",
    "ibm.watsonx.ai": "ibm",
    "z_ai": "zai",
}
_DATE_SUFFIX = re.compile(r"([-@](\d{4}-\d{2}-\d{2}|\d{8}))$")
# An Amazon Bedrock model id: the vendor, a dot, the vendor's model, Bedrock's version (`anthropic.claude-sonnet-4-5-
# 20250929-v1:0`), a cross-region inference profile's with its geography first (`us.`, `eu.`, `global.`, ...). No
# emitter names Bedrock beside it (Strands' spans say `strands-agents`), and genai-prices infers no provider from it,
# so it names the provider itself: Bedrock's own price for it (`aws`: a regional profile's dearer than a global one's),
# else the vendor's for the vendor's model.
_BEDROCK_MODEL = re.compile(
    r"(?:(?:us|us-gov|eu|apac|au|ca|jp|global)\.)?"
    r"(anthropic|amazon|meta|mistral|cohere|ai21|deepseek|openai|qwen|writer|moonshotai|minimax)"
    r"\.([a-z0-9][a-z0-9.-]*?)(?:-v\d+(?::\d+)?|-\d+:\d+)?")


def normalise_provider(provider: str | None) -> str | None:
    """`openai.chat` (Vercel AI SDK) -> `openai`, `gcp.gen_ai` -> `google`, `x_ai` -> `x-ai`, ..."""
    if not provider:
        return None
    value = provider.strip().lower()
    if value in PROVIDER_ALIASES:
        return PROVIDER_ALIASES[value]
    head = value.split(".", 1)[0]
    if "." in value and head in {
        "openai",
        "anthropic",
        "google",
        "mistral",
        "cohere",
        "groq",
        "deepseek",
        "xai",
    }:
        return PROVIDER_ALIASES.get(head, head)
    return value


def model_candidates(model: str) -> list[tuple[str, str | None]]:
    return list(_model_candidates(model))


@lru_cache(maxsize=4096)
def _model_candidates(model: str) -> tuple[tuple[str, str | None], ...]:
    """Ways to write a model id, most literal first, each with the provider its prefix names.

    `openai/gpt-4o-2024-08-06` -> (`openai/gpt-4o-2024-08-06`, None), (`gpt-4o-2024-08-06`, `openai`),
    (`gpt-4o`, `openai`); `models/gemini-2.5-flash` -> (`gemini-2.5-flash`, None).
    """
    candidates: list[tuple[str, str | None]] = []

    def add(name: str, provider: str | None) -> None:
        if name and (name, provider) not in candidates:
            candidates.append((name, provider))

    value = model.strip()
    add(value, None)
    provider_hint: str | None = None
    bare = value
    if bare.startswith("models/"):
        bare = bare.removeprefix("models/")
    elif "/" in bare:
        prefix, _, rest = bare.rpartition("/")
        provider_hint = normalise_provider(prefix.split("/")[-1])
        bare = rest
    bedrock = _BEDROCK_MODEL.fullmatch(bare)
    if bedrock:
        add(bare, "aws")  # whatever a prefix named (LiteLLM's `bedrock/converse/…`): the id is Bedrock's
        vendor_model = bedrock.group(2)
        add(vendor_model, bedrock.group(1))
        add(_DATE_SUFFIX.sub("", vendor_model), bedrock.group(1))
        return tuple(candidates)
    if ":" in bare and not bare.endswith(":"):
        # `openai:gpt-4o` (pydantic-ai).
        head, _, tail = bare.partition(":")
        if re.fullmatch(r"[a-z_-]+", head):
            provider_hint = provider_hint or normalise_provider(head)
            bare = tail
    add(bare, provider_hint)
    undated = _DATE_SUFFIX.sub("", bare)
    add(undated, provider_hint)
    return tuple(candidates)


# Named tuples, not dataclasses: a session's pricing makes one of each per LLM call, and a frozen
# dataclass costs ~1 µs to make against ~0.2 µs for a tuple.
class TokenCounts(NamedTuple):
    prompt_tokens: int  # every prompt token, cached and cache-written included
    completion_tokens: int
    cached_tokens: int = 0
    cache_write_tokens: int = 0
    # Of prompt_tokens and completion_tokens, the audio ones (an audio model bills them at rates of their own:
    # genai-prices' `input_audio_tokens`, `output_audio_tokens`; a model with no audio rate prices them as text).
    input_audio_tokens: int = 0
    output_audio_tokens: int = 0
    # The web searches the provider ran within the answer (genai-prices' `web_searches`, priced per thousand).
    web_searches: int = 0


class PricedCost(NamedTuple):
    usd: Decimal
    source: str  # "prices.yaml" | "genai-prices@<version>"
    model: str  # the model id that matched
    provider: str | None


class PriceRule(BaseModel):
    model_config = ConfigDict(extra="forbid")

    provider: str = "*"
    model: str
    input: Decimal = Field(ge=0, description="USD per million uncached prompt tokens")
    output: Decimal = Field(ge=0, description="USD per million completion tokens")
    cache_read: Decimal | None = Field(default=None, ge=0)
    cache_write: Decimal | None = Field(default=None, ge=0)
    input_audio: Decimal | None = Field(default=None, ge=0, description="USD per million audio prompt tokens")
    output_audio: Decimal | None = Field(default=None, ge=0, description="USD per million audio completion tokens")
    web_search: Decimal | None = Field(default=None, ge=0, description="USD per thousand web searches")
    valid_from: date | datetime | None = None

    def matches(self, provider: str | None, models: list[str] | tuple[str, ...], when: datetime) -> bool:
        return self.names(provider, models) and self.starts() <= when

    def names(self, provider: str | None, models: list[str] | tuple[str, ...]) -> bool:
        """Whether the rule is for this provider and model, at whatever time."""
        if not fnmatch.fnmatchcase(provider or "", self.provider.lower()) and self.provider != "*":
            return False
        return any(fnmatch.fnmatchcase(model.lower(), self.model.lower()) for model in models)

    def starts(self) -> datetime:
        if self.valid_from is None:
            return datetime.min.replace(tzinfo=UTC)
        if isinstance(self.valid_from, datetime):
            return self.valid_from if self.valid_from.tzinfo else self.valid_from.replace(tzinfo=UTC)
        return datetime(self.valid_from.year, self.valid_from.month, self.valid_from.day, tzinfo=UTC)

    def cost(self, tokens: TokenCounts) -> Decimal:
        cache_read = self.input if self.cache_read is None else self.cache_read
        cache_write = self.input if self.cache_write is None else self.cache_write
        # Audio tokens are counted within the prompt's and the completion's; the rest of the prompt is split as before.
        audio_in = min(tokens.input_audio_tokens, tokens.prompt_tokens)
        audio_out = min(tokens.output_audio_tokens, tokens.completion_tokens)
        uncached = max(0, tokens.prompt_tokens - audio_in - tokens.cached_tokens - tokens.cache_write_tokens)
        total = (
            uncached * self.input
            + tokens.cached_tokens * cache_read
            + tokens.cache_write_tokens * cache_write
            + audio_in * (self.input if self.input_audio is None else self.input_audio)
            + (tokens.completion_tokens - audio_out) * self.output
            + audio_out * (self.output if self.output_audio is None else self.output_audio)
        )
        if tokens.web_searches and self.web_search:
            return total / _MILLION + tokens.web_searches * self.web_search / 1000
        return total / _MILLION


@dataclass(frozen=True)
class RateBound:
    """USD that pricing a session's calls of one model can come to at most, whenever they ran: `prompt` per
    prompt token (uncached, cache-read or cache-written, whichever is dearest), `completion` per completion
    token, plus `request` once (a per-request price, charged once per model as the list prices a session's
    calls together), plus `search` per web search. The list by cost reads sessions in the order of this bound
    (trajectory/session_list.py).
    """

    prompt: Decimal
    completion: Decimal
    request: Decimal = Decimal(0)
    search: Decimal = Decimal(0)  # per web search the provider ran

    def at_most(self, prompt_tokens: int, completion_tokens: int, web_searches: int = 0) -> Decimal:
        return prompt_tokens * self.prompt + completion_tokens * self.completion + web_searches * self.search \
            + self.request


NO_PRICE = RateBound(Decimal(0), Decimal(0))


class PriceFile(BaseModel):
    model_config = ConfigDict(extra="forbid")

    rules: list[PriceRule] = Field(default_factory=list)


class PriceBook:
    """Looks prices up: user rules first, then genai-prices (unless disabled)."""

    def __init__(self, rules: list[PriceRule] | None = None, *, use_genai_prices: bool = True) -> None:
        self.rules = list(rules or [])
        self.use_genai_prices = use_genai_prices
        # (model, provider) as a step names them -> what pricing them needs that does not depend on the
        # call: a session asks about a few models thousands of times.
        self._lookups: dict[tuple[str, str | None], _Lookup] = {}

    def fingerprint(self) -> str:
        """What the book prices by, as text: rows priced with another book's fingerprint are priced again
        (the session list's kept rows, trajectory/session_rows.py)."""
        rules = [rule.model_dump(mode="json") for rule in self.rules]
        source = GENAI_PRICES_SOURCE if self.use_genai_prices else "no genai-prices"
        digest = hashlib.sha256(json.dumps([rules, source], sort_keys=True).encode()).hexdigest()
        return digest[:32]

    @classmethod
    def from_yaml(cls, text: str, *, use_genai_prices: bool = True) -> PriceBook:
        data: Any = yaml.safe_load(text) or {}
        return cls(PriceFile.model_validate(data).rules, use_genai_prices=use_genai_prices)

    @classmethod
    def from_file(cls, path: str | Path, *, use_genai_prices: bool = True) -> PriceBook:
        return cls.from_yaml(Path(path).read_text(encoding="utf-8"), use_genai_prices=use_genai_prices)

    def cost(
        self, tokens: TokenCounts, model: str, provider: str | None, when: datetime | None = None
    ) -> PricedCost | None:
        """The cost of one call, or None when nobody prices this model (never a guessed $0)."""
        when = when or datetime.now(UTC)
        lookup = self._lookups.get((model, provider))
        if lookup is None:
            lookup = self._lookup(model, provider)
        if lookup.named:
            matching = [rule for rule in lookup.named if rule.starts() <= when]
            if matching:
                # Newest rule in force wins; among equals, the first written.
                rule = max(reversed(matching), key=lambda r: r.starts())
                return PricedCost(rule.cost(tokens), PRICE_FILE_SOURCE, model, lookup.rule_provider)
        if self.use_genai_prices:
            snapshot = genai_prices.data_snapshot.get_snapshot()
            if lookup.resolved_in != id(snapshot):
                lookup.resolved = _resolve(snapshot, tuple(lookup.candidates), lookup.provider_id)
                lookup.resolved_in = id(snapshot)
            if lookup.resolved is None:
                return None
            try:
                return _resolved_cost(tokens, lookup.resolved, lookup.candidates, lookup.provider_id, when)
            except ValueError:
                if not (tokens.input_audio_tokens or tokens.output_audio_tokens):
                    raise
                # A usage genai-prices asks more of for this model's audio (a Realtime model's cached tokens with
                # audio ones: how many of the cached were audio, which no emitter records): its audio priced as text,
                # as before audio had rates of its own.
                return _resolved_cost(tokens._replace(input_audio_tokens=0, output_audio_tokens=0), lookup.resolved,
                                      lookup.candidates, lookup.provider_id, when)
        return None

    def rate_bound(self, model: str, provider: str | None) -> RateBound | None:
        """An upper bound of what `cost` charges for this model's tokens (`RateBound`), or None where this
        book's price for it changes over time or is not linear in the tokens (then no bound is given: the
        list prices every session). A model nobody prices bounds at 0: a call of it leaves its session
        unpriced (listed last), never dearer."""
        if not model:
            return NO_PRICE
        lookup = self._lookups.get((model, provider)) or self._lookup(model, provider)
        if lookup.named:
            if any(rule.valid_from is not None for rule in lookup.named):
                return None  # a dated rule: before it, another rule or genai-prices applies
            return RateBound(max(max(rule.input, rule.cache_read or rule.input, rule.cache_write or rule.input,
                                     rule.input_audio or rule.input) for rule in lookup.named) / _MILLION,
                             max(max(rule.output, rule.output_audio or rule.output)
                                 for rule in lookup.named) / _MILLION,
                             search=max((rule.web_search or Decimal(0)) for rule in lookup.named) / 1000)
        if not self.use_genai_prices:
            return NO_PRICE
        resolved = _resolve(genai_prices.data_snapshot.get_snapshot(), tuple(lookup.candidates), lookup.provider_id)
        if resolved is None:
            return NO_PRICE
        _, provider_info, model_info = resolved
        if not isinstance(model_info.prices, genai_prices.types.ModelPrice) \
                or not _FastPricer._applies(provider_info, model_info):
            return None  # conditional prices (by date, by time of day) or a non-linear one
        plan = _make_plan(model_info.prices)
        return None if plan is None else _plan_bound(plan)

    def _lookup(self, model: str, provider: str | None) -> _Lookup:
        provider_id = normalise_provider(provider)
        candidates = _model_candidates(model)
        names = tuple(name for name, _ in candidates)
        hint = next((hinted for _, hinted in candidates if hinted), None)
        rule_provider = provider_id or hint
        named = [rule for rule in self.rules if rule.names(rule_provider, names)]
        lookup = _Lookup(provider_id, list(candidates), rule_provider, named)
        if len(self._lookups) >= _CACHE_LIMIT:
            self._lookups.clear()  # model ids come from spans: bound what a stream of odd ones can pin
        self._lookups[(model, provider)] = lookup
        return lookup


@dataclass
class _Lookup:
    """What pricing a (model, provider) needs whatever the call: the rules naming it, genai-prices' spellings."""

    provider_id: str | None  # the normalised provider, for genai-prices
    candidates: list[tuple[str, str | None]]  # the model's spellings, most literal first
    rule_provider: str | None  # the provider the price file's rules are matched against
    named: list[PriceRule]  # the price file's rules for it, at whatever time
    # What `_resolve` found for it in the snapshot whose id() is `resolved_in` (None: not asked yet).
    resolved: tuple[str, Any, Any] | None = None
    resolved_in: int | None = None


def _genai_prices_cost(
    tokens: TokenCounts, candidates: list[tuple[str, str | None]], provider_id: str | None, when: datetime
) -> PricedCost | None:
    snapshot = genai_prices.data_snapshot.get_snapshot()
    resolved = _resolve(snapshot, tuple(candidates), provider_id)
    if resolved is None:
        return None
    return _resolved_cost(tokens, resolved, candidates, provider_id, when)


def _resolved_cost(
    tokens: TokenCounts, resolved: tuple[str, Any, Any], candidates: list[tuple[str, str | None]],
    provider_id: str | None, when: datetime,
) -> PricedCost | None:
    """`_genai_prices_cost` once `_resolve` has found the model (`resolved`)."""
    name, provider, model = resolved
    usd = _FAST.price(provider, model, tokens, when)
    if usd is None:
        # Not one the fast path takes (or the first call of its kind): genai-prices itself, which
        # also raises what it raises for usage it rejects.
        usage = genai_usage(tokens)
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                calculation = model.calc_price(usage, provider, genai_request_timestamp=when)
        except LookupError:
            # `calc_price` would have gone on to the next spelling: do exactly that.
            return genai_prices_cost_reference(tokens, candidates, provider_id, when)
        usd = Decimal(calculation.total_price)
        _FAST.learn(provider, model, tokens, when, usd)
    return PricedCost(usd, GENAI_PRICES_SOURCE, name, provider.id)


def genai_usage(tokens: TokenCounts) -> Any:
    """The counts as a `genai_prices.Usage` (a count of 0 as absent, as genai-prices' own extractors give it)."""
    return genai_prices.Usage(
        input_tokens=tokens.prompt_tokens,
        output_tokens=tokens.completion_tokens,
        cache_read_tokens=tokens.cached_tokens or None,
        cache_write_tokens=tokens.cache_write_tokens or None,
        input_audio_tokens=tokens.input_audio_tokens or None,
        output_audio_tokens=tokens.output_audio_tokens or None,
        web_searches=tokens.web_searches or None,
    )


def genai_prices_cost_reference(
    tokens: TokenCounts, candidates: list[tuple[str, str | None]], provider_id: str | None, when: datetime
) -> PricedCost | None:
    """genai-prices asked afresh for every call, spelling by spelling: what `_genai_prices_cost` must equal."""
    usage = genai_usage(tokens)
    for name, provider in _attempts(candidates, provider_id):
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                calculation = genai_prices.calc_price(
                    usage, name, provider_id=provider, genai_request_timestamp=when
                )
        except LookupError:
            continue
        return PricedCost(
            Decimal(calculation.total_price), GENAI_PRICES_SOURCE, name, calculation.provider.id
        )
    return None


_CACHE_LIMIT = 10_000
# (candidates, provider) -> (the model id that matched, genai-prices Provider, ModelInfo), or None when no
# spelling is known. Keyed on the snapshot too, in case someone installs a custom one.
_RESOLVED: dict[tuple[int, tuple[tuple[str, str | None], ...], str | None], tuple[str, Any, Any] | None] = {}


def _resolve(
    snapshot: Any, candidates: tuple[tuple[str, str | None], ...], provider_id: str | None
) -> tuple[str, Any, Any] | None:
    """The first (model spelling, provider) genai-prices knows, tried in the order `calc_price` was tried.

    A miss is not cached by genai-prices (each one re-scans every provider's models), and a
    session asks for the same few models thousands of times.
    """
    key = (id(snapshot), candidates, provider_id)
    if key in _RESOLVED:
        return _RESOLVED[key]
    found: tuple[str, Any, Any] | None = None
    for name, provider in _attempts(list(candidates), provider_id):
        try:
            provider_info, model_info = snapshot.find_provider_model(name, None, provider, None)
        except LookupError:
            continue
        found = (name, provider_info, model_info)
        break
    if len(_RESOLVED) >= _CACHE_LIMIT:
        _RESOLVED.clear()  # model ids come from spans: bound what a stream of odd ones can pin
    _RESOLVED[key] = found
    return found


def _attempts(candidates: list[tuple[str, str | None]], provider_id: str | None) -> list[tuple[str, str | None]]:
    """(model spelling, provider) pairs in the order genai-prices is asked about them."""
    attempts: list[tuple[str, str | None]] = []
    for name, hint in candidates:
        for provider in (provider_id, hint):
            if provider and (name, provider) not in attempts:
                attempts.append((name, provider))
    if provider_id is None or not _known_provider(provider_id):
        # Unknown or absent provider: let genai-prices infer it from the model id.
        attempts.extend((name, None) for name, _ in candidates)
    return attempts


# genai-prices' usage keys of `TokenCounts`' counts, in its order.
_USAGE_KEYS = ("input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens", "input_audio_tokens",
               "output_audio_tokens", "web_searches")
_Vector = tuple[int, int, int, int, int, int, int]


def _usage_vector(tokens: TokenCounts) -> _Vector | None:
    """The counts as genai-prices' usage keys; None when one is not a non-negative int (genai-prices decides)."""
    v0, v1, v2, v3, v4, v5, v6 = tokens
    if (type(v0) is int and v0 >= 0 and type(v1) is int and v1 >= 0 and type(v2) is int and v2 >= 0
            and type(v3) is int and v3 >= 0
            # Most calls count no audio and no search: those three are then not looked at again (`plan_cost`).
            and (not (v4 or v5 or v6) or (type(v4) is int and v4 >= 0 and type(v5) is int and v5 >= 0
                                          and type(v6) is int and v6 >= 0))):
        return tokens
    return None


@dataclass(frozen=True)
class _Plan:
    """How genai-prices prices one `ModelPrice`, worked out once: per priced unit, its rate and its count
    as a linear function of the usage counts we report (`_USAGE_KEYS`)."""

    model_price: Any  # kept so its id() is not reused while the plan is cached
    # (price, coefficients of the count, or None for a per-request price, per): genai-prices' unit order.
    # `per` as a Decimal when the price is one: dividing by an int converts it exactly, every time.
    units: tuple[tuple[Any, tuple[int, ...] | None, int | Decimal], ...]
    # The same with the coefficients of the four token counts alone, for a call of no audio and no search.
    text_units: tuple[tuple[Any, tuple[int, ...] | None, int | Decimal], ...] = ()


class _FastPricer:
    """genai-prices' arithmetic without its per-call bookkeeping: same Decimals, ~50x less work.

    `ModelPrice.calc_price` re-derives, on every call, which units the model prices, checks
    their coverage, and splits the usage into leaf counts (input tokens not read from or written
    to cache, ...) through a generic unit registry. All of that depends only on the price and on
    which counts are non-zero (genai-prices rejects some combinations, e.g. audio-priced models
    given cached tokens); the leaf counts are integer-linear in the counts. So per (price, which
    counts are non-zero) the first call goes through genai-prices, and its structure is kept
    when it succeeded and the plan reproduces its result; later calls compute
    `sum(rate * leaf_count / per)` in genai-prices' own order, with its own Decimal operations.
    """

    def __init__(self) -> None:
        self.plans: dict[tuple[int, bool, bool, bool, bool, bool, bool, bool], _Plan | None] = {}

    @staticmethod
    def _applies(provider: Any, model: Any) -> bool:
        # genai-prices bills groq's whisper models by a 10-second minimum: not linear, so not here.
        return not (provider.id == "groq" and model.id in ("whisper-large-v3", "whisper-large-v3-turbo"))

    def price(self, provider: Any, model: Any, tokens: TokenCounts, when: datetime) -> Decimal | None:
        if _usage_vector(tokens) is None or not self._applies(provider, model):
            return None
        v0, v1, v2, v3, v4, v5, v6 = tokens
        plan = self.plans.get((id(model.get_prices(when)), v0 > 0, v1 > 0, v2 > 0, v3 > 0, v4 > 0, v5 > 0, v6 > 0))
        if plan is None:
            return None
        return plan_cost(plan, tokens)

    def learn(self, provider: Any, model: Any, tokens: TokenCounts, when: datetime, usd: Decimal) -> None:
        """After genai-prices priced a call: keep the plan for calls like it, if it reproduces `usd`."""
        vector = _usage_vector(tokens)
        if vector is None or not self._applies(provider, model):
            return
        model_price = model.get_prices(when)
        v0, v1, v2, v3, v4, v5, v6 = vector
        key = (id(model_price), v0 > 0, v1 > 0, v2 > 0, v3 > 0, v4 > 0, v5 > 0, v6 > 0)
        if key in self.plans:
            return
        if len(self.plans) >= _CACHE_LIMIT:
            self.plans.clear()
        plan = _make_plan(model_price)
        if plan is not None and plan_cost(plan, vector) != usd:
            plan = None  # never expected; genai-prices stays the answer for this kind of call
        self.plans[key] = plan


def plan_cost(plan: _Plan, vector: _Vector) -> Decimal | None:
    total = Decimal(0)
    v0, v1, v2, v3, v4, v5, v6 = vector
    text = not (v4 or v5 or v6)
    for price, coefficients, per in plan.text_units if text else plan.units:
        if coefficients is None:
            count = 1  # a per-request price
        else:
            if text:
                c0, c1, c2, c3 = coefficients
                count = c0 * v0 + c1 * v1 + c2 * v2 + c3 * v3
            else:
                c0, c1, c2, c3, c4, c5, c6 = coefficients
                count = c0 * v0 + c1 * v1 + c2 * v2 + c3 * v3 + c4 * v4 + c5 * v5 + c6 * v6
            if count < 0:
                return None  # more cached than prompt tokens & co: genai-prices says what is wrong
        if type(price) is Decimal:
            total += price * count / per
        else:
            # Tiered: `per` was kept as genai-prices' int (only plain Decimal prices get a Decimal).
            total += genai_prices.types.calc_unit_price(price, count, vector[0], int(per))
    return total


def _plan_bound(plan: _Plan) -> RateBound:
    """A plan's rates at their dearest tier, as a bound per prompt and completion token and per web search.

    Each unit's count is linear in the counts (`_USAGE_KEYS`); a priced call has every count >= 0, cached +
    cache-written <= prompt and audio within its prompt or completion, so per prompt token the units cost at most
    their dearest corner: all uncached, all cache-read, all cache-written or all audio (and audio cached or written:
    genai-prices keeps no audio cache count of ours apart); per completion token, all text or all audio."""
    def rate(price: Any, per: int | Decimal) -> Decimal:
        if isinstance(price, genai_prices.types.TieredPrices):
            return max([price.base, *(tier.price for tier in price.tiers)]) / Decimal(per)
        return Decimal(price) / Decimal(per)

    def dearest(corners: tuple[tuple[int, ...], ...]) -> Decimal:
        return max(sum((rate(price, per) * max(0, sum(c * v for c, v in zip(coefficients, corner, strict=True)))
                        for price, coefficients, per in plan.units if coefficients is not None), Decimal(0))
                   for corner in corners)

    prompt = dearest(((1, 0, 0, 0, 0, 0, 0), (1, 0, 1, 0, 0, 0, 0), (1, 0, 0, 1, 0, 0, 0), (1, 0, 0, 0, 1, 0, 0),
                      (1, 0, 1, 0, 1, 0, 0), (1, 0, 0, 1, 1, 0, 0)))
    completion = dearest(((0, 1, 0, 0, 0, 0, 0), (0, 1, 0, 0, 0, 1, 0)))
    search = dearest(((0, 0, 0, 0, 0, 0, 1),))
    request = sum((rate(price, per) for price, coefficients, per in plan.units if coefficients is None), Decimal(0))
    return RateBound(prompt, completion, request, search)


def _make_plan(model_price: Any) -> _Plan | None:
    """genai-prices' `compute_leaf_values` run on vectors: each count as coefficients of our usage counts."""
    try:
        from genai_prices.decompose import is_descendant_or_self
        from genai_prices.types import _collect_resolved_model_prices
        from genai_prices.units import _get_registry
    except ImportError:  # a release that moved them: genai-prices prices every call itself
        return None
    registry = _get_registry()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        resolved = _collect_resolved_model_prices(model_price, registry)
    basis = {key: tuple(int(i == j) for j in range(len(_USAGE_KEYS))) for i, key in enumerate(_USAGE_KEYS)}
    priced = {unit.usage_key: unit for unit, _ in resolved if unit.usage_key != "requests"}
    order = sorted(priced.values(), key=lambda unit: (-len(unit.dimensions), unit.usage_key))
    leaves: dict[str, tuple[int, ...]] = {}
    for unit in order:
        # A usage key we never report counts 0 (genai-prices infers 0, or raises, which the first call showed).
        value = basis.get(unit.usage_key, (0,) * len(_USAGE_KEYS))
        for other in order:
            if other is not unit and is_descendant_or_self(unit, other):
                value = tuple(a - b for a, b in zip(value, leaves[other.usage_key], strict=True))
        leaves[unit.usage_key] = value
    units: list[tuple[Any, tuple[int, ...] | None, int | Decimal]] = []
    for unit, price in resolved:
        coefficients = None if unit.usage_key == "requests" else leaves[unit.usage_key]
        units.append((price, coefficients, Decimal(unit.per) if type(price) is Decimal else unit.per))
    return _Plan(model_price, tuple(units), tuple((price, None if coefficients is None else coefficients[:4], per)
                                                  for price, coefficients, per in units))


_FAST = _FastPricer()


def _known_provider(provider_id: str) -> bool:
    from genai_prices.data_snapshot import find_provider_by_id, get_snapshot

    return find_provider_by_id(get_snapshot().providers, provider_id) is not None
