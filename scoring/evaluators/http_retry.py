"""POST a JSON body and read a JSON reply, with a timeout and bounded retries.

Shared by the HTTP evaluator and the LLM judge. Retried: connection failures,
timeouts, 429 and 5xx (honouring a `Retry-After` of seconds, capped). Not
retried: other 4xx (the request itself is wrong; sending it again cannot help)
and a 2xx whose body is not JSON (the server is not speaking the contract).
"""

from __future__ import annotations

import asyncio
import json
import random
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import aiohttp

from evalkit.outbound import OutboundRefused

__all__ = ["HttpCallError", "JsonReply", "RetryPolicy", "post_json"]

_RETRY_STATUS = frozenset({429, 500, 502, 503, 504})


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    timeout_seconds: float = 30.0
    max_attempts: int = 3
    backoff_seconds: float = 0.5
    max_backoff_seconds: float = 10.0

    def delay(self, attempt: int, retry_after: float | None) -> float:
        """Wait before attempt `attempt + 1`: exponential with a little jitter so that
        many runs retrying together do not arrive together."""
        if retry_after is not None:
            return min(retry_after, self.max_backoff_seconds)
        base = self.backoff_seconds * 2 ** (attempt - 1)
        return min(base * (1.0 + 0.1 * random.random()), self.max_backoff_seconds)


@dataclass(frozen=True, slots=True)
class JsonReply:
    body: Any
    status: int
    attempts: int


class HttpCallError(Exception):
    """The call failed for good; `str()` says what happened and what to check."""

    def __init__(self, message: str, *, status: int | None, attempts: int) -> None:
        super().__init__(message)
        self.status = status
        self.attempts = attempts


def _retry_after(headers: Mapping[str, str]) -> float | None:
    value = headers.get("Retry-After")
    if value is None:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        return None  # an HTTP date; the exponential backoff is good enough


def _excerpt(text: str, limit: int = 300) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[:limit] + "…"


async def _once(
    session: aiohttp.ClientSession,
    url: str,
    payload: Any,
    headers: Mapping[str, str],
    policy: RetryPolicy,
) -> tuple[int, str, Mapping[str, str]]:
    timeout = aiohttp.ClientTimeout(total=policy.timeout_seconds)
    async with session.post(url, json=payload, headers=dict(headers), timeout=timeout) as resp:
        return resp.status, await resp.text(), resp.headers


async def post_json(
    url: str,
    payload: Any,
    *,
    headers: Mapping[str, str] | None = None,
    policy: RetryPolicy,
    session: aiohttp.ClientSession | None = None,
    what: str = "endpoint",
) -> JsonReply:
    """POST `payload` to `url`; return the decoded JSON reply or raise HttpCallError."""
    own = session is None
    client = session or aiohttp.ClientSession()
    try:
        last = "no attempt made"
        last_status: int | None = None
        for attempt in range(1, policy.max_attempts + 1):
            retry_after: float | None = None
            try:
                status, text, resp_headers = await _once(client, url, payload, headers or {}, policy)
            except OutboundRefused as exc:
                # The server's own policy refused the address: nothing was sent, and trying again cannot change
                # that (before, it was tried max_attempts times and blamed on a server "not up and reachable").
                raise HttpCallError(f"{what} {url} was not called: {exc}", status=None, attempts=attempt) from None
            except TimeoutError:
                last, last_status = f"no reply within {policy.timeout_seconds:g}s", None
            except aiohttp.ClientError as exc:
                last, last_status = f"{type(exc).__name__}: {exc}", None
            else:
                last_status = status
                if 200 <= status < 300:
                    try:
                        return JsonReply(json.loads(text), status, attempt)
                    except json.JSONDecodeError:
                        raise HttpCallError(
                            f"{what} {url} answered {status} with a body that is not JSON: "
                            f"{_excerpt(text)!r}",
                            status=status,
                            attempts=attempt,
                        ) from None
                if status not in _RETRY_STATUS:
                    raise HttpCallError(
                        f"{what} {url} refused the request with HTTP {status}: {_excerpt(text)!r}; "
                        "check the URL, the credentials and the request contract",
                        status=status,
                        attempts=attempt,
                    )
                last = f"HTTP {status}: {_excerpt(text)!r}"
                retry_after = _retry_after(resp_headers)
            if attempt < policy.max_attempts:
                await asyncio.sleep(policy.delay(attempt, retry_after))
        raise HttpCallError(
            f"{what} {url} failed after {policy.max_attempts} attempt(s); last: {last}; "
            "check that the server is up and reachable, or raise timeout/max_attempts",
            status=last_status,
            attempts=policy.max_attempts,
        )
    finally:
        if own:
            await client.close()
