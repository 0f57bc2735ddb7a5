"""What every UI page shares: login from the session cookie, the security headers, HTML error pages,
and the `?format=json` twin.

A handler returns a `Page` (template, its context, and the JSON it was drawn from); `?format=json`
answers that JSON, the same the `/api` route named in `Page.api` answers to a bearer token.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote

from aiohttp import web
from jinja2 import Environment

from evalkit.access import AccessError
from evalkit.api import ApiError, Caller, caller_of, dumps_json, error_response
from evalkit.query_params import bool_param
from evalkit.store import StoreUnavailable
from evalkit.ui.login_sessions import CSRF_COOKIE, SESSION_COOKIE, LoginSession, LoginSessions

# No inline script or style anywhere; nothing from another origin (images and audio from this site or data: URLs);
# no framing; forms post here only.
CSP = ("default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; media-src 'self' data:; "
       "connect-src 'self'; font-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'")
SECURITY_HEADERS = {
    "Content-Security-Policy": CSP,
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "same-origin",
    "X-Frame-Options": "DENY",
    "Cache-Control": "no-store",
}


@dataclass
class Ui:
    environment: Environment
    logins: LoginSessions


UI_KEY = web.AppKey("ui", Ui)


@dataclass
class Page:
    template: str
    context: dict[str, Any]
    data: Any = None  # the JSON twin
    api: str | None = None  # the API route answering the same, for scripts with a token
    title: str = ""
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)


class NeedLogin(Exception):
    pass


def ui_of(request: web.Request) -> Ui:
    return request.app[UI_KEY]


def login_of(request: web.Request) -> LoginSession | None:
    return ui_of(request).logins.get(request.cookies.get(SESSION_COOKIE))


async def caller_from_token(request: web.Request, token: str) -> Caller:
    """Authenticate `token` exactly as the API does (its `caller_of`), without putting it anywhere."""
    sub = request.clone(headers={"Authorization": f"Bearer {token}"})
    sub.pop("caller", None)
    return await caller_of(sub)


async def login_caller(request: web.Request) -> Caller:
    login = login_of(request)
    if login is None:
        raise NeedLogin
    try:
        caller = await caller_from_token(request, login.token)
    except ApiError as exc:
        if exc.status == 401:  # revoked since the login
            ui_of(request).logins.close(request.cookies.get(SESSION_COOKIE))
            raise NeedLogin from exc
        raise
    request["caller"] = caller  # caller_of (the API routes the pages read) finds it here
    return caller


def secure(response: web.StreamResponse) -> web.StreamResponse:
    for name, value in SECURITY_HEADERS.items():
        response.headers.setdefault(name, value)
    return response


def render(request: web.Request, template: str, status: int = 200, **context: Any) -> web.Response:
    ui = ui_of(request)
    login = login_of(request)
    csrf = login.csrf if login is not None else request.get("csrf_cookie") or request.cookies.get(CSRF_COOKIE, "")
    html = ui.environment.get_template(template).render(
        caller=request.get("caller"), csrf=csrf, path=request.path_qs, **context)
    return web.Response(text=html, status=status, content_type="text/html", charset="utf-8")


@dataclass(frozen=True)
class Serves:
    """What a page answers: its formats (`?format=`, the first the default) and whether `?download=` gives a file."""

    formats: tuple[str, ...] = ("html", "json")
    download: bool = False


def asked_for_json(request: web.Request) -> bool:
    """`?format=json` (any case): the request is a script's, so its errors answer as JSON too."""
    return request.query.get("format", "").strip().lower() == "json"


def _either(words: tuple[str, ...]) -> str:
    return " or ".join(words) if len(words) < 3 else ", ".join(words[:-1]) + " or " + words[-1]


