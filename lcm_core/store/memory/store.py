"""`InMemoryStore`: the reference `MemoryStore` in pure Python, no SQL.

It states the port's contract as plainly as code can: the conformance suite runs it as a
fourth backend, core unit tests use it where SQLite would only add weight, and it is the
scratch store re-extraction falls back to for a backend without one of its own. It
writes only the primitives (`StoreBackend`); `BaseStore` does the rest, as for every
backend. Search applies the core's rule (`lcm_core.store.matching`) to every row of
the scope, whatever its size, and scores with the core's `best_matches` over the same
scope a SQL backend counts, so scores agree.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from contextlib import AbstractContextManager
from typing import Any, cast

from lcm_core.store import records, rows
from lcm_core.store.base import BaseStore
from lcm_core.store.errors import StoreError
from lcm_core.store.matching import SCOPE_COUNT_MAX, fold, fold_keys, holds_any, split_terms
from lcm_core.store.memory.db import ROWID, MemoryDatabase, Row
from lcm_core.store.memory.keyed import KeyedRowsMixin
from lcm_core.store.models import SCHEMA_VERSION, Event, EventHit, ItemHit
from lcm_core.text.tokens import best_matches


class InMemoryStore(KeyedRowsMixin, BaseStore):
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

    def scratch(self) -> InMemoryStore:
        """A new, empty, private store of this kind."""
        return InMemoryStore()

    # --- events ------------------------------------------------------------------
    def insert_events(self, events: Iterable[Event]) -> int:
        inserted = 0
        with self._db.transaction():
            for event in events:
                key = (event.session_id, event.seq)
                if self._db.get("events", key) is None:
                    stored = records.prepare_event(event, self._clean_text)
                    self._db.put("events", key, records.event_record(stored))
                    inserted += 1
        return inserted

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
            for row in self._db.session_rows("events", session_id)
            if (start_seq is None or row["seq"] >= start_seq)
            and (end_seq is None or row["seq"] <= end_seq)
            and (types is None or row["type"] in types)
        ]
        picked.sort(key=lambda row: row["seq"])
        if limit is not None:
            picked = picked[: max(0, int(limit))]
        return [rows.event_from_row(row) for row in picked]

    # --- search --------------------------------------------------------------------
    def search_events(
        self,
        session_id: str | None,
        terms: Sequence[str],
        *,
        types: Sequence[str] | None = None,
        limit: int = 50,
    ) -> list[EventHit]:
        def wanted(row: Row) -> bool:
            return types is None or row["type"] in types

        scored = self._search("events", "text", session_id, terms, wanted, limit)
        hits = [EventHit(rows.event_from_row(row), score) for row, score in scored]
        hits.sort(key=lambda hit: (-hit.score, hit.event.session_id, hit.event.seq))
        return hits[: max(0, limit)]

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

        scored = self._search("memory_items", "content", session_id, terms, wanted, limit)
        hits = [ItemHit(rows.item_from_row(row), score) for row, score in scored]
        hits.sort(key=lambda hit: (-hit.score, hit.item.id))
        return hits[: max(0, limit)]

    def _search(
        self,
        table: str,
        column: str,
        session_id: str | None,
        terms: Sequence[str],
        wanted: Any,
        limit: int,
    ) -> list[tuple[Row, float]]:
        """Rows matching any cleaned term by the core's rule, the best `limit` (and ties)
        scored by `best_matches` over the scope."""
        ordered = split_terms(terms).ordered
        if limit <= 0 or not ordered:
            return []
        keys = fold_keys(ordered)
        if session_id is not None:
            scope_rows = self._db.session_rows(table, session_id)
            scope = min(len(scope_rows), SCOPE_COUNT_MAX)
        else:
            scope_rows = self._db.rows(table)
            scope = max((row[ROWID] for row in scope_rows), default=0)
        found: list[Row] = []
        folded: list[str] = []
        for row in scope_rows:
            low = fold(row[column] or "")
            if wanted(row) and holds_any(low, keys):
                found.append(row)
                folded.append(low)
        texts = [row[column] for row in found]
        best = best_matches(texts, ordered, scope, limit, folded=folded)
        return [(found[i], score) for i, score in best]

    # --- the store as a whole ----------------------------------------------------------
    def schema_version(self) -> int:
        return int(self.get_meta("schema") or SCHEMA_VERSION)

    def _dangling_successors(self) -> int:
        items = self._db.tables["memory_items"]
        links = (row["superseded_by"] for row in items.values())
        return sum(1 for successor in links if successor and successor not in items)


class _Closed:
    """Stands in for the database of a closed handle: every use raises `StoreError`."""

    def __getattr__(self, name: str) -> Any:
        raise StoreError("the store is closed")
