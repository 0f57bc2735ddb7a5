"""The LLM judge against a local OpenAI-compatible endpoint served by the test."""

from __future__ import annotations

import json
import socket
from collections.abc import Awaitable, Callable
from typing import Any

import pytest
from aiohttp import web

from evalkit.scoring.evaluators import EvaluationInput, build_evaluator
from evalkit.scoring.evaluators.base import TokenUsage
from evalkit.scoring.evaluators.judge import parse_verdict

Serve = Callable[[web.Application], Awaitable[str]]

ITEM = EvaluationInput(
    input="What is 2 + 2?",
    answer="4",
    expected="4",
    rubric="Correct if the answer equals the reference.",
    trajectory={
        "steps": [
            {"step_id": 1, "source": "agent", "tool_calls": [{"function_name": "calc", "arguments": {}}]}
        ]
    },
)


class FakeOpenAI:
    """Replies with scripted message contents, in order; records each request."""

    def __init__(self, *contents: str, usage: tuple[int, int] = (100, 20)) -> None:
        self.contents = list(contents)
        self.requests: list[dict[str, Any]] = []
        self.auth: list[str | None] = []
        self.usage = usage

    async def handle(self, request: web.Request) -> web.Response:
        body = await request.json()
        self.requests.append(body)
        self.auth.append(request.headers.get("Authorization"))
        content = self.contents.pop(0)
        return web.json_response(
            {
                "id": f"chatcmpl-{len(self.requests)}",
                "object": "chat.completion",
                "model": body["model"],
                "choices": [
                    {
                        "index": 0,
                        "finish_reason": "stop",
                        "message": {"role": "assistant", "content": content},
                    }
                ],
                "usage": {
                    "prompt_tokens": self.usage[0],
                    "completion_tokens": self.usage[1],
                    "total_tokens": sum(self.usage),
                },
            }
        )

    def app(self) -> web.Application:
        app = web.Application()
        app.router.add_post("/v1/chat/completions", self.handle)
        return app


def verdict(passed: bool, score: float, why: str = "fine") -> str:
    return json.dumps({"passed": passed, "score": score, "explanation": why})


def judge_spec(url: str, **config: Any) -> dict[str, Any]:
    return {
        "type": "judge",
        "name": "judge",
        "base_url": f"{url}/v1/",
        "model": "judge-model",
        "backoff_seconds": 0.01,
        **config,
    }


PRICE = {"input_per_mtok": 2.0, "output_per_mtok": 10.0}


async def test_a_good_verdict_with_usage_cost_and_the_request_shape(serve: Serve):
    fake = FakeOpenAI(verdict(True, 0.9, "4 is right"))
    url = await serve(fake.app())
    judge = build_evaluator(
        judge_spec(url, price=PRICE, include_trajectory=True), credentials={f"{url}/v1": "sk-test"}
    )
    ev = await judge.evaluate(ITEM)
    assert (ev.error, ev.passed, ev.score, ev.explanation) == (None, True, 0.9, "4 is right")
    assert ev.usage is not None and (ev.usage.input_tokens, ev.usage.output_tokens) == (100, 20)
    # 100·2/1e6 + 20·10/1e6
    assert ev.cost_usd == pytest.approx(0.0004)
    req = fake.requests[0]
    assert req["model"] == "judge-model" and req["temperature"] == 0
    assert req["response_format"] == {"type": "json_object"}
    user = req["messages"][1]["content"]
    assert "Correct if the answer equals the reference." in user and "## Reference answer\n4" in user
    assert "calc({})" in user
    assert fake.auth == ["Bearer sk-test"]
    assert ev.metadata["judge_model"] == "judge-model"


async def test_unparseable_verdict_is_resampled_with_the_problem_shown(serve: Serve):
    fake = FakeOpenAI("I think it is correct!", "```json\n" + verdict(False, 0.1, "wrong") + "\n```")
    url = await serve(fake.app())
    ev = await build_evaluator(judge_spec(url, price=PRICE)).evaluate(ITEM)
    assert ev.error is None and ev.passed is False and ev.score == 0.1
    assert ev.metadata["attempts"] == [2]
    # both requests are paid for
    assert ev.usage is not None and ev.usage.input_tokens == 200
    assert ev.cost_usd == pytest.approx(0.0008)
    retry = fake.requests[1]["messages"]
    assert retry[2] == {"role": "assistant", "content": "I think it is correct!"}
    assert "not a JSON object" in retry[3]["content"]


async def test_verdicts_that_never_parse_become_an_evaluation_error(serve: Serve):
    fake = FakeOpenAI("yes", '{"passed": "maybe"}', '{"score": 7}')
    url = await serve(fake.app())
    ev = await build_evaluator(judge_spec(url, max_attempts=3)).evaluate(ITEM)
    assert ev.passed is None and ev.score is None
    assert ev.error is not None
    assert "no usable verdict in 3 attempt(s)" in ev.error
    assert "passed: Input should be a valid boolean" in ev.error
    assert "score: Input should be less than or equal to 1" in ev.error
    assert "last reply: '{\"score\": 7}'" in ev.error
    assert ev.usage is not None and ev.usage.input_tokens == 300
    assert ev.cost_usd is None  # no price given: unpriced, not free


async def test_majority_of_three(serve: Serve):
    fake = FakeOpenAI(verdict(True, 0.8, "a"), verdict(False, 0.2, "b"), verdict(True, 1.0, "c"))
    url = await serve(fake.app())
    ev = await build_evaluator(judge_spec(url, samples=3)).evaluate(ITEM)
    assert ev.passed is True
    assert ev.score == pytest.approx((0.8 + 0.2 + 1.0) / 3)
    assert ev.metadata["votes"] == {"passed": 2, "failed": 1}
    assert ev.explanation is not None and ev.explanation.startswith("2 of 3 verdicts passed. a")
    assert len(fake.requests) == 3


