"""The DuckDB store's event log and archive: batch inserts, reads, and event search."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any, Final

from lcm_core.clock import utc_now_iso
from lcm_core.store import records, rows
from lcm_core.store.models import ArchiveEntry, Event
from lcm_core.text.tokens import scrub_surrogates
from lcm_store_duckdb.fetch import fetch_dict, fetch_dicts
from lcm_store_duckdb.search import fold, trigram_count

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
    """Events and the archive; needs `self._db`."""

    _db: Connection

    # --- events ------------------------------------------------------------------
    def insert_event(self, event: Event) -> bool:
        return self._insert_events([event], "insert event") > 0

    def insert_events(self, events: Iterable[Event]) -> int:
        return self._insert_events(events, "insert events")

    def _insert_events(self, events: Iterable[Event], where: str) -> int:
        batch: dict[tuple[str, int], Event] = {}
        for event in events:
            prepared = records.prepare_event(event)
            # A batch naming one key twice keeps the copy that came first.
            batch.setdefault((prepared.session_id, prepared.seq), prepared)
        if not batch:
            return 0
        params = list(zip(*(rows.event_params(e) for e in batch.values()), strict=True))
        with self._db.transaction(), self._db.guarded(where) as raw:
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

    def get_event(self, session_id: str, seq: int) -> Event | None:
        with self._db.guarded("get event") as raw:
            row = fetch_dict(
                raw.execute(
                    "SELECT * FROM events WHERE session_id = ? AND seq = ?", (session_id, seq)
                )
            )
        return rows.event_from_row(row) if row else None

    def get_events(self, session_id: str, seqs: Sequence[int]) -> list[Event]:
        wanted = sorted({int(seq) for seq in seqs})
        if not wanted:
            return []
        with self._db.guarded("get events") as raw:
            found = fetch_dicts(
                raw.execute(
                    "SELECT * FROM events WHERE session_id = ? AND list_contains(?, seq) "
                    "ORDER BY seq",
                    (session_id, wanted),
                )
            )
        return [rows.event_from_row(row) for row in found]

    def max_event_seq(self, session_id: str) -> int | None:
        with self._db.guarded("max event seq") as raw:
            row = raw.execute(
                "SELECT max(seq) FROM events WHERE session_id = ?", (session_id,)
            ).fetchone()
        return None if row is None or row[0] is None else int(row[0])

    # --- archive -----------------------------------------------------------------
    def put_archive(self, entry: ArchiveEntry) -> None:
        with self._db.transaction(), self._db.guarded("put archive") as raw:
            key = (entry.session_id, entry.ref)
            self._db.remember("archive", "session_id = ? AND ref = ?", key)
            raw.execute(
                "INSERT OR IGNORE INTO archive (session_id, ref, text, created_at) "
                "VALUES (?, ?, ?, ?)",
                (*key, scrub_surrogates(entry.text), entry.created_at or utc_now_iso()),
            )

    def get_archive(self, session_id: str, ref: str) -> ArchiveEntry | None:
        with self._db.guarded("get archive") as raw:
            row = fetch_dict(
                raw.execute(
                    "SELECT * FROM archive WHERE session_id = ? AND ref = ?", (session_id, ref)
                )
            )
        if row is None:
            return None
        return ArchiveEntry(row["session_id"], row["ref"], row["text"], row["created_at"])

    def forget_event(self, session_id: str, seq: int) -> Event | None:
        key = (session_id, seq)
        with self._db.transaction(), self._db.guarded("forget event") as raw:
            row = fetch_dict(
                raw.execute("SELECT * FROM events WHERE session_id = ? AND seq = ?", key)
            )
            if row is None:
                return None
            gone = records.erase_event(rows.event_from_row(row))
            ref = (session_id, f"seq:{seq}")
            for table in ("events", "events_search"):
                self._db.remember(table, "session_id = ? AND seq = ?", key)
            self._db.remember("archive", "session_id = ? AND ref = ?", ref)
            erased = records.erased_event_record(gone)
            raw.execute(
                f"UPDATE events SET {records.set_clause(erased, '?')} "
                "WHERE session_id = ? AND seq = ?",
                (*erased.values(), *key),
            )
            raw.execute(
                "UPDATE events_search SET folded = '', grams = 0 WHERE session_id = ? AND seq = ?",
                key,
            )
            raw.execute("DELETE FROM archive WHERE session_id = ? AND ref = ?", ref)
        return gone


def _seqs_by_session(keys: Iterable[tuple[Any, ...]]) -> dict[str, list[int]]:
    grouped: dict[str, list[int]] = {}
    for session_id, seq in keys:
        grouped.setdefault(str(session_id), []).append(int(seq))
    return grouped
