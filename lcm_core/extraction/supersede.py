"""Supersession by subject: the earlier item a new plain statement of fact replaces.

An active fact or decision is about the same thing as a new fact when both read as
`subject relation value` (see `extraction_subject`) with equal subject keys. The newest
such item is replaced, unless it says exactly the same thing. Different subjects or
relation families never match: a wrong supersession would lose memory.
"""

from __future__ import annotations

from typing import Final

from lcm_core.extraction.candidates import Candidate
from lcm_core.extraction.subject import subject_fact
from lcm_core.store.models import MemoryItem

REPLACEABLE_KINDS: Final = frozenset({"fact", "decision"})


def item_subject_key(item: MemoryItem) -> str:
    """The subject key of a stored item, or "" when its content is no subject-value statement."""
    if item.kind not in REPLACEABLE_KINDS:
        return ""
    stated = subject_fact(item.content)
    return stated.key if stated is not None else ""


def same_subject(cand: Candidate, newest: MemoryItem | None) -> MemoryItem | None:
    """The newest active item about the candidate's subject, unless it says the same thing."""
    if newest is None or newest.content.casefold() == cand.content.casefold():
        return None  # nothing about it yet, or said again: a restatement, not a change
    return newest
