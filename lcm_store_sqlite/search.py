"""Term search in SQLite: safe FTS5 and LIKE clauses over the trigram index, and the scan."""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from lcm_core.store.queries import SCOPE_COUNT_MAX, SplitTerms, Where, split_terms
from lcm_core.store.sql_reads import Among
from lcm_core.text.tokens import best_matches
from lcm_store_sqlite.connection import DIALECT
from lcm_store_sqlite.like import TERMS_PER_QUERY, Searched, fts_phrase
from lcm_store_sqlite.pairs import is_pair_term, pair_rows

if TYPE_CHECKING:
    from lcm_store_sqlite.connection import Connection
    from lcm_store_sqlite.session_cache import SessionCache


# Terms of a query that each bring a full candidate list from the trigram index.
FULL_TERMS = 8


# The filters an item search over a session's copy applies (`session_cache.CachedItems`).
_ITEM_FILTERS = frozenset({"status", "kind"})
# Per searched table: its FTS5 index and the column it indexes.
_INDEXED = {"events": ("events_fts", "text"), "memory_items": ("memory_fts", "content")}


class SearchMixin:
    """Term search over a content table and its FTS5 index; needs `self._db`."""

    _db: Connection
    _scan_rows_max: int
    _sessions: SessionCache

    def _scored(
        self, table: str, session_id: str | None, terms: Sequence[str], among: Among, limit: int
    ) -> list[tuple[sqlite3.Row, float]]:
        """Rows of `table` holding any term, scored (the hook of `SqlReads`' searches)."""
        if table == "events" and session_id is not None and set(among) <= {"type"}:
            with self._db.guarded("search events") as raw:
                cached = self._sessions.session(raw, session_id)
                if cached is not None:  # the scan below, on the session's copy
                    return cached.best(terms, among, limit)
        if table == "memory_items" and session_id is not None and set(among) <= _ITEM_FILTERS:
            with self._db.guarded("search items") as raw:
                items = self._sessions.items(raw, session_id)
                if items is not None:
                    return items.best(terms, among, limit)
        where = Where(DIALECT, "t.")
        where.compare("session_id", session_id)
        for column, values in among.items():
            where.among(column, values)
        fts_table, column = _INDEXED[table]
        return self._search(table, fts_table, column, terms, where, limit)

    def _fts_phrase(self, term: str) -> str:
        """The FTS5 literal for one term (a seam the conformance suite's bite test breaks)."""
        return fts_phrase(term)

    def _search(
        self,
        table: str,
        fts_table: str,
        column: str,
        terms: Sequence[str],
        filters: Where,
        limit: int,
    ) -> list[tuple[sqlite3.Row, float]]:
        """Rows containing any term, the best `limit` by `best_matches` over the matching rows.

        A session small enough is scanned with LIKE: cheap, exact, and independent of
        how many other sessions the file holds (the FTS index does not know sessions,
        so a MATCH there walks every session's postings). Larger scopes use the
        trigram index for long terms and LIKE for short ones, each with a bounded
        candidate list. `filters` has the alias `t.` on the content table.
        """
        params = filters.params
        split = split_terms(terms)
        all_terms = split.indexed + split.short
        if limit <= 0 or not all_terms:
            return []
        where = "".join(f" AND {clause}" for clause in filters.clauses)
        with self._db.guarded(f"search {table}") as raw:
            searched = Searched(raw, table, fts_table, column, where, params)
            scope = self._scope_rows(raw, table, filters.clauses, params)
            if self._scannable(raw, table, filters.clauses, params, scope, self._scan_rows_max):
                texts = self._like_rows(searched, all_terms, None)
            else:
                texts = self._indexed_texts(searched, split, limit)
            # Score every match from its text alone, then read whole rows only for the
            # best `limit` (and any tied with the last): common terms can match hundreds
            # or thousands of rows, and building each one is the slow part.
            rowids = list(texts)
            best = best_matches(list(texts.values()), all_terms, scope, limit)
            rows = self._rows_by_id(raw, table, [rowids[i] for i, _ in best])
        # A row another connection removed between the two reads is no longer a match.
        return [(rows[rowids[i]], score) for i, score in best if rowids[i] in rows]

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
    def _like_rows(searched: Searched, terms: Sequence[str], limit: int | None) -> dict[int, str]:
        """rowid -> text of the rows that contain any term; with a `limit`, the newest
        `limit` of them."""
        found: dict[int, str] = {}
        # SQLite caps an expression's depth at 1000: OR at most TERMS_PER_QUERY at a time.
        for start in range(0, len(terms), TERMS_PER_QUERY):
            test, patterns = searched.any_of(terms[start : start + TERMS_PER_QUERY])
            sql = (
                f"SELECT t.rowid, t.{searched.column} FROM {searched.table} AS t "
                f"WHERE {test}{searched.where}"
            )
            args: list[Any] = [*patterns, *searched.params]
            if limit is not None:
                sql += " ORDER BY t.rowid DESC LIMIT ?"
                args.append(limit)
            # Without a limit the rows are put in rowid order here: asked for in SQL, the
            # order makes the planner walk the whole table in rowid order instead of the
            # session's index (6 ms instead of 1.7 in a 10k-event file).
            for rowid, text in searched.raw.execute(sql, args):
                found.setdefault(rowid, text)
        if limit is None:
            return dict(sorted(found.items()))
        return found

    def _indexed_texts(self, searched: Searched, split: SplitTerms, limit: int) -> dict[int, str]:
        """rowid -> text of the candidates the index path scores (`_fts_rows`, `_short_rows`)."""
        # A generous candidate list: rows are ranked again once every term is counted.
        inner_limit = max(limit * 4, 50)
        found = self._fts_rows(searched, split.indexed, inner_limit)
        if split.short:
            for rowid, text in self._short_rows(searched, split.short, inner_limit):
                found.setdefault(rowid, text)
        return found

    def _fts_rows(self, searched: Searched, terms: Sequence[str], limit: int) -> dict[int, str]:
        """For each term, the newest `limit` rows holding it (rowid -> text): the
        candidates to score.

        Per term and newest first, not the best by the index's rank over an OR of every
        term: ranking visits every row that holds any term (a word in a third of 250 000
        items cost 200 ms), while this stops after `limit` rows of each term. A rare
        term brings all its rows, a common one its newest; the core scores them all.
        A long query (past `FULL_TERMS` terms) reads fewer rows per term, at least 50.
        """
        each = max(50, limit * FULL_TERMS // max(FULL_TERMS, len(terms)))
        found: dict[int, str] = {}
        fts_table = searched.fts_table
        sql = (
            f"SELECT t.rowid, t.{searched.column} FROM {fts_table} "
            f"JOIN {searched.table} AS t ON t.rowid = {fts_table}.rowid "
            f"WHERE {fts_table} MATCH ?{searched.where} ORDER BY {fts_table}.rowid DESC LIMIT ?"
        )
        for term in terms:
            args = (self._fts_phrase(term), *searched.params, each)
            for rowid, text in searched.raw.execute(sql, args):
                found.setdefault(rowid, text)
        return found

    def _short_rows(
        self, searched: Searched, terms: Sequence[str], limit: int
    ) -> list[tuple[int, str]]:
        """The newest `limit` rows holding any term too short for trigrams (rowid, text).

        Two-character terms go through the trigram index's vocabulary (`pairs`) instead
        of a LIKE over the whole table; the newest `limit` of the union are the newest
        `limit` of each part's newest `limit`.
        """
        paired = [t for t in terms if is_pair_term(t)]
        scanned = [t for t in terms if t not in paired]
        rows: dict[int, str] = {}
        if scanned:
            rows.update(self._like_rows(searched, scanned, limit))
        for start in range(0, len(paired), TERMS_PER_QUERY):
            rows.update(pair_rows(searched, paired[start : start + TERMS_PER_QUERY], limit))
        return sorted(rows.items(), reverse=True)[:limit]
