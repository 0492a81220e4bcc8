"""Reads every SQL backend answers alike, written once over two hooks of the backend.

A backend mixes in `SqlReads` last, sets `dialect`, and supplies `_fetch` (run one
query, return its rows as mappings), `_stream` (walk a big result a batch at a time)
and `_scored` (its term search: matching rows with their scores); which filters
apply, the order of hits and the cut at `limit` are decided here; the queries (`lcm_core.store.queries`) and the row conversions
(`lcm_core.store.rows`) are the core's, so a filter rule or a sort order cannot
drift between backends.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any, ClassVar

from lcm_core.store import rows
from lcm_core.store.models import TABLES, Event, EventHit, ItemHit, MemoryEvent, MemoryItem, Rule
from lcm_core.store.queries import (
    Dialect,
    Query,
    count_query,
    export_query,
    list_events_query,
    list_items_query,
    list_memory_events_query,
    list_rules_query,
)

# Per filtered column, the values a row may have (None: any).
Among = Mapping[str, Sequence[str] | None]


class SqlReads:
    """Filtered lists, term search, counts and the export walk, over the backend's hooks."""

    dialect: ClassVar[Dialect]

    def _fetch(self, where: str, query: Query) -> Sequence[Mapping[str, Any]]:
        """Rows of one query; `where` names the operation in an error."""
        raise NotImplementedError

    def _stream(self, sql: str, params: tuple[Any, ...], table: str) -> Iterator[dict[str, Any]]:
        """Rows of one query a batch at a time, as plain dicts."""
        raise NotImplementedError

    def _scored(
        self, table: str, session_id: str | None, terms: Sequence[str], among: Among, limit: int
    ) -> Sequence[tuple[Mapping[str, Any], float]]:
        """Rows of `table` holding any term, scored; `among` maps a column to its allowed values."""
        raise NotImplementedError

    def _event(self, row: Mapping[str, Any], shape: str) -> Event:
        """One event row as an `Event`; `shape` names the query (a backend may memoise)."""
        return rows.event_from_row(row)

    def _window(
        self, session_id: str, start_seq: int, end_seq: int, types: Sequence[str] | None
    ) -> list[Event] | None:
        """A seq window's events (of `types`) without SQL, or None to read them with SQL
        (a backend that holds a copy of the session may pick them from it)."""
        return None

    def _item(self, row: Mapping[str, Any], shape: str) -> MemoryItem:
        """One item row as a `MemoryItem`; `shape` names the query (a backend may memoise)."""
        return rows.item_from_row(row)

    def search_events(
        self,
        session_id: str | None,
        terms: Sequence[str],
        *,
        types: Sequence[str] | None = None,
        limit: int = 50,
    ) -> list[EventHit]:
        if types is not None and not types:
            return []
        scored = list(self._scored("events", session_id, terms, {"type": types}, limit))
        # Ordered and cut on the row's own columns, then converted: a search over a whole
        # file can score thousands of rows to keep a hundred.
        scored.sort(key=lambda pair: (-pair[1], pair[0]["session_id"], pair[0]["seq"]))
        return [
            EventHit(self._event(row, "search"), score) for row, score in scored[: max(0, limit)]
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
        among: Among = {"status": statuses, "kind": kinds}
        if any(values is not None and not values for values in among.values()):
            return []
        scored = list(self._scored("memory_items", session_id, terms, among, limit))
        scored.sort(key=lambda pair: (-pair[1], pair[0]["id"]))
        return [ItemHit(self._item(row, "search"), score) for row, score in scored[: max(0, limit)]]

    def list_events(
        self,
        session_id: str,
        *,
        start_seq: int | None = None,
        end_seq: int | None = None,
        types: Sequence[str] | None = None,
        limit: int | None = None,
    ) -> list[Event]:
        if start_seq is not None and end_seq is not None and limit is None:
            picked = self._window(session_id, start_seq, end_seq, types)
            if picked is not None:
                return picked
        query = list_events_query(
            self.dialect, session_id, start_seq=start_seq, end_seq=end_seq, types=types, limit=limit
        )
        if query is None:
            return []
        return [self._event(row, "list") for row in self._fetch("list events", query)]

    def list_items(
        self,
        session_id: str | None = None,
        *,
        statuses: Sequence[str] | None = None,
        kinds: Sequence[str] | None = None,
    ) -> list[MemoryItem]:
        query = list_items_query(self.dialect, session_id, statuses=statuses, kinds=kinds)
        if query is None:
            return []
        return [self._item(row, "list") for row in self._fetch("list items", query)]

    def list_memory_events(
        self,
        *,
        memory_id: str | None = None,
        session_id: str | None = None,
        events: Sequence[str] | None = None,
    ) -> list[MemoryEvent]:
        query = list_memory_events_query(
            self.dialect, memory_id=memory_id, session_id=session_id, events=events
        )
        if query is None:
            return []
        return [rows.memory_event_from_row(row) for row in self._fetch("list memory events", query)]

    def list_rules(
        self, *, skill_name: str | None = None, active: bool | None = None
    ) -> list[Rule]:
        query = list_rules_query(self.dialect, skill_name=skill_name, active=active)
        return [rows.rule_from_row(row) for row in self._fetch("list rules", query)]

    def stats(self, session_id: str | None = None) -> dict[str, int]:
        counts: dict[str, int] = {}
        for table in TABLES:
            found = self._fetch("stats", count_query(table, session_id, mark=self.dialect.mark))
            counts[table] = int(found[0]["n"]) if found else 0
        return counts

    def export_rows(self, table: str, *, session_id: str | None = None) -> Iterator[dict[str, Any]]:
        sql, params = export_query(table, session_id, mark=self.dialect.mark)
        return self._stream(sql, params, table)
