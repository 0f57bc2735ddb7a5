"""Workspaces, agents, ingest keys and API tokens: who may write and read what.

Keys and tokens are stored as SHA-256 hashes and shown once, at creation. Every
record is a versioned row (ReplacingMergeTree); the newest version wins.
"""

from __future__ import annotations

import hashlib
import logging
import os
import re
import secrets
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from evalkit.store import Store, StoreError, StoreUnavailable

_log = logging.getLogger("evalkit.access")

_NAME = re.compile(r"^[a-z0-9][a-z0-9._-]{0,62}$")
KEY_PREFIX = "ek_"
TOKEN_PREFIX = "evk_"
T = TypeVar("T")
_KEY_CACHE_SECONDS = 10.0
# Who a token is, a user's roles and an agent's record, asked by every API request (three
# queries, ~12 ms of a 30 ms request) and changed rarely: remembered this long. A change made
# through this process's Access applies at once; one made by another process within this time.
_RECALL_SECONDS = 10.0
_RECALL_LIMIT = 10_000
# A token's last use is written at most this often per token and process.
_USE_RECORD_SECONDS = 60.0

Clock = Callable[[], float]


class AccessError(Exception):
    """A request the caller may correct; the message says how."""

    status = 400


class NotFound(AccessError):
    status = 404


class Conflict(AccessError):
    status = 409


@dataclass(frozen=True)
class Agent:
    agent_id: str  # name@workspace
    name: str
    workspace: str
    kind: str  # "code" (the SDK drives it) or "harness" (the service drives it)
    description: str
    harness_url: str
    max_concurrent_runs: int
    trajectory_wait_seconds: float
    session_attribute: str
    archived: bool
    created_at: float


# What an ingest key may do: `ingest` sends spans and log records for its agent; `read` reads its
# agent's workspace through the API. New keys ingest only (a key deployed with an agent should not
# read other agents' sessions or datasets' expected answers); keys made before scopes have both.
SCOPES: tuple[str, ...] = ("ingest", "read")
DEFAULT_SCOPES: tuple[str, ...] = ("ingest",)


@dataclass(frozen=True)
class IngestKey:
    key_id: str
    prefix: str
    agent_id: str
    created_at: float
    revoked: bool
    scopes: tuple[str, ...] = DEFAULT_SCOPES


@dataclass(frozen=True)
class KeyHolder:
    """Who an ingest key is: its agent and what it may do."""

    agent: Agent
    scopes: frozenset[str]


@dataclass(frozen=True)
class Principal:
    name: str
    role: str  # "admin" or "user"
    token_id: str = ""


@dataclass(frozen=True)
class ApiToken:
    """An API token as listed: never its secret, which only its holder has."""

    token_id: str
    principal: str
    role: str
    created_at: float
    last_used_at: float | None
    revoked: bool


# Workspace roles, weakest first; each includes the ones before it.
ROLES: tuple[str, ...] = ("reader", "reviewer", "writer", "admin", "owner")


def role_rank(role: str | None) -> int:
    return ROLES.index(role) if role in ROLES else -1


@dataclass(frozen=True)
class Member:
    workspace: str
    user: str
    role: str
    added_at: float


def hash_secret(secret: str) -> str:
    return hashlib.sha256(secret.encode("utf-8")).hexdigest()


def check_name(kind: str, name: str) -> None:
    if not _NAME.match(name):
        raise AccessError(
            f"{kind} name {name!r} is not valid: use 1-63 lower-case letters, digits, '.', '_' or '-', "
            "starting with a letter or digit"
        )


def split_agent_id(agent_id: str) -> tuple[str, str]:
    name, at, workspace = agent_id.partition("@")
    if not at or not name or not workspace:
        raise AccessError(f"agent {agent_id!r} must be written name@workspace, e.g. support-bot@acme")
    return name, workspace


