"""The DuckDB store's event log: batch inserts, each event with its search side row."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any, Final

from lcm_core.store import records, rows
from lcm_core.store.matching import fold
from lcm_core.store.models import Event
from lcm_store_duckdb.search import trigram_count

if TYPE_CHECKING:
    from lcm_store_duckdb.connection import Connection

# Column types of events in insert order, for the list-unnest batch insert.
_EVENT_TYPES: Final = tuple(
    "BIGINT" if column in {"seq", "turn", "step", "truncated"} else "VARCHAR"
    for column in rows.EVENT_COLUMNS.split(", ")
)
# One statement inserts a whole batch from column lists; ON CONFLICT on the primary key
# keeps the first stored copy, and RETURNING names the rows that were new.
_INSERT_EVENTS = (
    f"INSERT OR IGNORE INTO events ({rows.EVENT_COLUMNS}) SELECT "
    + ", ".join(f"unnest(${i + 1}::{kind}[])" for i, kind in enumerate(_EVENT_TYPES))
    + " RETURNING session_id, seq"
)


class EventsMixin:
    """Event inserts; needs `self._db` (the reads are `SqlReads`')."""

    _db: Connection

    # --- events ------------------------------------------------------------------
    def insert_events(self, events: Iterable[Event]) -> int:
        batch: dict[tuple[str, int], Event] = {}
        for event in events:
            prepared = records.prepare_event(event)
            # A batch naming one key twice keeps the copy that came first.
            batch.setdefault((prepared.session_id, prepared.seq), prepared)
        if not batch:
            return 0
        params = list(zip(*(rows.event_params(e) for e in batch.values()), strict=True))
        with self._db.transaction(), self._db.guarded("insert events") as raw:
            new_keys = raw.execute(_INSERT_EVENTS, [list(column) for column in params]).fetchall()
            # Insert-or-ignore never changes a stored row: undoing it deletes the new keys.
            if self._db.nested:
                for session_id, seqs in _seqs_by_session(new_keys).items():
                    for table in ("events", "events_search"):
                        self._db.added(
                            table, "session_id = ? AND list_contains(?, seq)", (session_id, seqs)
                        )
            if new_keys:
                fresh = [batch[(str(key[0]), int(key[1]))] for key in new_keys]
                raw.execute(
                    "INSERT INTO events_search (session_id, seq, folded, grams) SELECT "
                    "unnest(?::VARCHAR[]), unnest(?::BIGINT[]), unnest(?::VARCHAR[]), "
                    "unnest(?::BIGINT[])",
                    [
                        [e.session_id for e in fresh],
                        [e.seq for e in fresh],
                        [fold(e.text) for e in fresh],
                        [trigram_count(e.text) for e in fresh],
                    ],
                )
        return len(new_keys)


def _seqs_by_session(keys: Iterable[tuple[Any, ...]]) -> dict[str, list[int]]:
    grouped: dict[str, list[int]] = {}
    for session_id, seq in keys:
        grouped.setdefault(str(session_id), []).append(int(seq))
    return grouped
