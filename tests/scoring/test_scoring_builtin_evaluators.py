"""Built-in checks, built through the registry the service uses."""

from __future__ import annotations

from typing import Any

import pytest

from evalkit.scoring.evaluators import EvaluationInput, EvaluatorConfigError, build_evaluator


async def judge(spec: dict[str, Any], **item: Any):
    return await build_evaluator(spec).evaluate(EvaluationInput(**item))


async def test_exact_uses_case_expected_and_normalises():
    assert (await judge({"type": "exact"}, answer="  Paris \n", expected="Paris")).passed is True
    miss = await judge({"type": "exact", "case_sensitive": False}, answer="paris!", expected="Paris")
    assert miss.passed is False and miss.score == 0.0
    assert "Paris" in (miss.explanation or "")
    assert (await judge({"type": "exact", "case_sensitive": False}, answer="PARIS", expected="paris")).passed


async def test_exact_on_structured_output_path():
    ev = await judge(
        {"type": "exact", "target": "output", "path": "result.items.1", "expected": {"id": 2}},
        output={"result": {"items": [{"id": 1}, {"id": 2}]}},
    )
    assert ev.passed is True
    missing = await judge({"type": "exact", "target": "output", "path": "result.nope"}, output={}, expected=1)
    assert missing.passed is False and missing.label == "missing"
    assert "no field 'result.nope'" in (missing.explanation or "")


async def test_exact_without_expected_is_an_evaluation_error():
    ev = await judge({"type": "exact"}, answer="x")
    assert ev.error is not None and "no expected value" in ev.error
    assert ev.passed is None


async def test_contains_all_and_any():
    spec = {"type": "contains", "substrings": ["alpha", "beta"]}
    assert (await judge(spec, answer="alpha and beta")).passed
    miss = await judge(spec, answer="alpha only")
    assert miss.passed is False and "missing 'beta'" in (miss.explanation or "")
    assert (await judge({**spec, "mode": "any"}, answer="alpha only")).passed
    assert (
        await judge({"type": "contains", "case_sensitive": False}, answer="The ANSWER", expected="answer")
    ).passed


async def test_regex_search_and_full_match():
    assert (await judge({"type": "regex", "pattern": r"\[\d+\]"}, answer="see [3]")).passed
    full = {"type": "regex", "pattern": r"\d+", "full_match": True}
    assert (await judge(full, answer="123")).passed
    assert (await judge(full, answer="123 apples")).passed is False
    assert (await judge({"type": "regex", "pattern": "^yes$", "ignore_case": True}, answer="YES")).passed


async def test_json_schema_on_output_and_on_a_json_answer():
    schema = {
        "type": "object",
        "properties": {"total": {"type": "number"}, "items": {"type": "array"}},
        "required": ["total", "items"],
    }
    spec = {"type": "json_schema", "schema": schema}
    assert (await judge(spec, output={"total": 3, "items": []})).passed
    bad = await judge(spec, output={"total": "3"})
    assert bad.passed is False
    assert "total: '3' is not of type 'number'" in (bad.explanation or "")
    assert "'items' is a required property" in (bad.explanation or "")
    assert (await judge({**spec, "target": "answer"}, answer='{"total": 1, "items": [1]}')).passed
    not_json = await judge({**spec, "target": "answer"}, answer="total: 1")
    assert not_json.passed is False and not_json.label == "not_json"


async def test_numeric_tolerance():
    spec = {"type": "numeric", "abs_tol": 0.01}
    assert (await judge(spec, answer="3.14", expected=3.14159)).passed
    assert (await judge(spec, answer="3.2", expected=3.14159)).passed is False
    rel = {"type": "numeric", "rel_tol": 0.05, "extract": "last_number"}
    assert (await judge(rel, answer="The total is 1,020 dollars.", expected="1000")).passed
    assert (await judge(rel, answer="The total is 1,100 dollars.", expected="1000")).passed is False
    nan = await judge(spec, answer="about three", expected=3)
    assert nan.passed is False and nan.label == "not_a_number"
    assert "extract='last_number'" in (nan.explanation or "")


def traj(*steps: dict[str, Any], **root: Any) -> dict[str, Any]:
    full = [
        {"step_id": i + 1, "source": s.pop("source", "agent"), "message": "", **s}
        for i, s in enumerate(steps)
    ]
    return {"schema_version": "ATIF-v1.7", "agent": {"name": "a", "version": "1"}, "steps": full, **root}


def call(name: str, **extra: Any) -> dict[str, Any]:
    return {
        "tool_call_id": name + "-1",
        "function_name": name,
        "arguments": {},
        **({"extra": extra} if extra else {}),
    }


