"""The SQL every SQL backend runs for `SupportsImport`: find a row by any columns, insert one.

Column names come from the row being imported, so each is checked against the table's
own columns (as the backend reads them from its catalogue) before it is written into a
statement; the table must be one of `TABLES`. Values are always parameters.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from lcm_core.store.errors import StoreError
from lcm_core.store.models import EXPORT_ORDER, ROW_KEYS, TABLES
from lcm_core.store.queries import Query


def checked_columns(table: str, names: Iterable[str], columns: Iterable[str]) -> list[str]:
    """`names` in their order when the table has every one of them, else a one-line error."""
    if table not in TABLES:
        raise StoreError(f"unknown table {table!r}; tables are: {', '.join(TABLES)}")
    known = set(columns)
    wanted = list(names)
    for name in wanted:
        if name not in known:
            raise StoreError(
                f"{table}: column {name!r} is not in this database (an export of another schema?)"
            )
    return wanted


def _quoted(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def find_row_query(
    table: str, match: Mapping[str, Any], columns: Iterable[str], *, mark: str
) -> Query:
    """The first row (export order) equal to `match`, None matching NULL.

    Plain `=` (and `IS NULL` for None) rather than a null-safe operator: DuckDB serves
    only `=` from its key index, and a key lookup per imported row must be cheap.
    """
    names = checked_columns(table, match, columns)
    tests = [
        f"{_quoted(n)} IS NULL" if match[n] is None else f"{_quoted(n)} = {mark}" for n in names
    ]
    where = " AND ".join(tests) or "TRUE"
    # A key names at most one row; sorting it would cost DuckDB more than the lookup.
    order = "" if set(names) == set(ROW_KEYS[table]) else f" ORDER BY {EXPORT_ORDER[table]}"
    sql = f"SELECT * FROM {table} WHERE {where}{order} LIMIT 1"
    return sql, tuple(match[n] for n in names if match[n] is not None)


def insert_row_query(
    table: str,
    row: Mapping[str, Any],
    columns: Iterable[str],
    *,
    mark: str,
    extra: Mapping[str, Any] | None = None,
    returning: str = "",
) -> Query:
    """Insert one row with exactly its columns (plus backend-only `extra` ones)."""
    names = checked_columns(table, row, columns)
    values = [row[n] for n in names]
    for name, value in (extra or {}).items():
        names.append(name)
        values.append(value)
    sql = (
        f"INSERT INTO {table} ({', '.join(map(_quoted, names))}) "
        f"VALUES ({', '.join([mark] * len(names))}){' RETURNING ' + returning if returning else ''}"
    )
    return sql, tuple(values)
