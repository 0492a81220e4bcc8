"""`PostgresMemoryStore`: schema v2 on a PostgreSQL server, one tenant per database role."""

from __future__ import annotations

import contextlib
from collections.abc import Iterable, Sequence
from dataclasses import replace
from typing import Any

import psycopg

from lcm_core import rows
from lcm_core.clock import utc_now_iso
from lcm_core.errors import StoreConflictError, StoreNotFoundError
from lcm_core.models import (
    MAX_EVENT_TEXT,
    ArchiveEntry,
    Event,
    EventHit,
    ItemChange,
    ItemHit,
    MemoryEvent,
    MemoryItem,
)
from lcm_core.text import clamp_text, scrub_surrogates, sha256_hex
from lcm_store_postgres.admin import AdminMixin
from lcm_store_postgres.connection import Connection, redact_url
from lcm_store_postgres.records import RecordsMixin
from lcm_store_postgres.search import fold, run_search
from lcm_store_postgres.tenants import create_tenant, server_report

# One INSERT of many events: each column travels as one array, so a batch of any size is
# one statement and one round trip, and `rowcount` counts exactly the new rows.
_EVENT_TYPES = [
    "text",
    "bigint",
    "text",
    "text",
    "bigint",
    "bigint",
    "text",
    "text",
    "text",
    "text",
    "text",
    "text",
    "text",
    "text",
    "bigint",
    "text",
    "text",
]
_INSERT_EVENTS = (
    f"INSERT INTO events ({rows.EVENT_COLUMNS}, folded) SELECT * FROM unnest("
    + ", ".join(f"%s::{kind}[]" for kind in _EVENT_TYPES)
    + ") ON CONFLICT DO NOTHING"
)
_INSERT_ITEM = (
    f"INSERT INTO memory_items ({rows.ITEM_COLUMNS}, folded) VALUES ("
    + ", ".join(["%s"] * 18)
    + ") ON CONFLICT DO NOTHING"
)


def storable(text: str) -> str:
    """Text PostgreSQL can hold: surrogates scrubbed, NUL (never valid in `text`) as U+FFFD."""
    return scrub_surrogates(text).replace("\x00", "\ufffd")


