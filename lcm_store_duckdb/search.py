"""Substring search over the folded side tables, scored as `lcm_core.text.tokens.score_matches` does.

The side tables hold each text's casefold (`lcm_core.store.matching.fold`) and a term
matches by the core's rule, `contains(folded, casefold(term))`, in every scope: this
store scores every match, which the rule allows a large scope to do.

No extension is needed: the `fts` extension downloads at run time, no wheel of it exists
for DuckDB 2.0, and it indexes stemmed words, not the literal substrings (CJK included)
the port promises. A scan of the folded side table with `contains()` is exact and, at the
sizes measured (benchmarks/duckdb_search_options.py), faster than trigram postings.

The score is the core's: distinct terms a text contains, plus BM25 squashed into [0, 1),
with BM25 taken over the rows that match (after the filters) inside the searched scope
(N = the scope's rows; document frequency, average length and term frequency from the
matching rows, case-folded, non-overlapping counts). DuckDB computes the same numbers in
SQL instead of shipping every matching text to Python; tests/store_duckdb checks them
against `score_matches` itself.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

from lcm_core.store.matching import fold_keys, split_terms
from lcm_core.store.sql_reads import Among
from lcm_core.text.tokens import BM25_B, BM25_K1, relevance
from lcm_store_duckdb.fetch import fetch_dicts
from lcm_store_duckdb.schema import SEARCH_TABLES

if TYPE_CHECKING:
    import duckdb

    from lcm_store_duckdb.connection import Connection

# The positions (from 1) of the terms a row contains. A lambda over the term list keeps
# every statement one shape whatever the number of terms: spelled out per term, a long
# query hit DuckDB's expression depth limit (1000) and took long to plan.
_WHICH: Final = "list_filter(range(1, len($terms) + 1), lambda i: contains(s.folded, $terms[i]))"
# BM25 of one row: z = (term, idf) pairs, $avglen the matching rows' mean length.
# Non-overlapping occurrences, as str.count counts them: what replace() removes.
_TF: Final = "((length(folded) - length(replace(folded, z[1], ''))) // length(z[1]))"
_BM25: Final = (
    f"list_sum(list_transform(list_zip($terms, $idfs), lambda z: "
    f"CASE WHEN contains(folded, z[1]) THEN z[2] * {_TF} * {BM25_K1 + 1} / "
    f"({_TF} + {BM25_K1} * ({1 - BM25_B} + {BM25_B} * length(folded) / $avglen)) ELSE 0.0 END))"
)


@dataclass(frozen=True, slots=True)
class Terms:
    """Cleaned query terms, in the SQLite store's order, as given and case-folded."""

    terms: tuple[str, ...]
    folded: tuple[str, ...]


def prepare_terms(raw: Sequence[object]) -> Terms:
    """Clean and dedupe terms; long terms first, the order scores are summed in."""
    ordered = split_terms(raw).ordered
    return Terms(ordered, tuple(fold_keys(ordered)))


def trigram_count(text: str) -> int:
    """Length in trigrams, kept in the side tables' `grams` column for analysis."""
    return max(len(text) - 2, 0)


def idf(scope_rows: float, having: float) -> float:
    """The idf of `score_matches`: log(1 + (N - n + 0.5) / (n + 0.5))."""
    return math.log(1.0 + (scope_rows - having + 0.5) / (having + 0.5))


@dataclass(frozen=True, slots=True)
class Plan:
    """The statements of one search, kept small because DuckDB plans every statement anew.

    One statement with the BM25 arithmetic spelled out per term took 15-25 ms to plan,
    several times the scan. So: a first scan counts the scope and the matching rows (how
    many, their length, how many hold each term, how many match 1, 2, ... terms); the
    second scores only the best tiers of matched terms, enough to fill `limit`; a last
    statement reads the winning rows whole. Terms travel as one list parameter.
    """

    side: str
    table: str
    keys: tuple[str, ...]
    terms: Terms
    session_id: str | None
    filters: tuple[str, ...]
    params: dict[str, Any]

    def _source(self, named: dict[str, Any]) -> str:
        """Side table (alias s), joined to the content table (alias c) when filtered."""
        named.update(self.params if self.filters else {})
        source = f"{self.side} AS s"
        if self.filters:
            on = " AND ".join(f"c.{key} = s.{key}" for key in self.keys)
            source += f" JOIN {self.table} AS c ON {on}"
        if self.session_id is not None:
            named["session"] = self.session_id
            source += " WHERE s.session_id = $session"
        return source

    def stats(self) -> tuple[str, dict[str, Any]]:
        """Scope rows; matching rows, their total length, tier histogram, per-term counts."""
        named: dict[str, Any] = {"terms": list(self.terms.folded)}
        ok = " AND ".join(self.filters) or "TRUE"
        hits = "FROM h WHERE ok AND len(which) > 0"
        sql = (
            f"WITH h AS MATERIALIZED (SELECT {_WHICH} AS which, length(s.folded) AS size, "
            f"({ok}) AS ok FROM {self._source(named)}) "
            f"SELECT (SELECT count(*) FROM h), (SELECT count(*) {hits}), "
            f"(SELECT coalesce(sum(size), 0) {hits}), (SELECT histogram(len(which)) {hits}), "
            "(SELECT histogram(i) FROM (SELECT unnest(which) AS i FROM h WHERE ok))"
        )
        return sql, named

    def top(
        self, counts: tuple[Any, ...], min_matched: int, limit: int
    ) -> tuple[str, dict[str, Any]]:
        """Keys, matched-term count and BM25 of the best rows matching `min_matched` terms."""
        scope_rows, hits, length = float(counts[0]), float(counts[1]), float(counts[2])
        scope_rows = max(scope_rows, hits)
        having = counts[4] or {}
        named: dict[str, Any] = {
            "terms": list(self.terms.folded),
            "idfs": [
                idf(scope_rows, float(having.get(i + 1, 0))) for i in range(len(self.terms.folded))
            ],
            "avglen": max(1.0, length / max(hits, 1.0)),
            "min": min_matched,
            "limit": limit,
        }
        source = self._source(named)
        filters = "".join(f" AND {clause}" for clause in self.filters)
        if filters and self.session_id is None:
            filters = " WHERE TRUE" + filters
        keys = ", ".join(self.keys)
        sql = (
            f"SELECT {keys}, _matched, ({_BM25})::DOUBLE AS _bm25 FROM (SELECT "
            f"{', '.join(f's.{key}' for key in self.keys)}, s.folded AS folded, "
            f"len({_WHICH}) AS _matched FROM {source}{filters}) WHERE _matched >= $min "
            f"ORDER BY _matched DESC, _bm25 DESC, {keys} LIMIT $limit"
        )
        return sql, named


