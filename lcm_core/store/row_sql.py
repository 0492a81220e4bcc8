"""The keyed-row statements every SQL backend runs: find, list, count, insert, update, delete.

A match is column -> value: None tests IS NULL, a list or tuple tests membership (an
empty one matches nothing), `AtMost(v)` tests `<= v`, anything else equality. Column
names come from callers (an import carries whatever columns the exporting schema had),
so each is checked against the table's own columns, as the backend reads them from its
catalogue, before it is quoted into a statement; the table must be one of `TABLES`.
Values are always parameters. The text of a statement depends only on the shape of
the call (which columns, which kinds of test), so it is built once per shape: the
pre-step reads the same few shapes at every step.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from functools import lru_cache
from typing import Any

from lcm_core.store.errors import StoreError
from lcm_core.store.models import EXPORT_ORDER, ROW_KEYS
from lcm_core.store.queries import AtMost, Dialect, Query, known_table

# A sort order: column names, each prefixed by "-" to sort it descending.
Order = Sequence[str]
# The LIMIT of an OFFSET without one (every database takes a LIMIT this large).
_NO_LIMIT = 2**62
_SHAPES = 4096
# A match's shape: (column, kind) pairs, kind "eq", "null", "le" or ("in", count).
Shape = tuple[tuple[str, Any], ...]


def checked_columns(table: str, names: Iterable[str], columns: Iterable[str]) -> list[str]:
    """`names` in their order when the table has every one of them, else a one-line error."""
    known_table(table)
    known = set(columns)
    wanted = list(names)
    for name in wanted:
        if name not in known:
            raise StoreError(
                f"{table}: column {name!r} is not in this database (an export of another schema?)"
            )
    return wanted


def quoted(name: str) -> str:
    """A column name as a quoted identifier."""
    return '"' + name.replace('"', '""') + '"'


def match_parts(dialect: Dialect, match: Mapping[str, Any]) -> tuple[Shape, list[Any]]:
    """A match's shape (what its statement's text depends on) and its WHERE parameters in
    clause order, in one plain loop: the pre-step asks for a few shapes many times."""
    shape: list[tuple[str, Any]] = []
    params: list[Any] = []
    for name, value in match.items():
        if value is None:
            shape.append((name, "null"))
        elif isinstance(value, AtMost):
            shape.append((name, "le"))
            params.append(value.value)
        elif isinstance(value, list | tuple):
            shape.append((name, ("in", len(value))))
            if dialect.member:
                params.append(list(value))
            else:
                params.extend(value)
        else:
            shape.append((name, "eq"))
            params.append(value)
    return tuple(shape), params


@lru_cache(maxsize=_SHAPES)
def _where_sql(dialect: Dialect, table: str, shape: Shape, columns: tuple[str, ...]) -> str | None:
    """` WHERE ...` of a match shape ("" for none); None when an empty list matches nothing."""
    checked_columns(table, (name for name, _ in shape), columns)
    mark = dialect.mark
    clauses: list[str] = []
    for name, kind in shape:
        column = quoted(name)
        if kind == "null":
            clauses.append(f"{column} IS NULL")
        elif kind == "le":
            clauses.append(f"{column} <= {mark}")
        elif kind == "eq":
            clauses.append(f"{column} = {mark}")
        elif kind[1] == 0:
            return None
        elif dialect.member:
            clauses.append(dialect.member.format(column=column, mark=mark))
        else:
            clauses.append(f"{column} IN ({', '.join([mark] * kind[1])})")
    return f" WHERE {' AND '.join(clauses)}" if clauses else ""


def _order(table: str, order: tuple[str, ...] | None, columns: tuple[str, ...]) -> str:
    if order is None:
        return EXPORT_ORDER[table]
    names = [key.removeprefix("-") for key in order]
    checked_columns(table, names, columns)
    return ", ".join(
        f"{quoted(name)} DESC" if key.startswith("-") else quoted(name)
        for key, name in zip(order, names, strict=True)
    )


def find_row_query(
    dialect: Dialect, table: str, match: Mapping[str, Any], columns: tuple[str, ...]
) -> Query:
    """The first row (export order) equal to `match`, None matching NULL.

    Plain `=` (and `IS NULL` for None) rather than a null-safe operator: DuckDB serves
    only `=` from its key index, and a key lookup per imported row must be cheap.
    """
    shape, params = match_parts(dialect, match)
    return _find_sql(dialect, table, shape, columns), tuple(params)


@lru_cache(maxsize=_SHAPES)
def _find_sql(dialect: Dialect, table: str, shape: Shape, columns: tuple[str, ...]) -> str:
    where = _where_sql(dialect, table, shape, columns)
    if where is None:  # an empty list: a statement that finds nothing
        return f"SELECT * FROM {table} WHERE FALSE"
    # A key names at most one row; sorting it would cost DuckDB more than the lookup.
    keyed = {name for name, _ in shape} == set(ROW_KEYS[table])
    order = "" if keyed else f" ORDER BY {EXPORT_ORDER[table]}"
    return f"SELECT * FROM {table}{where}{order} LIMIT 1"


def select_rows_query(
    dialect: Dialect,
    table: str,
    match: Mapping[str, Any],
    columns: Iterable[str],
    *,
    order: Order | None = None,
    limit: int | None = None,
    offset: int = 0,
    wanted: Sequence[str] | None = None,
) -> Query | None:
    """Rows equal to `match` in `order` (export order by default), `wanted` columns only
    when named; None when an empty list leaves nothing to read."""
    paged = limit is not None or bool(offset)
    shape, params = match_parts(dialect, match)
    sql = _select_sql(
        dialect,
        table,
        shape,
        tuple(columns),
        None if order is None else tuple(order),
        paged,
        bool(offset),
        None if wanted is None else tuple(wanted),
    )
    if sql is None:
        return None
    return sql, paged_params(params, limit, offset)


def paged_params(params: list[Any], limit: int | None, offset: int) -> tuple[Any, ...]:
    """A select's parameters: the match's, then its LIMIT and OFFSET when it has them."""
    if limit is not None or offset:
        params.append(_NO_LIMIT if limit is None else max(0, int(limit)))
    if offset:
        params.append(max(0, int(offset)))
    return tuple(params)


@lru_cache(maxsize=_SHAPES)
def _select_sql(
    dialect: Dialect,
    table: str,
    shape: Shape,
    columns: tuple[str, ...],
    order: tuple[str, ...] | None,
    paged: bool,
    offset: bool,
    wanted: tuple[str, ...] | None,
) -> str | None:
    where = _where_sql(dialect, table, shape, columns)
    if where is None:
        return None
    picked = (
        "*" if wanted is None else ", ".join(map(quoted, checked_columns(table, wanted, columns)))
    )
    sql = f"SELECT {picked} FROM {table}{where} ORDER BY {_order(table, order, columns)}"
    if paged:
        sql += f" LIMIT {dialect.mark}"
    if offset:
        sql += f" OFFSET {dialect.mark}"
    return sql


def _matched(
    dialect: Dialect, table: str, match: Mapping[str, Any], columns: Iterable[str]
) -> tuple[str, tuple[Any, ...]] | None:
    """A match's ` WHERE ...` ("" for none) and parameters; None when an empty list
    matches nothing."""
    shape, params = match_parts(dialect, match)
    where = _where_sql(dialect, table, shape, tuple(columns))
    return None if where is None else (where, tuple(params))


def match_clause(
    dialect: Dialect, table: str, match: Mapping[str, Any], columns: Iterable[str]
) -> Query | None:
    """A match as a bare condition ("TRUE" for none) and its parameters; None when an
    empty list matches nothing (for a backend that reads rows before it changes them)."""
    found = _matched(dialect, table, match, columns)
    return None if found is None else (found[0].removeprefix(" WHERE ") or "TRUE", found[1])


def count_rows_query(
    dialect: Dialect, table: str, match: Mapping[str, Any], columns: Iterable[str]
) -> Query | None:
    """How many rows equal `match`, in the column `n`."""
    found = _matched(dialect, table, match, columns)
    return None if found is None else (f"SELECT count(*) AS n FROM {table}{found[0]}", found[1])


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
    names = (*row, *(extra or {}))
    sql = _insert_sql(table, tuple(row), tuple(columns), names, mark, returning)
    return sql, (*row.values(), *(extra or {}).values())


@lru_cache(maxsize=_SHAPES)
def _insert_sql(
    table: str,
    given: tuple[str, ...],
    columns: tuple[str, ...],
    names: tuple[str, ...],
    mark: str,
    returning: str,
) -> str:
    checked_columns(table, given, columns)
    return (
        f"INSERT INTO {table} ({', '.join(map(quoted, names))}) "
        f"VALUES ({', '.join([mark] * len(names))}){' RETURNING ' + returning if returning else ''}"
    )


def update_rows_query(
    dialect: Dialect,
    table: str,
    match: Mapping[str, Any],
    values: Mapping[str, Any],
    columns: Iterable[str],
    *,
    extra: Mapping[str, Any] | None = None,
) -> Query | None:
    """Set `values` (and backend-only `extra` columns) on the rows equal to `match`."""
    columns = tuple(columns)
    checked_columns(table, values, columns)
    shape, matched = match_parts(dialect, match)
    where = _where_sql(dialect, table, shape, columns)
    names = (*values, *(extra or {}))
    if where is None or not names:
        return None
    sets = ", ".join(f"{quoted(n)} = {dialect.mark}" for n in names)
    return f"UPDATE {table} SET {sets}{where}", (
        *values.values(),
        *(extra or {}).values(),
        *matched,
    )


def delete_rows_query(
    dialect: Dialect, table: str, match: Mapping[str, Any], columns: Iterable[str]
) -> Query | None:
    """Delete the rows equal to `match` (every row for an empty match)."""
    found = _matched(dialect, table, match, columns)
    return None if found is None else (f"DELETE FROM {table}{found[0]}", found[1])
