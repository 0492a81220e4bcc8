"""Events and the archive in SQLite: idempotent inserts, reads, search."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any, cast

from lcm_core.clock import utc_now_iso
from lcm_core.store import records, rows
from lcm_core.store.models import ArchiveEntry, Event
from lcm_core.text.tokens import scrub_surrogates
from lcm_store_sqlite.search import SearchMixin
from lcm_store_sqlite.session_cache import CachedSession, SessionCache

if TYPE_CHECKING:
    from lcm_store_sqlite.connection import Connection

_INSERT_EVENT = (
    f"INSERT OR IGNORE INTO events ({rows.EVENT_COLUMNS}) "
    "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
)


# The widest seq window `list_events` picks from a session's copy instead of SQL.
_WINDOW_FROM_COPY = 4096


class EventsMixin(SearchMixin):
    """Events and archive entries; needs `self._db`."""

    _db: Connection
    _sessions: SessionCache

    def _event(self, row: Any, shape: str) -> Event:
        """One event row as an `Event` (the store memoises per query shape)."""
        raise NotImplementedError

    # --- events ------------------------------------------------------------------
    def insert_event(self, event: Event) -> bool:
        with self._db.transaction(), self._db.guarded("insert event") as raw:
            cursor = raw.execute(_INSERT_EVENT, rows.event_params(records.prepare_event(event)))
            return cursor.rowcount > 0

    def insert_events(self, events: Iterable[Event]) -> int:
        params = [rows.event_params(records.prepare_event(event)) for event in events]
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
        return self._event(row, "all") if row else None

    def _window(
        self, session_id: str, start_seq: int, end_seq: int, types: Sequence[str] | None
    ) -> list[Event] | None:
        """A short window of a session this handle already copied (the recent messages a
        step reads for its language), picked from the copy by seq like `get_events`."""
        if not 0 <= end_seq - start_seq <= _WINDOW_FROM_COPY:
            return None
        with self._db.guarded("list events") as raw:
            cached = self._sessions.session(raw, session_id, read=False)
            if cached is None:
                return None
            found = self._copied_events(cached, range(start_seq, end_seq + 1))
        wanted = None if types is None else set(types)
        return [event for event in found if wanted is None or event.type in wanted]

    def get_events(self, session_id: str, seqs: Sequence[int]) -> list[Event]:
        wanted = sorted({int(seq) for seq in seqs})
        found: list[Event] = []
        with self._db.guarded("get events") as raw:
            cached = self._sessions.session(raw, session_id, read=False) if wanted else None
            if cached is not None:
                return self._copied_events(cached, wanted)
            for start in range(0, len(wanted), 500):
                chunk = wanted[start : start + 500]
                marks = ",".join("?" * len(chunk))
                found.extend(
                    self._event(row, "all")
                    for row in raw.execute(
                        f"SELECT * FROM events WHERE session_id = ? AND seq IN ({marks}) "
                        "ORDER BY seq",
                        (session_id, *chunk),
                    )
                )
        return found

    def _copied_events(self, cached: CachedSession, seqs: Sequence[int]) -> list[Event]:
        """The events at `seqs` in a session copy, in that order, skipping absent seqs."""
        index, copied = cached.index, cached.rows
        found: list[Event] = []
        for seq in seqs:
            at = index.get(seq)
            if at is not None:
                row = copied[at]
                # A copy's row keeps the event made of it: reading it there directly
                # spares two calls per event (a neighbour read is ~300 events a step).
                made = cast("Event | None", row.converted)
                found.append(made if made is not None else self._event(row, "search"))
        return found

    def max_event_seq(self, session_id: str) -> int | None:
        with self._db.guarded("max event seq") as raw:
            row = raw.execute(
                "SELECT MAX(seq) FROM events WHERE session_id = ?", (session_id,)
            ).fetchone()
        return None if row[0] is None else int(row[0])

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

    def forget_event(self, session_id: str, seq: int) -> Event | None:
        with self._db.guarded("forget event") as raw:
            raw.execute("PRAGMA secure_delete = ON")
        with self._db.transaction(), self._db.guarded("forget event") as raw:
            row = raw.execute(
                "SELECT * FROM events WHERE session_id = ? AND seq = ?", (session_id, seq)
            ).fetchone()
            if row is None:
                return None
            gone = records.erase_event(rows.event_from_row(row))
            # The FTS update trigger removes the old text's index entries.
            erased = records.erased_event_record(gone)
            raw.execute(
                f"UPDATE events SET {records.set_clause(erased, '?')} "
                "WHERE session_id = ? AND seq = ?",
                (*erased.values(), session_id, seq),
            )
            raw.execute(
                "DELETE FROM archive WHERE session_id = ? AND ref = ?", (session_id, f"seq:{seq}")
            )
            # Dropped while the lock is held, up to the commit: no search in between can
            # read the copy with the old text.
            self._sessions.invalidate()
        return gone
