"""The cached genai-prices path prices exactly as asking genai-prices afresh for every call does.

`prices._genai_prices_cost` resolves each model once and keeps, per price, genai-prices' own
arithmetic as a plan; `genai_prices_cost_reference` is the per-call genai-prices lookup it
replaced. They must agree on every model of the pinned snapshot, to the Decimal, and must
fail the same way on usage genai-prices rejects.
"""

from __future__ import annotations

import itertools
from datetime import UTC, datetime
from decimal import Decimal

import genai_prices
import pytest

from evalkit.trajectory import prices
from evalkit.trajectory.prices import (
    PriceBook,
    PricedCost,
    TokenCounts,
    genai_prices_cost_reference,
    model_candidates,
    normalise_provider,
)

WHEN = datetime(2025, 6, 1, 12, tzinfo=UTC)
USAGES = [
    TokenCounts(1_000, 200),
    TokenCounts(900, 40, cached_tokens=300, cache_write_tokens=100),
    TokenCounts(1_234_567, 89_012, cached_tokens=1_000_000),  # over the 200k tier of tiered models
    TokenCounts(10, 5, cached_tokens=50),  # more cached than prompt: genai-prices rejects it
    # Audio tokens (an audio model's own rates; as text where the table has none) and web searches (per thousand).
    TokenCounts(3_096, 55, input_audio_tokens=89, output_audio_tokens=42),
    TokenCounts(900, 40, cached_tokens=300, cache_write_tokens=100, input_audio_tokens=200, web_searches=3),
    TokenCounts(1_000, 100, web_searches=2),
]


def _outcome(function: object, *args: object) -> PricedCost | str | None:
    try:
        return function(*args)  # type: ignore[operator, no-any-return]
    except ValueError as exc:
        return f"ValueError: {exc}"


def _every_model() -> list[tuple[str, str]]:
    snapshot = genai_prices.data_snapshot.get_snapshot()
    return [(provider.id, model.id) for provider in snapshot.providers for model in provider.models]


def test_every_snapshot_model_prices_as_genai_prices_does() -> None:
    models = _every_model()
    assert len(models) > 500  # the whole pinned table, not a sample that could miss the odd ones
    compared = fast_hits = 0
    for (provider, model), tokens in itertools.product(models, USAGES):
        candidates = model_candidates(model)
        provider_id = normalise_provider(provider)
        expected = _outcome(genai_prices_cost_reference, tokens, candidates, provider_id, WHEN)
        # Twice: the first call of a kind teaches the plan, the second is served from it.
        for _ in range(2):
            hits_before = _fast_hits()
            got = _outcome(prices._genai_prices_cost, tokens, candidates, provider_id, WHEN)
            fast_hits += _fast_hits() - hits_before
            assert got == expected, (provider, model, tokens)
            if isinstance(got, PricedCost):
                assert isinstance(expected, PricedCost)
                assert got.usd == expected.usd and str(got.usd) == str(expected.usd)
            compared += 1
    assert compared == 2 * len(models) * len(USAGES)
    # The point of the cache: most calls never reach genai-prices' per-call path.
    assert fast_hits > len(models) * len(USAGES) // 2


_COUNTER = [0]  # calls the fast path answered


def _fast_hits() -> int:
    return _COUNTER[0]


@pytest.fixture(autouse=True)
def _count_fast_path(monkeypatch: pytest.MonkeyPatch) -> None:
    original = prices.plan_cost

    def counting(plan: prices._Plan, vector: prices._Vector) -> Decimal | None:
        result = original(plan, vector)
        _COUNTER[0] += result is not None
        return result

    monkeypatch.setattr(prices, "plan_cost", counting)


@pytest.mark.parametrize("hour", [0, 3, 12, 17, 23])
def test_time_of_day_prices_follow_the_call_time(hour: int) -> None:
    # DeepSeek's off-peak prices change within a day: the plan is per price, not per day.
    when = datetime(2025, 3, 1, hour, 30, tzinfo=UTC)
    tokens = TokenCounts(100_000, 20_000, cached_tokens=30_000)
    for model in ("deepseek-chat", "deepseek-reasoner"):
        candidates = model_candidates(model)
        expected = genai_prices_cost_reference(tokens, candidates, "deepseek", when)
        assert expected is not None
        assert prices._genai_prices_cost(tokens, candidates, "deepseek", when) == expected
        assert prices._genai_prices_cost(tokens, candidates, "deepseek", when) == expected


def test_price_book_results_repeat_and_user_rules_keep_their_time() -> None:
    book = PriceBook.from_yaml(
        """
rules:
  - {provider: "openai", model: "gpt-4o*", input: 1, output: 1}
  - {provider: "openai", model: "gpt-4o*", input: 2, output: 2, valid_from: 2026-01-01}
"""
    )
    tokens = TokenCounts(1_000_000, 0)
    early, late = datetime(2025, 1, 1, tzinfo=UTC), datetime(2026, 6, 1, tzinfo=UTC)
    for _ in range(2):  # the second round is answered from the rule cache
        assert book.cost(tokens, "gpt-4o", "openai", early) == PricedCost(Decimal(1), "prices.yaml", "gpt-4o", "openai")
        assert book.cost(tokens, "gpt-4o", "openai", late) == PricedCost(Decimal(2), "prices.yaml", "gpt-4o", "openai")
        priced = book.cost(tokens, "claude-3-5-haiku-latest", "anthropic", late)
        assert priced is not None and priced.source.startswith("genai-prices@")
        assert book.cost(tokens, "no-such-model-anywhere", "openai", late) is None
