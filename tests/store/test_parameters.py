"""Long lists of strings are bound by the store's own formatting (evalkit/store.py, `_StringArray`): the engine
receives exactly the strings given, whatever characters they hold, in every kind of read."""

from __future__ import annotations

from evalkit.store import Store
from tests.conftest import chdb_url, fresh_database

# Every character clickhouse-connect escapes, quotes, unicode, an empty string, and plain ids around them.
_AWKWARD = ["a'b", "back\\slash", "tick`", "tab\there", "new\nline", "", "\\'", "ünï", "end\\"]


def test_long_lists_of_strings_reach_the_engine_unchanged() -> None:
    store = Store(chdb_url(fresh_database()))
    store.connect()
    try:
        plain = [f"0af7651916cd43dd8448eb211c8031{i:04d}" for i in range(40)]
        for values in (plain, plain + _AWKWARD, _AWKWARD * 5):
            sql = "SELECT {values:Array(String)}, length({values:Array(String)})"
            assert store.query(sql, {"values": values}) == [(values, len(values))]
            columns = store.query_columns(sql, {"values": values})
            assert [list(column) for column in columns] == [[values], [len(values)]]
            assert store.query_dicts("SELECT {values:Array(String)} AS v", {"values": values}) == [{"v": values}]
            assert store.command("SELECT length({values:Array(String)})", {"values": values}) == len(values)
            found = store.query("SELECT x FROM (SELECT arrayJoin({values:Array(String)}) AS x) "
                                "WHERE x IN {values:Array(String)} ORDER BY x", {"values": values})
            assert [x for x, in found] == sorted(values)
        # Short lists and lists of other things keep the driver's own binding.
        assert store.query("SELECT {few:Array(String)}, {numbers:Array(Int64)}",
                           {"few": _AWKWARD, "numbers": list(range(50))}) == [(_AWKWARD, list(range(50)))]
    finally:
        store.close()
