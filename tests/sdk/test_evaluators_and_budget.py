"""Python evaluators (binding and results) and the budget's arithmetic."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from evalkit import evaluator
from evalkit.sdk.budget import Budget
from evalkit.sdk.evaluators import Evaluation
from evalkit.sdk.scoring import check_evaluators


def judge(ev: Any, **values: Any) -> Evaluation:
    return asyncio.run(ev.judge(values))


def test_evaluator_binds_by_name_and_maps_results() -> None:
    @evaluator
    def exact(answer: str, expected: str) -> bool:
        return answer == expected

    assert exact.name == "exact"
    assert judge(exact, answer="a", expected="a", input="ignored") == Evaluation(score=1.0, passed=True)
    assert judge(exact, answer="a", expected="b") == Evaluation(score=0.0, passed=False)
    assert exact("x", "x") is True  # still the plain function


def test_named_versioned_async_evaluator_returning_a_dict() -> None:
    @evaluator(name="length", version="2")
    async def length(answer: str, metadata: dict[str, Any]) -> dict[str, Any]:
        return {"score": len(answer) / 10, "label": metadata["case_id"]}

    assert (length.name, length.version) == ("length", "2")
    assert judge(length, answer="abcde", metadata={"case_id": "c1"}) == Evaluation(score=0.5, label="c1")


@pytest.mark.parametrize("value,error", [(float("nan"), "finite"), ("yes", "return a bool"),
                                          ({"label": "x"}, "neither score nor passed"),
                                          ({"bogus": 1}, "outside the contract")])
def test_bad_results_become_evaluation_errors(value: Any, error: str) -> None:
    ev = evaluator(name="bad")(lambda answer: value)
    result = judge(ev, answer="a")
    assert result.score is None and result.error is not None and error in result.error


def test_a_raising_evaluator_is_an_evaluation_error() -> None:
    @evaluator
    def boom(answer: str) -> bool:
        raise ValueError("no")

    assert judge(boom, answer="a").error == "ValueError: no"


def test_evaluators_are_checked() -> None:
    with pytest.raises(TypeError, match=r"@evalkit\.evaluator"):
        check_evaluators([lambda answer: True])
    a = evaluator(name="same")(lambda answer: True)
    b = evaluator(name="same")(lambda answer: False)
    with pytest.raises(ValueError, match="same"):
        check_evaluators([a, b])
    with pytest.raises(TypeError, match="cannot fill"):
        evaluator(lambda answer, question: True)


def test_budget_counts_cost_and_tokens() -> None:
    budget = Budget(max_cost_usd=0.01)
    assert budget.add({"cost_usd": 0.004, "input_tokens": 10, "output_tokens": 5})
    assert budget.exhausted() is None and budget.status == "ok"
    budget.add({"cost_usd": 0.007, "input_tokens": 10, "output_tokens": 5})
    assert budget.exhausted() is not None and "0.0110" in budget.exhausted()  # type: ignore[operator]
    assert budget.report()["tokens"] == 30


def test_an_unpriced_model_makes_the_budget_unknown_never_zero() -> None:
    budget = Budget(max_cost_usd=1.0)
    assert not budget.add({"cost_usd": None, "input_tokens": 100, "output_tokens": 10}, "my-finetune")
    assert budget.status == "unknown"
    assert budget.report()["cost_usd"] is None
    assert "budget unknown" in budget.describe() and "my-finetune" in budget.describe()
    # A run that used no model at all costs nothing and is known.
    assert Budget(max_cost_usd=1.0).add({"cost_usd": None})


def test_token_budget() -> None:
    budget = Budget(max_tokens=100)
    budget.add({"input_tokens": 60, "output_tokens": 50, "cost_usd": None})
    assert "max_tokens=100" in (budget.exhausted() or "")
