"""Substring search through pg_trgm GIN indexes, under the core's rule and scorer.

Each table keeps `folded`, its text's casefold (`lcm_core.store.matching.fold`); a term
matches when its casefold is a substring of it, written as `folded LIKE '%term%'` with
LIKE's wildcards escaped: the core's rule, exactly. pg_trgm's GIN index serves such a
LIKE for terms of three characters or more, CJK included (the database's ctype must
class CJK as letters: C.UTF-8 or any UTF-8 locale does; `lcm doctor` checks). Shorter
terms are matched by the same LIKE on the rows the other conditions leave.

Which rows are scored is the rule's (`matching`): a session of up to `SCAN_ROWS_MAX`
rows (or a big one whose filtered rows are that few) gives every matching row; a larger
scope gives each long term's `candidates_per_term` newest matches and the short terms'
`candidate_pool` newest together. PostgreSQL keeps no write order, so "newest" is
by `ingested_at` then seq and session for events, by `created_at` then id for items.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Final

from lcm_core.store.matching import (
    SCAN_ROWS_MAX,
    SCOPE_COUNT_MAX,
    candidate_pool,
    candidates_per_term,
    fold,
    split_terms,
)
from lcm_core.text.tokens import best_matches

if TYPE_CHECKING:
    import psycopg

    from lcm_store_postgres.connection import Connection

    PgConnection = psycopg.Connection[dict[str, Any]]

__all__ = ["SearchMixin", "fold", "like_pattern"]

# Terms combined in one statement; more are searched in further statements.
TERMS_PER_QUERY: Final = 200
# Per searched table: key columns, text column, and the "newest first" order.
_SEARCHED: Final = {
    "events": (("session_id", "seq"), "text", "t.ingested_at DESC, t.seq DESC, t.session_id DESC"),
    "memory_items": (("id",), "content", "t.created_at DESC, t.id DESC"),
}


def like_pattern(term: str) -> str:
    """A LIKE pattern matching the folded term literally anywhere (escape character `\\`)."""
    folded = fold(term).replace("\x00", "\ufffd")
    escaped = folded.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return f"%{escaped}%"


def _any_term(count: int) -> str:
    return "(" + " OR ".join(["t.folded LIKE %s"] * count) + ")"


class SearchMixin:
    """The term-search hook of `SqlReads`; needs `self._db`."""

    _db: Connection

    def _scored(
        self,
        table: str,
        session_id: str | None,
        terms: Sequence[str],
        among: Mapping[str, Sequence[str] | None],
        limit: int,
    ) -> list[tuple[dict[str, Any], float]]:
        """Rows of `table` holding any term, scored like the core; `SqlReads` sorts and cuts."""
        split = split_terms(terms)
        ordered = split.ordered
        if limit <= 0 or not ordered:
            return []
        where = [f"t.{column} = ANY(%s)" for column, v in among.items() if v is not None]
        args: list[Any] = [list(v) for v in among.values() if v is not None]
        if session_id is not None:
            where.insert(0, "t.session_id = %s")
            args.insert(0, session_id)
        keys, column, _ = _SEARCHED[table]
        with self._db.guarded(f"search {table}") as raw:
            scope = _scope_rows(raw, table, session_id)
            scan = session_id is not None and (
                scope <= SCAN_ROWS_MAX or _filtered_rows(raw, table, where, args) <= SCAN_ROWS_MAX
            )
            if scan:
                found = _every_match(raw, table, keys, ordered, where, args)
            else:
                found = {}
                each = candidates_per_term(limit, len(split.indexed))
                for term in split.indexed:
                    found.update(_newest(raw, table, [term], where, args, each))
                if split.short:
                    found.update(
                        _newest(raw, table, split.short, where, args, candidate_pool(limit))
                    )
            if not found:
                return []
            # In key order, so ties (broken by position) fall in key order.
            keyed = sorted(found)
            ranked = best_matches([found[key][column] for key in keyed], ordered, scope, limit)
            best = [keyed[i] for i, _ in ranked]
            whole = found if scan else _whole_rows(raw, table, keys, best)
        return [(whole[keyed[i]], score) for i, score in ranked if keyed[i] in whole]


def _every_match(
    raw: PgConnection,
    table: str,
    keys: tuple[str, ...],
    terms: Sequence[str],
    where: list[str],
    args: list[Any],
) -> dict[tuple[Any, ...], dict[str, Any]]:
    """key -> whole row of every row holding any term (a session's matches are few
    enough to read whole: one round trip, not two)."""
    found: dict[tuple[Any, ...], dict[str, Any]] = {}
    patterns = [like_pattern(term) for term in terms]
    for start in range(0, len(patterns), TERMS_PER_QUERY):
        chunk = patterns[start : start + TERMS_PER_QUERY]
        condition = " AND ".join([_any_term(len(chunk)), *where])
        for row in raw.execute(f"SELECT t.* FROM {table} AS t WHERE {condition}", [*chunk, *args]):
            found.setdefault(tuple(row[key] for key in keys), row)
    return found


def _newest(
    raw: PgConnection,
    table: str,
    terms: Sequence[str],
    where: list[str],
    args: list[Any],
    limit: int,
) -> dict[tuple[Any, ...], dict[str, Any]]:
    """key -> (keys and text) of the newest `limit` rows holding any of `terms`."""
    keys, column, newest = _SEARCHED[table]
    selected = ", ".join(f"t.{key}" for key in keys)
    found: dict[tuple[Any, ...], dict[str, Any]] = {}
    patterns = [like_pattern(term) for term in terms]
    for start in range(0, len(patterns), TERMS_PER_QUERY):
        chunk = patterns[start : start + TERMS_PER_QUERY]
        condition = " AND ".join([_any_term(len(chunk)), *where])
        sql = (
            f"SELECT {selected}, t.{column} FROM {table} AS t WHERE {condition} "
            f"ORDER BY {newest} LIMIT %s"
        )
        for row in raw.execute(sql, [*chunk, *args, limit]):
            found.setdefault(tuple(row[key] for key in keys), row)
    return found


def _scope_rows(raw: PgConnection, table: str, session_id: str | None) -> int:
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


def _filtered_rows(raw: PgConnection, table: str, where: list[str], args: list[Any]) -> int:
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
    raw: PgConnection, table: str, keys: tuple[str, ...], wanted: list[tuple[Any, ...]]
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
