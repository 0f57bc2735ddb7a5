"""The store lends each statement a connection of its own: a long read does not hold up the others."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from evalkit.store import Store
from tests.conftest import chdb_url, fresh_database

# Long enough for a connection that never comes to fail the test rather than hang it; a read that does not
# wait for one returns at once.
_PATIENCE = 60.0


def _in_thread(work: Callable[[], Any]) -> tuple[threading.Thread, list[Any]]:
    result: list[Any] = []
    thread = threading.Thread(target=lambda: result.append(work()), daemon=True)
    thread.start()
    return thread, result


def test_a_read_goes_on_while_another_is_still_streaming() -> None:
    store = Store(chdb_url(fresh_database()), read_connections=2)
    store.connect()
    try:
        # A streamed read holds its connection (the embedded engine's lock on it) until its last row is read.
        with store._reader() as held, held.query_rows_stream("SELECT number FROM numbers(1000000)") as stream:
            next(iter(stream))
            thread, result = _in_thread(lambda: store.query("SELECT 42"))
            thread.join(_PATIENCE)
            assert result == [[(42,)]], "a read waited for another read's connection"
            assert store.query("SELECT count() FROM numbers(10)") == [(10,)]
    finally:
        store.close()


def test_reads_past_the_connections_wait_for_one_and_then_run() -> None:
    store = Store(chdb_url(fresh_database()), read_connections=2)
    store.connect()
    try:
        held = []
        for _ in range(2):  # (in a thread, so that a pool lending fewer fails the test rather than hangs it)
            thread, lent = _in_thread(store._readers.borrow)
            thread.join(_PATIENCE)
            assert lent, "the pool lent fewer connections than read_connections"
            held += lent
        assert store.connection_use()["read"] == (2, 0)
        thread, result = _in_thread(lambda: store.query("SELECT 7"))
        thread.join(0.5)
        assert thread.is_alive() and not result, "a third read ran with both connections lent"
        assert store.connection_use()["read"][1] == 1  # counted as a wait (/metrics)
        store._readers.give_back(held.pop())
        thread.join(_PATIENCE)
        assert result == [[(7,)]]
        store._readers.give_back(held.pop())
        # Never more than `read_connections` opened, however many reads ran.
        threads = [_in_thread(lambda: store.query("SELECT sum(number) FROM numbers(100000)"))[0] for _ in range(6)]
        for thread in threads:
            thread.join(_PATIENCE)
        assert store._readers._made == 2
    finally:
        store.close()


def test_a_connection_lent_when_the_store_closes_is_closed_when_given_back() -> None:
    store = Store(chdb_url(fresh_database()), read_connections=2)
    store.connect()
    lent = store._readers.borrow()
    store.close()
    store._readers.give_back(lent)
    assert store._readers._idle.empty()
    # The store opens again on its next statement.
    assert store.query("SELECT 1") == [(1,)]
    store.close()
