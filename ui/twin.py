"""A page's data read from its JSON twin: the API route answering the same question, called in process.

The page and `GET /api/...` then cannot disagree: same handler, same access rules (the caller the
login resolved rides along on the request), same caches. An `ApiError` from the route reaches the
page unchanged, which renders it as HTML with the same message.
"""

from __future__ import annotations

from typing import Any

try:
    import orjson
except ImportError:  # pragma: no cover
    orjson = None  # type: ignore[assignment]
import json

from aiohttp import web
from yarl import URL

from evalkit.api import ApiError


async def call_route(request: web.Request, path: str, query: dict[str, Any] | None = None) -> web.Response:
    """GET `path` (an /api route) as the logged-in caller; the route's response."""
    url = URL(path).with_query({k: str(v) for k, v in (query or {}).items() if v is not None and v != ""})
    # clone() keeps the request's state, where caller_of finds the caller this login resolved.
    sub = request.clone(method="GET", rel_url=url)
    match = await request.app.router.resolve(sub)
    if match.http_exception is not None:
        raise ApiError(match.http_exception.status, f"no API route answers GET {path}")
    match.add_app(request.app)
    # aiohttp sets a request's match info only while dispatching; this is that step, done for the sub-request.
    sub._match_info = match
    response = await match.handler(sub)
    if not isinstance(response, web.Response):
        raise ApiError(500, f"GET {path} streams its answer; the UI cannot render it")
    return response


def parse_body(response: web.Response) -> Any:
    body = response.body
    raw = body if isinstance(body, bytes | bytearray) else (response.text or "").encode()
    if orjson is not None:
        return orjson.loads(raw)
    return json.loads(raw)  # pragma: no cover


async def twin(request: web.Request, path: str, query: dict[str, Any] | None = None) -> Any:
    """The JSON the route answers, parsed; an error answer (4xx in the body) becomes an ApiError."""
    response = await call_route(request, path, query)
    data = parse_body(response)
    if response.status >= 400:
        error = data.get("error", {}) if isinstance(data, dict) else {}
        raise ApiError(response.status, str(error.get("message") or f"GET {path} answered {response.status}"))
    return data