async def test_tool_called_and_not_called_including_subagents():
    sub = traj({"tool_calls": [call("search")]}, trajectory_id="sub-1")
    t = traj(
        {"source": "user"},
        {"tool_calls": [call("read_file"), call("read_file")]},
        subagent_trajectories=[sub],
    )
    assert (await judge({"type": "tool_called", "tool": "read_file", "min_count": 2}, trajectory=t)).passed
    assert (await judge({"type": "tool_called", "tool": "search"}, trajectory=t)).passed
    only_root = {"type": "tool_called", "tool": "search", "include_subagents": False}
    assert (await judge(only_root, trajectory=t)).passed is False
    nope = await judge({"type": "tool_not_called", "tool": "read_file"}, trajectory=t)
    assert nope.passed is False and "called 2 time(s)" in (nope.explanation or "")
    assert (await judge({"type": "tool_not_called", "tool": "rm"}, trajectory=t)).passed


async def test_trajectory_checks_fail_without_a_trajectory():
    ev = await judge({"type": "tool_not_called", "tool": "rm"}, answer="ok", trajectory=None)
    assert ev.passed is False and ev.label == "no_trajectory"
    assert ev.error is None


async def test_max_steps_counts_agent_steps_by_default():
    t = traj({"source": "system"}, {"source": "user"}, {}, {}, {})
    assert (await judge({"type": "max_steps", "max_steps": 3}, trajectory=t)).passed
    all_steps = await judge({"type": "max_steps", "max_steps": 3, "count": "all"}, trajectory=t)
    assert all_steps.passed is False and "5 steps, at most 3" in (all_steps.explanation or "")


async def test_max_cost_priced_over_budget_and_unpriced():
    priced = traj({"metrics": {"cost_usd": 0.02}}, {"metrics": {"cost_usd": 0.03}})
    assert (await judge({"type": "max_cost", "max_usd": 0.05}, trajectory=priced)).passed
    over = await judge({"type": "max_cost", "max_usd": 0.04}, trajectory=priced)
    assert over.passed is False and over.metadata["cost_usd"] == pytest.approx(0.05)
    final = traj({"metrics": {}}, final_metrics={"total_cost_usd": 0.01})
    assert (await judge({"type": "max_cost", "max_usd": 0.04}, trajectory=final)).passed
    unpriced = traj({"metrics": {"cost_usd": 0.01}}, {"metrics": {"prompt_tokens": 10}})
    ev = await judge({"type": "max_cost", "max_usd": 100}, trajectory=unpriced)
    assert ev.passed is False and ev.label == "unpriced"
    assert "cost unknown" in (ev.explanation or "") and "step 2" in (ev.explanation or "")
    assert "prices.yaml" in (ev.explanation or "")  # says where a price goes
    # a deterministic dispatch step (no LLM call) needs no price
    dispatch = traj({"metrics": {"cost_usd": 0.01}}, {"llm_call_count": 0})
    assert (await judge({"type": "max_cost", "max_usd": 1}, trajectory=dispatch)).passed


async def test_no_errors_reads_extra_error_markers():
    clean = traj({"tool_calls": [call("ls")]})
    assert (await judge({"type": "no_errors"}, trajectory=clean)).passed
    broken = traj(
        {"extra": {"error": "rate limited"}},
        {"tool_calls": [call("ls", error={"type": "PermissionError", "message": "denied"})]},
        {"observation": {"results": [{"source_call_id": "x", "content": "", "extra": {"error": "exit 1"}}]}},
    )
    ev = await judge({"type": "no_errors"}, trajectory=broken)
    assert ev.passed is False
    assert ev.metadata["errors"] == 3
    text = ev.explanation or ""
    assert "step 1: rate limited" in text and "PermissionError: denied" in text and "exit 1" in text


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ({"type": "nope"}, "unknown evaluator type 'nope'; known types:"),
        ({"type": "regex", "pattern": "("}, "does not compile"),
        ({"type": "regex", "patern": "x"}, "patern: Extra inputs are not permitted"),
        ({"type": "json_schema", "schema": {"type": "not-a-type"}}, "not a valid JSON Schema"),
        ({"type": "max_steps", "max_steps": -1}, "max_steps: Input should be greater than or equal to 0"),
        ({"type": "judge", "base_url": "localhost:8000", "model": "m"}, "base_url must start with http"),
        ({"name": "x"}, "a mapping with a 'type'"),
    ],
)
def test_bad_specs_fail_when_built(spec: dict[str, Any], message: str):
    with pytest.raises(EvaluatorConfigError) as info:
        build_evaluator(spec)
    assert message in str(info.value)


def test_names_versions_and_fingerprints():
    a = build_evaluator({"type": "regex", "name": "cites", "config": {"pattern": "x"}})
    b = build_evaluator({"type": "regex", "name": "cites", "pattern": "x"})
    c = build_evaluator({"type": "regex", "pattern": "y"})
    assert a.name == "cites" and c.name == "regex" and a.version == "1"
    assert a.fingerprint == b.fingerprint != c.fingerprint
