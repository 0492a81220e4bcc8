"""Resident memory: what the user set down, restated after the host compacts it away.

After a compaction the step's text says little about the session (often it is a
navigation line), so choosing the block by query relevance alone loses the user's
constraints and numbers. The resident set is the session's durable items whose sources
the latest compaction may have removed, best first: constraints before decisions before
facts, the user's own word before derived ones, items with numbers or conditions before
bare ones, then the newest. Assembly places it right after the task state within
`assembly.residentShare` of the budget, at every step until each entry has been shown
again by a block still in context. Items the user pinned (`lcm pin`) lead the set.

Which items count is `lcm_core.extraction.durability.is_durable`, the one predicate.
With project scope (`memory.scope = project`) the constraints the user set in the other
sessions of the project join the set after this session's own, and an item another
session of the project states again more recently gives way to that statement.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from lcm_core.assembly.compaction import CompactionStatus
from lcm_core.capture.project import sibling_sessions
from lcm_core.extraction.control import pinned_ids
from lcm_core.extraction.durability import DURABLE_EVIDENCE, DURABLE_KINDS, is_durable
from lcm_core.retrieval.citations import newest_source_seq, source_seqs
from lcm_core.retrieval.project import durable_of, newest_per_subject
from lcm_core.retrieval.shown import Shown
from lcm_core.store.models import MemoryItem
from lcm_core.store.ports import MemoryStore

# Kinds and evidence in the order the resident set shows them.
RESIDENT_KINDS: Final = DURABLE_KINDS
RESIDENT_EVIDENCE: Final = DURABLE_EVIDENCE
# What another session of the project contributes: the constraints the user set.
PROJECT_RESIDENT_KINDS: Final = ("constraint",)
PROJECT_RESIDENT_EVIDENCE: Final = ("user_explicit",)


def resident_key(item: MemoryItem) -> tuple[int, int, int, int, str]:
    """Sort key: kind, evidence, numbers or conditions first, newest source first, id."""
    newest = newest_source_seq(item)
    return (
        RESIDENT_KINDS.index(item.kind) if item.kind in RESIDENT_KINDS else len(RESIDENT_KINDS),
        RESIDENT_EVIDENCE.index(item.evidence_type)
        if item.evidence_type in RESIDENT_EVIDENCE
        else len(RESIDENT_EVIDENCE),
        0 if item.numbers or item.conditions else 1,
        -(newest if newest is not None else -1),
        item.id,
    )


def resident_items(
    store: MemoryStore, session_id: str, compacted_before: int | None
) -> list[MemoryItem]:
    """The pinned items, then the durable items with a source older than `compacted_before`.

    An item whose every source came after the latest compaction started is still in the
    host's history, so it is not restated. None (no compaction seen) gives nothing.
    """
    if compacted_before is None:
        return []
    items = store.list_items(session_id, statuses=("active",))
    by_id = {item.id: item for item in items}
    # Pinned items (`lcm pin`) come first, in the order they were pinned, whatever their kind.
    pinned = [by_id[item_id] for item_id in pinned_ids(store, session_id) if item_id in by_id]
    taken = {item.id for item in pinned}
    chosen = [
        item
        for item in items
        if item.id not in taken
        and is_durable(item)
        and _older_source(source_seqs(item), item, compacted_before)
    ]
    return [*pinned, *sorted(chosen, key=resident_key)]


def project_resident(store: MemoryStore, session_id: str) -> list[MemoryItem]:
    """The constraints the user set in the project's other sessions, in resident order."""
    chosen = [
        item
        for item in durable_of(store, sibling_sessions(store, session_id))
        if item.kind in PROJECT_RESIDENT_KINDS and item.evidence_type in PROJECT_RESIDENT_EVIDENCE
    ]
    return sorted(chosen, key=resident_key)


def _older_source(seqs: Sequence[int], item: MemoryItem, before: int) -> bool:
    if seqs:
        return seqs[0] < before
    return item.derived_from_seq is not None and item.derived_from_seq < before


def pending_resident(
    store: MemoryStore,
    session_id: str,
    status: CompactionStatus,
    shown: Shown,
    *,
    project: bool = False,
) -> list[MemoryItem]:
    """The resident items to restate: after a compaction, until each is shown again.

    Empty when no compaction was seen, when the policy trusts the host's summary, and
    once every resident item is listed by a block still in context. With `project`
    the project's other sessions' constraints follow this session's own.
    """
    if not status.detected or status.trust_summary:
        return []
    chosen = resident_items(store, session_id, status.last_seq)
    if project:
        chosen = newest_per_subject(
            [*chosen, *project_resident(store, session_id)], lambda item: item
        )
    return [item for item in chosen if item.id not in shown.items]
