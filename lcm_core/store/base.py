"""`BaseStore`: the whole `MemoryStore` written once over a backend's few primitives.

A backend supplies `StoreBackend` (`lcm_core.store.primitives`): keyed rows (`find_row`,
`list_rows`, `count_rows`, `put_row`, `update_rows`, `delete_rows`, `export_rows`),
events (`insert_events`, `list_events`, `get_events`, `search_events`), item search,
`transaction` and `close`. Everything else is here: the item write policy (one active
item per content hash, a lifecycle row with every change, forgetting as a tombstone),
the archive, meta, stats, purges and the integrity checks every store shares; the
bookkeeping tables are in `lcm_core.store.base_records`. A backend overrides a method only to do it faster or to
add what its files need (SQLite zeroes freed pages before a forget).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any, Self

from lcm_core.clock import utc_now_iso
from lcm_core.store import records, rows
from lcm_core.store.base_records import BookkeepingMixin
from lcm_core.store.errors import StoreConflictError, StoreNotFoundError
from lcm_core.store.migrations import parse_version
from lcm_core.store.models import (
    SCHEMA_VERSION,
    SESSION_TABLES,
    TABLES,
    ArchiveEntry,
    Event,
    ItemChange,
    MemoryEvent,
    MemoryItem,
)
from lcm_core.store.queries import PURGED_TABLES, session_match

Row = dict[str, Any]
# The columns `update_item` may change (`records.apply_change` moves only these).
_CHANGED = ("status", "superseded_by", "evidence_type", "kind", "supersedes_json", "updated_at")


class BaseStore(BookkeepingMixin):
    """Events, archive, items and the store as a whole, derived from the primitives."""

    # --- events and archive ----------------------------------------------------------
    def insert_event(self, event: Event) -> bool:
        return self.insert_events([event]) == 1

    def get_event(self, session_id: str, seq: int) -> Event | None:
        found = self.get_events(session_id, [seq])
        return found[0] if found else None

    def max_event_seq(self, session_id: str) -> int | None:
        top = self._list(
            "events", {"session_id": session_id}, order=("-seq",), limit=1, columns=("seq",)
        )
        return int(top[0]["seq"]) if top else None

    def put_archive(self, entry: ArchiveEntry) -> None:
        key = {"session_id": entry.session_id, "ref": entry.ref}
        stored = replace(
            entry, text=self._clean_text(entry.text), created_at=entry.created_at or utc_now_iso()
        )
        with self.transaction():
            if self._find("archive", key) is not None:
                return  # the first text of a ref is kept
            try:
                self.put_row("archive", records.archive_record(stored))
            except StoreConflictError:
                return  # another writer stored it first: its text is kept

    def get_archive(self, session_id: str, ref: str) -> ArchiveEntry | None:
        row = self._find("archive", {"session_id": session_id, "ref": ref})
        if row is None:
            return None
        return ArchiveEntry(row["session_id"], row["ref"], row["text"], row["created_at"])

    def forget_event(self, session_id: str, seq: int) -> Event | None:
        key = {"session_id": session_id, "seq": seq}
        with self.transaction():
            row = self._find("events", key)
            if row is None:
                return None
            gone = records.erase_event(rows.event_from_row(row))
            self.update_rows("events", key, records.erased_event_record(gone))
            self.delete_rows("archive", {"session_id": session_id, "ref": f"seq:{seq}"})
        return gone

    # --- memory items --------------------------------------------------------------
    def insert_item(self, item: MemoryItem, *, actor: str = "extractor") -> tuple[MemoryItem, bool]:
        item = records.prepare_item(item, self._clean_text)
        active = item.status == "active"
        with self.transaction():
            twin = self._active_twin(item.session_id, item.content_hash)
            if twin is not None and active:
                return twin, False
            if self._find("memory_items", {"id": item.id}) is not None:
                raise StoreConflictError(f"memory item {item.id} already exists")
            try:
                self.put_row("memory_items", records.item_record(item))
            except StoreConflictError:
                # Another writer stored the same content (or id) since the look above.
                twin = self._active_twin(item.session_id, item.content_hash)
                if twin is not None and active:
                    return twin, False
                raise StoreConflictError(f"memory item {item.id} already exists") from None
            created = MemoryEvent(item.id, item.session_id, "created", actor=actor)
            self._append_memory_event(replace(created, at=item.created_at))
        return item, True

    def get_item(self, item_id: str) -> MemoryItem | None:
        row = self._find("memory_items", {"id": item_id})
        return self._item(row, "all") if row else None

    def list_items(
        self,
        session_id: str | None = None,
        *,
        statuses: Sequence[str] | None = None,
        kinds: Sequence[str] | None = None,
    ) -> list[MemoryItem]:
        match: dict[str, Any] = {}
        if session_id is not None:
            match["session_id"] = session_id
        if statuses is not None:
            match["status"] = list(statuses)
        if kinds is not None:
            match["kind"] = list(kinds)
        found = self._list("memory_items", match, order=("created_at", "id"))
        return [self._item(row, "all") for row in found]

    def update_item(self, item_id: str, change: ItemChange, event: MemoryEvent) -> MemoryItem:
        with self.transaction():
            current = self._existing_item(item_id)
            at = event.at or utc_now_iso()
            updated = records.apply_change(current, change, at)
            if updated.status == "active":
                twin = self._active_twin(current.session_id, current.content_hash, item_id)
                if twin is not None:
                    raise _same_content(item_id)
            record = records.item_record(updated)
            try:
                self.update_rows("memory_items", {"id": item_id}, {c: record[c] for c in _CHANGED})
            except StoreConflictError:
                raise _same_content(item_id) from None
            self._append_memory_event(
                replace(event, memory_id=item_id, session_id=current.session_id, at=at)
            )
        return updated

    def forget_item(self, item_id: str, event: MemoryEvent) -> MemoryItem:
        with self.transaction():
            current = self._existing_item(item_id)
            at = event.at or utc_now_iso()
            gone = records.erase_item(current, at)
            self.update_rows("memory_items", {"id": item_id}, records.erased_item_record(gone))
            self._append_memory_event(
                replace(event, memory_id=item_id, session_id=gone.session_id, at=at)
            )
        return gone

    def list_memory_events(
        self,
        *,
        memory_id: str | None = None,
        session_id: str | None = None,
        events: Sequence[str] | None = None,
    ) -> list[MemoryEvent]:
        match: dict[str, Any] = {}
        if memory_id is not None:
            match["memory_id"] = memory_id
        if session_id is not None:
            match["session_id"] = session_id
        if events is not None:
            match["event"] = list(events)
        found = self._list("memory_events", match, order=("id",))
        return [rows.memory_event_from_row(row) for row in found]

    def _existing_item(self, item_id: str) -> MemoryItem:
        row = self._find("memory_items", {"id": item_id})
        if row is None:
            raise StoreNotFoundError(f"no memory item {item_id}")
        return rows.item_from_row(row)

    def _active_twin(
        self, session_id: str, content_hash: str, other_than: str | None = None
    ) -> MemoryItem | None:
        """The active item of the session with this content hash (besides `other_than`)."""
        match = {"session_id": session_id, "content_hash": content_hash, "status": "active"}
        for row in self._list("memory_items", match, order=("id",)):
            if row["id"] != other_than:
                return rows.item_from_row(row)
        return None

    def _append_memory_event(self, event: MemoryEvent) -> None:
        stored = replace(event, at=event.at or utc_now_iso())
        record = records.memory_event_record(stored, 0)
        del record["id"]  # the store numbers lifecycle rows
        self.put_row("memory_events", record)

    # --- the store as a whole ----------------------------------------------------------
    def get_meta(self, key: str) -> str | None:
        row = self._find("meta", {"key": key})
        return None if row is None else str(row["value"])

    def set_meta(self, key: str, value: str) -> None:
        self._upsert("meta", {"key": key, "value": value})

    def schema_version(self) -> int:
        return parse_version(self.url, self.get_meta("schema"))

    def stats(self, session_id: str | None = None) -> dict[str, int]:
        return {table: self.count_rows(table, session_match(table, session_id)) for table in TABLES}

    def purge_session(self, session_id: str) -> dict[str, int]:
        with self.transaction():
            return {
                table: self.delete_rows(table, {"session_id": session_id})
                for table in SESSION_TABLES
            }

    def purge_all(self) -> dict[str, int]:
        with self.transaction():
            return {table: self.delete_rows(table, {}) for table in PURGED_TABLES}

    def integrity_check(self) -> list[str]:
        """The backend's own findings (`_store_problems`), then what every store checks: the
        schema version, and supersession links that point at no item."""
        problems = self._store_problems()
        version = self.schema_version()
        if version != SCHEMA_VERSION:
            problems.append(f"schema version is {version}, expected {SCHEMA_VERSION}")
        dangling = self._dangling_successors()
        if dangling:
            problems.append(f"{dangling} memory items link to a missing successor")
        return problems

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _same_content(item_id: str) -> StoreConflictError:
    return StoreConflictError(f"memory item {item_id}: another active item has the same content")
