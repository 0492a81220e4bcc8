"""`SupportsImport` on SQLite: exported rows back in, column for column.

The FTS tables follow inserts through their triggers, and AUTOINCREMENT moves past an
id given explicitly, so nothing more is needed after an import.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from lcm_core.store.import_sql import find_row_query, insert_row_query
from lcm_core.store.models import GENERATED_ID_TABLES, TABLES

if TYPE_CHECKING:
    from lcm_store_sqlite.connection import Connection


class ImportMixin:
    """`find_row`, `put_row`, `end_import`; needs `self._db`."""

    _db: Connection

    def _columns(self, table: str) -> list[str]:
        # Read once per handle: the schema only changes when a handle opens (migrations).
        cache: dict[str, list[str]] = self.__dict__.setdefault("_import_columns", {})
        if table not in TABLES:
            return []  # the query builders then name the known tables
        if table not in cache:
            with self._db.guarded(f"columns of {table}") as raw:
                cache[table] = [str(r[1]) for r in raw.execute(f"PRAGMA table_info({table})")]
        return cache[table]

    def find_row(self, table: str, match: Mapping[str, Any]) -> dict[str, Any] | None:
        sql, params = find_row_query(table, match, self._columns(table), mark="?")
        with self._db.guarded(f"find {table} row") as raw:
            row = raw.execute(sql, params).fetchone()
        return None if row is None else dict(zip(row.keys(), tuple(row), strict=True))

    def put_row(self, table: str, row: Mapping[str, Any]) -> Any:
        sql, params = insert_row_query(table, row, self._columns(table), mark="?")
        with self._db.transaction(), self._db.guarded(f"import {table} row") as raw:
            cursor = raw.execute(sql, params)
        if table not in GENERATED_ID_TABLES:
            return None
        return row.get("id", cursor.lastrowid)

    def end_import(self, table: str) -> None:
        """Nothing to do: AUTOINCREMENT already continues past the largest id."""
