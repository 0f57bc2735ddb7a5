"""Shared fixtures: the real ClickHouse engine (chDB, in this process) and a running service.

chDB allows one data path per process, so every test shares one path and gets
its own database, dropped when the test ends: the engine's work grows with the tables it holds
(a service started after 20 others took 4.5 s instead of 1.2 s), so kept databases made every
later test slower.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import sys
import tempfile
import urllib.request
import uuid
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio

from evalkit.settings import Settings
from evalkit.store import Store

_CHDB_DIR = Path(tempfile.mkdtemp(prefix="evalkit-tests-chdb-"))
ADMIN_TOKEN = "evk_test_admin_token"


def chdb_url(database: str) -> str:
    return f"chdb://{_CHDB_DIR}?database={database}"


_created: list[str] = []
# Held open between tests so that dropping a test's databases does not start the engine again
# (it stops when its last client closes); tests that open the engine at another path call
# `release_shared_engine()` first, since chDB refuses a second path while a client is open.
_keeper: Store | None = None


def fresh_database() -> str:
    name = "t_" + uuid.uuid4().hex[:12]
    _created.append(name)
    return name


def release_shared_engine() -> None:
    """Close this module's client on the shared engine path (before opening chDB elsewhere)."""
    global _keeper
    if _keeper is not None:
        _keeper.close()
        _keeper = None


def shared_engine() -> Store:
    """This module's client on the shared engine path, opened if it is not."""
    global _keeper
    if _keeper is None:
        _keeper = Store(chdb_url("default"))
        _keeper.connect()
    return _keeper


@contextlib.contextmanager
def databases_dropped_after() -> Iterator[None]:
    """Drop the databases made inside the block (`fresh_database`) when it ends."""
    already = len(_created)
    try:
        yield
    finally:
        made, _created[already:] = _created[already:], []
        if made and "chdb" in sys.modules:
            keeper = shared_engine()
            for database in made:
                keeper.command(f"DROP DATABASE IF EXISTS {database} SYNC")


# A database every migration has run on, once per test process, copied for each service a test starts
# (`migrated_database`): migrating a fresh database is 131 statements, ~1.5-2 s of a start; a copy ~0.3 s.
_TEMPLATE = "t_migrated_template"
_template_objects: list[tuple[str, str, str]] = []  # (name, engine, create query), views last


def _migrated_template(keeper: Store) -> list[tuple[str, str, str]]:
    if not _template_objects:
        from evalkit.migrations import migrate

        template = Store(chdb_url(_TEMPLATE))
        template.connect()
        try:
            migrate(template)
        finally:
            template.close()
        rows = keeper.query("SELECT name, engine, create_table_query FROM system.tables WHERE database = {d:String}",
                            {"d": _TEMPLATE})
        _template_objects.extend(sorted(((str(n), str(e), str(q)) for n, e, q in rows),
                                        key=lambda row: row[1] == "MaterializedView"))
    return _template_objects


def migrated_database() -> str:
    """A fresh database (`fresh_database`) for a service to start on, holding what every migration makes (a copy of
    the template's tables with their rows, the schema_migrations rows among them, then its views), so that the
    service's `migrate` finds nothing left to apply. Only while this module's client holds the shared engine open:
    otherwise the service is the first to open the engine (it takes its server settings, caches and memory cap, from
    whoever opens it first in a process) and migrates its database from nothing, as the first service of every test
    process does. tests/store/test_migrated_template.py checks the copy against a database migrated from nothing."""
    name = fresh_database()
    keeper = _keeper
    if keeper is None:
        return name
    objects = _migrated_template(keeper)
    keeper.command(f"CREATE DATABASE {name}")
    for table, engine, create in objects:
        if engine.endswith("MergeTree"):  # its parts too (ATTACH PARTITION FROM: hard links)
            keeper.command(f"CREATE TABLE {name}.{table} CLONE AS {_TEMPLATE}.{table}")
        else:  # a Null table, a view (after the tables it reads and writes)
            keeper.command(create.replace(f"{_TEMPLATE}.", f"{name}."))
    return name


@pytest.fixture(autouse=True)
def _drop_databases_the_test_made() -> Iterator[None]:
    # Function-scoped autouse fixtures are set up after wider-scoped ones (a session's or a module's shared
    # service, which drops its own) and torn down after the test's own, so only this test's databases are
    # dropped, and only once the services using them have stopped.
    with databases_dropped_after():
        yield


@pytest.fixture
def store() -> Iterator[Store]:
    s = Store(chdb_url(fresh_database()))
    s.connect()
    yield s
    s.close()


