"""The experiment's budget: cost and tokens of recorded runs, checked before each new run starts.

An unpriced model makes the spend unknown, never $0: the budget then reports
"unknown" with what is known so far.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass
class Budget:
    max_cost_usd: float | None = None
    max_tokens: int | None = None
    cost_usd: float = 0.0
    tokens: int = 0
    unpriced_runs: int = 0
    unpriced_models: set[str] = field(default_factory=set)

    def __post_init__(self) -> None:
        if self.max_cost_usd is not None and self.max_cost_usd < 0:
            raise ValueError("max_cost_usd must be ≥ 0")
        if self.max_tokens is not None and self.max_tokens < 0:
            raise ValueError("max_tokens must be ≥ 0")

    def add(self, metrics: dict[str, Any] | None, model: str | None = None) -> bool:
        """Count a recorded run's spend; False when it used tokens that have no price."""
        metrics = metrics or {}
        tokens = int(metrics.get("input_tokens") or 0) + int(metrics.get("output_tokens") or 0)
        self.tokens += tokens
        cost = metrics.get("cost_usd")
        if cost is not None:
            self.cost_usd += float(cost)
            return True
        if tokens > 0:
            self.unpriced_runs += 1
            if model:
                self.unpriced_models.add(model)
            return False
        return True

    @property
    def limited(self) -> bool:
        return self.max_cost_usd is not None or self.max_tokens is not None

    @property
    def cost_known(self) -> bool:
        return self.unpriced_runs == 0

    def exhausted(self) -> str | None:
        """Why no new run may start, or None."""
        if self.max_cost_usd is not None and self.cost_usd >= self.max_cost_usd:
            more = " (and more: some runs are unpriced)" if not self.cost_known else ""
            return f"budget reached: spent ${self.cost_usd:.4f}{more} of max_cost_usd=${self.max_cost_usd:g}"
        if self.max_tokens is not None and self.tokens >= self.max_tokens:
            return f"budget reached: {self.tokens} tokens of max_tokens={self.max_tokens}"
        return None

    @property
    def status(self) -> str:
        if self.exhausted():
            return "reached"
        if self.max_cost_usd is not None and not self.cost_known:
            return "unknown"
        return "ok"

    def report(self) -> dict[str, Any]:
        return {"status": self.status, "cost_usd": self.cost_usd if self.cost_known else None,
                "cost_usd_known_part": self.cost_usd, "tokens": self.tokens, "unpriced_runs": self.unpriced_runs,
                "unpriced_models": sorted(self.unpriced_models), "max_cost_usd": self.max_cost_usd,
                "max_tokens": self.max_tokens}

    def describe(self) -> str:
        if self.cost_known:
            spent = f"${self.cost_usd:.4f}"
        else:
            models = ", ".join(sorted(self.unpriced_models)) or "a model"
            what = "budget unknown" if self.max_cost_usd is not None else "cost unknown"
            spent = (f"{what}: {self.unpriced_runs} run(s) used {models} which has no price; "
                     f"at least ${self.cost_usd:.4f}")
        return f"{spent}, {self.tokens} tokens"
