"""The keyed-row writes of the SQLite store: insert, update and delete, column for column.

Statements are the core's (`lcm_core.store.row_sql`); the FTS tables follow every write
through their triggers, and AUTOINCREMENT moves past an id given explicitly, so an
import needs nothing more. A single statement is atomic on its own (a failed one leaves
an enclosing transaction as it was), so none opens a savepoint. A rewrite or delete of
events in place (a forget, a purge) drops the handle's session copies; items need not,
the schema's triggers count their rewrites (`session_cache`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, Final

from lcm_core.store.models import GENERATED_ID_TABLES
from lcm_core.store.queries import Query
from lcm_core.store.row_sql import delete_rows_query, insert_row_query, update_rows_query
from lcm_store_sqlite.connection import DIALECT

if TYPE_CHECKING:
    from lcm_store_sqlite.connection import Connection
    from lcm_store_sqlite.session_cache import SessionCache

# The table whose in-place changes the session copies cannot see for themselves.
_COPIED: Final = frozenset({"events"})


class WritesMixin:
    """`put_row`, `update_rows`, `delete_rows` and the catalogue read; needs `self._db`."""

    _db: Connection
    _sessions: SessionCache
    _columns: Callable[[str], tuple[str, ...]]  # `SqlReads._columns`

    def _table_columns(self, table: str) -> list[str]:
        with self._db.guarded(f"columns of {table}") as raw:
            return [str(r[1]) for r in raw.execute(f"PRAGMA table_info({table})")]

    def put_row(self, table: str, row: Mapping[str, Any]) -> Any:
        sql, params = insert_row_query(table, row, self._columns(table), mark="?")
        with self._db.guarded(f"put {table} row") as raw:
            cursor = raw.execute(sql, params)
        if table not in GENERATED_ID_TABLES:
            return None
        given = row.get("id")
        return cursor.lastrowid if given is None else given

    def update_rows(self, table: str, match: Mapping[str, Any], values: Mapping[str, Any]) -> int:
        query = update_rows_query(DIALECT, table, match, values, self._columns(table))
        return self._changed(f"update {table}", table, query)

    def delete_rows(self, table: str, match: Mapping[str, Any]) -> int:
        query = delete_rows_query(DIALECT, table, match, self._columns(table))
        return self._changed(f"delete {table}", table, query)

    def _execute(self, where: str, query: Query) -> None:
        with self._db.guarded(where) as raw:
            raw.execute(*query)

    def _changed(self, where: str, table: str, query: Query | None) -> int:
        if query is None:
            return 0
        with self._db.guarded(where) as raw:
            count = max(0, raw.execute(*query).rowcount)
            if count and table in _COPIED:
                # Dropped while the lock is held, up to the commit: no search in between
                # can read a copy with the old rows.
                self._sessions.invalidate()
        return count
