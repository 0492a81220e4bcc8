"""The spec's `expand` and `inspectItem`: the events around seqs, and one item's whole story."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from lcm_core.retrieval.citations import SEQ_REF_RE, source_seqs
from lcm_core.store.models import Event, MemoryEvent, MemoryItem
from lcm_core.store.ports import MemoryStore


def expand(
    store: MemoryStore, session_id: str, seqs: Sequence[int], radius: int = 2
) -> list[Event]:
    """The events within `radius` seqs of any given seq, once each, in seq order."""
    radius = max(0, int(radius))
    wanted = sorted({int(seq) for seq in seqs})
    found: dict[int, Event] = {}
    # Merge overlapping windows so each stretch of the log is read once.
    windows: list[list[int]] = []
    for seq in wanted:
        start, end = seq - radius, seq + radius
        if windows and start <= windows[-1][1] + 1:
            windows[-1][1] = max(windows[-1][1], end)
        else:
            windows.append([start, end])
    for start, end in windows:
        for event in store.list_events(session_id, start_seq=max(start, 0), end_seq=end):
            found[event.seq] = event
    return [found[seq] for seq in sorted(found)]


@dataclass(frozen=True, slots=True)
class SourceText:
    """One source of an item: the event (if still stored) and its verbatim text."""

    ref: str
    event: Event | None
    text: str


@dataclass(frozen=True, slots=True)
class ItemInspection:
    """Everything known about one item: its sources, links and whole lifecycle."""

    item: MemoryItem
    sources: tuple[SourceText, ...]
    lifecycle: tuple[MemoryEvent, ...]
    supersedes: tuple[MemoryItem, ...]
    superseded_by: MemoryItem | None


def verbatim_text(store: MemoryStore, event: Event) -> str:
    """The event's original text: the archived copy when the event was archived or cut."""
    if event.store == "archive" or event.truncated:
        entry = store.get_archive(event.session_id, f"seq:{event.seq}")
        if entry is not None and entry.text:
            return entry.text
    return event.text


def inspect_item(store: MemoryStore, item_id: str) -> ItemInspection | None:
    """The item with its sources resolved verbatim, its links and its lifecycle rows."""
    item = store.get_item(item_id)
    if item is None:
        return None
    events = {e.seq: e for e in store.get_events(item.session_id, source_seqs(item))}
    sources: list[SourceText] = []
    for ref in item.source_refs:
        match = SEQ_REF_RE.match(ref)
        event = events.get(int(match.group(1))) if match else None
        if event is not None:
            sources.append(SourceText(ref, event, verbatim_text(store, event)))
        else:
            archived = store.get_archive(item.session_id, ref)
            sources.append(SourceText(ref, None, archived.text if archived else ""))
    older = tuple(x for x in (store.get_item(i) for i in item.supersedes) if x is not None)
    newer = store.get_item(item.superseded_by) if item.superseded_by else None
    return ItemInspection(
        item=item,
        sources=tuple(sources),
        lifecycle=tuple(store.list_memory_events(memory_id=item.id)),
        supersedes=older,
        superseded_by=newer,
    )