class Access:
    def __init__(self, store: Store, clock: Clock = time.time) -> None:
        self.store = store
        self.clock = clock
        self._key_cache: dict[str, tuple[KeyHolder | None, float]] = {}
        self._uses_recorded: dict[str, float] = {}  # token id -> when this process last wrote its use
        # (what, key) -> (value, good until (the clock's time), writes seen then)
        self._recalled: dict[tuple[str, str], tuple[Any, float, int]] = {}
        self._writes = 0  # this Access's writes so far: any of them makes every recalled read stale

    def _insert(self, table: str, rows: list[list[Any]], columns: list[str]) -> None:
        self.store.insert(table, rows, columns)
        self._writes += 1

    def _recall(self, what: str, key: str, read: Callable[[], T]) -> T:
        """`read()`, or its value from the last `_RECALL_SECONDS` if nothing was written since."""
        entry = self._recalled.get((what, key))
        now = self.clock()
        if entry is not None and entry[1] > now and entry[2] == self._writes:
            return entry[0]  # type: ignore[no-any-return]
        writes = self._writes  # before reading: a write racing the read leaves the entry stale
        value = read()
        if len(self._recalled) >= _RECALL_LIMIT:
            self._recalled.clear()  # keys come from requests: bound what a stream of odd ones can pin
        self._recalled[(what, key)] = (value, now + _RECALL_SECONDS, writes)
        return value

    def _version(self) -> int:
        return time.time_ns()

    def _ms(self) -> int:
        return int(self.clock() * 1000)

    # -- workspaces -------------------------------------------------------------------
    def create_workspace(self, name: str, kind: str = "shared") -> None:
        check_name("workspace", name)
        if self.workspace_exists(name):
            raise Conflict(f"workspace {name!r} exists already")
        self._insert("workspaces", [[name], [kind], [self._ms()], [False], [self._version()]],
                          ["name", "kind", "created_at", "archived", "version"])

    def workspace_exists(self, name: str) -> bool:
        rows = self.store.query("SELECT archived FROM workspaces FINAL WHERE name = {n:String}", {"n": name})
        return bool(rows) and not rows[0][0]

    def list_workspaces(self) -> list[str]:
        return [r[0] for r in self.store.query("SELECT name FROM workspaces FINAL WHERE NOT archived ORDER BY name")]

    def workspace_kind(self, name: str) -> str | None:
        rows = self.store.query("SELECT kind, archived FROM workspaces FINAL WHERE name = {n:String}", {"n": name})
        return str(rows[0][0]) if rows and not rows[0][1] else None

    # -- users and members --------------------------------------------------------------
    def user_exists(self, name: str) -> bool:
        rows = self.store.query("SELECT archived FROM users FINAL WHERE name = {n:String}", {"n": name})
        return bool(rows) and not rows[0][0]

    def create_user(self, name: str) -> str:
        """A user, their personal workspace (named like them, owned by them) and a first token."""
        check_name("user", name)
        if name == "admin" or self.user_exists(name):
            raise Conflict(f"user {name!r} exists already; give them another token with "
                           f"`POST /api/users/{name}/tokens`")
        if self.workspace_exists(name):
            raise Conflict(f"a workspace is named {name!r} already; a user's personal workspace takes their "
                           "name, so choose another user name")
        self._insert("users", [[name], [self._ms()], [False], [self._version()]],
                          ["name", "created_at", "archived", "version"])
        self.create_workspace(name, kind="personal")
        self.set_member(name, name, "owner", added_by="admin")
        return self.create_token(name, "user")

    def ensure_personal_workspace(self, principal: str) -> str:
        """The principal's personal workspace, created on first use for the server admin
        (users get theirs at creation)."""
        if not self.workspace_exists(principal):
            self.create_workspace(principal, kind="personal")
            self.set_member(principal, principal, "owner", added_by=principal)
        return principal

    def set_member(self, workspace: str, user: str, role: str, *, added_by: str, removed: bool = False) -> None:
        if role not in ROLES:
            raise AccessError(f"role {role!r} is not known; use one of {', '.join(ROLES)}")
        self._insert(
            "workspace_members",
            [[workspace], [user], [role], [added_by], [self._ms()], [removed], [self._version()]],
            ["workspace", "user", "role", "added_by", "added_at", "removed", "version"])

    def members(self, workspace: str) -> list[Member]:
        rows = self.store.query(
            "SELECT user, role, toUnixTimestamp64Milli(added_at) FROM workspace_members FINAL "
            "WHERE workspace = {w:String} AND NOT removed ORDER BY user", {"w": workspace})
        return [Member(workspace, r[0], r[1], r[2] / 1000) for r in rows]

    def roles_of(self, user: str) -> dict[str, str]:
        """workspace → the user's role there (workspaces archived since are left out)."""
        return dict(self._recall("roles", user, lambda: self._read_roles(user)))

    def _read_roles(self, user: str) -> dict[str, str]:
        rows = self.store.query(
            "SELECT m.workspace, m.role FROM (SELECT workspace, role, removed FROM workspace_members FINAL "
            "WHERE user = {u:String}) AS m INNER JOIN (SELECT name FROM workspaces FINAL WHERE NOT archived) AS w "
            "ON m.workspace = w.name WHERE NOT m.removed", {"u": user})
        return {r[0]: r[1] for r in rows}

    # -- agents -----------------------------------------------------------------------
    def create_agent(self, name: str, workspace: str, *, kind: str = "code", description: str = "",
                     harness_url: str = "", max_concurrent_runs: int = 4,
                     trajectory_wait_seconds: float = 30.0, session_attribute: str = "") -> Agent:
        check_name("agent", name)
        if kind not in ("code", "harness"):
            raise AccessError(f"agent kind {kind!r} is not known; use 'code' or 'harness'")
        if kind == "harness" and not harness_url:
            raise AccessError("a harness agent needs harness_url, the address the service calls to start runs")
        if not self.workspace_exists(workspace):
            raise NotFound(f"workspace {workspace!r} does not exist; create it with "
                           f"`evalkit workspaces create {workspace}`")
        agent_id = f"{name}@{workspace}"
        if self.find_agent(agent_id) is not None:
            raise Conflict(f"agent {agent_id} exists already")
        agent = Agent(agent_id, name, workspace, kind, description, harness_url, max_concurrent_runs,
                      trajectory_wait_seconds, session_attribute, False, self.clock())
        self._write_agent(agent)
        return agent

    def _write_agent(self, agent: Agent) -> None:
        self._insert(
            "agents",
            [[agent.agent_id], [agent.name], [agent.workspace], [agent.kind], [agent.description],
             [agent.harness_url], [agent.max_concurrent_runs], [agent.trajectory_wait_seconds],
             [agent.session_attribute], [agent.archived], [int(agent.created_at * 1000)], [self._version()]],
            ["agent_id", "name", "workspace", "kind", "description", "harness_url", "max_concurrent_runs",
             "trajectory_wait_seconds", "session_attribute", "archived", "created_at", "version"],
        )

    def update_agent(self, agent: Agent) -> None:
        self._write_agent(agent)
        # Ingest caches the agent with its key; a changed session attribute must apply at once.
        self._key_cache = {h: entry for h, entry in self._key_cache.items()
                           if entry[0] is None or entry[0].agent.agent_id != agent.agent_id}

    def find_agent(self, agent_id: str) -> Agent | None:
        return self._recall("agent", agent_id, lambda: self._read_agent(agent_id))

    def _read_agent(self, agent_id: str) -> Agent | None:
        rows = self.store.query(
            "SELECT agent_id, name, workspace, kind, description, harness_url, max_concurrent_runs, "
            "trajectory_wait_seconds, session_attribute, archived, toUnixTimestamp64Milli(created_at) "
            "FROM agents FINAL WHERE agent_id = {a:String}", {"a": agent_id})
        if not rows:
            return None
        r = rows[0]
        return Agent(r[0], r[1], r[2], r[3], r[4], r[5], int(r[6]), float(r[7]), r[8], bool(r[9]), r[10] / 1000)

    def get_agent(self, agent_id: str) -> Agent:
        split_agent_id(agent_id)
        agent = self.find_agent(agent_id)
        if agent is None:
            raise NotFound(f"agent {agent_id} does not exist; create it with `evalkit agents create {agent_id}`")
        return agent

    def list_agents(self, workspace: str | None = None) -> list[Agent]:
        rows = self.store.query("SELECT agent_id FROM agents FINAL ORDER BY agent_id")
        agents = [self.find_agent(r[0]) for r in rows]
        return [a for a in agents if a is not None and (workspace is None or a.workspace == workspace)]

    # -- ingest keys ------------------------------------------------------------------
    def create_key(self, agent_id: str, scopes: tuple[str, ...] = DEFAULT_SCOPES) -> tuple[str, IngestKey]:
        agent = self.get_agent(agent_id)
        if agent.archived:
            raise Conflict(f"agent {agent_id} is archived and takes no new keys; unarchive it with "
                           f"`PATCH /api/agents/{agent_id}` {{\"archived\": false}}")
        unknown = [s for s in scopes if s not in SCOPES]
        if unknown or not scopes:
            raise AccessError(f"key scopes {list(scopes)} are not valid: give one or more of {', '.join(SCOPES)} "
                              "(e.g. `evalkit agents keys create AGENT --scope ingest --scope read`)")
        secret = KEY_PREFIX + secrets.token_urlsafe(32)
        key = IngestKey(secrets.token_hex(6), secret[:10], agent_id, self.clock(), False,
                        tuple(s for s in SCOPES if s in scopes))
        self._write_key(hash_secret(secret), key)
        return secret, key

    def _write_key(self, key_hash: str, key: IngestKey) -> None:
        self._insert(
            "ingest_keys",
            [[key_hash], [key.key_id], [key.prefix], [key.agent_id], [int(key.created_at * 1000)],
             [key.revoked], [list(key.scopes)], [self._version()]],
            ["key_hash", "key_id", "prefix", "agent_id", "created_at", "revoked", "scopes", "version"],
        )

    def list_keys(self, agent_id: str) -> list[IngestKey]:
        rows = self.store.query(
            "SELECT key_id, prefix, agent_id, toUnixTimestamp64Milli(created_at), revoked, scopes "
            "FROM ingest_keys FINAL WHERE agent_id = {a:String} ORDER BY created_at", {"a": agent_id})
        return [IngestKey(r[0], r[1], r[2], r[3] / 1000, bool(r[4]), tuple(r[5])) for r in rows]

    def revoke_key(self, agent_id: str, key_id: str) -> None:
        rows = self.store.query(
            "SELECT key_hash, key_id, prefix, agent_id, toUnixTimestamp64Milli(created_at), scopes "
            "FROM ingest_keys FINAL WHERE agent_id = {a:String} AND key_id = {k:String}",
            {"a": agent_id, "k": key_id})
        if not rows:
            raise NotFound(f"agent {agent_id} has no key {key_id}; "
                           f"list them with `evalkit agents keys list {agent_id}`")
        r = rows[0]
        self._write_key(r[0], IngestKey(r[1], r[2], r[3], r[4] / 1000, True, tuple(r[5])))
        self._key_cache.pop(r[0], None)

    def agent_for_key(self, secret: str) -> Agent | None:
        """The agent an ingest key sends spans for, or None for an unknown or revoked key or one
        without the `ingest` scope."""
        holder = self.key_holder(secret)
        return holder.agent if holder is not None and "ingest" in holder.scopes else None

    def key_holder(self, secret: str) -> KeyHolder | None:
        """The agent of an ingest key and its scopes, or None for an unknown or revoked key.

        Cached briefly: this is on the ingest hot path. A revocation made through
        this process takes effect at once; one made elsewhere within the cache time.
        """
        key_hash = hash_secret(secret)
        cached = self._key_cache.get(key_hash)
        now = time.monotonic()
        if cached is not None and cached[1] > now:
            return cached[0]
        rows = self.store.query(
            "SELECT agent_id, revoked, scopes FROM ingest_keys FINAL WHERE key_hash = {h:String}", {"h": key_hash})
        agent = self.find_agent(rows[0][0]) if rows and not rows[0][1] else None
        holder = KeyHolder(agent, frozenset(rows[0][2])) if agent is not None else None
        if len(self._key_cache) >= _RECALL_LIMIT:
            self._key_cache.clear()  # keys come from requests: bound what a stream of odd ones can pin
        self._key_cache[key_hash] = (holder, now + _KEY_CACHE_SECONDS)
        return holder

    # -- API tokens -------------------------------------------------------------------
    def create_token(self, principal: str, role: str, secret: str | None = None) -> str:
        secret = secret or TOKEN_PREFIX + secrets.token_urlsafe(32)
        self._write_token(hash_secret(secret), secrets.token_hex(6), principal, role, self._ms(), revoked=False)
        return secret

    def user_tokens_allowed(self, name: str) -> None:
        if not self.user_exists(name):
            raise NotFound(f"user {name!r} does not exist; create it with `POST /api/users`")

    def principal_for_token(self, secret: str) -> Principal | None:
        key_hash = hash_secret(secret)
        principal = self._recall("token", key_hash, lambda: self._read_principal(key_hash))
        if principal is not None:
            self._record_use(principal)
        return principal

    def _read_principal(self, key_hash: str) -> Principal | None:
        rows = self.store.query(
            "SELECT principal, role, revoked, token_id FROM api_tokens FINAL WHERE token_hash = {h:String}",
            {"h": key_hash})
        if not rows or rows[0][2]:
            return None
        return Principal(rows[0][0], rows[0][1], rows[0][3])

    def _record_use(self, principal: Principal) -> None:
        """Remember when a token was used (to the minute): what tells an owner which tokens are idle."""
        now = self.clock()
        if now - self._uses_recorded.get(principal.token_id, -_USE_RECORD_SECONDS) < _USE_RECORD_SECONDS:
            return
        if len(self._uses_recorded) >= _RECALL_LIMIT:
            self._uses_recorded.clear()
        self._uses_recorded[principal.token_id] = now
        # Not through _insert: a use changes no one's access, so it leaves recalled reads valid.
        try:
            self.store.insert("api_token_uses", [[principal.token_id], [principal.name], [int(now * 1000)]],
                              ["token_id", "principal", "last_used_at"])
        except (StoreError, StoreUnavailable) as exc:
            # A note, not the request's purpose: a read answered from the recall need not fail for it.
            self._uses_recorded.pop(principal.token_id, None)
            _log.warning("could not record the use of token %s: %s", principal.token_id, exc)

    def list_tokens(self, principal: str) -> list[ApiToken]:
        """A principal's API tokens, oldest first, revoked ones included (marked)."""
        rows = self.store.query(
            "SELECT t.token_id, t.principal, t.role, toUnixTimestamp64Milli(t.created_at), t.revoked, "
            "u.last_ms FROM (SELECT token_id, principal, role, created_at, revoked FROM api_tokens FINAL "
            "WHERE principal = {p:String}) AS t LEFT JOIN (SELECT token_id, "
            "toUnixTimestamp64Milli(max(last_used_at)) AS last_ms FROM api_token_uses WHERE principal = {p:String} "
            "GROUP BY token_id) AS u ON t.token_id = u.token_id ORDER BY t.created_at, t.token_id",
            {"p": principal}, settings={"join_use_nulls": 1})
        return [ApiToken(r[0], r[1], r[2], r[3] / 1000, r[5] / 1000 if r[5] is not None else None, bool(r[4]))
                for r in rows]

    def revoke_token(self, principal: str, token_id: str) -> ApiToken:
        """Revoke one of a principal's tokens; it is refused from the next request on (in this process
        at once, in other processes sharing the store within the recall time)."""
        rows = self.store.query(
            "SELECT token_hash, role, toUnixTimestamp64Milli(created_at), revoked FROM api_tokens FINAL "
            "WHERE principal = {p:String} AND token_id = {t:String}", {"p": principal, "t": token_id})
        if not rows:
            raise NotFound(f"{principal!r} has no token {token_id!r}; list them with "
                           f"`evalkit users tokens list {principal}`")
        token_hash, role, created_ms, _ = rows[0]
        self._write_token(token_hash, token_id, principal, role, created_ms, revoked=True)
        return ApiToken(token_id, principal, role, created_ms / 1000, None, True)

    def _write_token(self, token_hash: str, token_id: str, principal: str, role: str, created_ms: int, *,
                     revoked: bool) -> None:
        self._insert(
            "api_tokens",
            [[token_hash], [token_id], [principal], [role], [created_ms], [revoked], [self._version()]],
            ["token_hash", "token_id", "principal", "role", "created_at", "revoked", "version"],
        )

    def ensure_admin_token(self, data_dir: Path, bootstrap_token: str | None) -> str | None:
        """On first start: the bootstrap token, or a new one written to the data directory (0600).

        Returns the token only when it was generated now, so the caller prints it once.
        """
        if bootstrap_token:
            if self.principal_for_token(bootstrap_token) is None:
                # A new bootstrap token replaces the admin token(s) before it: changing the setting
                # is how an operator rotates a leaked admin token.
                for old in self.list_tokens("admin"):
                    if old.role == "admin" and not old.revoked:
                        self.revoke_token("admin", old.token_id)
                # A generated token kept in the data directory is among those revoked: drop the file.
                (data_dir / "admin-token").unlink(missing_ok=True)
                self.create_token("admin", "admin", bootstrap_token)
            return None
        if self.store.query("SELECT 1 FROM api_tokens FINAL WHERE role = 'admin' AND NOT revoked LIMIT 1"):
            return None
        token = self.create_token("admin", "admin")
        data_dir.mkdir(parents=True, exist_ok=True)
        path = data_dir / "admin-token"
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w") as handle:
            handle.write(token + "\n")
        os.chmod(path, 0o600)
        return token
