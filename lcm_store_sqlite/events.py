"""Events in SQLite: idempotent batch inserts, and reads served from a session's copy."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING, Any, cast

from lcm_core.store import records, rows
from lcm_core.store.models import Event
from lcm_store_sqlite.search import SearchMixin
from lcm_store_sqlite.session_cache import CachedSession, SessionCache
from lcm_store_sqlite.speed_layer import WINDOW_FROM_COPY

if TYPE_CHECKING:
    from lcm_store_sqlite.connection import Connection

_INSERT_EVENT = (
    f"INSERT OR IGNORE INTO events ({rows.EVENT_COLUMNS}) "
    "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
)


class EventsMixin(SearchMixin):
    """Event writes and the reads a session copy can answer; needs `self._db`."""

    _db: Connection
    _sessions: SessionCache
    _event: Callable[[Any, str], Event]  # one event row as an `Event`, memoised by the store
    _sql_events: Callable[[str, Sequence[int]], list[Event]]  # `SqlReads.get_events`

    def insert_events(self, events: Iterable[Event]) -> int:
        params = [rows.event_params(records.prepare_event(event)) for event in events]
        if not params:
            return 0
        with self._db.transaction(), self._db.guarded("insert events") as raw:
            # executemany sums the direct changes of each statement (trigger writes
            # to the FTS table are not counted), so ignored duplicates add nothing.
            return max(0, raw.executemany(_INSERT_EVENT, params).rowcount)

    def _window(
        self, session_id: str, start_seq: int, end_seq: int, types: Sequence[str] | None
    ) -> list[Event] | None:
        """A short window of a session this handle already copied (the recent messages a
        step reads for its language), picked from the copy by seq like `get_events`."""
        if not 0 <= end_seq - start_seq <= WINDOW_FROM_COPY:
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
        if wanted:
            with self._db.guarded("get events") as raw:
                cached = self._sessions.session(raw, session_id, read=False)
                if cached is not None:
                    return self._copied_events(cached, wanted)
        return self._sql_events(session_id, wanted)

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
