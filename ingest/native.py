"""ClickHouse Native-format blocks built from rows, so the costly encoding can run in a
worker process and the writer only concatenates bytes.

Uses clickhouse-connect's own column serializers (the ones its `insert` uses), so
the bytes are exactly what the driver would send.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from clickhouse_connect.datatypes.registry import get_from_name
from clickhouse_connect.driver.insert import InsertContext
from clickhouse_connect.driver.transform import NativeTransform


class NativeEncoder:
    """Picklable: holds type names and builds the serializers where it is used."""

    def __init__(self, table: str, column_names: Sequence[str], type_names: Sequence[str]) -> None:
        self.table = table
        self.column_names = tuple(column_names)
        self.type_names = tuple(type_names)
        self._types: list[Any] | None = None

    def __getstate__(self) -> dict[str, Any]:
        return {"table": self.table, "column_names": self.column_names, "type_names": self.type_names,
                "_types": None}

    def encode(self, rows: Sequence[tuple[Any, ...]]) -> bytes:
        if not rows:
            return b""
        if self._types is None:
            self._types = [get_from_name(name) for name in self.type_names]
        columns = [list(column) for column in zip(*rows, strict=True)]
        context = InsertContext(self.table, self.column_names, self._types, data=columns, column_oriented=True)
        data = b"".join(NativeTransform.build_insert(context))
        # The driver starts the first chunk with the INSERT statement for an HTTP body; keep only the block.
        if data.startswith(b"INSERT INTO"):
            data = data[data.index(b"\n") + 1:]
        return data