@dataclass
class Running:
    """A service started in this process on ephemeral ports."""

    service: Any
    store: Store
    settings: Settings

    @property
    def api(self) -> str:
        return f"http://127.0.0.1:{self.service.api_port}"

    @property
    def otlp_http(self) -> str:
        return f"http://127.0.0.1:{self.service.otlp_http_port}"

    @property
    def grpc_target(self) -> str:
        return f"127.0.0.1:{self.service.grpc_port}"

    def call(self, method: str, path: str, body: Any = None, token: str | None = ADMIN_TOKEN) -> tuple[int, Any]:
        """A blocking API call; run it with asyncio.to_thread from async tests."""
        data = json.dumps(body).encode() if body is not None else None
        request = urllib.request.Request(self.api + path, data=data, method=method)
        request.add_header("Content-Type", "application/json")
        if token:
            request.add_header("Authorization", f"Bearer {token}")
        try:
            with urllib.request.urlopen(request, timeout=30) as response:
                return response.status, json.loads(response.read() or b"null")
        except urllib.error.HTTPError as exc:
            return exc.code, json.loads(exc.read() or b"null")

    def new_agent(self, name: str = "bot", workspace: str = "acme") -> tuple[str, str]:
        """Create a workspace (if needed), an agent and an ingest key that also reads (scopes ingest and
        read; new keys ingest only unless told); returns (agent_id, key)."""
        status, _ = self.call("POST", "/api/workspaces", {"name": workspace})
        assert status in (201, 409)
        status, body = self.call("POST", "/api/agents", {"name": name, "workspace": workspace})
        assert status == 201, body
        status, body = self.call("POST", f"/api/agents/{name}@{workspace}/keys", {"scopes": ["ingest", "read"]})
        assert status == 201, body
        return f"{name}@{workspace}", body["key"]


def make_settings(tmp_path: Path, **overrides: Any) -> Settings:
    values: dict[str, Any] = {
        "data_dir": tmp_path, "grpc_port": 0, "otlp_http_port": 0, "api_port": 0, "bootstrap_token": ADMIN_TOKEN,
        "batch_max_delay_ms": 5,
        # Decode on the event loop; tests/ingest/test_workers.py covers the process pool.
        "ingest_workers": 0,
        # Test evaluators, judges and harnesses listen on loopback, which the server refuses to call
        # unless allowed (tests/api/test_outbound.py runs without this).
        "outbound_allow": "127.0.0.0/8,::1,localhost",
        # Every service started here would page out the test process's library code again, and the
        # next test read it back (a third of the ingest tests' system time); tests/memory covers it.
        "release_code_pages": False,
    }
    values.update(overrides)
    if values.get("clickhouse_url") is None:  # a test naming a database (a fresh one too) gets it as it is
        values["clickhouse_url"] = chdb_url(migrated_database())
    return Settings.model_validate(values)


@contextlib.asynccontextmanager
async def serve(tmp_path: Path, **overrides: Any) -> AsyncIterator[Running]:
    """A service in this process with settings for tests, stopped on the way out."""
    from evalkit.serve import Service

    service = Service(make_settings(tmp_path, **overrides), say=lambda _line: None)
    await service.start()
    try:
        if overrides.get("clickhouse_url") is None:
            await service.wait_ready(60)
        yield Running(service, service.store, service.settings)
    finally:
        await service.stop()


@pytest.fixture
async def running(tmp_path: Path) -> AsyncIterator[Running]:
    async with serve(tmp_path) as started:
        yield started


@dataclass
class OwnWorkspaces(Running):
    """A service a module's tests share, as one test sees it: every workspace it names is its own (the name and the
    test's number), so an agent two tests name alike is two agents, and no test reads another's spans (an agent
    reads only its own). For tests that start nothing but agents of their own: ~1 s of each service start is its
    database's migrations, most of such a module's time when every test started one."""

    suffix: str = ""

    def new_agent(self, name: str = "bot", workspace: str = "acme") -> tuple[str, str]:
        return super().new_agent(name, f"{workspace}-{self.suffix}")


_test_numbers = itertools.count(1)


def own_workspaces(shared: Running) -> OwnWorkspaces:
    """The shared service as one more test sees it (`OwnWorkspaces`)."""
    return OwnWorkspaces(shared.service, shared.store, shared.settings, suffix=f"t{next(_test_numbers)}")


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def module_running(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Running]:
    """One service (`serve`) for a module's tests, given to each through `own_workspaces`; its database dropped once
    the module is done. The module's tests run in the module's event loop (`pytest.mark.asyncio(loop_scope=
    "module")`), the service's."""
    with databases_dropped_after():
        async with serve(tmp_path_factory.mktemp("module")) as started:
            yield started
