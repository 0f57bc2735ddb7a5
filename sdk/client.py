"""The HTTP client of the service (aiohttp): one JSON call, clear errors, retries where they are safe.

A service that is down or slow gives an error naming its URL. Calls that
create things are safe to retry because the service makes them idempotent:
a run is keyed by (experiment, case, repetition, attempt), a blob by its hash.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Mapping
from typing import Any
from urllib.parse import quote

import aiohttp

from evalkit.sdk.config import Connection
from evalkit.service_address import NOT_THE_API_STATUSES, not_the_api, service_message

_RETRY_STATUSES = (502, 503, 504)


class ServiceError(RuntimeError):
    """The service answered with an error; `message` is its own words (they say what to do next)."""

    def __init__(self, method: str, path: str, status: int, message: str) -> None:
        super().__init__(f"{method} {path}: {status} {message}")
        self.method, self.path, self.status, self.message = method, path, status, message


class ServiceUnreachable(RuntimeError):
    """The service could not be reached or did not answer in time."""


def segment(value: str) -> str:
    return quote(str(value), safe="@~")


class ServiceClient:
    def __init__(self, connection: Connection, *, timeout: float = 60.0, attempts: int = 4) -> None:
        self.url = connection.url
        self.token = connection.token
        self.timeout = timeout
        self.attempts = attempts
        self._session: aiohttp.ClientSession | None = None

    async def __aenter__(self) -> ServiceClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    def _http(self) -> aiohttp.ClientSession:
        if self._session is None or self._session.closed:
            headers = {"Authorization": f"Bearer {self.token}"} if self.token else {}
            self._session = aiohttp.ClientSession(headers=headers)
        return self._session

    async def close(self) -> None:
        if self._session is not None:
            await self._session.close()
            self._session = None

    async def call(self, method: str, path: str, body: Any = None, *, params: Mapping[str, Any] | None = None,
                   timeout: float | None = None, data: bytes | None = None, raw: bool = False,
                   ok_statuses: tuple[int, ...] = (), attempts: int | None = None) -> Any:
        """One request; retried on connection failures and 502/503/504 (with Retry-After), up to `attempts`
        tries (the client's own by default)."""
        url = self.url + path
        query = [(k, str(v).lower() if isinstance(v, bool) else str(v))
                 for k, v in (params or {}).items() if v is not None
                 for v in (v if isinstance(v, list | tuple) else [v])]
        wait = timeout or self.timeout
        last: Exception | None = None
        tries = attempts or self.attempts
        for attempt in range(tries):
            try:
                async with self._http().request(
                        method, url, params=query, data=data,
                        json=body if data is None and body is not None else None,
                        timeout=aiohttp.ClientTimeout(total=wait)) as response:
                    payload = await response.read()
                    if response.status in _RETRY_STATUSES and attempt + 1 < tries:
                        await asyncio.sleep(_retry_after(response.headers.get("Retry-After"), attempt))
                        continue
                    if response.status >= 400 and response.status not in ok_statuses:
                        said = service_message(payload)
                        if said is None and response.status in NOT_THE_API_STATUSES:
                            said = not_the_api(self.url, path, f"answered {response.status} {response.reason}")
                        raise ServiceError(method, path, response.status,
                                           said if said is not None else _message(payload, response.reason))
                    if raw:
                        return response.status, dict(response.headers), payload
                    return json.loads(payload) if payload else None
            except (aiohttp.ClientConnectionError, aiohttp.ClientPayloadError) as exc:
                last = exc
            except TimeoutError as exc:
                last = exc
                # A slow service is not hammered: one more try, then say so.
                if attempt >= 1:
                    break
            if attempt + 1 < tries:
                await asyncio.sleep(0.5 * 2 ** attempt)
        if isinstance(last, TimeoutError):
            raise ServiceUnreachable(f"evalkit at {self.url} did not answer {method} {path} within {wait:g}s; "
                                     "is the service overloaded? check `evalkit serve` logs") from last
        raise ServiceUnreachable(f"evalkit is not reachable at {self.url} ({last}); start it with `evalkit serve` "
                                 "or point EVALKIT_URL (or `evalkit login URL`) at it") from last


def _retry_after(header: str | None, attempt: int) -> float:
    try:
        return min(10.0, float(header)) if header else 0.5 * 2 ** attempt
    except ValueError:
        return 0.5 * 2 ** attempt


def _message(payload: bytes, reason: str | None) -> str:
    """An error body that is not evalkit's JSON (a proxy's, a 413 of the server): its text, or the reason."""
    text = payload.decode("utf-8", "replace").strip()
    return text[:300] or (reason or "")