async def test_majority_tie_does_not_pass(serve: Serve):
    fake = FakeOpenAI(verdict(True, 0.6), verdict(False, 0.4), verdict(True, 0.6), verdict(False, 0.4))
    url = await serve(fake.app())
    ev = await build_evaluator(judge_spec(url, samples=4)).evaluate(ITEM)
    assert ev.passed is False
    assert "a tie does not pass" in (ev.explanation or "")


async def test_majority_survives_one_broken_sample_but_not_two(serve: Serve):
    fake = FakeOpenAI("junk", verdict(True, 1.0), verdict(True, 1.0))
    url = await serve(fake.app())
    ev = await build_evaluator(judge_spec(url, samples=3, max_attempts=1)).evaluate(ITEM)
    assert ev.passed is True and ev.metadata["votes"] == {"passed": 2, "failed": 0}
    fake2 = FakeOpenAI("junk", "junk", verdict(True, 1.0))
    url2 = await serve(fake2.app())
    ev2 = await build_evaluator(judge_spec(url2, samples=3, max_attempts=1)).evaluate(ITEM)
    assert ev2.error is not None and "1 of 3 samples usable, 2 needed" in ev2.error


async def test_endpoint_down_is_an_evaluation_error():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    ev = await build_evaluator(judge_spec(f"http://127.0.0.1:{port}", max_retries=2)).evaluate(ITEM)
    assert ev.passed is None
    assert ev.error is not None
    assert f"judge endpoint http://127.0.0.1:{port}/v1/chat/completions failed after 2 attempt(s)" in ev.error
    assert "check that the server is up" in ev.error


async def test_refused_key_is_not_retried(serve: Serve):
    calls = 0

    async def handler(request: web.Request) -> web.Response:
        nonlocal calls
        calls += 1
        return web.json_response({"error": {"message": "Incorrect API key"}}, status=401)

    app = web.Application()
    app.router.add_post("/v1/chat/completions", handler)
    url = await serve(app)
    ev = await build_evaluator(judge_spec(url)).evaluate(ITEM)
    assert calls == 1
    assert ev.error is not None and "HTTP 401" in ev.error and "credentials" in ev.error


async def test_no_rubric_anywhere_is_an_evaluation_error():
    judge = build_evaluator(judge_spec("http://127.0.0.1:1"))
    ev = await judge.evaluate(EvaluationInput(input="q", answer="a"))
    assert ev.error is not None and "no rubric" in ev.error


async def test_config_rubric_is_used_when_the_case_has_none(serve: Serve):
    fake = FakeOpenAI(json.dumps({"score": 0.7}))
    url = await serve(fake.app())
    judge = build_evaluator(judge_spec(url, rubric="Be kind.", json_mode=False))
    ev = await judge.evaluate(EvaluationInput(input="q", answer="a"))
    # only a score: passed follows the 0.5 threshold
    assert (ev.passed, ev.score) == (True, 0.7)
    assert "Be kind." in fake.requests[0]["messages"][1]["content"]
    assert "response_format" not in fake.requests[0]


@pytest.mark.parametrize(
    ("text", "ok"),
    [
        ('{"passed": true, "score": 1, "explanation": "x"}', True),
        ('Sure! Here it is: {"passed": false, "explanation": "x"} Hope that helps.', True),
        ('```\n{"score": 0.5}\n```', True),
        ("", False),
        ("[true]", False),
        ('{"explanation": "no verdict"}', False),
    ],
)
def test_parse_verdict(text: str, ok: bool):
    v, problem = parse_verdict(text)
    assert (v is not None) is ok
    assert bool(problem) is not ok


async def test_a_judge_without_a_price_is_priced_by_the_price_book(serve: Serve):
    """Before: a judge whose spec gave no `price` was unpriced even for a model the service prices every agent
    call of. Now the service's book prices it (its prices.yaml rules first); the spec's price still wins, and a
    model nobody prices stays unpriced, never $0."""
    from evalkit.scoring.evaluate import judge_pricing
    from evalkit.trajectory.prices import PriceBook

    book = judge_pricing(PriceBook.from_yaml(
        "rules:\n  - model: judge-model\n    input: 1.0\n    output: 4.0\n",
        use_genai_prices=False))
    fake = FakeOpenAI(*[verdict(True, 1.0, "ok")] * 3)
    url = await serve(fake.app())
    ev = await build_evaluator(judge_spec(url), judge_pricing=book).evaluate(ITEM)
    assert ev.cost_usd == pytest.approx((100 * 1.0 + 20 * 4.0) / 1e6)
    assert ev.metadata["price_source"] == "prices.yaml"
    spec_priced = await build_evaluator(judge_spec(url, price=PRICE), judge_pricing=book).evaluate(ITEM)
    assert spec_priced.cost_usd == pytest.approx((100 * 2.0 + 20 * 10.0) / 1e6)
    assert spec_priced.metadata["price_source"] == "spec"
    other = await build_evaluator(judge_spec(url, model="nobody-prices-this"), judge_pricing=book).evaluate(ITEM)
    assert other.cost_usd is None and "price_source" not in other.metadata
    # genai-prices knows gpt-4o-mini: at OpenAI's own host and by name elsewhere alike.
    usage_book = judge_pricing(PriceBook())
    at_openai = usage_book("gpt-4o-mini", "https://api.openai.com/v1", TokenUsage(input_tokens=1000, output_tokens=100))
    assert at_openai is not None and at_openai[0] > 0 and at_openai[1].startswith("genai-prices")
