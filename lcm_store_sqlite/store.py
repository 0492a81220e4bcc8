"""`SQLiteMemoryStore`: the reference backend, an embedded SQLite file with FTS5 trigram search."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, TypeVar

from lcm_core.store import rows
from lcm_core.store.base import BaseStore
from lcm_core.store.matching import SCAN_ROWS_MAX
from lcm_core.store.models import Event, MemoryEvent, MemoryItem
from lcm_core.store.primitives import OnConnection
from lcm_core.store.registry import store_url
from lcm_core.store.sql_reads import SqlReads
from lcm_store_sqlite.admin import AdminMixin
from lcm_store_sqlite.connection import DIALECT, Connection
from lcm_store_sqlite.events import EventsMixin
from lcm_store_sqlite.session_cache import CopiedRow, SessionCache
from lcm_store_sqlite.writes import WritesMixin


class SQLiteMemoryStore(EventsMixin, WritesMixin, AdminMixin, SqlReads, OnConnection, BaseStore):
    """A `MemoryStore` on one SQLite file (or `:memory:`), schema v2, WAL mode."""

    dialect = DIALECT

    def __init__(
        self,
        location: str | Path,
        *,
        scan_rows_max: int = SCAN_ROWS_MAX,
        session_cache: bool = True,
    ) -> None:
        """Open (creating or migrating) the database; `scan_rows_max` sets the search path.

        A session-scoped search over at most `scan_rows_max` rows scans them; a bigger
        scope uses the FTS index. Tests set it to 0 to exercise the index path on small data.
        With `session_cache` a scanned session's events are kept in memory and followed
        (`session_cache.SessionCache`): same results, without reading them at every step.
        """
        self._db = Connection(str(location))
        self._scan_rows_max = scan_rows_max
        self._sessions = SessionCache(rows_max=scan_rows_max if session_cache else 0)
        # Per query shape ("search": rowid and every column; "all": every column), rows
        # already converted: a pre-step reads the same turns and items again and again.
        self._event_memos = {
            shape: rows.RowMemo(rows.event_from_row) for shape in ("search", "all")
        }
        self._item_memos = {shape: rows.RowMemo(rows.item_from_row) for shape in ("search", "all")}
        self.url = store_url("sqlite", ":memory:" if self._db.in_memory else location)
        self.path: Path | None = None if self._db.in_memory else Path(location)

    def _event(self, row: Mapping[str, Any], shape: str) -> Event:
        memo = self._event_memos["search" if shape == "search" else "all"]
        return _made(row, memo, rows.event_from_row)

    def _item(self, row: Mapping[str, Any], shape: str) -> MemoryItem:
        memo = self._item_memos["search" if shape == "search" else "all"]
        return _made(row, memo, rows.item_from_row)

    def _sql_events(self, session_id: str, seqs: Sequence[int]) -> list[Event]:
        return SqlReads.get_events(self, session_id, seqs)

    def __repr__(self) -> str:
        return f"SQLiteMemoryStore({self._db.label!r})"

    def scratch(self) -> SQLiteMemoryStore:
        """A new, empty, private in-memory store of this kind (re-extraction derives in one)."""
        return SQLiteMemoryStore(":memory:")

    # --- forgetting: freed cells and pages are zeroed, so erased text leaves no copy ---
    def forget_event(self, session_id: str, seq: int) -> Event | None:
        self._secure_delete("forget event")
        return super().forget_event(session_id, seq)

    def forget_item(self, item_id: str, event: MemoryEvent) -> MemoryItem:
        self._secure_delete("forget item")
        return super().forget_item(item_id, event)

    def _secure_delete(self, where: str) -> None:
        with self._db.guarded(where) as raw:
            raw.execute("PRAGMA secure_delete = ON")


T = TypeVar("T")


def _made(row: Any, memo: rows.RowMemo[T], convert: Callable[[Any], T]) -> T:
    """The event or item a row is made into: kept on a session copy's row (made once),
    else looked up in the memo of its query shape."""
    kind = type(row)
    if kind is CopiedRow:
        copied: Any = row  # (no typing.cast: it is a call, and this runs per row)
        if copied.converted is None:
            copied.converted = convert(row)
        made: T = copied.converted
        return made
    # A sqlite3.Row iterates over its values, in the query's column order; a dict (a
    # keyed-row read by a caller of `find_row`) holds them in the same order.
    values: Iterable[Any] = row.values() if kind is dict else row
    return memo(row, values)
