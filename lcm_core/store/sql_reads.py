"""The reads of every SQL backend, written once over four hooks of the backend.

A backend mixes in `SqlReads` before `BaseStore`, sets `dialect`, and supplies
`_fetch` (run one query, return its rows as mappings), `_cursor` and `_next_batch` (walk
a big result a batch at a time), `_table_columns` (a table's columns, from its
catalogue) and `_scored` (its term search: matching rows with their scores). The keyed-row reads
(`find_row`, `list_rows`, `count_rows`), the event reads, the export walk and the search
methods (which filters apply, the order of hits, the cut at `limit`) are decided here;
the statements are the core's (`lcm_core.store.queries`, `lcm_core.store.row_sql`), so
a filter rule or a sort order cannot drift between backends. The writes stay with each
backend: they are where the dialects differ (ids, upserts, search indexes, undo).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any, ClassVar

from lcm_core.store.models import TABLES, Event, EventHit, ItemHit, MemoryItem
from lcm_core.store.queries import (
    Dialect,
    Query,
    Where,
    export_query,
    list_events_query,
    log_retention_query,
    select,
)
from lcm_core.store.row_sql import (
    Order,
    count_rows_query,
    find_row_query,
    match_parts,
    paged_params,
    select_rows_query,
)

# Per filtered column, the values a row may have (None: any).
Among = Mapping[str, Sequence[str] | None]
# Items whose successor is no item (an integrity finding on every SQL backend).
DANGLING_SUCCESSORS = (
    "SELECT count(*) AS n FROM memory_items AS m WHERE m.superseded_by IS NOT NULL "
    "AND NOT EXISTS (SELECT 1 FROM memory_items AS s WHERE s.id = m.superseded_by)"
)
# Rows read at a time from a cursor by `_stream` (an export walk).
STREAM_BATCH = 1000
# Seqs read by one statement of `get_events`.
_SEQS_PER_QUERY = 500


class SqlReads:
    """Keyed-row and event reads, term search and the export walk, over the backend's hooks."""

    dialect: ClassVar[Dialect]

    def _fetch(self, where: str, query: Query) -> Sequence[Mapping[str, Any]]:
        """Rows of one query; `where` names the operation in an error."""
        raise NotImplementedError

    def _stream(self, sql: str, params: tuple[Any, ...], table: str) -> Iterator[dict[str, Any]]:
        """Rows of one query a batch at a time, as plain dicts, from a cursor of their own,
        so a big table never sits in memory whole (a backend with another way overrides)."""
        where = f"export {table}"
        cursor = self._cursor(where, (sql, params))
        while batch := self._next_batch(where, cursor):
            yield from batch

    def _cursor(self, where: str, query: Query) -> Any:
        """A cursor over the rows of one query, for `_next_batch`."""
        raise NotImplementedError

    def _next_batch(self, where: str, cursor: Any) -> list[dict[str, Any]]:
        """The cursor's next rows (at most `STREAM_BATCH`) as plain dicts; empty at the end."""
        raise NotImplementedError

    def _table_columns(self, table: str) -> list[str]:
        """The table's columns as `export_rows` yields them, read from the catalogue."""
        raise NotImplementedError

    def _scored(
        self, table: str, session_id: str | None, terms: Sequence[str], among: Among, limit: int
    ) -> Sequence[tuple[Mapping[str, Any], float]]:
        """Rows of `table` holding any term, scored; `among` maps a column to its allowed values."""
        raise NotImplementedError

    # Row conversions (`primitives.StoreBackend`: a backend may memoise them).
    _event: Callable[[Any, str], Event]
    _item: Callable[[Any, str], MemoryItem]

    def _window(
        self, session_id: str, start_seq: int, end_seq: int, types: Sequence[str] | None
    ) -> list[Event] | None:
        """A seq window's events (of `types`) without SQL, or None to read them with SQL
        (a backend that holds a copy of the session may pick them from it)."""
        return None

    def _columns(self, table: str) -> tuple[str, ...]:
        """`_table_columns`, read once per handle: the schema changes only when one opens."""
        try:
            return self.__dict__["_known_columns"][table]  # type: ignore[no-any-return]
        except KeyError:
            cache: dict[str, tuple[str, ...]] = self.__dict__.setdefault("_known_columns", {})
            found = tuple(self._table_columns(table)) if table in TABLES else ()
            cache[table] = found
            return found

    # --- keyed rows ------------------------------------------------------------------
    def find_row(self, table: str, match: Mapping[str, Any]) -> dict[str, Any] | None:
        found = self._find(table, match)
        return None if found is None else dict(found)

    def _find(self, table: str, match: Mapping[str, Any]) -> Mapping[str, Any] | None:
        shape, params = match_parts(self.dialect, match)
        # Statement texts by call shape, per handle: a pre-step asks for a few shapes at
        # every step, and a hit skips the column check and the building.
        memo: dict[tuple[Any, ...], str | None] = self.__dict__.setdefault("_statements", {})
        key = ("find", table, shape)
        sql = memo.get(key)
        if sql is None:
            sql = memo[key] = find_row_query(self.dialect, table, match, self._columns(table))[0]
        found = self._fetch(f"find {table} row", (sql, tuple(params)))
        return found[0] if found else None

    def list_rows(
        self,
        table: str,
        match: Mapping[str, Any] | None = None,
        *,
        order: Order | None = None,
        limit: int | None = None,
        offset: int = 0,
        columns: Sequence[str] | None = None,
    ) -> list[dict[str, Any]]:
        found = self._list(table, match, order=order, limit=limit, offset=offset, columns=columns)
        return [dict(row) for row in found]

    def _list(
        self,
        table: str,
        match: Mapping[str, Any] | None = None,
        *,
        order: Order | None = None,
        limit: int | None = None,
        offset: int = 0,
        columns: Sequence[str] | None = None,
    ) -> Sequence[Mapping[str, Any]]:
        match = match or {}
        shape, params = match_parts(self.dialect, match)
        key = (
            "list",
            table,
            shape,
            None if order is None else tuple(order),
            limit is not None,
            bool(offset),
            None if columns is None else tuple(columns),
        )
        memo: dict[tuple[Any, ...], str | None] = self.__dict__.setdefault("_statements", {})
        if key in memo:
            sql = memo[key]
        else:
            built = select_rows_query(
                self.dialect,
                table,
                match,
                self._columns(table),
                order=order,
                limit=limit,
                offset=offset,
                wanted=columns,
            )
            sql = memo[key] = None if built is None else built[0]
        if sql is None:
            return []
        return self._fetch(f"list {table}", (sql, paged_params(params, limit, offset)))

    def count_rows(self, table: str, match: Mapping[str, Any] | None = None) -> int:
        query = count_rows_query(self.dialect, table, match or {}, self._columns(table))
        if query is None:
            return 0
        found = self._fetch(f"count {table}", query)
        return int(found[0]["n"]) if found else 0

    def export_rows(self, table: str, *, session_id: str | None = None) -> Iterator[dict[str, Any]]:
        sql, params = export_query(table, session_id, mark=self.dialect.mark)
        return self._stream(sql, params, table)

    def _keep_newest_logs(self, session_id: str, keep: int) -> None:
        """One statement instead of the base store's read and delete: every step writes a log."""
        self._execute(
            "trim assembly logs", log_retention_query(session_id, keep, mark=self.dialect.mark)
        )

    def _execute(self, where: str, query: Query) -> None:
        """Run one statement that changes rows (a backend whose writes need more, such as
        DuckDB's undo log, overrides the methods that call it)."""
        raise NotImplementedError

    def _dangling_successors(self) -> int:
        found = self._fetch("integrity check", (DANGLING_SUCCESSORS, ()))
        return int(found[0]["n"]) if found else 0

    # --- events ----------------------------------------------------------------------
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

    def get_events(self, session_id: str, seqs: Sequence[int]) -> list[Event]:
        wanted = sorted({int(seq) for seq in seqs})
        found: list[Event] = []
        for start in range(0, len(wanted), _SEQS_PER_QUERY):
            where = Where(self.dialect)
            where.compare("session_id", session_id)
            where.among("seq", wanted[start : start + _SEQS_PER_QUERY])
            query = select("events", where, "seq")
            found.extend(self._event(row, "all") for row in self._fetch("get events", query))
        return found

    # --- search ----------------------------------------------------------------------
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
