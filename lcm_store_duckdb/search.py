"""Substring search over the folded side tables, scored with the BM25 that SQLite's FTS5 gives.

No extension is needed: the `fts` extension downloads at run time, no wheel of it exists
for DuckDB 2.0, and it indexes stemmed words, not the literal substrings (CJK included)
the port promises. A scan of the folded side table with `contains()` is exact and, at the
sizes measured (benchmarks/duckdb_search_options.py), faster than trigram postings.

The score mirrors the SQLite store term for term: the number of distinct terms a text
contains plus a [0, 1) squash of bm25, where bm25 is FTS5's formula (k1 = 1.2, b = 0.75,
document length in trigrams, overlapping phrase counts, idf floored at 1e-6) over the terms
of three or more characters. The one difference: FTS5 takes N, document frequencies and
the average length from the whole file, this store from the searched session (the whole
file when no session is given), so a scan never leaves the session. With one session in
the file both give the same numbers.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

from lcm_core.text import MIN_INDEXED_TERM_CHARS, relevance, search_terms
from lcm_store_duckdb import rows
from lcm_store_duckdb.schema import SEARCH_TABLES

if TYPE_CHECKING:
    from lcm_store_duckdb.connection import Connection

_K1: Final = 1.2
_B: Final = 0.75


@dataclass(frozen=True, slots=True)
class Terms:
    """Cleaned query terms: as given (for the relevance count) and case-folded (for SQL)."""

    terms: tuple[str, ...]
    folded: tuple[str, ...]
    scored: tuple[int, ...]  # positions of the terms long enough to count in bm25


def prepare_terms(raw: Sequence[object]) -> Terms:
    """Clean and dedupe terms, fold them as the side tables are folded, pick the bm25 ones."""
    terms = search_terms(raw)
    folded = tuple(term.casefold() for term in terms)
    scored = tuple(i for i, term in enumerate(terms) if len(term) >= MIN_INDEXED_TERM_CHARS)
    return Terms(terms, folded, scored)


def fold(text: str) -> str:
    """The side-table form of a text: what `contains()` compares against folded terms."""
    return text.casefold()


def trigram_count(text: str) -> int:
    """Document length as FTS5's trigram tokenizer counts it: one token per 3-character window."""
    return max(len(text) - 2, 0)


def _has_border(term: str) -> bool:
    """True if the term can overlap itself ("ana" in "banana"), so replace() undercounts."""
    return any(term[:k] == term[-k:] for k in range(1, len(term)))


def _occurrences(param: str, term: str) -> str:
    """SQL counting the occurrences of a term in `folded`, overlapping ones included."""
    if _has_border(term):
        width = len(term)
        return (
            f"len([i FOR i IN range(1, length(folded) - {width} + 2) "
            f"IF substr(folded, i, {width}) = ${param}])"
        )
    return f"((length(folded) - length(replace(folded, ${param}, ''))) // length(${param}))"


@dataclass(frozen=True, slots=True)
class ScoredQuery:
    """SQL selecting the best `limit` rows of the scope with `_matched` and `_bm25` columns."""

    sql: str
    params: dict[str, Any]


def scored_query(
    *,
    side: str,
    table: str,
    keys: Sequence[str],
    terms: Terms,
    session_id: str | None,
    filters: Sequence[str],
    params: dict[str, Any],
    order: str,
    limit: int,
) -> ScoredQuery:
    """Build the one statement that scans, scores and ranks a search.

    `side` is the side table with `folded` and `grams`, `table` the content table joined
    by `keys` for the row and for `filters` (SQL on alias `c`); `order` breaks ties.
    """
    named: dict[str, Any] = dict(params)
    for i, term in enumerate(terms.folded):
        named[f"t{i}"] = term
    flags = ", ".join(f"contains(folded, $t{i}) AS c{i}" for i in range(len(terms.folded)))
    scope_where = ""
    if session_id is not None:
        scope_where = "WHERE session_id = $session"
        named["session"] = session_id
    dfs = "".join(f", count(*) FILTER (WHERE c{i}) AS df{i}" for i in terms.scored)
    idfs = "".join(
        f", CASE WHEN ln((n - df{i} + 0.5) / (df{i} + 0.5)) <= 0 THEN 1e-6 "
        f"ELSE ln((n - df{i} + 0.5) / (df{i} + 0.5)) END AS idf{i}"
        for i in terms.scored
    )
    any_match = " OR ".join(f"c{i}" for i in range(len(terms.folded)))
    matched = " + ".join(f"c{i}::BIGINT" for i in range(len(terms.folded)))
    tfs = "".join(
        f", CASE WHEN c{i} THEN {_occurrences(f't{i}', terms.folded[i])} ELSE 0 END AS tf{i}"
        for i in terms.scored
    )
    norm = f"{_K1} * ({1 - _B} + {_B} * h.grams / s.avgdl)"
    bm25 = " + ".join(
        f"CASE WHEN h.tf{i} > 0 THEN s.idf{i} * (h.tf{i} * {_K1 + 1}) / (h.tf{i} + {norm}) "
        "ELSE 0.0 END"
        for i in terms.scored
    )
    key_list = ", ".join(keys)
    join_on = " AND ".join(f"c.{key} = h.{key}" for key in keys)
    where = "".join(f" AND {clause}" for clause in filters)
    named["limit"] = limit
    sql = (
        f"WITH scope AS MATERIALIZED (SELECT {key_list}, grams, folded, {flags} "
        f"FROM {side} {scope_where}), "
        f"counts AS (SELECT count(*)::DOUBLE AS n, "
        f"greatest(sum(grams)::DOUBLE / greatest(count(*), 1), 1e-9) AS avgdl{dfs} FROM scope), "
        f"s AS (SELECT avgdl{idfs} FROM counts), "
        f"h AS (SELECT {key_list}, grams, {matched} AS matched{tfs} FROM scope WHERE {any_match}) "
        f"SELECT c.*, h.matched AS _matched, ({bm25 or '0.0'})::DOUBLE AS _bm25 "
        f"FROM h JOIN {table} AS c ON {join_on} CROSS JOIN s WHERE TRUE{where} "
        f"ORDER BY _matched DESC, _bm25 DESC, {order} LIMIT $limit"
    )
    return ScoredQuery(sql, named)


def run_search(
    db: Connection,
    table: str,
    keys: tuple[str, ...],
    column: str,
    raw_terms: Sequence[str],
    session_id: str | None,
    filters: Sequence[str],
    params: dict[str, Any],
    limit: int,
) -> list[tuple[dict[str, Any], float]]:
    """Rows of `table` containing any term, the best `limit` first, scored like SQLite's."""
    terms = prepare_terms(raw_terms)
    if limit <= 0 or not terms.terms:
        return []
    query = scored_query(
        side=SEARCH_TABLES[table],
        table=table,
        keys=keys,
        terms=terms,
        session_id=session_id,
        filters=filters,
        params=params,
        order=", ".join(f"c.{key}" for key in keys),
        limit=int(limit),
    )
    with db.guarded(f"search {table}") as raw:
        found = rows.fetch_dicts(raw.execute(query.sql, query.params))
    scored: list[tuple[dict[str, Any], float]] = []
    for row in found:
        row.pop("_matched")
        bm25 = max(float(row.pop("_bm25") or 0.0), 0.0)
        # The SQL ordered by the same two parts, so the limit kept the true best rows.
        scored.append((row, relevance(row[column], terms.terms, bm25)))
    return scored
