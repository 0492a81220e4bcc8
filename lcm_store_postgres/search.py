"""Substring search through pg_trgm GIN indexes, scored by `lcm_core.text.score_matches`.

Each table keeps `folded`, its text after Python's casefold; a term matches when its
casefold is a substring of it, written as `folded LIKE '%term%'` with LIKE's wildcards
escaped. pg_trgm's GIN index serves such a LIKE for terms of three characters or more,
CJK included (the database's ctype must class CJK as letters: C.UTF-8 or any UTF-8
locale does; `lcm doctor` checks). Shorter terms are matched by the same LIKE on the
rows the other conditions leave.

Scoring is the core's, as on SQLite: a session of up to `SCAN_ROWS_MAX` rows (or a big
one whose filtered rows are that few) is scored over every matching row; a bigger scope
scores a candidate list, the rows matching most terms first.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Final

from lcm_core.store.queries import SCAN_ROWS_MAX, SCOPE_COUNT_MAX
from lcm_core.text.tokens import MIN_INDEXED_TERM_CHARS, best_matches, search_terms

if TYPE_CHECKING:
    import psycopg

# Terms combined in one statement; more are searched in further statements.
TERMS_PER_QUERY: Final = 200


def fold(text: str) -> str:
    """The stored search form of a text: what LIKE compares folded terms against."""
    return text.casefold()


def ordered_terms(raw: Sequence[object]) -> tuple[str, ...]:
    """Cleaned, deduped terms; long terms first, as the SQLite store sums them."""
    cleaned = search_terms(raw)
    return tuple(t for t in cleaned if len(t) >= MIN_INDEXED_TERM_CHARS) + tuple(
        t for t in cleaned if len(t) < MIN_INDEXED_TERM_CHARS
    )


def like_pattern(term: str) -> str:
    """A LIKE pattern matching the folded term literally anywhere (escape character `\\`)."""
    folded = fold(term).replace("\x00", "\ufffd")
    escaped = folded.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return f"%{escaped}%"


def _any_term(count: int) -> str:
    return "(" + " OR ".join(["t.folded LIKE %s"] * count) + ")"


def _matched_count(count: int) -> str:
    return " + ".join(["(t.folded LIKE %s)::int"] * count)


def run_search(
    raw: psycopg.Connection[dict[str, Any]],
    table: str,
    keys: tuple[str, ...],
    column: str,
    raw_terms: Sequence[object],
    session_id: str | None,
    filters: Sequence[str],
    params: Sequence[Any],
    limit: int,
) -> list[tuple[dict[str, Any], float]]:
    """Rows of `table` containing any term, scored like the core; the caller sorts and cuts.

    `filters` are SQL conditions on alias `t` using `params` (positional, `%s`).
    """
    terms = ordered_terms(raw_terms)
    if limit <= 0 or not terms:
        return []
    where = [*filters]
    args = [*params]
    if session_id is not None:
        where.insert(0, "t.session_id = %s")
        args.insert(0, session_id)
    scope = _scope_rows(raw, table, session_id)
    patterns = [like_pattern(term) for term in terms]
    order = ", ".join(f"t.{key}" for key in keys)
    found: dict[tuple[Any, ...], dict[str, Any]] = {}
    scan = session_id is not None and (
        scope <= SCAN_ROWS_MAX or _filtered_rows(raw, table, where, args) <= SCAN_ROWS_MAX
    )
    for start in range(0, len(patterns), TERMS_PER_QUERY):
        chunk = patterns[start : start + TERMS_PER_QUERY]
        condition = " AND ".join([_any_term(len(chunk)), *where])
        if scan:
            # A session's matches are few enough to read whole: one round trip, not two.
            sql = f"SELECT t.* FROM {table} AS t WHERE {condition}"
            query_args: list[Any] = [*chunk, *args]
        else:
            # A bounded candidate list: the rows matching most terms of this chunk.
            sql = (
                f"SELECT {order}, t.{column} FROM {table} AS t WHERE {condition} "
                f"ORDER BY {_matched_count(len(chunk))} DESC, {order} LIMIT %s"
            )
            query_args = [*chunk, *args, *chunk, max(limit * 4, 50)]
        for row in raw.execute(sql, query_args):
            found.setdefault(tuple(row[key] for key in keys), row)
    if not found:
        return []
    # In key order, so ties (broken by position) fall in key order.
    keyed = sorted(found)
    ranked = best_matches([found[key][column] for key in keyed], terms, scope, limit)
    best = [keyed[i] for i, _ in ranked]
    whole = found if scan else _whole_rows(raw, table, keys, best)
    return [(whole[keyed[i]], score) for i, score in ranked if keyed[i] in whole]


def _scope_rows(raw: psycopg.Connection[dict[str, Any]], table: str, session_id: str | None) -> int:
    """Rows of the table in the searched session (all the tenant's without one), capped."""
    if session_id is None:
        sql = f"SELECT count(*) AS n FROM (SELECT 1 FROM {table} LIMIT %s) AS s"
        row = raw.execute(sql, (SCOPE_COUNT_MAX,)).fetchone()
    else:
        sql = (
            f"SELECT count(*) AS n FROM (SELECT 1 FROM {table} WHERE session_id = %s LIMIT %s) AS s"
        )
        row = raw.execute(sql, (session_id, SCOPE_COUNT_MAX)).fetchone()
    return int(row["n"]) if row else 0


def _filtered_rows(
    raw: psycopg.Connection[dict[str, Any]], table: str, where: list[str], args: list[Any]
) -> int:
    """Rows the filters leave in one big session (its user messages, say), capped."""
    if len(where) <= 1:
        return SCAN_ROWS_MAX + 1
    sql = (
        f"SELECT count(*) AS n FROM (SELECT 1 FROM {table} AS t WHERE {' AND '.join(where)} "
        "LIMIT %s) AS s"
    )
    row = raw.execute(sql, [*args, SCAN_ROWS_MAX + 1]).fetchone()
    return int(row["n"]) if row else 0


def _whole_rows(
    raw: psycopg.Connection[dict[str, Any]],
    table: str,
    keys: tuple[str, ...],
    wanted: list[tuple[Any, ...]],
) -> dict[tuple[Any, ...], dict[str, Any]]:
    """The winners' whole rows by key, read in one statement per key shape."""
    if not wanted:
        return {}
    if keys == ("id",):
        cursor = raw.execute(f"SELECT * FROM {table} WHERE id = ANY(%s)", ([k[0] for k in wanted],))
    else:
        cursor = raw.execute(
            f"SELECT t.* FROM {table} AS t JOIN unnest(%s::text[], %s::bigint[]) AS w(s, q) "
            "ON t.session_id = w.s AND t.seq = w.q",
            ([k[0] for k in wanted], [k[1] for k in wanted]),
        )
    return {tuple(row[key] for key in keys): row for row in cursor}