def min_matched(histogram: dict[int, int] | None, limit: int) -> int:
    """The fewest matched terms a row needs to be among the `limit` best (at least 1)."""
    tiers = histogram or {}
    total, floor = 0, 1
    for matched in sorted((m for m in tiers if m > 0), reverse=True):
        total += tiers[matched]
        floor = matched
        if total >= limit:
            break
    return floor


def _fetch_rows(
    raw: duckdb.DuckDBPyConnection, table: str, keys: tuple[str, ...], found: list[tuple[Any, ...]]
) -> dict[tuple[Any, ...], dict[str, Any]]:
    """The winners' whole rows by key; events are read one session at a time, which cuts
    the scan to that session's row groups (a join on a key list scanned the whole table)."""
    if keys == ("id",):
        cursor = raw.execute(
            f"SELECT * FROM {table} WHERE list_contains(?, id)", [[hit[0] for hit in found]]
        )
        return {(row["id"],): row for row in fetch_dicts(cursor)}
    by_session: dict[Any, list[Any]] = {}
    for hit in found:
        by_session.setdefault(hit[0], []).append(hit[1])
    whole: dict[tuple[Any, ...], dict[str, Any]] = {}
    for session_id, seqs in by_session.items():
        cursor = raw.execute(
            f"SELECT * FROM {table} WHERE session_id = ? AND list_contains(?, seq)",
            [session_id, seqs],
        )
        whole.update({(row["session_id"], row["seq"]): row for row in fetch_dicts(cursor)})
    return whole


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
    """Rows of `table` containing any term, the best `limit` first, scored like the core.

    `filters` are SQL conditions on the content table, alias `c`, using `params`.
    """
    terms = prepare_terms(raw_terms)
    if limit <= 0 or not terms.terms:
        return []
    plan = Plan(SEARCH_TABLES[table], table, keys, terms, session_id, tuple(filters), params)
    with db.guarded(f"search {table}") as raw:
        counts = raw.execute(*plan.stats()).fetchone()
        if counts is None or not counts[1]:
            return []
        floor = min_matched(counts[3], limit)
        found = raw.execute(*plan.top(tuple(counts), floor, limit)).fetchall()
        whole = _fetch_rows(raw, table, keys, found)
    scored: list[tuple[dict[str, Any], float]] = []
    for hit in found:
        row = whole[tuple(hit[: len(keys)])]
        bm25 = max(float(hit[len(keys) + 1] or 0.0), 0.0)
        # `relevance` adds the squashed BM25 to the matched-term count, as score_matches.
        scored.append((row, relevance(row[column], terms.terms, bm25)))
    return scored


# Per searched table: its key columns and the text column searched.
_SEARCHED: Final = {"events": (("session_id", "seq"), "text"), "memory_items": (("id",), "content")}


class SearchMixin:
    """The term-search hook of `SqlReads`; needs `self._db`."""

    _db: Connection

    def _scored(
        self, table: str, session_id: str | None, terms: Sequence[str], among: Among, limit: int
    ) -> list[tuple[dict[str, Any], float]]:
        """Rows of `table` holding any term, scored, each filter one list parameter."""
        filters = [f"list_contains(${column}, c.{column})" for column, v in among.items() if v]
        params = {column: list(values) for column, values in among.items() if values}
        keys, column = _SEARCHED[table]
        return run_search(self._db, table, keys, column, terms, session_id, filters, params, limit)