class PostgresMemoryStore(RecordsMixin, AdminMixin):
    """A `MemoryStore` on a PostgreSQL database; the connected role is the tenant."""

    def __init__(self, url: str, *, migrate: bool = True) -> None:
        self._db = Connection(url, migrate=migrate)
        self.url = redact_url(url)

    def __repr__(self) -> str:
        return f"PostgresMemoryStore({self.url!r})"

    # --- lifetime ----------------------------------------------------------------
    def transaction(self) -> contextlib.AbstractContextManager[None]:
        return self._db.transaction()

    def close(self) -> None:
        self._db.close()

    def __enter__(self) -> PostgresMemoryStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # --- events ------------------------------------------------------------------
    @staticmethod
    def _prepare_event(event: Event) -> Event:
        """Apply the store's guarantees: text cut at the limit, a hash, a time of ingest."""
        text, cut = clamp_text(storable(event.text or ""), MAX_EVENT_TEXT)
        return replace(
            event,
            text=text,
            truncated=event.truncated or cut,
            content_hash=event.content_hash or sha256_hex(text),
            ingested_at=event.ingested_at or utc_now_iso(),
        )

    def insert_event(self, event: Event) -> bool:
        return self.insert_events([event]) > 0

    def insert_events(self, events: Iterable[Event]) -> int:
        prepared = [self._prepare_event(event) for event in events]
        if not prepared:
            return 0
        columns: list[list[Any]] = [[] for _ in _EVENT_TYPES]
        for event in prepared:
            for column, value in zip(
                columns, (*rows.event_params(event), fold(event.text)), strict=True
            ):
                column.append(value)
        with self._db.transaction(), self._db.guarded("insert events") as raw:
            return max(0, raw.execute(_INSERT_EVENTS, columns).rowcount)

    def get_event(self, session_id: str, seq: int) -> Event | None:
        with self._db.guarded("get event") as raw:
            row = raw.execute(
                "SELECT * FROM events WHERE session_id = %s AND seq = %s", (session_id, seq)
            ).fetchone()
        return rows.event_from_row(row) if row else None

    def get_events(self, session_id: str, seqs: Sequence[int]) -> list[Event]:
        wanted = sorted({int(seq) for seq in seqs})
        with self._db.guarded("get events") as raw:
            found = raw.execute(
                "SELECT * FROM events WHERE session_id = %s AND seq = ANY(%s) ORDER BY seq",
                (session_id, wanted),
            ).fetchall()
        return [rows.event_from_row(row) for row in found]

    def list_events(
        self,
        session_id: str,
        *,
        start_seq: int | None = None,
        end_seq: int | None = None,
        types: Sequence[str] | None = None,
        limit: int | None = None,
    ) -> list[Event]:
        clauses = ["session_id = %s"]
        params: list[Any] = [session_id]
        if start_seq is not None:
            clauses.append("seq >= %s")
            params.append(start_seq)
        if end_seq is not None:
            clauses.append("seq <= %s")
            params.append(end_seq)
        if types is not None:
            if not types:
                return []
            clauses.append("type = ANY(%s)")
            params.append(list(types))
        sql = f"SELECT * FROM events WHERE {' AND '.join(clauses)} ORDER BY seq"
        if limit is not None:
            sql += " LIMIT %s"
            params.append(max(0, int(limit)))
        with self._db.guarded("list events") as raw:
            return [rows.event_from_row(row) for row in raw.execute(sql, params)]

    def max_event_seq(self, session_id: str) -> int | None:
        with self._db.guarded("max event seq") as raw:
            row = raw.execute(
                "SELECT max(seq) AS m FROM events WHERE session_id = %s", (session_id,)
            ).fetchone()
        return None if row is None or row["m"] is None else int(row["m"])

    def search_events(
        self,
        session_id: str | None,
        terms: Sequence[str],
        *,
        types: Sequence[str] | None = None,
        limit: int = 50,
    ) -> list[EventHit]:
        filters: list[str] = []
        params: list[Any] = []
        if types is not None:
            if not types:
                return []
            filters.append("t.type = ANY(%s)")
            params.append(list(types))
        with self._db.guarded("search events") as raw:
            scored = run_search(
                raw,
                "events",
                ("session_id", "seq"),
                "text",
                terms,
                session_id,
                filters,
                params,
                limit,
            )
        hits = [EventHit(rows.event_from_row(row), score) for row, score in scored]
        hits.sort(key=lambda hit: (-hit.score, hit.event.session_id, hit.event.seq))
        return hits[: max(0, limit)]

    # --- archive -----------------------------------------------------------------
    def put_archive(self, entry: ArchiveEntry) -> None:
        with self._db.transaction(), self._db.guarded("put archive") as raw:
            raw.execute(
                "INSERT INTO archive (session_id, ref, text, created_at) "
                "VALUES (%s, %s, %s, %s) ON CONFLICT DO NOTHING",
                (
                    entry.session_id,
                    entry.ref,
                    storable(entry.text),
                    entry.created_at or utc_now_iso(),
                ),
            )

    def get_archive(self, session_id: str, ref: str) -> ArchiveEntry | None:
        with self._db.guarded("get archive") as raw:
            row = raw.execute(
                "SELECT * FROM archive WHERE session_id = %s AND ref = %s", (session_id, ref)
            ).fetchone()
        if row is None:
            return None
        return ArchiveEntry(row["session_id"], row["ref"], row["text"], row["created_at"])

    # --- memory items --------------------------------------------------------------
    def insert_item(self, item: MemoryItem, *, actor: str = "extractor") -> tuple[MemoryItem, bool]:
        now = utc_now_iso()
        item = replace(
            item,
            content=storable(item.content),
            created_at=item.created_at or now,
            updated_at=item.updated_at or item.created_at or now,
        )
        with self._db.transaction(), self._db.guarded("insert item") as raw:
            twin = self._active_twin(raw, item)
            if twin is not None and item.status == "active":
                return twin, False
            # DO NOTHING, then look again: a concurrent writer of the same item makes
            # this a dedupe (or an id conflict), never an aborted transaction.
            params = (*rows.item_params(item), fold(item.content))
            if raw.execute(_INSERT_ITEM, params).rowcount == 0:
                twin = self._active_twin(raw, item)
                if twin is not None and item.status == "active":
                    return twin, False
                raise StoreConflictError(f"memory item {item.id} already exists")
            self._append_memory_event(
                raw,
                MemoryEvent(item.id, item.session_id, "created", actor=actor, at=item.created_at),
            )
        return item, True

    @staticmethod
    def _active_twin(
        raw: psycopg.Connection[dict[str, Any]], item: MemoryItem
    ) -> MemoryItem | None:
        row = raw.execute(
            "SELECT * FROM memory_items WHERE session_id = %s AND content_hash = %s "
            "AND status = 'active'",
            (item.session_id, item.content_hash),
        ).fetchone()
        return rows.item_from_row(row) if row else None

    def get_item(self, item_id: str) -> MemoryItem | None:
        with self._db.guarded("get item") as raw:
            row = raw.execute("SELECT * FROM memory_items WHERE id = %s", (item_id,)).fetchone()
        return rows.item_from_row(row) if row else None

    def list_items(
        self,
        session_id: str | None = None,
        *,
        statuses: Sequence[str] | None = None,
        kinds: Sequence[str] | None = None,
    ) -> list[MemoryItem]:
        clauses: list[str] = []
        params: list[Any] = []
        if session_id is not None:
            clauses.append("session_id = %s")
            params.append(session_id)
        for column, values in (("status", statuses), ("kind", kinds)):
            if values is not None:
                if not values:
                    return []
                clauses.append(f"{column} = ANY(%s)")
                params.append(list(values))
        where = f"WHERE {' AND '.join(clauses)}" if clauses else ""
        with self._db.guarded("list items") as raw:
            return [
                rows.item_from_row(row)
                for row in raw.execute(
                    f"SELECT * FROM memory_items {where} ORDER BY created_at, id",
                    params,
                )
            ]

    def update_item(self, item_id: str, change: ItemChange, event: MemoryEvent) -> MemoryItem:
        with self._db.transaction(), self._db.guarded("update item") as raw:
            row = raw.execute(
                "SELECT * FROM memory_items WHERE id = %s FOR UPDATE", (item_id,)
            ).fetchone()
            if row is None:
                raise StoreNotFoundError(f"no memory item {item_id}")
            current = rows.item_from_row(row)
            at = event.at or utc_now_iso()
            superseded_by = current.superseded_by
            if change.clear_superseded_by:
                superseded_by = None
            if change.superseded_by is not None:
                superseded_by = change.superseded_by
            updated = replace(
                current,
                status=change.status or current.status,
                superseded_by=superseded_by,
                evidence_type=change.evidence_type or current.evidence_type,
                kind=change.kind or current.kind,
                supersedes=current.supersedes if change.supersedes is None else change.supersedes,
                updated_at=at,
            )
            try:
                # A savepoint of its own: a unique violation must not abort the caller's
                # enclosing transaction.
                with raw.transaction():
                    raw.execute(
                        "UPDATE memory_items SET status = %s, superseded_by = %s, "
                        "evidence_type = %s, kind = %s, supersedes_json = %s, updated_at = %s "
                        "WHERE id = %s",
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
            except psycopg.errors.UniqueViolation as exc:
                raise StoreConflictError(
                    f"memory item {item_id}: another active item has the same content"
                ) from exc
            self._append_memory_event(
                raw, replace(event, memory_id=item_id, session_id=current.session_id, at=at)
            )
        return updated

    @staticmethod
    def _append_memory_event(raw: psycopg.Connection[dict[str, Any]], event: MemoryEvent) -> None:
        raw.execute(
            "INSERT INTO memory_events (memory_id, session_id, event, at, actor, detail_json) "
            "VALUES (%s, %s, %s, %s, %s, %s)",
            (
                event.memory_id,
                event.session_id,
                event.event,
                event.at or utc_now_iso(),
                event.actor,
                rows.dumps(event.detail),
            ),
        )

    def list_memory_events(
        self, *, memory_id: str | None = None, session_id: str | None = None
    ) -> list[MemoryEvent]:
        clauses: list[str] = []
        params: list[Any] = []
        if memory_id is not None:
            clauses.append("memory_id = %s")
            params.append(memory_id)
        if session_id is not None:
            clauses.append("session_id = %s")
            params.append(session_id)
        where = f"WHERE {' AND '.join(clauses)}" if clauses else ""
        with self._db.guarded("list memory events") as raw:
            return [
                rows.memory_event_from_row(row)
                for row in raw.execute(f"SELECT * FROM memory_events {where} ORDER BY id", params)
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
        filters: list[str] = []
        params: list[Any] = []
        for column, values in (("status", statuses), ("kind", kinds)):
            if values is not None:
                if not values:
                    return []
                filters.append(f"t.{column} = ANY(%s)")
                params.append(list(values))
        with self._db.guarded("search items") as raw:
            scored = run_search(
                raw, "memory_items", ("id",), "content", terms, session_id, filters, params, limit
            )
        hits = [ItemHit(rows.item_from_row(row), score) for row, score in scored]
        hits.sort(key=lambda hit: (-hit.score, hit.item.id))
        return hits[: max(0, limit)]

    # --- server extras -----------------------------------------------------------
    def create_tenant(self, name: str) -> str:
        """Create the tenant role `name`; needs a role with CREATEROLE (the owner)."""
        return create_tenant(self._db, name)

    def server_report(self) -> dict[str, Any]:
        """Reachability, schema, extensions, privileges and row counts for `lcm doctor`."""
        return server_report(self._db)
