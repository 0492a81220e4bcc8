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

import math
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


# Occurrences of term z[1] in `folded`, overlapping ones included: FTS5 counts a phrase at
# every position it starts, so "ana" is in "banana" twice. replace() counts only
# non-overlapping copies, which is the same for any term that cannot overlap itself
# (z[3] is False), and cheaper.
_OCCURRENCES: Final = (
    "CASE WHEN z[3] THEN len(list_filter(range(1, length(folded) - length(z[1]) + 2), "
    "lambda i: substr(folded, i, length(z[1])) = z[1])) "
    "ELSE (length(folded) - length(replace(folded, z[1], ''))) // length(z[1]) END"
)
# FTS5's bm25 term for z = (term, idf, overlaps); $avgdl is the scope's mean length.
_BM25: Final = (
    f"list_sum(list_transform(list_zip($scored, $idfs, $overlaps), lambda z: "
    f"CASE WHEN contains(folded, z[1]) THEN z[2] * (({_OCCURRENCES}) * {_K1 + 1}) / "
    f"(({_OCCURRENCES}) + {_K1} * ({1 - _B} + {_B} * grams / $avgdl)) ELSE 0.0 END))"
)


def _idf(rows_in_scope: float, containing: float) -> float:
    """FTS5's idf: log((N - n + 0.5) / (n + 0.5)), floored at 1e-6 for very common terms."""
    value = math.log((rows_in_scope - containing + 0.5) / (containing + 0.5))
    return value if value > 0.0 else 1e-6


@dataclass(frozen=True, slots=True)
class Plan:
    """The statements of one search; each stays simple because DuckDB's planner, not the
    scan, dominated a single all-in-one statement with CTEs (~25 ms to plan)."""

    side: str
    table: str
    keys: tuple[str, ...]
    terms: Terms
    session_id: str | None
    filters: tuple[str, ...]
    params: dict[str, Any]

    def stats_params(self) -> dict[str, Any]:
        """Parameters of `stats_sql`: DuckDB refuses a named parameter the SQL does not use."""
        named = {f"t{i}": self.terms.folded[i] for i in self.terms.scored}
        if self.session_id is not None:
            named["session"] = self.session_id
        return named

    def stats_sql(self) -> str:
        """Rows, total trigrams and per-term document frequencies of the scope."""
        dfs = "".join(
            f", count(*) FILTER (WHERE contains(folded, $t{i}))" for i in self.terms.scored
        )
        where = "" if self.session_id is None else " WHERE session_id = $session"
        return f"SELECT count(*), coalesce(sum(grams), 0){dfs} FROM {self.side}{where}"

    def top_sql(self) -> str:
        """The best rows' keys with their matched-term count and bm25, best first.

        The terms travel as list parameters and lambdas walk them, so the statement has
        the same small shape for any number of terms: spelled out term by term, DuckDB
        spent 15-25 ms planning the arithmetic, several times the scan.
        """
        keys = ", ".join(f"s.{key}" for key in self.keys)
        source = f"{self.side} AS s"
        if self.filters:
            on = " AND ".join(f"c.{key} = s.{key}" for key in self.keys)
            source += f" JOIN {self.table} AS c ON {on}"
        where = list(self.filters)
        if self.session_id is not None:
            where.insert(0, "s.session_id = $session")
        bm25 = _BM25 if self.terms.scored else "0.0"
        return (
            f"SELECT {', '.join(self.keys)}, _matched, _bm25 FROM (SELECT {keys}, "
            "len(list_filter($terms, lambda t: contains(folded, t))) AS _matched, "
            f"({bm25})::DOUBLE AS _bm25 FROM {source} WHERE {' AND '.join(where) or 'TRUE'}) "
            f"WHERE _matched > 0 ORDER BY _matched DESC, _bm25 DESC, {', '.join(self.keys)} "
            "LIMIT $limit"
        )

    def top_params(self, stats: tuple[Any, ...], limit: int) -> dict[str, Any]:
        """Parameters of `top_sql`, with idf and average length from the scope's statistics."""
        rows_in_scope, trigrams = float(stats[0]), float(stats[1])
        named: dict[str, Any] = {**self.params, "terms": list(self.terms.folded), "limit": limit}
        if self.session_id is not None:
            named["session"] = self.session_id
        if self.terms.scored:
            scored = [self.terms.folded[i] for i in self.terms.scored]
            named["scored"] = scored
            named["idfs"] = [_idf(rows_in_scope, float(df)) for df in stats[2:]]
            named["overlaps"] = [_has_border(term) for term in scored]
            named["avgdl"] = max(trigrams / max(rows_in_scope, 1.0), 1e-9)
        return named

    def rows_sql(self) -> str:
        """Whole content rows for a list of keys (one list per key column)."""
        lists = ", ".join(
            f"unnest(${key}::{'BIGINT' if key == 'seq' else 'VARCHAR'}[]) AS {key}"
            for key in self.keys
        )
        on = " AND ".join(f"c.{key} = k.{key}" for key in self.keys)
        return f"SELECT c.* FROM {self.table} AS c JOIN (SELECT {lists}) AS k ON {on}"


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
    """Rows of `table` containing any term, the best `limit` first, scored like SQLite's.

    `filters` are SQL conditions on the content table, alias `c`, using `params`.
    """
    terms = prepare_terms(raw_terms)
    if limit <= 0 or not terms.terms:
        return []
    plan = Plan(SEARCH_TABLES[table], table, keys, terms, session_id, tuple(filters), params)
    with db.guarded(f"search {table}") as raw:
        stats = raw.execute(plan.stats_sql(), plan.stats_params()).fetchone()
        if stats is None or not stats[0]:
            return []
        top = raw.execute(plan.top_sql(), plan.top_params(tuple(stats), int(limit))).fetchall()
        if not top:
            return []
        key_lists = {key: [row[i] for row in top] for i, key in enumerate(keys)}
        found = rows.fetch_dicts(raw.execute(plan.rows_sql(), key_lists))
    by_key = {tuple(row[key] for key in keys): row for row in found}
    scored: list[tuple[dict[str, Any], float]] = []
    for hit in top:
        row = by_key[tuple(hit[: len(keys)])]
        bm25 = max(float(hit[len(keys) + 1] or 0.0), 0.0)
        # The SQL ranked by the same two parts, so the limit kept the true best rows.
        scored.append((row, relevance(row[column], terms.terms, bm25)))
    return scored
