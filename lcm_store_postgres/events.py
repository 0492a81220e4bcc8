"""Events in PostgreSQL: batched idempotent inserts (the reads are `SqlReads`')."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from lcm_core.store import records, rows
from lcm_core.store.models import Event
from lcm_core.text.tokens import scrub_surrogates
from lcm_store_postgres.search import fold

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
    """Event inserts; needs `self._db`."""

    _db: Connection

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
