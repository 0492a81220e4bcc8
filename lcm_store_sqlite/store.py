"""`SQLiteMemoryStore`: the reference backend, an embedded SQLite file with FTS5 trigram search."""

from __future__ import annotations

import contextlib
import sqlite3
from collections.abc import Iterable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from lcm_core.clock import utc_now_iso
from lcm_core.store import rows
from lcm_core.store.errors import StoreConflictError, StoreNotFoundError
from lcm_core.store.models import (
    MAX_EVENT_TEXT,
    ArchiveEntry,
    Event,
    EventHit,
    ItemChange,
    ItemHit,
    MemoryEvent,
    MemoryItem,
)
from lcm_core.store.registry import store_url
from lcm_core.text.tokens import clamp_text, score_matches, scrub_surrogates, sha256_hex
from lcm_store_sqlite.connection import Connection
from lcm_store_sqlite.records import RecordsMixin
from lcm_store_sqlite.search import SplitTerms, contains_clause, fts_phrase, split_terms

# Sessions up to this many rows are searched by scanning them (see `_search`).
SCAN_ROWS_MAX = 20_000
# How far the scope count (the N of BM25) counts a big session.
SCOPE_COUNT_MAX = 1_000_000
# Terms combined in one statement; more are searched in further statements.
TERMS_PER_QUERY = 200

_INSERT_EVENT = (
    f"INSERT OR IGNORE INTO events ({rows.EVENT_COLUMNS}) "
    "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
)
_INSERT_ITEM = (
    f"INSERT INTO memory_items ({rows.ITEM_COLUMNS}) "
    "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
)


