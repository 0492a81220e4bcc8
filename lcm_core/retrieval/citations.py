"""The event seqs a memory item cites: its `seq:N` source refs, read once per ref tuple."""

from __future__ import annotations

import functools
from typing import Final

from lcm_core.store.models import MemoryItem
from lcm_core.text.lazy_regex import lazy_compile

SEQ_REF_RE: Final = lazy_compile(r"^seq:(-?\d+)$")


def source_seqs(item: MemoryItem) -> tuple[int, ...]:
    """The event seqs an item cites (`seq:N` refs), ascending; other refs are ignored."""
    return _cited_seqs(tuple(item.source_refs))  # `tuple` of a tuple is the same object


@functools.lru_cache(maxsize=65_536)
def _cited_seqs(refs: tuple[str, ...]) -> tuple[int, ...]:
    """`source_seqs` by the refs: pooling, ranking, visibility and dates ask for the same
    items' seqs several times a step, and again at the next step."""
    seqs = {int(m.group(1)) for ref in refs if (m := SEQ_REF_RE.match(ref))}
    return tuple(sorted(seqs))


def newest_source_seq(item: MemoryItem) -> int | None:
    """The latest seq that produced the item: its sources, else `derived_from_seq`."""
    seqs = source_seqs(item)
    if seqs:
        return seqs[-1]
    return item.derived_from_seq
