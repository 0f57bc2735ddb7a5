"""The LLM judge: any OpenAI-compatible chat endpoint grades a run against a rubric.

- The verdict is asked for as a JSON object `{"passed", "score", "explanation"}`
  at temperature 0.
- A reply that does not parse is resampled: the judge is shown its reply and
  what was wrong with it and asked again, up to `max_attempts` times; then the
  evaluation is an error that says so (with the last reply), never a guess.
- `samples` > 1 asks for that many independent verdicts and takes the majority
  (a tie does not pass); the score is their mean.
- Every request's token usage counts, the failed attempts' too (hidden retries
  must not hide spend); cost comes from the spec's `price`, else from the
  service's price book (`pricing`: what prices an agent's calls prices its
  judge's), else it is None (unpriced), never $0.
- The API key is passed in by the caller (the service resolves it from the
  caller's credentials by base URL); nothing here reads the environment.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import aiohttp
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from .base import Evaluation, EvaluationInput, Evaluator, EvaluatorConfig, TokenUsage
from .builtin import iter_steps
from .http_retry import HttpCallError, RetryPolicy, post_json

__all__ = ["JudgeConfig", "JudgePrice", "JudgePricing", "JudgeVerdict", "LLMJudge", "parse_verdict"]

PROMPT_VERSION = "1"

SYSTEM_PROMPT = """You are a strict, impartial evaluator of an AI agent's work.
Judge the agent's response against the rubric. Use the reference answer, when one is given, as the
standard of correctness. Do not reward length or confidence.

