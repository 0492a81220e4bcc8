"""`InMemoryStore`: the reference `MemoryStore` in pure Python, no SQL.

It states the port's contract as plainly as code can: the conformance suite runs it as a
third backend, and core unit tests use it where SQLite would only add weight. Search
matches each cleaned term as a case-insensitive substring and scores with the core's
`score_matches`, over the same scope a SQL backend counts, so scores agree.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from contextlib import AbstractContextManager
from dataclasses import replace
from typing import Any, cast

from lcm_core.clock import utc_now_iso
from lcm_core.store import records, rows
from lcm_core.store.errors import StoreConflictError, StoreError, StoreNotFoundError
from lcm_core.store.models import (
    EXPORT_ORDER,
    SCHEMA_VERSION,
    SESSION_TABLES,
    TABLES,
    ArchiveEntry,
    Checkpoint,
    Event,
    EventHit,
    ItemChange,
    ItemHit,
    MemoryEvent,
    MemoryItem,
    PendingExtraction,
    Session,
    TaskState,
)
from lcm_core.store.queries import SCOPE_COUNT_MAX
from lcm_core.testing.memory_db import ROWID, MemoryDatabase, Row, public
from lcm_core.testing.memory_import import MemoryImportMixin
from lcm_core.testing.memory_records import MemoryRecordsMixin
from lcm_core.text.tokens import (
    MIN_INDEXED_TERM_CHARS,
    score_matches,
    scrub_surrogates,
    search_terms,
)


class InMemoryStore(MemoryRecordsMixin, MemoryImportMixin):
    """A `MemoryStore` over a `MemoryDatabase`; handles on one database share its data."""

    def __init__(self, database: MemoryDatabase | None = None) -> None:
        self._db = database if database is not None else MemoryDatabase()
        self.url = "memory://"

    def __repr__(self) -> str:
        return "InMemoryStore()"

    # --- lifetime ----------------------------------------------------------------
    def transaction(self) -> AbstractContextManager[None]:
        return self._db.transaction()

    def close(self) -> None:
        """End this handle (its data lives on with the `MemoryDatabase`); using it then raises."""
        self._db = cast(MemoryDatabase, _Closed())

    # --- events ------------------------------------------------------------------
    def insert_event(self, event: Event) -> bool:
        return self.insert_events([event]) == 1

    def insert_events(self, events: Iterable[Event]) -> int:
        inserted = 0
        with self._db.transaction():
            for event in events:
                key = (event.session_id, event.seq)
                if self._db.get("events", key) is None:
                    stored = records.prepare_event(event)
                    self._db.put("events", key, records.event_record(stored))
                    inserted += 1
        return inserted

    def get_event(self, session_id: str, seq: int) -> Event | None:
        row = self._db.get("events", (session_id, seq))
        return rows.event_from_row(row) if row else None

    def get_events(self, session_id: str, seqs: Sequence[int]) -> list[Event]:
        found = (self._db.get("events", (session_id, int(seq))) for seq in sorted(set(seqs)))
        return [rows.event_from_row(row) for row in found if row]

    def list_events(
        self,
        session_id: str,
        *,
        start_seq: int | None = None,
        end_seq: int | None = None,
        types: Sequence[str] | None = None,
        limit: int | None = None,
    ) -> list[Event]:
        picked = [
            row
            for row in self._session_rows("events", session_id)
            if (start_seq is None or row["seq"] >= start_seq)
            and (end_seq is None or row["seq"] <= end_seq)
            and (types is None or row["type"] in types)
        ]
        picked.sort(key=lambda row: row["seq"])
        if limit is not None:
            picked = picked[: max(0, int(limit))]
        return [rows.event_from_row(row) for row in picked]

    def max_event_seq(self, session_id: str) -> int | None:
        return max((row["seq"] for row in self._session_rows("events", session_id)), default=None)

    def search_events(
        self,
        session_id: str | None,
        terms: Sequence[str],
        *,
        types: Sequence[str] | None = None,
        limit: int = 50,
    ) -> list[EventHit]:
        scored = self._search(
            "events", "text", session_id, terms, lambda r: types is None or r["type"] in types
        )
        hits = [EventHit(rows.event_from_row(row), score) for row, score in scored]
        hits.sort(key=lambda hit: (-hit.score, hit.event.session_id, hit.event.seq))
        return hits[: max(0, limit)]

    # --- archive -----------------------------------------------------------------
    def put_archive(self, entry: ArchiveEntry) -> None:
        key = (entry.session_id, entry.ref)
        if self._db.get("archive", key) is None:
            stored = replace(
                entry,
                text=scrub_surrogates(entry.text),
                created_at=entry.created_at or utc_now_iso(),
            )
            with self._db.transaction():
                self._db.put("archive", key, records.archive_record(stored))

    def get_archive(self, session_id: str, ref: str) -> ArchiveEntry | None:
        row = self._db.get("archive", (session_id, ref))
        if row is None:
            return None
        return ArchiveEntry(row["session_id"], row["ref"], row["text"], row["created_at"])

    def forget_event(self, session_id: str, seq: int) -> Event | None:
        row = self._db.get("events", (session_id, seq))
        if row is None:
            return None
        gone = records.erase_event(rows.event_from_row(row))
        with self._db.transaction():
            self._db.put("events", (session_id, seq), records.event_record(gone))
            self._db.drop("archive", (session_id, f"seq:{seq}"))
        return gone

    # --- memory items --------------------------------------------------------------
    def insert_item(self, item: MemoryItem, *, actor: str = "extractor") -> tuple[MemoryItem, bool]:
        item = records.prepare_item(item)
        existing = self._active_with_hash(item.session_id, item.content_hash, None)
        if existing is not None and item.status == "active":
            return rows.item_from_row(existing), False
        if self._db.get("memory_items", item.id) is not None:
            raise StoreConflictError(f"memory item {item.id} already exists")
        with self._db.transaction():
            self._db.put("memory_items", item.id, records.item_record(item))
            created = MemoryEvent(
                item.id, item.session_id, "created", actor=actor, at=item.created_at
            )
            self._append_memory_event(created)
        return item, True

    def get_item(self, item_id: str) -> MemoryItem | None:
        row = self._db.get("memory_items", item_id)
        return rows.item_from_row(row) if row else None

    def list_items(
        self,
        session_id: str | None = None,
        *,
        statuses: Sequence[str] | None = None,
        kinds: Sequence[str] | None = None,
    ) -> list[MemoryItem]:
        picked = [
            row
            for row in self._db.rows("memory_items")
            if (session_id is None or row["session_id"] == session_id)
            and (statuses is None or row["status"] in statuses)
            and (kinds is None or row["kind"] in kinds)
        ]
        picked.sort(key=lambda row: (row["created_at"], row["id"]))
        return [rows.item_from_row(row) for row in picked]

    def update_item(self, item_id: str, change: ItemChange, event: MemoryEvent) -> MemoryItem:
        row = self._db.get("memory_items", item_id)
        if row is None:
            raise StoreNotFoundError(f"no memory item {item_id}")
        current = rows.item_from_row(row)
        at = event.at or utc_now_iso()
        updated = records.apply_change(current, change, at)
        clash = self._active_with_hash(current.session_id, current.content_hash, item_id)
        if updated.status == "active" and clash is not None:
            raise StoreConflictError(
                f"memory item {item_id}: another active item has the same content"
            )
        with self._db.transaction():
            self._db.put("memory_items", item_id, records.item_record(updated))
            self._append_memory_event(
                replace(event, memory_id=item_id, session_id=current.session_id, at=at)
            )
        return updated

    def forget_item(self, item_id: str, event: MemoryEvent) -> MemoryItem:
        row = self._db.get("memory_items", item_id)
        if row is None:
            raise StoreNotFoundError(f"no memory item {item_id}")
        at = event.at or utc_now_iso()
        gone = records.erase_item(rows.item_from_row(row), at)
        with self._db.transaction():
            self._db.put("memory_items", item_id, records.item_record(gone))
            self._append_memory_event(
                replace(event, memory_id=item_id, session_id=gone.session_id, at=at)
            )
        return gone

    def _active_with_hash(
        self, session_id: str, content_hash: str, other_than: str | None
    ) -> Row | None:
        for row in self._db.rows("memory_items"):
            if (
                row["session_id"] == session_id
                and row["content_hash"] == content_hash
                and row["status"] == "active"
                and row["id"] != other_than
            ):
                return row
        return None

    def _append_memory_event(self, event: MemoryEvent) -> None:
        event_id = self._db.next_id("memory_events")
        stored = replace(event, at=event.at or utc_now_iso())
        self._db.put("memory_events", event_id, records.memory_event_record(stored, event_id))

    def list_memory_events(
        self,
        *,
        memory_id: str | None = None,
        session_id: str | None = None,
        events: Sequence[str] | None = None,
    ) -> list[MemoryEvent]:
        return [
            rows.memory_event_from_row(row)
            for row in sorted(self._db.rows("memory_events"), key=lambda row: row["id"])
            if (memory_id is None or row["memory_id"] == memory_id)
            and (session_id is None or row["session_id"] == session_id)
            and (events is None or row["event"] in events)
        ]

    def search_items(
        self,
        session_id: str | None,
        terms: Sequence[str],
        *,
        statuses: Sequence[str] = ("active",),
        kinds: Sequence[str] | None = None,
        limit: int = 100,
    ) -> list[ItemHit]:
        def wanted(row: Row) -> bool:
            return row["status"] in statuses and (kinds is None or row["kind"] in kinds)

        scored = self._search("memory_items", "content", session_id, terms, wanted)
        hits = [ItemHit(rows.item_from_row(row), score) for row, score in scored]
        hits.sort(key=lambda hit: (-hit.score, hit.item.id))
        return hits[: max(0, limit)]

    # --- search --------------------------------------------------------------------
    def _search(
        self, table: str, column: str, session_id: str | None, terms: Sequence[str], wanted: Any
    ) -> list[tuple[Row, float]]:
        """Rows containing any cleaned term, scored by `score_matches` over the scope."""
        cleaned = search_terms(terms)
        # The order the SQL backends score in (indexed terms, then short ones), so sums agree.
        ordered = [t for t in cleaned if len(t) >= MIN_INDEXED_TERM_CHARS]
        ordered += [t for t in cleaned if len(t) < MIN_INDEXED_TERM_CHARS]
        if not ordered:
            return []
        keys = [term.casefold() for term in ordered]
        if session_id is not None:
            scope_rows = self._session_rows(table, session_id)
            scope = min(len(scope_rows), SCOPE_COUNT_MAX)
        else:
            scope_rows = self._db.rows(table)
            scope = max((row[ROWID] for row in scope_rows), default=0)
        found = [
            row
            for row in scope_rows
            if wanted(row) and any(key in (row[column] or "").casefold() for key in keys)
        ]
        scores = score_matches([row[column] for row in found], ordered, scope)
        return list(zip(found, scores, strict=True))

    def _session_rows(self, table: str, session_id: str) -> list[Row]:
        return [row for row in self._db.rows(table) if row["session_id"] == session_id]

    # --- sessions, task state, checkpoints -------------------------------------------
    def upsert_session(self, session: Session) -> None:
        now = utc_now_iso()
        old = self._db.get("sessions", session.session_id)
        created = old["created_at"] if old else (session.created_at or now)
        stored = replace(session, created_at=created, updated_at=session.updated_at or now)
        with self._db.transaction():
            self._db.put("sessions", session.session_id, records.session_record(stored))

    def get_session(self, session_id: str) -> Session | None:
        row = self._db.get("sessions", session_id)
        return rows.session_from_row(row) if row else None

    def list_sessions(self) -> list[Session]:
        ordered = sorted(self._db.rows("sessions"), key=lambda row: row["session_id"])
        ordered.sort(key=lambda row: row["updated_at"], reverse=True)
        return [rows.session_from_row(row) for row in ordered]

    def put_task_state(self, state: TaskState) -> None:
        stored = replace(state, updated_at=state.updated_at or utc_now_iso())
        with self._db.transaction():
            self._db.put("task_state", state.session_id, records.task_state_record(stored))

    def get_task_state(self, session_id: str) -> TaskState | None:
        row = self._db.get("task_state", session_id)
        return rows.task_state_from_row(row) if row else None

    def put_checkpoint(self, checkpoint: Checkpoint) -> None:
        stored = replace(checkpoint, updated_at=checkpoint.updated_at or utc_now_iso())
        with self._db.transaction():
            self._db.put("checkpoints", checkpoint.session_id, records.checkpoint_record(stored))

    def get_checkpoint(self, session_id: str) -> Checkpoint:
        row = self._db.get("checkpoints", session_id)
        return rows.checkpoint_from_row(row) if row else Checkpoint(session_id)

    # --- extraction retry queue --------------------------------------------------------
    def record_pending(self, session_id: str, seq: int, error: str) -> PendingExtraction:
        old = self._db.get("pending_extraction", (session_id, seq))
        attempts = (old["attempts"] + 1) if old else 1
        row = records.pending_record(session_id, seq, attempts, error, utc_now_iso())
        with self._db.transaction():
            self._db.put("pending_extraction", (session_id, seq), row)
        return rows.pending_from_row(row)

    def list_pending(self, session_id: str | None = None) -> list[PendingExtraction]:
        picked = [
            row
            for row in self._db.rows("pending_extraction")
            if session_id is None or row["session_id"] == session_id
        ]
        picked.sort(key=lambda row: (row["session_id"], row["seq"]))
        return [rows.pending_from_row(row) for row in picked]

    def clear_pending(self, session_id: str, seq: int) -> None:
        with self._db.transaction():
            self._db.drop("pending_extraction", (session_id, seq))

    # --- meta, stats, export, purge, integrity ----------------------------------------------
    def get_meta(self, key: str) -> str | None:
        row = self._db.get("meta", key)
        return None if row is None else str(row["value"])

    def set_meta(self, key: str, value: str) -> None:
        with self._db.transaction():
            self._db.put("meta", key, {"key": key, "value": value})

    def schema_version(self) -> int:
        return int(self.get_meta("schema") or SCHEMA_VERSION)

    def stats(self, session_id: str | None = None) -> dict[str, int]:
        return {table: len(self._scoped(table, session_id)) for table in TABLES}

    def export_rows(self, table: str, *, session_id: str | None = None) -> Iterator[dict[str, Any]]:
        if table not in TABLES:
            raise StoreError(f"unknown table {table!r}; tables are: {', '.join(TABLES)}")
        columns = [name.strip() for name in EXPORT_ORDER[table].split(",")]
        ordered = sorted(self._scoped(table, session_id), key=lambda row: [row[c] for c in columns])
        return iter([public(row) for row in ordered])

    def _scoped(self, table: str, session_id: str | None) -> list[Row]:
        if session_id is not None and table in SESSION_TABLES:
            return self._session_rows(table, session_id)
        return self._db.rows(table)

    def purge_session(self, session_id: str) -> dict[str, int]:
        deleted: dict[str, int] = {}
        with self._db.transaction():
            for table in SESSION_TABLES:
                doomed = [
                    key
                    for key, row in self._db.tables[table].items()
                    if row["session_id"] == session_id
                ]
                for key in doomed:
                    self._db.drop(table, key)
                deleted[table] = len(doomed)
        return deleted

    def purge_all(self) -> dict[str, int]:
        deleted: dict[str, int] = {}
        with self._db.transaction():
            for table in TABLES:
                if table == "meta":
                    continue
                doomed = list(self._db.tables[table])
                for key in doomed:
                    self._db.drop(table, key)
                deleted[table] = len(doomed)
        return deleted

    def integrity_check(self) -> list[str]:
        problems: list[str] = []
        if self.schema_version() != SCHEMA_VERSION:
            problems.append(f"schema version is {self.schema_version()}, expected {SCHEMA_VERSION}")
        items = self._db.tables["memory_items"]
        dangling = sum(
            1
            for row in items.values()
            if row["superseded_by"] and row["superseded_by"] not in items
        )
        if dangling:
            problems.append(f"{dangling} memory items link to a missing successor")
        return problems


class _Closed:
    """Stands in for the database of a closed handle: every use raises `StoreError`."""

    def __getattr__(self, name: str) -> Any:
        raise StoreError("the store is closed")
