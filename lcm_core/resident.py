"""Resident memory: what the user set down, restated after the host compacts it away.

After a compaction the step's text says little about the session (often it is a
navigation line), so choosing the block by query relevance alone loses the user's
constraints and numbers. The resident set is the session's durable items whose sources
the latest compaction may have removed, best first: constraints before decisions before
facts, the user's own word before derived ones, items with numbers or conditions before
bare ones, then the newest. Assembly places it right after the task state within
`assembly.residentShare` of the budget, at every step until each entry has been shown
again by a block still in context.

`is_durable` is the one place that says which items count; extraction work may replace
it with its own predicate.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from lcm_core.compaction import CompactionStatus
from lcm_core.models import MemoryItem
from lcm_core.ports import MemoryStore
from lcm_core.retrieval import newest_source_seq, source_seqs
from lcm_core.shown import Shown

# Kinds that hold what the user set down, in the order the resident set shows them.
RESIDENT_KINDS: Final = ("constraint", "decision", "fact", "preference")
# Evidence that comes from the user (or a verified artifact), best first.
RESIDENT_EVIDENCE: Final = ("user_explicit", "artifact_verified")


def is_durable(item: MemoryItem) -> bool:
    """True for an active, current item the user set down: the resident kinds and evidence.

    Proposals, open questions, inferred and assistant-made items are not durable; a
    superseded, retracted or disputed item is history, not the current value.
    """
    return (
        item.status == "active"
        and item.superseded_by is None
        and item.kind in RESIDENT_KINDS
        and item.evidence_type in RESIDENT_EVIDENCE
    )


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
    """The durable items with a source older than `compacted_before`, in resident order.

    An item whose every source came after the latest compaction started is still in the
    host's history, so it is not restated. None (no compaction seen) gives nothing.
    """
    if compacted_before is None:
        return []
    items = store.list_items(session_id, statuses=("active",))
    chosen = [
        item
        for item in items
        if is_durable(item) and _older_source(source_seqs(item), item, compacted_before)
    ]
    return sorted(chosen, key=resident_key)


def _older_source(seqs: Sequence[int], item: MemoryItem, before: int) -> bool:
    if seqs:
        return seqs[0] < before
    return item.derived_from_seq is not None and item.derived_from_seq < before


def pending_resident(
    store: MemoryStore, session_id: str, status: CompactionStatus, shown: Shown
) -> list[MemoryItem]:
    """The resident items to restate: after a compaction, until each is shown again.

    Empty when no compaction was seen, when the policy trusts the host's summary, and
    once every resident item is listed by a block still in context.
    """
    if not status.detected or status.trust_summary:
        return []
    return [
        item
        for item in resident_items(store, session_id, status.last_seq)
        if item.id not in shown.items
    ]