Reply with only a JSON object, no prose and no code fence:
{"passed": true or false, "score": a number from 0 to 1, "explanation": "one or two sentences"}"""

RETRY_PROMPT = """Your reply could not be used: {problem}.
Reply again with only the JSON object {{"passed": ..., "score": ..., "explanation": ...}}."""


# (model, base URL, usage) -> (USD, where the price came from), or None when nobody prices the model.
JudgePricing = Callable[[str, str, "TokenUsage"], "tuple[float, str] | None"]


class JudgePrice(EvaluatorConfig):
    """USD per million tokens."""

    input_per_mtok: float = Field(ge=0)
    output_per_mtok: float = Field(ge=0)

    def cost(self, usage: TokenUsage) -> float:
        return (usage.input_tokens * self.input_per_mtok + usage.output_tokens * self.output_per_mtok) / 1e6


class JudgeConfig(EvaluatorConfig):
    base_url: str = Field(description="OpenAI-compatible base URL, e.g. https://api.openai.com/v1")
    model: str = Field(min_length=1)
    rubric: str | None = Field(default=None, description="used when the case has no rubric of its own")
    max_attempts: int = Field(
        default=3, ge=1, le=10, description="tries per verdict when replies do not parse"
    )
    samples: int = Field(default=1, ge=1, le=15, description="independent verdicts; the majority decides")
    pass_threshold: float = Field(
        default=0.5, ge=0, le=1, description="passed = score >= this, if only a score"
    )
    timeout_seconds: float = Field(default=60.0, gt=0)
    max_retries: int = Field(default=3, ge=1, le=10, description="transport attempts per request")
    backoff_seconds: float = Field(default=1.0, ge=0)
    max_tokens: int | None = Field(default=1024, ge=1)
    json_mode: bool = Field(
        default=True, description="send response_format json_object (off for servers without it)"
    )
    include_trajectory: bool = Field(default=False, description="show the judge the run's tool calls")
    price: JudgePrice | None = None

    @field_validator("base_url")
    @classmethod
    def _http_url(cls, v: str) -> str:
        if not v.startswith(("http://", "https://")):
            raise ValueError(f"base_url must start with http:// or https://, got {v!r}")
        return v.rstrip("/")


class JudgeVerdict(BaseModel):
    model_config = ConfigDict(extra="ignore")

    passed: bool | None = None
    score: float | None = Field(default=None, ge=0, le=1)
    explanation: str = ""

    @model_validator(mode="after")
    def _has_verdict(self) -> JudgeVerdict:
        if self.passed is None and self.score is None:
            raise ValueError('neither "passed" nor "score" is present')
        if self.score is not None and not math.isfinite(self.score):
            raise ValueError("score is not a finite number")
        return self


_FENCE = re.compile(r"^```[a-zA-Z]*\s*|\s*```$")


def parse_verdict(text: str | None) -> tuple[JudgeVerdict | None, str]:
    """The verdict in a judge's reply, or None and what was wrong with the reply.

    Accepts a bare JSON object, one inside a code fence, or one embedded in prose
    (from the first '{' to the last '}').
    """
    if not text or not text.strip():
        return None, "the reply was empty"
    body = _FENCE.sub("", text.strip())
    candidates = [body]
    start, end = body.find("{"), body.rfind("}")
    if 0 <= start < end:
        candidates.append(body[start : end + 1])
    data: Any = None
    for candidate in candidates:
        try:
            data = json.loads(candidate)
            break
        except json.JSONDecodeError:
            continue
    else:
        return None, "the reply is not a JSON object"
    if not isinstance(data, dict):
        return None, "the reply is JSON but not an object"
    try:
        return JudgeVerdict.model_validate(data), ""
    except ValidationError as exc:
        problems = "; ".join(f"{'.'.join(map(str, e['loc'])) or 'object'}: {e['msg']}" for e in exc.errors())
        return None, f"the JSON object is not a verdict ({problems})"


@dataclass
class _Sample:
    verdict: JudgeVerdict | None
    attempts: int
    problems: list[str] = field(default_factory=list)
    last_reply: str | None = None
    error: str | None = None


def _show(value: Any) -> str:
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, indent=2, default=str)


def _tool_summary(trajectory: dict[str, Any], limit: int = 50) -> str:
    lines = []
    for step in iter_steps(trajectory):
        for call in step.get("tool_calls") or ():
            if isinstance(call, dict):
                args = json.dumps(call.get("arguments", {}), ensure_ascii=False, default=str)
                lines.append(
                    f"- step {step.get('step_id', '?')}: {call.get('function_name', '?')}({args[:200]})"
                )
    if len(lines) > limit:
        lines = [*lines[:limit], f"- … and {len(lines) - limit} more"]
    return "\n".join(lines) or "(no tool calls)"


class LLMJudge(Evaluator[JudgeConfig]):
    type = "judge"
    version = f"prompt-{PROMPT_VERSION}"
    config_model = JudgeConfig

    def __init__(
        self,
        config: JudgeConfig,
        *,
        name: str | None = None,
        api_key: str | None = None,
        session: aiohttp.ClientSession | None = None,
        pricing: JudgePricing | None = None,
    ) -> None:
        super().__init__(config, name=name)
        self._api_key = api_key
        self._session = session
        self._pricing = pricing
        self._policy = RetryPolicy(
            timeout_seconds=config.timeout_seconds,
            max_attempts=config.max_retries,
            backoff_seconds=config.backoff_seconds,
        )

    @property
    def endpoint(self) -> str:
        return f"{self.config.base_url}/chat/completions"

    def messages(self, item: EvaluationInput, rubric: str) -> list[dict[str, str]]:
        parts = [f"## Rubric\n{rubric}", f"## Task given to the agent\n{_show(item.input)}"]
        if item.expected is not None:
            parts.append(f"## Reference answer\n{_show(item.expected)}")
        if item.answer is not None:
            parts.append(f"## Agent's answer\n{item.answer}")
        if item.output is not None:
            parts.append(f"## Agent's structured output\n{_show(item.output)}")
        if item.answer is None and item.output is None:
            parts.append("## Agent's answer\n(the agent gave no answer)")
        if self.config.include_trajectory and item.trajectory is not None:
            parts.append(f"## Tools the agent called\n{_tool_summary(item.trajectory)}")
        return [{"role": "system", "content": SYSTEM_PROMPT}, {"role": "user", "content": "\n\n".join(parts)}]

    async def _complete(self, messages: Sequence[dict[str, str]], usage: TokenUsage) -> str | None:
        payload: dict[str, Any] = {"model": self.config.model, "messages": list(messages), "temperature": 0}
        if self.config.max_tokens is not None:
            payload["max_tokens"] = self.config.max_tokens
        if self.config.json_mode:
            payload["response_format"] = {"type": "json_object"}
        headers = {"Authorization": f"Bearer {self._api_key}"} if self._api_key else {}
        reply = await post_json(
            self.endpoint,
            payload,
            headers=headers,
            policy=self._policy,
            session=self._session,
            what="judge endpoint",
        )
        body = reply.body if isinstance(reply.body, dict) else {}
        u = body.get("usage") or {}
        if isinstance(u, dict):
            usage.input_tokens += int(u.get("prompt_tokens") or 0)
            usage.output_tokens += int(u.get("completion_tokens") or 0)
        try:
            content = body["choices"][0]["message"]["content"]
        except (KeyError, IndexError, TypeError):
            raise HttpCallError(
                f"judge endpoint {self.endpoint} replied without choices[0].message.content; "
                "is base_url an OpenAI-compatible /v1 URL?",
                status=reply.status,
                attempts=reply.attempts,
            ) from None
        return content if isinstance(content, str) else None

    async def _sample(self, base: list[dict[str, str]], usage: TokenUsage) -> _Sample:
        messages = list(base)
        sample = _Sample(verdict=None, attempts=0)
        for _ in range(self.config.max_attempts):
            sample.attempts += 1
            try:
                text = await self._complete(messages, usage)
            except HttpCallError as exc:
                sample.error = str(exc)
                return sample
            verdict, problem = parse_verdict(text)
            if verdict is not None:
                sample.verdict = verdict
                return sample
            sample.problems.append(problem)
            sample.last_reply = text
            # Show the judge its own reply and the problem: at temperature 0 the
            # same prompt would likely produce the same unusable reply.
            messages = [
                *base,
                {"role": "assistant", "content": text or ""},
                {"role": "user", "content": RETRY_PROMPT.format(problem=problem)},
            ]
        return sample

    def _cost(self, usage: TokenUsage, meta: dict[str, Any]) -> float | None:
        """What the judge's requests cost: the spec's price first (the caller knows its contract), else the price
        book's for the model; None when neither prices it."""
        if self.config.price is not None:
            meta["price_source"] = "spec"
            return self.config.price.cost(usage)
        priced = self._pricing(self.config.model, self.config.base_url, usage) if self._pricing else None
        if priced is None:
            return None
        meta["price_source"] = priced[1]
        return priced[0]

    def _passed(self, v: JudgeVerdict) -> bool:
        return v.passed if v.passed is not None else (v.score or 0.0) >= self.config.pass_threshold

    def _score(self, v: JudgeVerdict) -> float:
        return v.score if v.score is not None else (1.0 if v.passed else 0.0)

    async def evaluate(self, item: EvaluationInput) -> Evaluation:
        rubric = item.rubric or self.config.rubric
        usage = TokenUsage()
        meta: dict[str, Any] = {"judge_model": self.config.model, "prompt_version": PROMPT_VERSION}
        if not rubric:
            return Evaluation.failure(
                f"judge {self.name!r}: no rubric; give the case a rubric or set `rubric` in the judge config",
                **meta,
            )
        base = self.messages(item, rubric)
        samples = [await self._sample(base, usage) for _ in range(self.config.samples)]
        cost = self._cost(usage, meta)
        meta["attempts"] = [s.attempts for s in samples]
        valid = [s.verdict for s in samples if s.verdict is not None]
        need = self.config.samples // 2 + 1
        if len(valid) < need:
            broken = next(s for s in samples if s.verdict is None)
            if broken.error is not None:
                message = f"judge {self.name!r} could not be asked: {broken.error}"
            else:
                message = (
                    f"judge {self.name!r} gave no usable verdict in {broken.attempts} attempt(s) "
                    f"({'; '.join(broken.problems)}); last reply: {(broken.last_reply or '')[:300]!r}. "
                    "Try a stronger judge model, json_mode, or more max_attempts"
                )
            if self.config.samples > 1:
                message += f" ({len(valid)} of {self.config.samples} samples usable, {need} needed)"
            return Evaluation(
                error=message, label="error", explanation=message, metadata=meta, usage=usage, cost_usd=cost
            )
        votes = [self._passed(v) for v in valid]
        yes = sum(votes)
        passed = yes > len(votes) - yes
        score = math.fsum(self._score(v) for v in valid) / len(valid)
        agreeing = next(v for v in valid if self._passed(v) == passed)
        explanation = agreeing.explanation
        if len(valid) > 1:
            meta["votes"] = {"passed": yes, "failed": len(votes) - yes}
            meta["explanations"] = [v.explanation for v in valid]
            tie = " (a tie does not pass)" if yes * 2 == len(votes) else ""
            explanation = f"{yes} of {len(votes)} verdicts passed{tie}. {explanation}"
        return Evaluation(
            score=score,
            passed=passed,
            label="pass" if passed else "fail",
            explanation=explanation,
            metadata=meta,
            usage=usage,
            cost_usd=cost,
        )
