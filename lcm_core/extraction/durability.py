"""Which memory items are durable: the one predicate assembly and resident memory rely on.

A durable item is something the user stated (or a verified artifact showed) that
constrains or informs later work and is still in force: an active, current constraint,
decision, fact or preference. Not durable: proposals and open questions, inferred or
assistant-made items, replaced or withdrawn items, and anything marked transient in its
scope (passing chatter, should a rule ever keep some). `DURABLE_KINDS` and
`DURABLE_EVIDENCE` are in the order resident memory shows them.
"""

from __future__ import annotations

from typing import Final

from lcm_core.store.models import MemoryItem

DURABLE_KINDS: Final = ("constraint", "decision", "fact", "preference")
DURABLE_EVIDENCE: Final = ("user_explicit", "artifact_verified")
TRANSIENT_SCOPE_KEY: Final = "transient"


def is_durable(item: MemoryItem) -> bool:
    """True when `item` should survive compaction as standing memory."""
    return (
        item.status == "active"
        and item.superseded_by is None
        and item.kind in DURABLE_KINDS
        and item.evidence_type in DURABLE_EVIDENCE
        and not bool(item.scope.get(TRANSIENT_SCOPE_KEY))
    )
