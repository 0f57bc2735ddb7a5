"""Task binding by parameter name and the meaning of what a task returns."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from evalkit import Fixture, RunResult
from evalkit.sdk.binding import PROTOCOL, BindingError, BoundTask, TaskCall, interpret

CALL = TaskCall(input={"q": "2+2"}, files=[Fixture(name="a.txt", path=Path("/tmp/a.txt"))], model="m-1",
                metadata={"session_id": "s", "experiment_id": 3, "case_id": "c1", "repetition": 0, "tags": ["x"]})


def run(bound: BoundTask, call: TaskCall = CALL, timeout: float | None = None):  # type: ignore[no-untyped-def]
    return asyncio.run(bound.invoke(call, timeout))


def test_parameters_bind_by_name_in_any_order() -> None:
    seen: dict[str, Any] = {}

    def task(metadata: dict[str, Any], model: str, files: list[Fixture], input: Any) -> str:
        seen.update(metadata=metadata, model=model, files=files, input=input)
        return "4"

    outcome = run(BoundTask(task))
    assert outcome.status == "completed" and outcome.answer == "4"
    assert seen["input"] == {"q": "2+2"} and seen["model"] == "m-1"
    assert [f.name for f in seen["files"]] == ["a.txt"]
    assert seen["metadata"]["case_id"] == "c1" and seen["metadata"]["tags"] == ["x"]


def test_a_single_parameter_of_another_name_receives_the_input() -> None:
    outcome = run(BoundTask(lambda question: f"got {question['q']}"))
    assert outcome.answer == "got 2+2"


def test_a_subset_of_known_parameters() -> None:
    def task(input: Any, model: str | None = None) -> str:
        return f"{input['q']} with {model}"

    bound = BoundTask(task)
    assert bound.takes_model
    assert run(bound).answer == "2+2 with m-1"
    assert not BoundTask(lambda input: "x").takes_model


def test_unknown_required_parameters_are_refused_up_front() -> None:
    def task(input: Any, question: str) -> str:
        return question

    with pytest.raises(BindingError, match="question"):
        BoundTask(task)


def test_kwargs_task_receives_everything() -> None:
    def task(**kwargs: Any) -> dict[str, Any]:
        return {"keys": sorted(kwargs)}

    assert run(BoundTask(task)).output == {"keys": ["files", "input", "metadata", "model"]}


def test_async_task() -> None:
    async def task(input: Any) -> str:
        await asyncio.sleep(0)
        return "async"

    bound = BoundTask(task)
    assert bound.is_async
    assert run(bound).answer == "async"


def test_returns_str_dict_and_run_result() -> None:
    assert interpret("a").answer == "a"
    assert interpret({"k": 1}).output == {"k": 1}
    result = interpret(RunResult(answer="a", model="m-2", session_id="elsewhere"))
    assert (result.status, result.answer, result.model, result.session_id) == ("completed", "a", "m-2", "elsewhere")
    failed = interpret(RunResult(error="the tool broke"))
    assert (failed.status, failed.error) == ("failed", "the tool broke")


@pytest.mark.parametrize("value", [42, None, ["a"], RunResult(), RunResult(session_id="only-a-session"), b"x"])
def test_anything_else_is_a_protocol_violation(value: Any) -> None:
    outcome = interpret(value)
    assert outcome.status == "failed"
    assert outcome.error is not None and outcome.error.startswith(PROTOCOL)


def test_a_dict_that_is_not_json_is_a_protocol_violation() -> None:
    outcome = interpret({"when": object()})
    assert outcome.status == "failed" and PROTOCOL in (outcome.error or "")


def test_an_exception_is_a_failed_run_named_by_type_and_message() -> None:
    def task(input: Any) -> str:
        raise KeyError("missing")

    outcome = run(BoundTask(task))
    assert outcome.status == "failed"
    assert outcome.error == "KeyError: 'missing'"


def test_timeout_of_sync_and_async_tasks() -> None:
    async def slow_async(input: Any) -> str:
        await asyncio.sleep(5)
        return "late"

    def slow_sync(input: Any) -> str:
        import time

        time.sleep(0.5)
        return "late"

    for task in (slow_async, slow_sync):
        outcome = run(BoundTask(task), timeout=0.1)
        assert outcome.status == "timeout", task
        assert "0.1s" in (outcome.error or "")


def test_a_timeout_error_raised_by_the_task_is_a_failure_not_a_timeout() -> None:
    def task(input: Any) -> str:
        raise TimeoutError("upstream hung")

    outcome = run(BoundTask(task), timeout=5)
    assert (outcome.status, outcome.error) == ("failed", "TimeoutError: upstream hung")
    assert run(BoundTask(task)).status == "failed"
