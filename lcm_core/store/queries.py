"""SQL every SQL backend runs alike: the filter builder, the export walk and the event list.

Plain SQL text with `?` parameters (SQLite and DuckDB take it; PostgreSQL's `Dialect`
says `%s`), so which tables a session filter touches and in what order an export
walks a table are written once, beside `SESSION_TABLES` and `EXPORT_ORDER`. A backend's
`Dialect` says only how it spells a parameter and a list test. A `None` query means an
empty filter list: no row can match, nothing need be read. The keyed-row statements
(find, list, count, insert, update, delete) are in `lcm_core.store.row_sql`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from lcm_core.store.errors import StoreError
from lcm_core.store.models import EXPORT_ORDER, SESSION_TABLES, TABLES

Query = tuple[str, tuple[Any, ...]]
# What `purge_all` empties: every table but the store's own bookkeeping.
PURGED_TABLES = tuple(table for table in TABLES if table != "meta")


def known_table(table: str) -> str:
    """The table name, when it is one of `TABLES` (the only names put into SQL)."""
    if table not in TABLES:
        raise StoreError(f"unknown table {table!r}; tables are: {', '.join(TABLES)}")
    return table


def session_match(table: str, session_id: str | None) -> dict[str, Any]:
    """The keyed-row match of one session's rows, for tables that belong to sessions."""
    if session_id is not None and table in SESSION_TABLES:
        return {"session_id": session_id}
    return {}


def log_retention_query(session_id: str, keep: int, *, mark: str = "?") -> Query:
    """Delete a session's assembly logs past its newest `keep`: those at or below the next
    newest id, one cut-off found on the (session, id) index instead of a test of every row."""
    sql = (
        f"DELETE FROM assembly_logs WHERE session_id = {mark} AND id <= ("
        f"SELECT id FROM assembly_logs WHERE session_id = {mark} "
        f"ORDER BY id DESC LIMIT 1 OFFSET {mark})"
    )
    return sql, (session_id, session_id, keep)


def export_query(table: str, session_id: str | None = None, *, mark: str = "?") -> Query:
    """Every row of one table in the stable export order; an unknown table is an error."""
    known_table(table)
    params: tuple[Any, ...] = ()
    where = ""
    if session_id is not None and table in SESSION_TABLES:
        where, params = f" WHERE session_id = {mark}", (session_id,)
    return f"SELECT * FROM {table}{where} ORDER BY {EXPORT_ORDER[table]}", params


@dataclass(frozen=True, slots=True)
class AtMost:
    """A match value: the column is at most `value` (a cut-off, as log retention needs)."""

    value: Any


@dataclass(frozen=True, slots=True)
class Dialect:
    """How one backend spells a parameter and a test against a list."""

    mark: str = "?"
    # A template over `{column}` and `{mark}` testing membership in one list-valued
    # parameter; empty means `column IN (?, ?, ...)` with one parameter per value.
    member: str = ""
    # A sort key that the planner must not serve by walking an index in its order
    # (SQLite: `+seq`), for queries whose filter has a better index than the sort.
    sort_apart: str = "{column}"


@dataclass(slots=True)
class Where:
    """Filters AND-ed into one WHERE clause, parameters in clause order."""

    dialect: Dialect
    prefix: str = ""
    clauses: list[str] = field(default_factory=list)
    params: list[Any] = field(default_factory=list)
    # An empty list filter: no row can match.
    empty: bool = False

    def compare(self, column: str, value: object | None, op: str = "=") -> None:
        """`column op value`, when a value is given."""
        if value is not None:
            self.clauses.append(f"{self.prefix}{column} {op} {self.dialect.mark}")
            self.params.append(value)

    def equal(self, column: str, value: object) -> None:
        """`column` is `value` (None: IS NULL; a list or tuple: one of its values; `AtMost`:
        no greater)."""
        if value is None:
            self.clauses.append(f"{self.prefix}{column} IS NULL")
        elif isinstance(value, AtMost):
            self.compare(column, value.value, "<=")
        elif isinstance(value, list | tuple):
            self.among(column, value)
        else:
            self.compare(column, value)

    def among(self, column: str, values: Sequence[Any] | None) -> None:
        """`column` is one of `values`, when a list is given (an empty one matches nothing)."""
        if values is None:
            return
        if not values:
            self.empty = True
            return
        name = f"{self.prefix}{column}"
        if self.dialect.member:
            self.clauses.append(self.dialect.member.format(column=name, mark=self.dialect.mark))
            self.params.append(list(values))
        else:
            self.clauses.append(f"{name} IN ({', '.join([self.dialect.mark] * len(values))})")
            self.params.extend(values)

    def sql(self) -> str:
        """` WHERE a AND b`, or nothing without a filter."""
        return f" WHERE {' AND '.join(self.clauses)}" if self.clauses else ""


def select(table: str, where: Where, order: str, limit: int | None = None) -> Query:
    """`SELECT *` of one table under `where`, in `order`, at most `limit` rows."""
    sql = f"SELECT * FROM {table}{where.sql()} ORDER BY {order}"
    params = list(where.params)
    if limit is not None:
        sql += f" LIMIT {where.dialect.mark}"
        params.append(max(0, int(limit)))
    return sql, tuple(params)


def list_events_query(
    dialect: Dialect,
    session_id: str,
    *,
    start_seq: int | None = None,
    end_seq: int | None = None,
    types: Sequence[str] | None = None,
    limit: int | None = None,
) -> Query | None:
    """One session's events in seq order, within a seq range and of some types."""
    whole = types is not None and start_seq is None and end_seq is None and limit is None
    if whole:
        # Some types over a whole session (compaction markers, say) are few: found by the
        # (session, type, seq) index and sorted, not by walking every event in seq order.
        # Seqs are never negative; the bound is there for SQLite's planner, which, once
        # the file has statistics, scans the session for an IN over several types unless
        # the index also serves a range (0.28 ms instead of 0.03 at 1 000 events).
        start_seq = 0
    where = Where(dialect)
    where.compare("session_id", session_id)
    where.compare("seq", start_seq, ">=")
    where.compare("seq", end_seq, "<=")
    where.among("type", types)
    order = dialect.sort_apart.format(column="seq") if whole else "seq"
    return None if where.empty else select("events", where, order, limit)
