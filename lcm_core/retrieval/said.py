"""When each memory item was said: the ISO date of its newest source turn."""

from __future__ import annotations

from collections.abc import Sequence

from lcm_core.retrieval.citations import newest_source_seq
from lcm_core.store.models import MemoryItem
from lcm_core.store.ports import MemoryStore
from lcm_core.text.dates import said_on


def said_dates(store: MemoryStore, session_id: str, items: Sequence[MemoryItem]) -> dict[str, str]:
    """item id -> the ISO date its newest source turn was said, read in one store call."""
    dates: dict[str, str] = {}
    # One read per session: another session's item (project scope) cites its own turns.
    for source in sorted({item.session_id for item in items} | {session_id}):
        newest = {
            item.id: seq
            for item in items
            if item.session_id == source and (seq := newest_source_seq(item)) is not None
        }
        if not newest:
            continue
        events = store.get_events(source, sorted(set(newest.values())))
        times = {e.seq: e.time for e in events}
        for item_id, seq in newest.items():
            date = said_on(times.get(seq))
            if date:
                dates[item_id] = date
    for item in items:
        # Another session's item with no dated turn still says when it was set down.
        if item.session_id != session_id and item.id not in dates:
            date = said_on(item.created_at)
            if date:
                dates[item.id] = date
    return dates
