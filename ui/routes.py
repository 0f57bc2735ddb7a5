"""The UI's routes on the API app: login and logout, the home page, static files, and each part's pages."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from aiohttp import web

from evalkit.api import BROWSER_ERROR_PAGE, ApiError, Context
from evalkit.ui import dataset_pages, experiment_pages, session_pages
from evalkit.ui.login_sessions import CSRF_COOKIE, SESSION_COOKIE, SESSION_SECONDS, LoginSessions, new_csrf, same_token
from evalkit.ui.page import (
    UI_KEY,
    NeedLogin,
    Page,
    Serves,
    Ui,
    caller_from_token,
    error_page,
    login_caller,
    login_of,
    page,
    page_query,
    render,
    secure,
    ui_of,
)
from evalkit.ui.render import environment
from evalkit.ui.twin import twin

STATIC = Path(__file__).parent / "static"
# The login and logout forms are HTML only: no JSON twin, nothing to download.
FORM_ONLY = Serves(formats=("html",))


def _cookie_options(request: web.Request) -> dict[str, Any]:
    return {"httponly": True, "samesite": "Lax", "path": "/", "secure": request.secure}


def _safe_next(raw: str | None) -> str:
    # Only a path of this site: never //host or a scheme, which would make the login an open redirect. Control
    # characters are refused too: URLs drop tabs and newlines, so "/<TAB>/evil.example" became "//evil.example".
    if raw and raw.startswith("/") and not raw.startswith("//") and "\\" not in raw \
            and not any(ord(c) < 0x20 or ord(c) == 0x7f for c in raw):
        return raw
    return "/"


async def login_form(request: web.Request) -> web.StreamResponse:
    csrf = request.cookies.get(CSRF_COOKIE) or new_csrf()
    request["csrf_cookie"] = csrf
    try:
        await login_caller(request)
    except (NeedLogin, ApiError):
        pass
    try:
        page_query(request, FORM_ONLY)
    except ApiError as exc:
        return error_page(request, exc.status, str(exc))
    response = render(request, "login.html", title="Log in", next=_safe_next(request.query.get("next")),
                      error=None)
    response.set_cookie(CSRF_COOKIE, csrf, max_age=SESSION_SECONDS, **{**_cookie_options(request),
                                                                       "samesite": "Strict"})
    return secure(response)


def _login_refused(request: web.Request, status: int, message: str, next_path: str) -> web.StreamResponse:
    csrf = request.cookies.get(CSRF_COOKIE) or new_csrf()
    request["csrf_cookie"] = csrf
    response = render(request, "login.html", status=status, title="Log in", next=next_path, error=message)
    response.set_cookie(CSRF_COOKIE, csrf, max_age=SESSION_SECONDS, **{**_cookie_options(request),
                                                                       "samesite": "Strict"})
    return secure(response)


async def _form(request: web.Request) -> Any:
    """The posted form, or a 400 when the body is not one (a multipart type without its boundary, ...)."""
    try:
        return await request.post()
    except ValueError as exc:
        raise ApiError(400, f"the body is not a form ({exc}); send the page's form "
                            "(application/x-www-form-urlencoded)") from exc


async def login_submit(request: web.Request) -> web.StreamResponse:
    probe = request.clone()  # for authenticating the token: a request cannot be cloned once its body is read
    form = await _form(request)
    next_path = _safe_next(str(form.get("next") or ""))
    if not same_token(str(form.get("csrf") or ""), request.cookies.get(CSRF_COOKIE)):
        return _login_refused(request, 403, "the form was stale or came from another site (CSRF check failed); "
                                            "it has been refreshed: enter the token again", next_path)
    token = str(form.get("token") or "").strip()
    if not token:
        return _login_refused(request, 400, "enter a token: the admin token (printed by `evalkit serve` at first "
                                            "start, or in <data-dir>/admin-token) or a user token", next_path)
    try:
        await caller_from_token(probe, token)
    except ApiError as exc:
        if exc.status == 401:
            return _login_refused(request, 401, "that token is unknown or revoked; create a user token with "
                                                "`POST /api/users/{name}/tokens` or use the admin token", next_path)
        return _login_refused(request, exc.status, str(exc), next_path)
    logins = ui_of(request).logins
    logins.close(request.cookies.get(SESSION_COOKIE))  # a new session id at every login (no fixation)
    session_id, _ = logins.open(token)
    response = web.HTTPSeeOther(next_path)
    response.set_cookie(SESSION_COOKIE, session_id, max_age=SESSION_SECONDS, **_cookie_options(request))
    return secure(response)


async def logout_form(request: web.Request) -> web.StreamResponse:
    if login_of(request) is None:
        return secure(web.HTTPSeeOther("/login"))
    await login_caller(request)
    try:
        page_query(request, FORM_ONLY)
    except ApiError as exc:
        return error_page(request, exc.status, str(exc))
    return secure(render(request, "logout.html", title="Log out"))


async def logout_submit(request: web.Request) -> web.StreamResponse:
    form = await _form(request)
    login = login_of(request)
    if login is not None and not same_token(str(form.get("csrf") or ""), login.csrf):
        return secure(render(request, "error.html", status=403, title="Not allowed", status_code=403,
                             message="the logout form was stale or came from another site (CSRF check failed); "
                                     "open /logout and press the button again"))
    ui_of(request).logins.close(request.cookies.get(SESSION_COOKIE))
    response = web.HTTPSeeOther("/login")
    response.del_cookie(SESSION_COOKIE, path="/")
    return secure(response)


@page
async def home(request: web.Request) -> Page:
    caller = request["caller"]
    me, agents, experiments = await asyncio.gather(
        twin(request, "/api/me"), twin(request, "/api/agents"), asyncio.to_thread(recent_experiments, request, 10))
    shown = agents["agents"][:8]
    per_agent = max(3, 15 // max(1, len(shown)))
    recent = await asyncio.gather(*(twin(request, f"/api/agents/{a['agent']}/sessions", {"limit": per_agent})
                                    for a in shown))
    sessions = [{"agent": a["agent"], **s} for a, listing in zip(shown, recent, strict=True)
                for s in listing["sessions"]]
    sessions.sort(key=lambda s: s["last_seen"], reverse=True)
    by_workspace: dict[str, list[dict[str, Any]]] = {w["name"]: [] for w in me["workspaces"]}
    for a in agents["agents"]:
        by_workspace.setdefault(a["workspace"], []).append(a)
    data = {"me": me, "agents": agents["agents"], "experiments": experiments["experiments"],
            "sessions": sessions[:15]}
    return Page("home.html", {"me": me, "by_workspace": by_workspace, "roles": {w["name"]: w["role"] for w in
                                                                                 me["workspaces"]},
                              "experiments": experiments["experiments"], "sessions": sessions[:15],
                              "more_agents": len(agents["agents"]) - len(shown), "caller_name": caller.name},
                data, api="/api/me", title="evalkit")


def recent_experiments(request: web.Request, limit: int) -> dict[str, Any]:
    """The latest experiments the caller may read (running ones without scores: the home page stays cheap)."""
    caller = request["caller"]
    return {"experiments": experiment_pages.experiment_summaries(
        request, workspaces=None if caller.is_admin else sorted(caller.workspaces), limit=limit,
        score_running=False)}


def add_routes(app: web.Application, context: Context) -> None:
    env = environment()
    env.globals.update(session_pages.TEMPLATE_GLOBALS)
    app[UI_KEY] = Ui(env, LoginSessions(clock=context.access.clock))
    app[BROWSER_ERROR_PAGE] = error_page
    r = app.router
    r.add_get("/login", login_form)
    r.add_post("/login", login_submit)
    r.add_get("/logout", logout_form)
    r.add_post("/logout", logout_submit)
    r.add_get("/", home)
    r.add_static("/static", STATIC, append_version=False)
    session_pages.add_routes(app)
    experiment_pages.add_routes(app)
    dataset_pages.add_routes(app)
