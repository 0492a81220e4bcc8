"""SQL every SQL backend runs alike: counts, the export order and the filtered list reads.

Plain SQL text with `?` parameters (SQLite and DuckDB take it; PostgreSQL passes
`mark="%s"`), so the rules of which tables a session filter touches and in what order
an export walks a table are written once, beside `SESSION_TABLES` and `EXPORT_ORDER`.
The list reads (`list_*_query`) hold the rules of which filter narrows what, written
once; a backend's `Dialect` says only how it spells a parameter and a list test. A
`None` query means an empty filter list: no row can match, nothing need be read.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from lcm_core.store import rows
from lcm_core.store.errors import StoreError
from lcm_core.store.models import EXPORT_ORDER, SESSION_TABLES, TABLES
from lcm_core.text.tokens import MIN_INDEXED_TERM_CHARS, search_terms

Query = tuple[str, tuple[Any, ...]]
# What `purge_all` empties: every table but the store's own bookkeeping.
PURGED_TABLES = tuple(table for table in TABLES if table != "meta")
# A session-scoped search over up to this many rows scores every row that matches (exact);
# bigger scopes score a bounded candidate list from an index. Every SQL backend uses it.
SCAN_ROWS_MAX = 100_000
# How far the scope count (the N of BM25) counts a big scope, on every backend.
SCOPE_COUNT_MAX = 1_000_000


@dataclass(frozen=True, slots=True)
class SplitTerms:
    """Cleaned query terms divided by what a trigram index can serve, long ones first."""

    indexed: tuple[str, ...]
    short: tuple[str, ...]


def split_terms(terms: Sequence[object]) -> SplitTerms:
    """Clean terms, then divide them: a trigram index serves only 3+ characters."""
    cleaned = search_terms(terms)
    return SplitTerms(
        tuple(t for t in cleaned if len(t) >= MIN_INDEXED_TERM_CHARS),
        tuple(t for t in cleaned if len(t) < MIN_INDEXED_TERM_CHARS),
    )


def _scope(table: str, session_id: str | None, mark: str) -> Query:
    """The WHERE clause of one session's rows, for tables that belong to sessions."""
    if session_id is not None and table in SESSION_TABLES:
        return f" WHERE session_id = {mark}", (session_id,)
    return "", ()


def count_query(table: str, session_id: str | None = None, *, mark: str = "?") -> Query:
    """Rows of one table (of one session where it applies), in the column `n`."""
    where, params = _scope(table, session_id, mark)
    return f"SELECT count(*) AS n FROM {table}{where}", params


def log_retention_query(session_id: str, keep: int, *, mark: str = "?") -> Query:
    """Delete a session's assembly logs past its newest `keep`: those at or below the next
    newest id, one cut-off found on the (session, id) index instead of a test of every row."""
    sql = (
        f"DELETE FROM assembly_logs WHERE session_id = {mark} AND id <= ("
        f"SELECT id FROM assembly_logs WHERE session_id = {mark} "
        f"ORDER BY id DESC LIMIT 1 OFFSET {mark})"
    )
    return sql, (session_id, session_id, keep)


def log_reasons_query(log_id: int, reasons: Sequence[Any], *, mark: str = "?") -> Query:
    """Replace one assembly log's reasons (a forget erases the words they quote)."""
    sql = f"UPDATE assembly_logs SET reasons_json = {mark} WHERE id = {mark}"
    return sql, (rows.dumps(list(reasons)), int(log_id))


def export_query(table: str, session_id: str | None = None, *, mark: str = "?") -> Query:
    """Every row of one table in the stable export order; an unknown table is an error."""
    if table not in TABLES:
        raise StoreError(f"unknown table {table!r}; tables are: {', '.join(TABLES)}")
    where, params = _scope(table, session_id, mark)
    return f"SELECT * FROM {table}{where} ORDER BY {EXPORT_ORDER[table]}", params


@dataclass(frozen=True, slots=True)
class Dialect:
    """How one backend spells a parameter, a test against a list, and NULL ordering."""

    mark: str = "?"
    # A template over `{column}` and `{mark}` testing membership in one list-valued
    # parameter; empty means `column IN (?, ?, ...)` with one parameter per value.
    member: str = ""
    # Appended to an ascending sort key that may be NULL, so NULL sorts first everywhere.
    nulls_first: str = ""
    # A sort key that the planner must not serve by walking an index in its order
    # (SQLite: `+seq`), for queries whose filter has a better index than the sort.
    sort_apart: str = "{column}"


@dataclass(slots=True)
class Where:
    """Optional filters AND-ed into one WHERE clause, parameters in clause order."""

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


def _select(table: str, where: Where, order: str, limit: int | None = None) -> Query:
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
    return None if where.empty else _select("events", where, order, limit)


def list_items_query(
    dialect: Dialect,
    session_id: str | None = None,
    *,
    statuses: Sequence[str] | None = None,
    kinds: Sequence[str] | None = None,
) -> Query | None:
    """Memory items in creation order, of a session, statuses and kinds when named."""
    where = Where(dialect)
    where.compare("session_id", session_id)
    where.among("status", statuses)
    where.among("kind", kinds)
    return None if where.empty else _select("memory_items", where, "created_at, id")


def list_memory_events_query(
    dialect: Dialect,
    *,
    memory_id: str | None = None,
    session_id: str | None = None,
    events: Sequence[str] | None = None,
) -> Query | None:
    """The memory-event history in write order, of one item, session and event names."""
    where = Where(dialect)
    where.compare("memory_id", memory_id)
    where.compare("session_id", session_id)
    where.among("event", events)
    return None if where.empty else _select("memory_events", where, "id")


def list_rules_query(
    dialect: Dialect, *, skill_name: str | None = None, active: bool | None = None
) -> Query:
    """Rules by skill and source line, of one skill and/or activity when named."""
    where = Where(dialect)
    where.compare("skill_name", skill_name)
    where.compare("active", None if active is None else int(active))
    return _select("rules", where, f"skill_name, source_line{dialect.nulls_first}, rule_key")