def page_query(request: web.Request, serves: Serves) -> tuple[str, bool]:
    """The page's `?format=` and `?download=`, checked the one way every page shares: a format it does not serve
    (`?format=xml`) or a download that is not a yes or no (`?download=zzz`) is a 400 saying what to use, never
    the HTML page or a download taken silently."""
    raw = request.query.get("format", "")
    chosen = raw.strip().lower() or serves.formats[0]
    if chosen not in serves.formats:
        other = next((f for f in serves.formats if f != serves.formats[0]), None)
        raise ApiError(400, f"format={raw[:40]!r} is not one this page serves: format must be {_either(serves.formats)}"
                            + (f"; try ?format={other}" if other else "; leave format out"))
    download = bool_param(request, "download")
    if download and not serves.download:
        raise ApiError(400, "this page has no file to download; leave download out"
                            + ("" if "json" not in serves.formats else ", or get its data with ?format=json"))
    return chosen, download


def error_page(request: web.Request, status: int, message: str) -> web.StreamResponse:
    if asked_for_json(request):
        # The JSON twin fails as its /api route does: a script reading it gets the error as JSON, not HTML.
        return secure(error_response(status, message))
    titles = {400: "Bad request", 403: "Not allowed", 404: "Not found", 409: "Not ready", 413: "Too large",
              500: "Something failed here", 503: "Store unavailable"}
    return secure(render(request, "error.html", status=status, title=titles.get(status, f"Error {status}"),
                         message=message))


Handler = Callable[[web.Request], Awaitable["Page | web.StreamResponse"]]
Wrapped = Callable[[web.Request], Awaitable[web.StreamResponse]]


def page(handler: Handler) -> Wrapped:
    """A UI page: login required, errors as HTML pages with the API's message, `?format=json`."""
    return serving(Serves())(handler)


def serving(serves: Serves) -> Callable[[Handler], Wrapped]:
    """A UI page answering what `serves` says (`page` is HTML and its JSON twin); the handler finds the checked
    `?format=` and `?download=` in `request["page_format"]` and `request["page_download"]`."""
    return lambda handler: _wrap(handler, serves)


def _wrap(handler: Handler, serves: Serves) -> Wrapped:
    async def wrapped(request: web.Request) -> web.StreamResponse:
        try:
            await login_caller(request)
            request["page_format"], request["page_download"] = page_query(request, serves)
            result = await handler(request)
        except NeedLogin:
            return secure(web.HTTPSeeOther(f"/login?next={quote(request.path_qs, safe='')}"))
        except (ApiError, AccessError) as exc:
            return error_page(request, exc.status, str(exc))
        except StoreUnavailable as exc:
            response = error_page(request, 503, f"{exc}; reload this page in a few seconds")
            response.headers["Retry-After"] = "2"
            return response
        if not isinstance(result, Page):
            return secure(result)
        if request["page_format"] == "json":
            return secure(web.Response(body=dumps_json(result.data), content_type="application/json",
                                       status=result.status, headers=result.headers))
        response = render(request, result.template, status=result.status, title=result.title, api=result.api,
                          **result.context)
        response.headers.update(result.headers)
        return secure(response)

    wrapped.__name__ = handler.__name__
    wrapped.__doc__ = handler.__doc__
    return wrapped


def query_int(request: web.Request, name: str, default: int, *, low: int = 0, high: int = 10**9) -> int:
    raw = request.query.get(name, "")
    if raw == "":
        return default
    try:
        value = int(raw)
    except ValueError as exc:
        raise ApiError(400, f"{name}={raw!r} must be a whole number; fix it in the address bar") from exc
    if not low <= value <= high:
        raise ApiError(400, f"{name}={value} is out of range: use {low}..{high}")
    return value


def with_query(request: web.Request, **changes: Any) -> str:
    """This page's address with some query parameters changed (None removes one)."""
    query = dict(request.query)
    for key, value in changes.items():
        if value is None:
            query.pop(key, None)
        else:
            query[key] = str(value)
    return str(request.rel_url.with_query(query))
