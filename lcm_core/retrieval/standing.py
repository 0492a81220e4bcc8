"""The standing rules in force that every step's block restates, whatever its words.

With session scope these are the session's rules in force (a rule another session of
the project replaced counts in its replacement's words); with project scope, those of
every session of the project. One rule per subject key stays: the one said last. They
come pinned first (in the order pinned), then newest first. Each session's rules are read
from its index (`extraction.rulebook`), a few rows, not a listing of its items.
"""

from __future__ import annotations

from collections.abc import Sequence

from lcm_core.capture.project import sibling_sessions
from lcm_core.extraction.control import pinned_ids
from lcm_core.extraction.durability import is_durable
from lcm_core.extraction.rulebook import read_index
from lcm_core.extraction.standing import rule_key
from lcm_core.store.models import MemoryItem
from lcm_core.store.ports import MemoryStore
from lcm_core.text.dates import instant


def rules_in_force(store: MemoryStore, session_id: str, *, project: bool) -> list[MemoryItem]:
    """The rules a step of `session_id` restates: pinned first, then the newest first."""
    sessions = [session_id]
    if project:
        sessions += [s.session_id for s in sibling_sessions(store, session_id)]
    found: dict[str, MemoryItem] = {}
    for session in sessions:
        for item in _session_rules(store, session):
            found.setdefault(item.id, item)
    said = _said(store, list(found.values()))
    newest: dict[str, MemoryItem] = {}
    for item in found.values():
        key = rule_key(item.scope)
        held = newest.get(key)
        if held is None or _order(item, said) > _order(held, said):
            newest[key] = item
    pins = {item_id: n for n, item_id in enumerate(pinned_ids(store, session_id))}
    # Stable sorts, last key first: pinned in pin order, then the newest, then by id.
    chosen = sorted(newest.values(), key=lambda i: i.id)
    chosen.sort(key=lambda i: _order(i, said), reverse=True)
    chosen.sort(key=lambda i: pins.get(i.id, len(pins)))
    return chosen


def _session_rules(store: MemoryStore, session_id: str) -> list[MemoryItem]:
    """A session's rules in force, from its index (or, before it has one, its items)."""
    ids = read_index(store, session_id)
    if ids is None:
        items = store.list_items(session_id, statuses=("active",))
    else:
        items = [item for item in map(store.get_item, ids) if item is not None]
    return [item for item in items if rule_key(item.scope) and is_durable(item)]


def _said(store: MemoryStore, items: Sequence[MemoryItem]) -> dict[str, int]:
    """item id -> when its newest source was said (epoch ms), one store read per session."""
    said: dict[str, int] = {}
    for session_id in sorted({item.session_id for item in items}):
        mine = [i for i in items if i.session_id == session_id and i.derived_from_seq is not None]
        seqs = sorted({i.derived_from_seq for i in mine if i.derived_from_seq is not None})
        times = {e.seq: instant(e.time) for e in store.get_events(session_id, seqs)}
        for item in mine:
            moment = times.get(item.derived_from_seq) if item.derived_from_seq is not None else None
            if moment is not None:
                said[item.id] = moment
    return said


def _order(item: MemoryItem, said: dict[str, int]) -> tuple[int, str, int]:
    """When a rule was said: its source's time, then its session and seq (a stable tie-break)."""
    seq = item.derived_from_seq if item.derived_from_seq is not None else -1
    return (said.get(item.id, -1), item.created_at, seq)
