"""Term search in SQLite: the core's match rule over a session's rows, or over index candidates.

Every path ends in the core's rule (`lcm_core.store.matching`: a term matches when its
casefold is in the text's casefold) and scorer (`best_matches`). What differs is where
the rows come from:

- a session small enough (`matching.SCAN_ROWS_MAX` rows after the filters) yields all
  its rows: from the handle's copy of the session when it keeps one (`session_cache`,
  the declared speed layer), else read with SQL, and matched in Python;
- a larger scope (no session, or a bigger one) yields the rule's candidates: each long
  term's newest rows from the trigram index, and the short terms' newest rows by LIKE
  or through the index's vocabulary (`pairs`). Both fold less than casefold (the index
  letter by letter, LIKE ASCII only), so each term is asked in the spellings that fold
  to its casefold there (`spellings`: `strasse` also as `straße`, `é` also as `É`),
  and every candidate is checked by the core's rule; `spellings` names what stays out
  of the index's reach.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from lcm_core.store.matching import (
    SCAN_ROWS_MAX,
    SCOPE_COUNT_MAX,
    SplitTerms,
    candidate_pool,
    candidates_per_term,
    fold,
    fold_keys,
    holds_any,
    split_terms,
)
from lcm_core.store.queries import Where
from lcm_core.store.sql_reads import Among
from lcm_core.text.tokens import best_matches
from lcm_store_sqlite.connection import DIALECT
from lcm_store_sqlite.like import TERMS_PER_QUERY, Searched, fts_phrase
from lcm_store_sqlite.pairs import is_pair_term, pair_rows
from lcm_store_sqlite.spellings import index_spellings, like_spellings

if TYPE_CHECKING:
    from lcm_store_sqlite.connection import Connection
    from lcm_store_sqlite.session_cache import SessionCache


# The filters an item search over a session's copy applies (`session_cache.CachedItems`).
_ITEM_FILTERS = frozenset({"status", "kind"})
# Per searched table: its FTS5 index and the column it indexes.
_INDEXED = {"events": ("events_fts", "text"), "memory_items": ("memory_fts", "content")}


class SearchMixin:
    """Term search over a content table and its FTS5 index; needs `self._db`."""

    _db: Connection
    _scan_rows_max: int = SCAN_ROWS_MAX
    _sessions: SessionCache

    def _scored(
        self, table: str, session_id: str | None, terms: Sequence[str], among: Among, limit: int
    ) -> list[tuple[Any, float]]:
        """Rows of `table` holding any term, scored (the hook of `SqlReads`' searches)."""
        split = split_terms(terms)
        if limit <= 0 or not split.ordered:
            return []
        if table == "events" and session_id is not None and set(among) <= {"type"}:
            with self._db.guarded("search events") as raw:
                cached = self._sessions.session(raw, session_id)
                if cached is not None:  # the scan below, on the session's copy
                    return cached.best(split.ordered, among, limit)
        if table == "memory_items" and session_id is not None and set(among) <= _ITEM_FILTERS:
            with self._db.guarded("search items") as raw:
                items = self._sessions.items(raw, session_id)
                if items is not None:
                    return items.best(split.ordered, among, limit)
        where = Where(DIALECT, "t.")
        where.compare("session_id", session_id)
        for column, values in among.items():
            where.among(column, values)
        fts_table, column = _INDEXED[table]
        return self._search(table, fts_table, column, split, where, limit)

    def _fts_phrase(self, term: str) -> str:
        """The FTS5 literal for one term (a seam the conformance suite's bite test breaks)."""
        return fts_phrase(term)

    def _search(
        self, table: str, fts_table: str, column: str, split: SplitTerms, filters: Where, limit: int
    ) -> list[tuple[sqlite3.Row, float]]:
        """Rows matching any term, the best `limit` by `best_matches` over what the scope
        yields (see the module docstring); `filters` has the alias `t.`."""
        params = filters.params
        where = "".join(f" AND {clause}" for clause in filters.clauses)
        terms = split.ordered
        keys = fold_keys(terms)
        with self._db.guarded(f"search {table}") as raw:
            searched = Searched(raw, table, fts_table, column, where, params)
            scope = self._scope_rows(raw, table, filters.clauses, params)
            if self._scannable(raw, table, filters.clauses, params, scope, self._scan_rows_max):
                texts = self._scope_texts(searched, filters.clauses)
            else:
                texts = self._indexed_texts(searched, split, limit)
            rowids: list[int] = []
            folded: list[str] = []
            kept: list[str] = []
            for rowid, text in texts.items():
                low = fold(text)
                if holds_any(low, keys):
                    rowids.append(rowid)
                    folded.append(low)
                    kept.append(text)
            # Score every match from its text alone, then read whole rows only for the
            # best `limit` (and any tied with the last): common terms can match hundreds
            # or thousands of rows, and building each one is the slow part.
            best = best_matches(kept, terms, scope, limit, folded=folded)
            rows = self._rows_by_id(raw, table, [rowids[i] for i, _ in best])
        # A row another connection removed between the two reads is no longer a match.
        return [(rows[rowids[i]], score) for i, score in best if rowids[i] in rows]

    @staticmethod
    def _scope_texts(searched: Searched, filters: list[str]) -> dict[int, str]:
        """rowid -> text of every row the filters leave, in rowid order (a session's)."""
        test = " AND ".join(filters)
        sql = f"SELECT t.rowid, t.{searched.column} FROM {searched.table} AS t WHERE {test}"
        # Put in rowid order here: asked for in SQL, the order makes the planner walk the
        # whole table in rowid order instead of the session's index.
        return dict(
            sorted((int(r[0]), str(r[1])) for r in searched.raw.execute(sql, searched.params))
        )

    @staticmethod
    def _rows_by_id(raw: sqlite3.Connection, table: str, rowids: Sequence[int]) -> dict[int, Any]:
        found: dict[int, Any] = {}
        for start in range(0, len(rowids), 500):
            chunk = rowids[start : start + 500]
            marks = ",".join("?" * len(chunk))
            for row in raw.execute(
                f"SELECT t.rowid AS _rowid, t.* FROM {table} AS t WHERE t.rowid IN ({marks})", chunk
            ):
                found[row["_rowid"]] = row
        return found

    @staticmethod
    def _scope_rows(
        raw: sqlite3.Connection, table: str, filters: list[str], params: list[Any]
    ) -> int:
        """Rows of the table in the searched session (all of it without one), capped."""
        if filters and filters[0] == "t.session_id = ?":
            sql = (
                f"SELECT COUNT(*) FROM (SELECT 1 FROM {table} AS t WHERE t.session_id = ? LIMIT ?)"
            )
            return int(raw.execute(sql, (params[0], SCOPE_COUNT_MAX)).fetchone()[0])
        return int(raw.execute(f"SELECT MAX(rowid) FROM {table}").fetchone()[0] or 0)

    @staticmethod
    def _scannable(
        raw: sqlite3.Connection,
        table: str,
        filters: list[str],
        params: list[Any],
        scope: int,
        most: int,
    ) -> bool:
        """Whether the rows the filters leave in one session are at most `most`, to scan."""
        if not filters or filters[0] != "t.session_id = ?":
            return False
        if scope <= most:
            return True
        if len(filters) == 1:
            return False
        # A big session may still hold few rows of the kind asked for (its user messages,
        # say): the (session, type) and (session, status) indexes count those cheaply.
        sql = (
            f"SELECT COUNT(*) FROM (SELECT 1 FROM {table} AS t "
            f"WHERE {' AND '.join(filters)} LIMIT ?)"
        )
        return int(raw.execute(sql, (*params, most + 1)).fetchone()[0]) <= most

    @staticmethod
    def _like_rows(searched: Searched, terms: Sequence[str], limit: int) -> dict[int, str]:
        """rowid -> text of the newest `limit` rows that contain any term (LIKE's rule)."""
        found: dict[int, str] = {}
        # SQLite caps an expression's depth at 1000: OR at most TERMS_PER_QUERY at a time.
        for start in range(0, len(terms), TERMS_PER_QUERY):
            test, patterns = searched.any_of(terms[start : start + TERMS_PER_QUERY])
            sql = (
                f"SELECT t.rowid, t.{searched.column} FROM {searched.table} AS t "
                f"WHERE {test}{searched.where} ORDER BY t.rowid DESC LIMIT ?"
            )
            for rowid, text in searched.raw.execute(sql, [*patterns, *searched.params, limit]):
                found.setdefault(rowid, text)
        return found

    def _indexed_texts(self, searched: Searched, split: SplitTerms, limit: int) -> dict[int, str]:
        """rowid -> text of the candidates of a large scope (`_fts_rows`, `_short_rows`)."""
        found = self._fts_rows(
            searched, split.indexed, candidates_per_term(limit, len(split.indexed))
        )
        if split.short:
            for rowid, text in self._short_rows(searched, split.short, candidate_pool(limit)):
                found.setdefault(rowid, text)
        return found

    def _fts_rows(self, searched: Searched, terms: Sequence[str], each: int) -> dict[int, str]:
        """For each term, the newest `each` rows the index finds holding it (rowid -> text).

        Per term and newest first, not the best by the index's rank over an OR of every
        term: ranking visits every row that holds any term (a word in a third of 250 000
        items cost 200 ms), while this stops after `each` rows of each term. A rare term
        brings all its rows, a common one its newest; the core scores them all.
        """
        found: dict[int, str] = {}
        fts_table = searched.fts_table
        sql = (
            f"SELECT t.rowid, t.{searched.column} FROM {fts_table} "
            f"JOIN {searched.table} AS t ON t.rowid = {fts_table}.rowid "
            f"WHERE {fts_table} MATCH ?{searched.where} ORDER BY {fts_table}.rowid DESC LIMIT ?"
        )
        for term in terms:
            for spelled in index_spellings(term):
                args = (self._fts_phrase(spelled), *searched.params, each)
                for rowid, text in searched.raw.execute(sql, args):
                    found.setdefault(rowid, text)
        return found

    def _short_rows(
        self, searched: Searched, terms: Sequence[str], limit: int
    ) -> list[tuple[int, str]]:
        """The newest `limit` rows holding any term too short for trigrams (rowid, text),
        each term asked in every spelling LIKE tells apart (`spellings.like_spellings`).

        Two-character terms go through the trigram index's vocabulary (`pairs`) instead
        of a LIKE over the whole table; the newest `limit` of the union are the newest
        `limit` of each part's newest `limit`.
        """
        spelled = list(dict.fromkeys(v for term in terms for v in like_spellings(term)))
        paired = [t for t in spelled if is_pair_term(t)]
        scanned = [t for t in spelled if t not in paired]
        rows: dict[int, str] = {}
        if scanned:
            rows.update(self._like_rows(searched, scanned, limit))
        for start in range(0, len(paired), TERMS_PER_QUERY):
            rows.update(pair_rows(searched, paired[start : start + TERMS_PER_QUERY], limit))
        return sorted(rows.items(), reverse=True)[:limit]