class SQLiteMemoryStore(RecordsMixin):
    """A `MemoryStore` on one SQLite file (or `:memory:`), schema v2, WAL mode."""

    def __init__(self, location: str | Path) -> None:
        self._db = Connection(str(location))
        self.url = store_url("sqlite", ":memory:" if self._db.in_memory else location)
        self.path: Path | None = None if self._db.in_memory else Path(location)

    def __repr__(self) -> str:
        return f"SQLiteMemoryStore({self._db.label!r})"

    # --- lifetime ----------------------------------------------------------------
    def transaction(self) -> contextlib.AbstractContextManager[None]:
        return self._db.transaction()

    def close(self) -> None:
        self._db.close()

    def __enter__(self) -> SQLiteMemoryStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # --- events ------------------------------------------------------------------
    def _prepare_event(self, event: Event) -> Event:
        """Apply the store's guarantees: text cut at the limit, a hash, a time of ingest."""
        text, cut = clamp_text(scrub_surrogates(event.text or ""), MAX_EVENT_TEXT)
        return replace(
            event,
            text=text,
            truncated=event.truncated or cut,
            content_hash=event.content_hash or sha256_hex(text),
            ingested_at=event.ingested_at or utc_now_iso(),
        )

    def insert_event(self, event: Event) -> bool:
        with self._db.transaction(), self._db.guarded("insert event") as raw:
            cursor = raw.execute(_INSERT_EVENT, rows.event_params(self._prepare_event(event)))
            return cursor.rowcount > 0

    def insert_events(self, events: Iterable[Event]) -> int:
        params = [rows.event_params(self._prepare_event(event)) for event in events]
        if not params:
            return 0
        with self._db.transaction(), self._db.guarded("insert events") as raw:
            # executemany sums the direct changes of each statement (trigger writes
            # to the FTS table are not counted), so ignored duplicates add nothing.
            return max(0, raw.executemany(_INSERT_EVENT, params).rowcount)

    def get_event(self, session_id: str, seq: int) -> Event | None:
        with self._db.guarded("get event") as raw:
            row = raw.execute(
                "SELECT * FROM events WHERE session_id = ? AND seq = ?", (session_id, seq)
            ).fetchone()
        return rows.event_from_row(row) if row else None

    def get_events(self, session_id: str, seqs: Sequence[int]) -> list[Event]:
        wanted = sorted({int(seq) for seq in seqs})
        found: list[Event] = []
        with self._db.guarded("get events") as raw:
            for start in range(0, len(wanted), 500):
                chunk = wanted[start : start + 500]
                marks = ",".join("?" * len(chunk))
                found.extend(
                    rows.event_from_row(row)
                    for row in raw.execute(
                        f"SELECT * FROM events WHERE session_id = ? AND seq IN ({marks}) "
                        "ORDER BY seq",
                        (session_id, *chunk),
                    )
                )
        return found

    def list_events(
        self,
        session_id: str,
        *,
        start_seq: int | None = None,
        end_seq: int | None = None,
        types: Sequence[str] | None = None,
        limit: int | None = None,
    ) -> list[Event]:
        clauses = ["session_id = ?"]
        params: list[Any] = [session_id]
        if start_seq is not None:
            clauses.append("seq >= ?")
            params.append(start_seq)
        if end_seq is not None:
            clauses.append("seq <= ?")
            params.append(end_seq)
        if types is not None:
            if not types:
                return []
            clauses.append(f"type IN ({','.join('?' * len(types))})")
            params.extend(types)
        sql = f"SELECT * FROM events WHERE {' AND '.join(clauses)} ORDER BY seq"
        if limit is not None:
            sql += " LIMIT ?"
            params.append(max(0, int(limit)))
        with self._db.guarded("list events") as raw:
            return [rows.event_from_row(row) for row in raw.execute(sql, params)]

    def max_event_seq(self, session_id: str) -> int | None:
        with self._db.guarded("max event seq") as raw:
            row = raw.execute(
                "SELECT MAX(seq) FROM events WHERE session_id = ?", (session_id,)
            ).fetchone()
        return None if row[0] is None else int(row[0])

    def search_events(
        self,
        session_id: str | None,
        terms: Sequence[str],
        *,
        types: Sequence[str] | None = None,
        limit: int = 50,
    ) -> list[EventHit]:
        filters: list[str] = []
        params: list[Any] = []
        if session_id is not None:
            filters.append("t.session_id = ?")
            params.append(session_id)
        if types is not None:
            if not types:
                return []
            filters.append(f"t.type IN ({','.join('?' * len(types))})")
            params.extend(types)
        scored = self._search("events", "events_fts", "text", terms, filters, params, limit)
        hits = [EventHit(rows.event_from_row(row), score) for row, score in scored]
        hits.sort(key=lambda hit: (-hit.score, hit.event.session_id, hit.event.seq))
        return hits[: max(0, limit)]

    # --- archive -----------------------------------------------------------------
    def put_archive(self, entry: ArchiveEntry) -> None:
        with self._db.transaction(), self._db.guarded("put archive") as raw:
            raw.execute(
                "INSERT OR IGNORE INTO archive (session_id, ref, text, created_at) "
                "VALUES (?, ?, ?, ?)",
                (
                    entry.session_id,
                    entry.ref,
                    scrub_surrogates(entry.text),
                    entry.created_at or utc_now_iso(),
                ),
            )

    def get_archive(self, session_id: str, ref: str) -> ArchiveEntry | None:
        with self._db.guarded("get archive") as raw:
            row = raw.execute(
                "SELECT * FROM archive WHERE session_id = ? AND ref = ?", (session_id, ref)
            ).fetchone()
        if row is None:
            return None
        return ArchiveEntry(row["session_id"], row["ref"], row["text"], row["created_at"])

    # --- memory items --------------------------------------------------------------
    def insert_item(self, item: MemoryItem, *, actor: str = "extractor") -> tuple[MemoryItem, bool]:
        now = utc_now_iso()
        item = replace(
            item,
            content=scrub_surrogates(item.content),
            created_at=item.created_at or now,
            updated_at=item.updated_at or item.created_at or now,
        )
        with self._db.transaction(), self._db.guarded("insert item") as raw:
            existing = raw.execute(
                "SELECT * FROM memory_items WHERE session_id = ? AND content_hash = ? "
                "AND status = 'active'",
                (item.session_id, item.content_hash),
            ).fetchone()
            if existing is not None and item.status == "active":
                return rows.item_from_row(existing), False
            if raw.execute("SELECT 1 FROM memory_items WHERE id = ?", (item.id,)).fetchone():
                raise StoreConflictError(f"memory item {item.id} already exists")
            raw.execute(_INSERT_ITEM, rows.item_params(item))
            self._append_memory_event(
                raw,
                MemoryEvent(item.id, item.session_id, "created", actor=actor, at=item.created_at),
            )
        return item, True

    def get_item(self, item_id: str) -> MemoryItem | None:
        with self._db.guarded("get item") as raw:
            row = raw.execute("SELECT * FROM memory_items WHERE id = ?", (item_id,)).fetchone()
        return rows.item_from_row(row) if row else None

    def list_items(
        self,
        session_id: str | None = None,
        *,
        statuses: Sequence[str] | None = None,
        kinds: Sequence[str] | None = None,
    ) -> list[MemoryItem]:
        clauses: list[str] = []
        params: list[Any] = []
        if session_id is not None:
            clauses.append("session_id = ?")
            params.append(session_id)
        for column, values in (("status", statuses), ("kind", kinds)):
            if values is not None:
                if not values:
                    return []
                clauses.append(f"{column} IN ({','.join('?' * len(values))})")
                params.extend(values)
        where = f"WHERE {' AND '.join(clauses)}" if clauses else ""
        with self._db.guarded("list items") as raw:
            return [
                rows.item_from_row(row)
                for row in raw.execute(
                    f"SELECT * FROM memory_items {where} ORDER BY created_at, id", params
                )
            ]

    def update_item(self, item_id: str, change: ItemChange, event: MemoryEvent) -> MemoryItem:
        with self._db.transaction(), self._db.guarded("update item") as raw:
            row = raw.execute("SELECT * FROM memory_items WHERE id = ?", (item_id,)).fetchone()
            if row is None:
                raise StoreNotFoundError(f"no memory item {item_id}")
            current = rows.item_from_row(row)
            at = event.at or utc_now_iso()
            superseded_by = current.superseded_by
            if change.clear_superseded_by:
                superseded_by = None
            if change.superseded_by is not None:
                superseded_by = change.superseded_by
            updated = replace(
                current,
                status=change.status or current.status,
                superseded_by=superseded_by,
                evidence_type=change.evidence_type or current.evidence_type,
                kind=change.kind or current.kind,
                supersedes=current.supersedes if change.supersedes is None else change.supersedes,
                updated_at=at,
            )
            try:
                raw.execute(
                    "UPDATE memory_items SET status = ?, superseded_by = ?, evidence_type = ?, "
                    "kind = ?, supersedes_json = ?, updated_at = ? WHERE id = ?",
                    (
                        updated.status,
                        updated.superseded_by,
                        updated.evidence_type,
                        updated.kind,
                        rows.dumps(list(updated.supersedes)),
                        updated.updated_at,
                        item_id,
                    ),
                )
            except sqlite3.IntegrityError as exc:
                raise StoreConflictError(
                    f"memory item {item_id}: another active item has the same content"
                ) from exc
            self._append_memory_event(
                raw, replace(event, memory_id=item_id, session_id=current.session_id, at=at)
            )
        return updated

    @staticmethod
    def _append_memory_event(raw: sqlite3.Connection, event: MemoryEvent) -> None:
        raw.execute(
            "INSERT INTO memory_events (memory_id, session_id, event, at, actor, detail_json) "
            "VALUES (?, ?, ?, ?, ?, ?)",
            (
                event.memory_id,
                event.session_id,
                event.event,
                event.at or utc_now_iso(),
                event.actor,
                rows.dumps(event.detail),
            ),
        )

    def list_memory_events(
        self, *, memory_id: str | None = None, session_id: str | None = None
    ) -> list[MemoryEvent]:
        clauses: list[str] = []
        params: list[Any] = []
        if memory_id is not None:
            clauses.append("memory_id = ?")
            params.append(memory_id)
        if session_id is not None:
            clauses.append("session_id = ?")
            params.append(session_id)
        where = f"WHERE {' AND '.join(clauses)}" if clauses else ""
        with self._db.guarded("list memory events") as raw:
            return [
                rows.memory_event_from_row(row)
                for row in raw.execute(f"SELECT * FROM memory_events {where} ORDER BY id", params)
            ]

    def search_items(
        self,
        session_id: str | None,
        terms: Sequence[str],
        *,
        statuses: Sequence[str] = ("active",),
        kinds: Sequence[str] | None = None,
        limit: int = 100,
    ) -> list[ItemHit]:
        filters: list[str] = []
        params: list[Any] = []
        if session_id is not None:
            filters.append("t.session_id = ?")
            params.append(session_id)
        for column, values in (("status", statuses), ("kind", kinds)):
            if values is not None:
                if not values:
                    return []
                filters.append(f"t.{column} IN ({','.join('?' * len(values))})")
                params.extend(values)
        scored = self._search(
            "memory_items", "memory_fts", "content", terms, filters, params, limit
        )
        hits = [ItemHit(rows.item_from_row(row), score) for row, score in scored]
        hits.sort(key=lambda hit: (-hit.score, hit.item.id))
        return hits[: max(0, limit)]

    # --- search ------------------------------------------------------------------
    def _fts_phrase(self, term: str) -> str:
        """The FTS5 literal for one term (a seam the conformance suite's bite test breaks)."""
        return fts_phrase(term)

    def _search(
        self,
        table: str,
        fts_table: str,
        column: str,
        terms: Sequence[str],
        filters: list[str],
        params: list[Any],
        limit: int,
    ) -> list[tuple[sqlite3.Row, float]]:
        """Rows containing any term, scored by `score_matches` over the matching rows.

        A session small enough is scanned with LIKE: cheap, exact, and independent of
        how many other sessions the file holds (the FTS index does not know sessions,
        so a MATCH there walks every session's postings). Larger scopes use the
        trigram index for long terms and LIKE for short ones, each with a bounded
        candidate list.
        """
        split = split_terms(terms)
        all_terms = split.fts + split.like
        if limit <= 0 or not all_terms:
            return []
        where = "".join(f" AND {clause}" for clause in filters)
        with self._db.guarded(f"search {table}") as raw:
            scope = self._scope_rows(raw, table, filters, params)
            if self._scannable(raw, table, filters, params, scope):
                # Score every match from its text alone, then read whole rows only for
                # the best `limit` (and any tied with the last): common terms can match
                # hundreds of rows, and building each one is the slow part.
                texts = self._like_rows(
                    raw, table, column, all_terms, where, params, None, f"t.{column}"
                )
                scored = dict(
                    zip(texts, score_matches(list(texts.values()), all_terms, scope), strict=True)
                )
                best = _best_keys(scored, limit)
                rows = self._rows_by_id(raw, table, best)
                return [(rows[rowid], scored[rowid]) for rowid in best]
            found = self._indexed_rows(raw, table, fts_table, column, split, where, params, limit)
        rows_found = list(found.values())
        scores = score_matches([row[column] for row in rows_found], all_terms, scope)
        return list(zip(rows_found, scores, strict=True))

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
        raw: sqlite3.Connection, table: str, filters: list[str], params: list[Any], scope: int
    ) -> bool:
        """Whether the rows the filters leave in one session are few enough to scan."""
        if not filters or filters[0] != "t.session_id = ?":
            return False
        if scope <= SCAN_ROWS_MAX:
            return True
        if len(filters) == 1:
            return False
        # A big session may still hold few rows of the kind asked for (its user messages,
        # say): the (session, type) and (session, status) indexes count those cheaply.
        sql = (
            f"SELECT COUNT(*) FROM (SELECT 1 FROM {table} AS t "
            f"WHERE {' AND '.join(filters)} LIMIT ?)"
        )
        return int(raw.execute(sql, (*params, SCAN_ROWS_MAX + 1)).fetchone()[0]) <= SCAN_ROWS_MAX

    @staticmethod
    def _like_rows(
        raw: sqlite3.Connection,
        table: str,
        column: str,
        terms: Sequence[str],
        where: str,
        params: list[Any],
        limit: int | None,
        select: str = "t.*",
    ) -> dict[int, Any]:
        """Rows (or one `select`ed value per row) that contain any term, by rowid."""
        found: dict[int, Any] = {}
        # SQLite caps an expression's depth at 1000: OR at most TERMS_PER_QUERY at a time.
        for start in range(0, len(terms), TERMS_PER_QUERY):
            chunk = terms[start : start + TERMS_PER_QUERY]
            clauses, patterns = zip(
                *(contains_clause(f"t.{column}", term) for term in chunk), strict=True
            )
            sql = (
                f"SELECT t.rowid AS _rowid, {select} FROM {table} AS t "
                f"WHERE ({' OR '.join(clauses)}){where} ORDER BY t.rowid"
            )
            args: list[Any] = [*patterns, *params]
            if limit is not None:
                sql += " LIMIT ?"
                args.append(limit)
            for row in raw.execute(sql, args):
                found.setdefault(row[0], row if select == "t.*" else row[1])
        return found

    def _indexed_rows(
        self,
        raw: sqlite3.Connection,
        table: str,
        fts_table: str,
        column: str,
        split: SplitTerms,
        where: str,
        params: list[Any],
        limit: int,
    ) -> dict[int, sqlite3.Row]:
        # A generous candidate list: rows are ranked again once every term is counted.
        inner_limit = max(limit * 4, 50)
        found: dict[int, sqlite3.Row] = {}
        for start in range(0, len(split.fts), TERMS_PER_QUERY):
            chunk = split.fts[start : start + TERMS_PER_QUERY]
            match = " OR ".join(self._fts_phrase(term) for term in chunk)
            sql = (
                f"SELECT t.rowid AS _rowid, t.* FROM {fts_table} "
                f"JOIN {table} AS t ON t.rowid = {fts_table}.rowid "
                f"WHERE {fts_table} MATCH ?{where} ORDER BY rank LIMIT ?"
            )
            for row in raw.execute(sql, (match, *params, inner_limit)):
                found.setdefault(row["_rowid"], row)
        if split.like:
            more = self._like_rows(raw, table, column, split.like, where, params, inner_limit)
            for rowid, row in more.items():
                found.setdefault(rowid, row)
        return found

    # --- extras ------------------------------------------------------------------
    def introspect(self) -> dict[str, Any]:
        """Tables with row counts, triggers and each table's FTS table, by sqlite-utils.

        Only `lcm doctor` calls this, so sqlite-utils (~80 ms to import) is loaded here
        and never on the capture, pre-step, search or hook paths; it is used because its
        FTS detection is the one sqlite-utils and Datasette apply to this file.
        """
        import sqlite_utils

        with self._db.guarded("introspect") as raw:
            db = sqlite_utils.Database(raw)
            names = db.table_names()
            virtual = [n for n in names if db.table(n).virtual_table_using]
            # Content tables only: not the FTS tables themselves nor their shadow tables.
            plain = [n for n in names if not any(n.startswith(v) for v in virtual)]
            return {
                "tables": {name: db.table(name).count for name in names},
                "triggers": sorted(trigger.name for trigger in db.triggers),
                "fts": {name: db.table(name).detect_fts() for name in plain},
            }

    def vacuum(self) -> None:
        """Reclaim free pages, then rebuild the FTS indexes (VACUUM may renumber rowids)."""
        with self._db.guarded("vacuum") as raw:
            raw.execute("VACUUM")
            raw.execute("INSERT INTO events_fts (events_fts) VALUES ('rebuild')")
            raw.execute("INSERT INTO memory_fts (memory_fts) VALUES ('rebuild')")

    def backup(self, path: Path) -> None:
        """Write a consistent copy of the database to `path`."""
        target = sqlite3.connect(str(path))
        try:
            with self._db.guarded("backup") as raw:
                raw.backup(target)
        finally:
            target.close()

    def shares_file(self) -> bool:
        return not self._db.in_memory


def _best_keys(scores: dict[int, float], limit: int) -> list[int]:
    """The `limit` best-scored keys plus any tied with the last one, best first."""
    ordered = sorted(scores, key=lambda key: (-scores[key], key))
    if len(ordered) <= limit:
        return ordered
    cutoff = scores[ordered[limit - 1]]
    return [key for key in ordered if scores[key] >= cutoff]
