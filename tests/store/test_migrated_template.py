"""The database a test's service starts on (tests/conftest.py, `migrated_database`) is a copy of one every migration
ran on, made once per test process: it must be what `migrate` makes of nothing, or every test starting a service
would test another schema than the one `evalkit serve` makes."""

from __future__ import annotations

from typing import Any

from evalkit.migrations import all_migrations, migrate
from evalkit.store import Store
from tests.conftest import chdb_url, migrated_database, shared_engine


def _made(store: Store, database: str) -> dict[str, Any]:
    """What a database holds, its name written `DB` wherever it is named."""
    tables = store.query("SELECT name, engine, create_table_query, total_rows FROM system.tables "
                         "WHERE database = {d:String} ORDER BY name", {"d": database})
    columns = store.query("SELECT table, name, type, default_kind, default_expression, compression_codec, position, "
                          "is_in_sorting_key, is_in_primary_key, is_in_partition_key FROM system.columns "
                          "WHERE database = {d:String} ORDER BY table, position", {"d": database})
    applied = store.query(f"SELECT version, name FROM {database}.schema_migrations FINAL ORDER BY version")
    return {"tables": [(name, engine, create.replace(f"{database}.", "DB."), rows)
                       for name, engine, create, rows in tables],
            "columns": [tuple(column) for column in columns], "applied": [tuple(row) for row in applied]}


def test_a_service_starts_on_what_migrating_from_nothing_makes(store: Store) -> None:
    versions = sorted(m.version for m in all_migrations())
    assert migrate(store) == versions  # from nothing: every migration applied now
    keeper = shared_engine()  # copies are made while the engine is held open (the first service opens it)
    copy = Store(chdb_url(migrated_database()))
    copy.connect()
    try:
        made = _made(keeper, copy.database)
        assert [version for version, _ in made["applied"]] == versions
        assert made == _made(keeper, store.database)
        assert migrate(copy) == []  # what a service starting on it finds to do
    finally:
        copy.close()
