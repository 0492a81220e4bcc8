"""`PostgresMemoryStore`: schema v2 on a PostgreSQL server, one tenant per database role."""

from __future__ import annotations

import contextlib
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

import psycopg

from lcm_core.clock import utc_now_iso
from lcm_core.store import records, rows
from lcm_core.store.errors import StoreConflictError, StoreNotFoundError
from lcm_core.store.models import (
    ItemChange,
    ItemHit,
    MemoryEvent,
    MemoryItem,
)
from lcm_store_postgres.admin import AdminMixin
from lcm_store_postgres.connection import Connection, redact_url
from lcm_store_postgres.events import EventsMixin, storable
from lcm_store_postgres.imports import ImportMixin
from lcm_store_postgres.records import RecordsMixin
from lcm_store_postgres.search import fold, run_search
from lcm_store_postgres.tenants import create_tenant, server_report

_INSERT_ITEM = (
    f"INSERT INTO memory_items ({rows.ITEM_COLUMNS}, folded) VALUES ("
    + ", ".join(["%s"] * 18)
    + ") ON CONFLICT DO NOTHING"
)


class PostgresMemoryStore(EventsMixin, RecordsMixin, AdminMixin, ImportMixin):
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

    # --- memory items --------------------------------------------------------------
    def insert_item(self, item: MemoryItem, *, actor: str = "extractor") -> tuple[MemoryItem, bool]:
        item = records.prepare_item(item, storable)
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
            updated = records.apply_change(current, change, at)
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

    def forget_item(self, item_id: str, event: MemoryEvent) -> MemoryItem:
        with self._db.transaction(), self._db.guarded("forget item") as raw:
            row = raw.execute(
                "SELECT * FROM memory_items WHERE id = %s FOR UPDATE", (item_id,)
            ).fetchone()
            if row is None:
                raise StoreNotFoundError(f"no memory item {item_id}")
            at = event.at or utc_now_iso()
            gone = records.erase_item(rows.item_from_row(row), at)
            erased = records.erased_item_record(gone)
            raw.execute(
                f"UPDATE memory_items SET {records.set_clause(erased, '%s')}, folded = '' "
                "WHERE id = %s",
                (*erased.values(), item_id),
            )
            self._append_memory_event(
                raw, replace(event, memory_id=item_id, session_id=gone.session_id, at=at)
            )
        return gone

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
        self,
        *,
        memory_id: str | None = None,
        session_id: str | None = None,
        events: Sequence[str] | None = None,
    ) -> list[MemoryEvent]:
        if events is not None and not events:
            return []
        clauses: list[str] = []
        params: list[Any] = []
        if events is not None:
            clauses.append("event = ANY(%s)")
            params.append(list(events))
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
