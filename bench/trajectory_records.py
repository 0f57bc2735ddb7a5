"""Record every trajectory a test run builds, to check that a change leaves them all as they were.

A pytest plugin: each `build_trajectory`, `apply_costs` and `validate_trajectory` result and each
span list the trajectory reads return is hashed (the document's JSON, key order included), keyed by
the test that made it. Run the trajectory tests once on the code before a change and once after,
then compare the two records:

    PYTHONPATH=bench TRAJECTORY_RECORDS=/tmp/before.jsonl .venv/bin/python -m pytest -q \\
        -p trajectory_records tests/trajectory tests/trajectory_service
    # ... the change ...
    PYTHONPATH=bench TRAJECTORY_RECORDS=/tmp/after.jsonl .venv/bin/python -m pytest -q \\
        -p trajectory_records tests/trajectory tests/trajectory_service
    .venv/bin/python bench/trajectory_records.py /tmp/before.jsonl /tmp/after.jsonl

Tests that run live SDKs make spans with fresh ids and clock times, so their records differ between
any two runs; every other record must be identical.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
from collections import defaultdict
from collections.abc import Callable, Generator
from typing import Any

_records: list[tuple[str, str, str]] = []
_test = ["(collection)"]


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def _json(value: Any) -> str:
    import orjson

    return orjson.dumps(value, default=repr).decode()


def _spans(spans: Any) -> str:
    return repr([sorted(span.__dict__.items()) for span in spans])


def _install() -> None:
    # Patched before the tests import the modules that import these by name.
    import evalkit.trajectory.build as build
    import evalkit.trajectory.cost as cost
    import evalkit.trajectory.read as read
    import evalkit.trajectory.validate as validate

    def wrap(module: Any, name: str, kind: str, text: Callable[[Any], str]) -> None:
        original = getattr(module, name)

        def recorded(*args: Any, **kwargs: Any) -> Any:
            result = original(*args, **kwargs)
            _records.append((_test[0], kind, _digest(text(result))))
            return result

        setattr(module, name, recorded)

    wrap(build, "build_trajectory", "build", lambda r: _json(
        [r.document, r.unmapped_attributes, r.emitters, r.warnings, r.mapping_version]))
    wrap(cost, "apply_costs", "cost", _json)
    wrap(validate, "validate_trajectory", "validate", lambda issues: repr([str(i) for i in issues]))
    wrap(read, "read_spans_to_map", "spans to map", _spans)
    if hasattr(read, "read_spans_to_map_settling"):
        # The same spans as `read_spans_to_map` (a session's first request reads them this way).
        wrap(read, "read_spans_to_map_settling", "spans to map", lambda r: _spans(r[0]))
    wrap(read, "read_trace_spans", "spans", _spans)
    if hasattr(read, "read_trace_spans_typed"):
        wrap(read, "read_trace_spans_typed", "spans", lambda r: _spans(r[0]))


if "pytest" in sys.modules:
    import pytest

    _install()

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_call(item: Any) -> Generator[None, None, None]:
        _test[0] = item.nodeid
        yield

    def pytest_sessionfinish(session: Any) -> None:
        path = os.environ.get("TRAJECTORY_RECORDS", "trajectory-records.jsonl")
        with open(path, "w", encoding="utf-8") as out:
            for test, kind, digest in _records:
                out.write(json.dumps([test, kind, digest]) + "\n")


def compare(before_path: str, after_path: str) -> int:
    def load(path: str) -> dict[tuple[str, str], list[str]]:
        found: dict[tuple[str, str], list[str]] = defaultdict(list)
        with open(path, encoding="utf-8") as records:
            for line in records:
                test, kind, digest = json.loads(line)
                found[(test, kind)].append(digest)
        return found

    before, after = load(before_path), load(after_path)
    differ = sorted(key for key in before.keys() & after.keys() if before[key] != after[key])
    for test, kind in differ:
        print(f"differs: {test} ({kind})")
    only = sorted(before.keys() ^ after.keys())
    for test, kind in only:
        print(f"in one run only: {test} ({kind})")
    print(f"{sum(map(len, before.values()))} records before, {sum(map(len, after.values()))} after; "
          f"{len(differ)} differ")
    return 1 if differ else 0


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit("usage: trajectory_records.py BEFORE.jsonl AFTER.jsonl")
    sys.exit(compare(sys.argv[1], sys.argv[2]))
