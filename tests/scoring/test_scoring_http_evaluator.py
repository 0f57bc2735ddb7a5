"""The HTTP evaluator against real local aiohttp servers."""

from __future__ import annotations

import asyncio
import socket
import time
from collections.abc import Awaitable, Callable
from typing import Any

import pytest
from aiohttp import web

from evalkit.scoring.evaluators import EvaluationInput, build_evaluator

Serve = Callable[[web.Application], Awaitable[str]]


def closed_port() -> int:
    """A port nothing listens on: bound by us, then released."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


ITEM = EvaluationInput(
    input={"q": "capital of France"}, answer="Paris", expected="Paris", metadata={"case_id": "c1"}
)


def app_with(handler: Any) -> web.Application:
    app = web.Application()
    app.router.add_post("/score", handler)
    return app


def spec(url: str, **config: Any) -> dict[str, Any]:
    return {"type": "http", "name": "remote", "url": f"{url}/score", "backoff_seconds": 0.01, **config}


async def test_success_follows_the_contract(serve: Serve):
    seen: list[dict[str, Any]] = []

    async def handler(request: web.Request) -> web.Response:
        body = await request.json()
        seen.append({"body": body, "auth": request.headers.get("Authorization")})
        ok = body["answer"] == body["expected"]
        return web.json_response({"score": 0.9, "passed": ok, "label": "correct", "explanation": "same city"})

    url = await serve(app_with(handler))
    ev = await build_evaluator(spec(url), credentials={f"{url}/score": "sekret"}).evaluate(ITEM)
    assert (ev.error, ev.score, ev.passed, ev.label, ev.explanation) == (
        None,
        0.9,
        True,
        "correct",
        "same city",
    )
    assert ev.metadata["attempts"] == 1
    body = seen[0]["body"]
    assert body["contract"] == 1 and body["evaluator"] == "remote"
    assert body["input"] == {"q": "capital of France"} and body["metadata"] == {"case_id": "c1"}
    assert set(body) == {
        "contract",
        "evaluator",
        "input",
        "answer",
        "output",
        "expected",
        "rubric",
        "trajectory",
        "metadata",
    }
    assert seen[0]["auth"] == "Bearer sekret"


async def test_timeout_then_retry_succeeds(serve: Serve):
    calls = 0

    async def handler(request: web.Request) -> web.Response:
        nonlocal calls
        calls += 1
        if calls == 1:
            await asyncio.sleep(1)
        return web.json_response({"passed": True})

    url = await serve(app_with(handler))
    started = time.monotonic()
    ev = await build_evaluator(spec(url, timeout_seconds=0.3, max_attempts=3)).evaluate(ITEM)
    assert ev.error is None and ev.passed is True and ev.score == 1.0
    assert ev.metadata["attempts"] == 2
    assert calls == 2
    assert time.monotonic() - started < 1.5


async def test_500s_exhaust_the_attempts_into_an_evaluation_error(serve: Serve):
    calls = 0

    async def handler(request: web.Request) -> web.Response:
        nonlocal calls
        calls += 1
        return web.Response(status=500, text="database is on fire")

    url = await serve(app_with(handler))
    ev = await build_evaluator(spec(url, max_attempts=3)).evaluate(ITEM)
    assert calls == 3
    assert ev.passed is None and ev.score is None
    assert ev.error is not None
    assert (
        "failed after 3 attempt(s)" in ev.error
        and "HTTP 500" in ev.error
        and "database is on fire" in ev.error
    )


async def test_429_honours_retry_after_then_succeeds(serve: Serve):
    calls = 0

    async def handler(request: web.Request) -> web.Response:
        nonlocal calls
        calls += 1
        if calls == 1:
            return web.Response(status=429, headers={"Retry-After": "0"})
        return web.json_response({"score": 0.25})

    url = await serve(app_with(handler))
    ev = await build_evaluator(spec(url, backoff_seconds=5)).evaluate(ITEM)
    assert ev.error is None and ev.score == 0.25 and ev.passed is None
    assert calls == 2


async def test_client_errors_are_not_retried(serve: Serve):
    calls = 0

    async def handler(request: web.Request) -> web.Response:
        nonlocal calls
        calls += 1
        return web.Response(status=422, text="missing field")

    url = await serve(app_with(handler))
    ev = await build_evaluator(spec(url)).evaluate(ITEM)
    assert calls == 1
    assert ev.error is not None and "HTTP 422" in ev.error and "missing field" in ev.error


async def test_replies_outside_the_contract(serve: Serve):
    replies = iter(
        [
            web.json_response({"label": "ok"}),
            web.json_response({"error": "cannot parse the agent's output"}),
            web.Response(text="<html>oops</html>", content_type="text/html"),
            web.json_response([1, 2]),
        ]
    )

    async def handler(request: web.Request) -> web.Response:
        return next(replies)

    url = await serve(app_with(handler))
    evaluator = build_evaluator(spec(url))
    no_verdict, reported, not_json, not_object = [
        (await evaluator.evaluate(ITEM)).error or "" for _ in range(4)
    ]
    assert 'neither "score" nor "passed"' in no_verdict
    assert "could not judge the run: cannot parse the agent's output" in reported
    assert "not JSON" in not_json
    assert "not an object" in not_object


async def test_unreachable_endpoint_is_an_evaluation_error():
    url = f"http://127.0.0.1:{closed_port()}"
    ev = await build_evaluator(spec(url, max_attempts=2)).evaluate(ITEM)
    assert ev.passed is None and ev.score is None
    assert ev.error is not None and "failed after 2 attempt(s)" in ev.error
    assert "check that the server is up" in ev.error


async def test_an_address_the_server_may_not_call_is_refused_once_saying_how_to_allow_it() -> None:
    # Found by pointing `--judge-base-url` at a local OpenAI-compatible endpoint: every verdict waited out three
    # attempts and their backoff, then said "check that the server is up and reachable, or raise
    # timeout/max_attempts", though nothing had been sent and no retry could help.
    from evalkit.outbound import OutboundPolicy
    from evalkit.scoring.evaluators.http_retry import HttpCallError, RetryPolicy, post_json

    started = time.monotonic()
    async with OutboundPolicy().session() as session:
        with pytest.raises(HttpCallError, match=r"was not called: .*EVALKIT_OUTBOUND_ALLOW") as refused:
            await post_json(f"http://127.0.0.1:{closed_port()}/v1/chat/completions", {}, session=session,
                            policy=RetryPolicy(max_attempts=3, backoff_seconds=0.5), what="judge endpoint")
    assert refused.value.attempts == 1 and time.monotonic() - started < 0.5
    assert "raise timeout/max_attempts" not in str(refused.value)
