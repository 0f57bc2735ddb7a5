"""Non-finite numbers are unknown: a NaN or infinite cost breaks no list and no response carries NaN/Infinity."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.trajectory_service.conftest import Service, chat, root


def strict(text: str) -> Any:
    """Parse as strict JSON: NaN, Infinity and -Infinity are not JSON."""
    def refuse(constant: str) -> Any:
        raise AssertionError(f"response carries {constant}: {text[:300]}")

    return json.loads(text, parse_constant=refuse)


async def test_a_nan_cost_is_unknown_everywhere(svc: Service) -> None:
    agent, key = await svc.new_agent()
    await svc.send(key, [root(1, 1, "s-nan", 0, 3), chat(1, 2, 1, 1, **{"gen_ai.usage.cost": float("nan")})])
    await svc.send(key, [root(2, 1, "s-inf", 10, 13), chat(2, 2, 1, 11, **{"gen_ai.usage.cost": float("-inf")})])
    await svc.send(key, [root(3, 1, "s-ok", 20, 23), chat(3, 2, 1, 21, **{"gen_ai.usage.cost": 0.25})])
    await svc.send(key, [root(4, 1, "s-big", 30, 33), chat(4, 2, 1, 31, inputs=10, outputs=1,
                                                             **{"gen_ai.usage.score": float("inf")})])

    for query in ("", "?sort=cost", "?min_cost=0", "?min_cost=0.1&sort=cost", "?sort=spans"):
        reply = await svc.get(f"/api/agents/{agent}/sessions{query}")
        assert reply.status == 200, (query, reply.text)
        listed = strict(reply.text)["sessions"]
        costs = {s["session_id"]: s["cost_usd"] for s in listed}
        if "min_cost" not in query:
            assert len(listed) == 4, (query, listed)
        assert costs["s-ok"] == 0.25
        for session in ("s-nan", "s-inf"):
            # Unknown reported costs fall back to pricing the tokens (test-model: 1 + 4 per million).
            if session in costs:
                assert costs[session] == pytest.approx((100 * 1 + 10 * 4) / 1e6), (query, costs)

    for session in ("s-nan", "s-inf", "s-big"):
        for path in (f"/api/agents/{agent}/sessions/{session}", f"/api/agents/{agent}/sessions/{session}/trajectory"):
            reply = await svc.get(path)
            assert reply.status == 200, (path, reply.text)
            strict(reply.text)
    reply = await svc.get(f"/api/agents/{agent}/trajectories.jsonl")
    assert reply.status == 200, reply.text
    lines = [strict(line) for line in reply.text.splitlines() if line.strip()]
    assert len(lines) == 4
    reply = await svc.get(f"/api/agents/{agent}/sessions/s-nan/trajectory")
    assert strict(reply.text)["final_metrics"]["total_cost_usd"] == pytest.approx(140e-6)


def test_the_encoder_writes_unknown_for_non_finite_numbers() -> None:
    from decimal import Decimal

    from evalkit.api import dumps_json

    data = {"a": float("nan"), "b": [float("inf"), -float("inf")], "c": Decimal("NaN"), "d": Decimal("1.5"),
            "big": 2**70, 3: float("nan"), "raw": b"\x00"}  # 2**70 and the int key: the fallback encoder
    assert strict(dumps_json(data).decode()) == {"a": None, "b": [None, None], "c": None, "d": "1.5", "big": 2**70,
                                                 "3": None, "raw": {"bytes_base64": "AA=="}}
    assert strict(dumps_json({"x": float("nan")}).decode()) == {"x": None}
