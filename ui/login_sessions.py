"""Browser logins: a random session id in an HttpOnly cookie, the token kept server-side only.

The token never travels in a URL and never reaches the page. Each request re-authenticates the
remembered token through the API's own `caller_of`, so a revoked token or a changed role applies at
once. Sessions live in this process's memory: a restart logs everyone out, which is the safe failure.
CSRF: every form carries the login session's token (or, before login, a double-submit cookie's).
"""

from __future__ import annotations

import hmac
import secrets
import time
from collections.abc import Callable
from dataclasses import dataclass, field

SESSION_COOKIE = "evalkit_session"
CSRF_COOKIE = "evalkit_csrf"
SESSION_SECONDS = 12 * 3600
_LIMIT = 10_000  # logins remembered at once; the oldest go first past it


@dataclass
class LoginSession:
    token: str
    csrf: str
    expires_at: float


@dataclass
class LoginSessions:
    clock: Callable[[], float] = time.time
    _sessions: dict[str, LoginSession] = field(default_factory=dict)

    def open(self, token: str) -> tuple[str, LoginSession]:
        if len(self._sessions) >= _LIMIT:
            self._drop_expired()
            while len(self._sessions) >= _LIMIT:
                self._sessions.pop(next(iter(self._sessions)))
        session_id = secrets.token_urlsafe(32)
        session = LoginSession(token, secrets.token_urlsafe(24), self.clock() + SESSION_SECONDS)
        self._sessions[session_id] = session
        return session_id, session

    def get(self, session_id: str | None) -> LoginSession | None:
        if not session_id:
            return None
        session = self._sessions.get(session_id)
        if session is None:
            return None
        if session.expires_at <= self.clock():
            self._sessions.pop(session_id, None)
            return None
        return session

    def close(self, session_id: str | None) -> None:
        if session_id:
            self._sessions.pop(session_id, None)

    def _drop_expired(self) -> None:
        now = self.clock()
        for key in [k for k, s in self._sessions.items() if s.expires_at <= now]:
            del self._sessions[key]


def new_csrf() -> str:
    return secrets.token_urlsafe(24)


def same_token(a: str | None, b: str | None) -> bool:
    return bool(a) and bool(b) and hmac.compare_digest(str(a), str(b))
