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
        valid_from: 2025-01-01    # optional; the newest rule in force at the call's time wins
"""

from __future__ import annotations

import fnmatch
import re
import warnings
from dataclasses import dataclass
from datetime import UTC, date, datetime
from decimal import Decimal
from pathlib import Path
from typing import Any

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
    if ":" in bare and not bare.endswith(":"):
        # Bedrock-style `anthropic.claude-3-5-sonnet-20241022-v2:0` and `openai:gpt-4o` (pydantic-ai).
        head, _, tail = bare.partition(":")
        if re.fullmatch(r"[a-z_-]+", head):
            provider_hint = provider_hint or normalise_provider(head)
            bare = tail
    add(bare, provider_hint)
    undated = _DATE_SUFFIX.sub("", bare)
    add(undated, provider_hint)
    return candidates


@dataclass(frozen=True)
class TokenCounts:
    prompt_tokens: int  # every prompt token, cached and cache-written included
    completion_tokens: int
    cached_tokens: int = 0
    cache_write_tokens: int = 0


@dataclass(frozen=True)
class PricedCost:
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
    valid_from: date | datetime | None = None

    def matches(self, provider: str | None, models: list[str], when: datetime) -> bool:
        if not fnmatch.fnmatchcase(provider or "", self.provider.lower()) and self.provider != "*":
            return False
        if not any(fnmatch.fnmatchcase(model.lower(), self.model.lower()) for model in models):
            return False
        return self.starts() <= when

    def starts(self) -> datetime:
        if self.valid_from is None:
            return datetime.min.replace(tzinfo=UTC)
        if isinstance(self.valid_from, datetime):
            return self.valid_from if self.valid_from.tzinfo else self.valid_from.replace(tzinfo=UTC)
        return datetime(self.valid_from.year, self.valid_from.month, self.valid_from.day, tzinfo=UTC)

    def cost(self, tokens: TokenCounts) -> Decimal:
        cache_read = self.input if self.cache_read is None else self.cache_read
        cache_write = self.input if self.cache_write is None else self.cache_write
        uncached = max(0, tokens.prompt_tokens - tokens.cached_tokens - tokens.cache_write_tokens)
        total = (
            uncached * self.input
            + tokens.cached_tokens * cache_read
            + tokens.cache_write_tokens * cache_write
            + tokens.completion_tokens * self.output
        )
        return total / _MILLION


class PriceFile(BaseModel):
    model_config = ConfigDict(extra="forbid")

    rules: list[PriceRule] = Field(default_factory=list)


class PriceBook:
    """Looks prices up: user rules first, then genai-prices (unless disabled)."""

    def __init__(self, rules: list[PriceRule] | None = None, *, use_genai_prices: bool = True) -> None:
        self.rules = list(rules or [])
        self.use_genai_prices = use_genai_prices

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
        provider_id = normalise_provider(provider)
        candidates = model_candidates(model)
        names = [name for name, _ in candidates]
        hint = next((hinted for _, hinted in candidates if hinted), None)
        rule_provider = provider_id or hint
        matching = [rule for rule in self.rules if rule.matches(rule_provider, names, when)]
        if matching:
            # Newest rule in force wins; among equals, the first written.
            rule = max(reversed(matching), key=lambda r: r.starts())
            return PricedCost(rule.cost(tokens), PRICE_FILE_SOURCE, model, rule_provider)
        if self.use_genai_prices:
            return _genai_prices_cost(tokens, candidates, provider_id, when)
        return None


def _genai_prices_cost(
    tokens: TokenCounts, candidates: list[tuple[str, str | None]], provider_id: str | None, when: datetime
) -> PricedCost | None:
    usage = genai_prices.Usage(
        input_tokens=tokens.prompt_tokens,
        output_tokens=tokens.completion_tokens,
        cache_read_tokens=tokens.cached_tokens or None,
        cache_write_tokens=tokens.cache_write_tokens or None,
    )
    attempts: list[tuple[str, str | None]] = []
    for name, hint in candidates:
        for provider in (provider_id, hint):
            if provider and (name, provider) not in attempts:
                attempts.append((name, provider))
    if provider_id is None or not _known_provider(provider_id):
        # Unknown or absent provider: let genai-prices infer it from the model id.
        attempts.extend((name, None) for name, _ in candidates)
    for name, provider in attempts:
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


def _known_provider(provider_id: str) -> bool:
    from genai_prices.data_snapshot import find_provider_by_id, get_snapshot

    return find_provider_by_id(get_snapshot().providers, provider_id) is not None
