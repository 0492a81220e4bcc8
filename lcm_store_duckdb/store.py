"""`DuckDBMemoryStore`: the analytical backend, schema v2 in one DuckDB file, same contract."""

from __future__ import annotations

import contextlib
from dataclasses import replace
from pathlib import Path

import duckdb

from lcm_core.clock import utc_now_iso
from lcm_core.store import records, rows
from lcm_core.store.errors import StoreConflictError, StoreNotFoundError
from lcm_core.store.models import (
    ItemChange,
    MemoryEvent,
    MemoryItem,
)
from lcm_core.store.registry import store_url
from lcm_core.store.sql_reads import SqlReads
from lcm_store_duckdb.admin import AdminMixin
from lcm_store_duckdb.analytics import AnalyticsMixin
from lcm_store_duckdb.connection import DIALECT, Connection
from lcm_store_duckdb.events import EventsMixin
from lcm_store_duckdb.fetch import fetch_dict, fetch_dicts
from lcm_store_duckdb.imports import ImportMixin
from lcm_store_duckdb.records import RecordsMixin
from lcm_store_duckdb.search import SearchMixin, fold, trigram_count

_INSERT_ITEM = (
    f"INSERT INTO memory_items ({rows.ITEM_COLUMNS}) "
    "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
)


class DuckDBMemoryStore(
    EventsMixin, RecordsMixin, AdminMixin, AnalyticsMixin, ImportMixin, SearchMixin, SqlReads
):
    """A `MemoryStore` on one DuckDB file (or `:memory:`), schema v2, one process at a time."""

    dialect = DIALECT

    def __init__(self, location: str | Path) -> None:
        self._db = Connection(str(location))
        self.url = store_url("duckdb", ":memory:" if self._db.in_memory else location)
        self.path: Path | None = None if self._db.in_memory else Path(location)

    def __repr__(self) -> str:
        return f"DuckDBMemoryStore({self._db.label!r})"

    # --- lifetime ----------------------------------------------------------------
    def transaction(self) -> contextlib.AbstractContextManager[None]:
        return self._db.transaction()

    def close(self) -> None:
        self._db.close()

    def __enter__(self) -> DuckDBMemoryStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # --- memory items --------------------------------------------------------------
    def insert_item(self, item: MemoryItem, *, actor: str = "extractor") -> tuple[MemoryItem, bool]:
        item = records.prepare_item(item)
        with self._db.transaction(), self._db.guarded("insert item") as raw:
            # One read answers both questions: is there an active twin, is the id taken?
            found = fetch_dicts(
                raw.execute(
                    "SELECT * FROM memory_items WHERE id = ? OR (session_id = ? AND "
                    "content_hash = ? AND status = 'active') ORDER BY id",
                    (item.id, item.session_id, item.content_hash),
                )
            )
            twins = [
                row
                for row in found
                if row["status"] == "active"
                and (row["session_id"], row["content_hash"]) == (item.session_id, item.content_hash)
            ]
            if twins and item.status == "active":
                return rows.item_from_row(twins[0]), False
            # Checked here, not left to the primary key: a constraint error would abort
            # DuckDB's whole transaction, including an enclosing caller's writes.
            if any(row["id"] == item.id for row in found):
                raise StoreConflictError(f"memory item {item.id} already exists")
            raw.execute(_INSERT_ITEM, rows.item_params(item))
            self._db.added("memory_items", "id = ?", (item.id,))
            self._db.added("memory_search", "id = ?", (item.id,))
            raw.execute(
                "INSERT INTO memory_search (id, session_id, folded, grams) VALUES (?, ?, ?, ?)",
                (item.id, item.session_id, fold(item.content), trigram_count(item.content)),
            )
            self._append_memory_event(
                raw,
                MemoryEvent(item.id, item.session_id, "created", actor=actor, at=item.created_at),
            )
        return item, True

    def get_item(self, item_id: str) -> MemoryItem | None:
        with self._db.guarded("get item") as raw:
            row = fetch_dict(raw.execute("SELECT * FROM memory_items WHERE id = ?", (item_id,)))
        return rows.item_from_row(row) if row else None

    def update_item(self, item_id: str, change: ItemChange, event: MemoryEvent) -> MemoryItem:
        with self._db.transaction(), self._db.guarded("update item") as raw:
            row = fetch_dict(raw.execute("SELECT * FROM memory_items WHERE id = ?", (item_id,)))
            if row is None:
                raise StoreNotFoundError(f"no memory item {item_id}")
            current = rows.item_from_row(row)
            at = event.at or utc_now_iso()
            updated = records.apply_change(current, change, at)
            # DuckDB has no partial unique index: the one-active-item-per-hash rule is
            # checked before writing, so a conflict leaves the transaction usable.
            if (
                updated.status == "active"
                and raw.execute(
                    "SELECT 1 FROM memory_items WHERE session_id = ? AND content_hash = ? "
                    "AND status = 'active' AND id <> ?",
                    (current.session_id, current.content_hash, item_id),
                ).fetchone()
            ):
                raise StoreConflictError(
                    f"memory item {item_id}: another active item has the same content"
                )
            self._db.remember("memory_items", "id = ?", (item_id,))
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
            self._append_memory_event(
                raw, replace(event, memory_id=item_id, session_id=current.session_id, at=at)
            )
        return updated

    def forget_item(self, item_id: str, event: MemoryEvent) -> MemoryItem:
        with self._db.transaction(), self._db.guarded("forget item") as raw:
            row = fetch_dict(raw.execute("SELECT * FROM memory_items WHERE id = ?", (item_id,)))
            if row is None:
                raise StoreNotFoundError(f"no memory item {item_id}")
            at = event.at or utc_now_iso()
            gone = records.erase_item(rows.item_from_row(row), at)
            self._db.remember("memory_items", "id = ?", (item_id,))
            self._db.remember("memory_search", "id = ?", (item_id,))
            erased = records.erased_item_record(gone)
            raw.execute(
                f"UPDATE memory_items SET {records.set_clause(erased, '?')} WHERE id = ?",
                (*erased.values(), item_id),
            )
            raw.execute("UPDATE memory_search SET folded = '', grams = 0 WHERE id = ?", (item_id,))
            self._append_memory_event(
                raw, replace(event, memory_id=item_id, session_id=gone.session_id, at=at)
            )
        return gone

    def _append_memory_event(self, raw: duckdb.DuckDBPyConnection, event: MemoryEvent) -> None:
        row = raw.execute(
            'INSERT INTO memory_events (memory_id, session_id, event, "at", actor, detail_json) '
            "VALUES (?, ?, ?, ?, ?, ?) RETURNING id",
            (
                event.memory_id,
                event.session_id,
                event.event,
                event.at or utc_now_iso(),
                event.actor,
                rows.dumps(event.detail),
            ),
        ).fetchone()
        self._db.added("memory_events", "id = ?", (int(row[0]) if row else 0,))
