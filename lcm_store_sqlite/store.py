"""`SQLiteMemoryStore`: the reference backend, an embedded SQLite file with FTS5 trigram search."""

from __future__ import annotations

import contextlib
import sqlite3
from collections.abc import Callable, Iterable, Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any, TypeVar, cast

from lcm_core.clock import utc_now_iso
from lcm_core.store import records, rows
from lcm_core.store.errors import StoreConflictError, StoreNotFoundError
from lcm_core.store.models import (
    Event,
    ItemChange,
    MemoryEvent,
    MemoryItem,
)
from lcm_core.store.queries import SCAN_ROWS_MAX
from lcm_core.store.registry import store_url
from lcm_core.store.sql_reads import SqlReads
from lcm_store_sqlite.admin import AdminMixin
from lcm_store_sqlite.connection import DIALECT, Connection
from lcm_store_sqlite.events import EventsMixin
from lcm_store_sqlite.imports import ImportMixin
from lcm_store_sqlite.records import RecordsMixin
from lcm_store_sqlite.session_cache import CopiedRow, SessionCache

_INSERT_ITEM = (
    f"INSERT INTO memory_items ({rows.ITEM_COLUMNS}) "
    "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
)


class SQLiteMemoryStore(EventsMixin, RecordsMixin, AdminMixin, ImportMixin, SqlReads):
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

    def __repr__(self) -> str:
        return f"SQLiteMemoryStore({self._db.label!r})"

    # --- lifetime ----------------------------------------------------------------
    def transaction(self) -> contextlib.AbstractContextManager[None]:
        return self._db.transaction()

    def close(self) -> None:
        self._db.close()

    def __enter__(self) -> SQLiteMemoryStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # --- memory items --------------------------------------------------------------
    def insert_item(self, item: MemoryItem, *, actor: str = "extractor") -> tuple[MemoryItem, bool]:
        item = records.prepare_item(item)
        with self._db.transaction(), self._db.guarded("insert item") as raw:
            existing = raw.execute(
                "SELECT * FROM memory_items WHERE session_id = ? AND content_hash = ? "
                "AND status = 'active'",
                (item.session_id, item.content_hash),
            ).fetchone()
            if existing is not None and item.status == "active":
                return rows.item_from_row(existing), False
            if raw.execute("SELECT 1 FROM memory_items WHERE id = ?", (item.id,)).fetchone():
                raise StoreConflictError(f"memory item {item.id} already exists")
            raw.execute(_INSERT_ITEM, rows.item_params(item))
            self._append_memory_event(
                raw,
                MemoryEvent(item.id, item.session_id, "created", actor=actor, at=item.created_at),
            )
        return item, True

    def get_item(self, item_id: str) -> MemoryItem | None:
        with self._db.guarded("get item") as raw:
            row = raw.execute("SELECT * FROM memory_items WHERE id = ?", (item_id,)).fetchone()
        return self._item(row, "all") if row else None

    def update_item(self, item_id: str, change: ItemChange, event: MemoryEvent) -> MemoryItem:
        with self._db.transaction(), self._db.guarded("update item") as raw:
            row = raw.execute("SELECT * FROM memory_items WHERE id = ?", (item_id,)).fetchone()
            if row is None:
                raise StoreNotFoundError(f"no memory item {item_id}")
            current = rows.item_from_row(row)
            at = event.at or utc_now_iso()
            updated = records.apply_change(current, change, at)
            try:
                raw.execute(
                    "UPDATE memory_items SET status = ?, superseded_by = ?, evidence_type = ?, "
                    "kind = ?, supersedes_json = ?, updated_at = ? WHERE id = ?",
                    (
                        updated.status,
                        updated.superseded_by,
                        updated.evidence_type,
                        updated.kind,
                        rows.dumps(list(updated.supersedes)),
                        updated.updated_at,
                        item_id,
                    ),
                )
            except sqlite3.IntegrityError as exc:
                raise StoreConflictError(
                    f"memory item {item_id}: another active item has the same content"
                ) from exc
            self._append_memory_event(
                raw, replace(event, memory_id=item_id, session_id=current.session_id, at=at)
            )
        return updated

    def forget_item(self, item_id: str, event: MemoryEvent) -> MemoryItem:
        with self._db.guarded("forget item") as raw:
            # Freed cells and pages are zeroed, so erased text leaves no copy in free space.
            raw.execute("PRAGMA secure_delete = ON")
        with self._db.transaction(), self._db.guarded("forget item") as raw:
            row = raw.execute("SELECT * FROM memory_items WHERE id = ?", (item_id,)).fetchone()
            if row is None:
                raise StoreNotFoundError(f"no memory item {item_id}")
            at = event.at or utc_now_iso()
            gone = records.erase_item(rows.item_from_row(row), at)
            # The FTS update trigger removes the old content's index entries.
            erased = records.erased_item_record(gone)
            raw.execute(
                f"UPDATE memory_items SET {records.set_clause(erased, '?')} WHERE id = ?",
                (*erased.values(), item_id),
            )
            self._append_memory_event(
                raw, replace(event, memory_id=item_id, session_id=gone.session_id, at=at)
            )
        return gone

    @staticmethod
    def _append_memory_event(raw: sqlite3.Connection, event: MemoryEvent) -> None:
        raw.execute(
            "INSERT INTO memory_events (memory_id, session_id, event, at, actor, detail_json) "
            "VALUES (?, ?, ?, ?, ?, ?)",
            (
                event.memory_id,
                event.session_id,
                event.event,
                event.at or utc_now_iso(),
                event.actor,
                rows.dumps(event.detail),
            ),
        )


T = TypeVar("T")


def _made(row: Mapping[str, Any], memo: rows.RowMemo[T], convert: Callable[[Any], T]) -> T:
    """The event or item a row is made into: kept on a session copy's row (made once),
    else looked up in the memo of its query shape."""
    if isinstance(row, CopiedRow):
        if row.converted is None:
            row.converted = convert(row)
        return cast("T", row.converted)
    # A sqlite3.Row iterates over its values, in the query's column order.
    return memo(row, cast("Iterable[Any]", row))
