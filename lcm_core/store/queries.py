"""SQL every SQL backend runs alike: table counts and the export order, per session or all.

Plain SQL text with `?` parameters (SQLite and DuckDB take it; PostgreSQL passes
`mark="%s"`), so the rules of which tables a session filter touches and in what order
an export walks a table are written once, beside `SESSION_TABLES` and `EXPORT_ORDER`.
"""

from __future__ import annotations

from lcm_core.store.errors import StoreError
from lcm_core.store.models import EXPORT_ORDER, SESSION_TABLES, TABLES

Query = tuple[str, tuple[str, ...]]


def _scope(table: str, session_id: str | None, mark: str) -> Query:
    """The WHERE clause of one session's rows, for tables that belong to sessions."""
    if session_id is not None and table in SESSION_TABLES:
        return f" WHERE session_id = {mark}", (session_id,)
    return "", ()


def count_query(table: str, session_id: str | None = None, *, mark: str = "?") -> Query:
    """Rows of one table (of one session where it applies), in the column `n`."""
    where, params = _scope(table, session_id, mark)
    return f"SELECT count(*) AS n FROM {table}{where}", params


def export_query(table: str, session_id: str | None = None, *, mark: str = "?") -> Query:
    """Every row of one table in the stable export order; an unknown table is an error."""
    if table not in TABLES:
        raise StoreError(f"unknown table {table!r}; tables are: {', '.join(TABLES)}")
    where, params = _scope(table, session_id, mark)
    return f"SELECT * FROM {table}{where} ORDER BY {EXPORT_ORDER[table]}", params
