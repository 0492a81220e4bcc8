"""Which memory items are durable: the one predicate assembly and resident memory rely on.

A durable item is something the user stated that constrains or informs later work and is
still in force: an active fact, decision, constraint, preference or open question. Not
durable: proposals (the assistant's, until confirmed), replaced or withdrawn items, and
anything marked transient in its scope (passing chatter, should a rule ever keep some).
"""

from __future__ import annotations

from typing import Final

from lcm_core.store.models import MemoryItem

DURABLE_KINDS: Final = frozenset({"fact", "decision", "constraint", "preference", "open_question"})
TRANSIENT_SCOPE_KEY: Final = "transient"


def is_durable(item: MemoryItem) -> bool:
    """True when `item` should survive compaction as standing memory."""
    return (
        item.status == "active"
        and item.kind in DURABLE_KINDS
        and not bool(item.scope.get(TRANSIENT_SCOPE_KEY))
    )
