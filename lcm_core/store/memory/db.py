"""The tables of the in-memory reference store: rows as dicts, an undo log for transactions.

Rows keep schema v2's columns (the shape `export_rows` yields on every backend), keyed
by each table's primary key; `_rowid` records insertion order, as SQLite's rowid does.
Every change goes through `put` or `drop`, which log how to undo it, so a failed
transaction, nested or not, rolls back exactly its own writes.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from lcm_core.store.models import SCHEMA_VERSION, TABLES

Row = dict[str, Any]
ROWID = "_rowid"


class MemoryDatabase:
    """One in-memory database; several `InMemoryStore` handles may share it."""

    def __init__(self) -> None:
        self.tables: dict[str, dict[Any, Row]] = {table: {} for table in TABLES}
        self._last_rowid: dict[str, int] = dict.fromkeys(TABLES, 0)
        self._last_id: dict[str, int] = dict.fromkeys(TABLES, 0)
        self._undo: list[Callable[[], object]] = []
        self._depth = 0
        self.put("meta", "schema", {"key": "schema", "value": str(SCHEMA_VERSION)})
        self._undo.clear()

    # --- changes -----------------------------------------------------------------
    def next_id(self, table: str) -> int:
        """A new integer id (AUTOINCREMENT): never reused, unless its transaction fails."""
        return self._advance(self._last_id, table)

    def _advance(self, counters: dict[str, int], table: str) -> int:
        before = counters[table]
        counters[table] = before + 1
        self._log(lambda: counters.__setitem__(table, before))
        return before + 1

    def put(self, table: str, key: Any, row: Row) -> None:
        """Insert or replace the row under `key`; a replaced row keeps its rowid."""
        rows = self.tables[table]
        old = rows.get(key)
        stored = dict(row)
        stored[ROWID] = old[ROWID] if old is not None else self._advance(self._last_rowid, table)
        rows[key] = stored
        if old is None:
            self._log(lambda: rows.pop(key, None))
        else:
            self._log(lambda: rows.__setitem__(key, old))

    def drop(self, table: str, key: Any) -> None:
        """Delete the row under `key` (nothing when there is none)."""
        rows = self.tables[table]
        old = rows.pop(key, None)
        if old is not None:
            self._log(lambda: rows.__setitem__(key, old))

    def _log(self, undo: Callable[[], object]) -> None:
        if self._depth:
            self._undo.append(undo)

    # --- transactions --------------------------------------------------------------
    @contextmanager
    def transaction(self) -> Iterator[None]:
        """Writes inside commit together; a failure undoes this block's writes only."""
        mark = len(self._undo)
        self._depth += 1
        try:
            yield
        except BaseException:
            while len(self._undo) > mark:
                self._undo.pop()()
            raise
        finally:
            self._depth -= 1
            if self._depth == 0:
                self._undo.clear()

    # --- reads ---------------------------------------------------------------------
    def rows(self, table: str) -> list[Row]:
        """The table's rows in insertion (rowid) order."""
        return sorted(self.tables[table].values(), key=lambda row: row[ROWID])

    def get(self, table: str, key: Any) -> Row | None:
        return self.tables[table].get(key)

    def session_rows(self, table: str, session_id: str) -> list[Row]:
        """One session's rows of a table, in rowid order."""
        return [row for row in self.rows(table) if row["session_id"] == session_id]


def public(row: Row) -> Row:
    """The row as a backend exports it: its columns, without the rowid."""
    return {name: value for name, value in row.items() if name != ROWID}
