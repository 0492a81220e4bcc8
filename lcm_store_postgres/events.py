"""Events and the archive in PostgreSQL: batched idempotent inserts, reads, search."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

from lcm_core.clock import utc_now_iso
from lcm_core.store import records, rows
from lcm_core.store.models import ArchiveEntry, Event, EventHit
from lcm_core.text.tokens import scrub_surrogates
from lcm_store_postgres.search import fold, run_search

if TYPE_CHECKING:
    from lcm_store_postgres.connection import Connection

# One INSERT of many events: each column travels as one array, so a batch of any size is
# one statement and one round trip, and `rowcount` counts exactly the new rows.
_EVENT_TYPES = [
    "text",
    "bigint",
    "text",
    "text",
    "bigint",
    "bigint",
    "text",
    "text",
    "text",
    "text",
    "text",
    "text",
    "text",
    "text",
    "bigint",
    "text",
    "text",
]
_INSERT_EVENTS = (
    f"INSERT INTO events ({rows.EVENT_COLUMNS}, folded) SELECT * FROM unnest("
    + ", ".join(f"%s::{kind}[]" for kind in _EVENT_TYPES)
    + ") ON CONFLICT DO NOTHING"
)


def storable(text: str) -> str:
    """Text PostgreSQL can hold: surrogates scrubbed, NUL (never valid in `text`) as U+FFFD."""
    return scrub_surrogates(text).replace("\x00", "\ufffd")


class EventsMixin:
    """Events and archive entries; needs `self._db`."""

    _db: Connection

    # --- events ------------------------------------------------------------------
    def insert_event(self, event: Event) -> bool:
        return self.insert_events([event]) > 0

    def insert_events(self, events: Iterable[Event]) -> int:
        prepared = [records.prepare_event(event, storable) for event in events]
        if not prepared:
            return 0
        columns: list[list[Any]] = [[] for _ in _EVENT_TYPES]
        for event in prepared:
            for column, value in zip(
                columns, (*rows.event_params(event), fold(event.text)), strict=True
            ):
                column.append(value)
        with self._db.transaction(), self._db.guarded("insert events") as raw:
            return max(0, raw.execute(_INSERT_EVENTS, columns).rowcount)

    def get_event(self, session_id: str, seq: int) -> Event | None:
        with self._db.guarded("get event") as raw:
            row = raw.execute(
                "SELECT * FROM events WHERE session_id = %s AND seq = %s", (session_id, seq)
            ).fetchone()
        return rows.event_from_row(row) if row else None

    def get_events(self, session_id: str, seqs: Sequence[int]) -> list[Event]:
        wanted = sorted({int(seq) for seq in seqs})
        with self._db.guarded("get events") as raw:
            found = raw.execute(
                "SELECT * FROM events WHERE session_id = %s AND seq = ANY(%s) ORDER BY seq",
                (session_id, wanted),
            ).fetchall()
        return [rows.event_from_row(row) for row in found]

    def list_events(
        self,
        session_id: str,
        *,
        start_seq: int | None = None,
        end_seq: int | None = None,
        types: Sequence[str] | None = None,
        limit: int | None = None,
    ) -> list[Event]:
        clauses = ["session_id = %s"]
        params: list[Any] = [session_id]
        if start_seq is not None:
            clauses.append("seq >= %s")
            params.append(start_seq)
        if end_seq is not None:
            clauses.append("seq <= %s")
            params.append(end_seq)
        if types is not None:
            if not types:
                return []
            clauses.append("type = ANY(%s)")
            params.append(list(types))
        sql = f"SELECT * FROM events WHERE {' AND '.join(clauses)} ORDER BY seq"
        if limit is not None:
            sql += " LIMIT %s"
            params.append(max(0, int(limit)))
        with self._db.guarded("list events") as raw:
            return [rows.event_from_row(row) for row in raw.execute(sql, params)]

    def max_event_seq(self, session_id: str) -> int | None:
        with self._db.guarded("max event seq") as raw:
            row = raw.execute(
                "SELECT max(seq) AS m FROM events WHERE session_id = %s", (session_id,)
            ).fetchone()
        return None if row is None or row["m"] is None else int(row["m"])

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
        if types is not None:
            if not types:
                return []
            filters.append("t.type = ANY(%s)")
            params.append(list(types))
        with self._db.guarded("search events") as raw:
            scored = run_search(
                raw,
                "events",
                ("session_id", "seq"),
                "text",
                terms,
                session_id,
                filters,
                params,
                limit,
            )
        hits = [EventHit(rows.event_from_row(row), score) for row, score in scored]
        hits.sort(key=lambda hit: (-hit.score, hit.event.session_id, hit.event.seq))
        return hits[: max(0, limit)]

    # --- archive -----------------------------------------------------------------
    def put_archive(self, entry: ArchiveEntry) -> None:
        with self._db.transaction(), self._db.guarded("put archive") as raw:
            raw.execute(
                "INSERT INTO archive (session_id, ref, text, created_at) "
                "VALUES (%s, %s, %s, %s) ON CONFLICT DO NOTHING",
                (
                    entry.session_id,
                    entry.ref,
                    storable(entry.text),
                    entry.created_at or utc_now_iso(),
                ),
            )

    def forget_event(self, session_id: str, seq: int) -> Event | None:
        key = (session_id, seq)
        with self._db.transaction(), self._db.guarded("forget event") as raw:
            row = raw.execute(
                "SELECT * FROM events WHERE session_id = %s AND seq = %s FOR UPDATE", key
            ).fetchone()
            if row is None:
                return None
            gone = records.erase_event(rows.event_from_row(row))
            erased = records.erased_event_record(gone)
            raw.execute(
                f"UPDATE events SET {records.set_clause(erased, '%s')}, folded = '' "
                "WHERE session_id = %s AND seq = %s",
                (*erased.values(), *key),
            )
            raw.execute(
                "DELETE FROM archive WHERE session_id = %s AND ref = %s",
                (session_id, f"seq:{seq}"),
            )
        return gone

    def get_archive(self, session_id: str, ref: str) -> ArchiveEntry | None:
        with self._db.guarded("get archive") as raw:
            row = raw.execute(
                "SELECT * FROM archive WHERE session_id = %s AND ref = %s", (session_id, ref)
            ).fetchone()
        if row is None:
            return None
        return ArchiveEntry(row["session_id"], row["ref"], row["text"], row["created_at"])
