"""Ranking of memory items for one query: score each candidate, then select under the floor.

Each item of the pool gets its score from `scoring` (the whole formula is stated
there); the items are sorted best first, the redundant ones lowered, and taken while
they clear the floor and `retrieval.limit`; every other one comes back as an omission
with its reason, so explain can say why it was out.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Final

from lcm_core.config import Config
from lcm_core.retrieval.lifts import scored_pool
from lcm_core.retrieval.ranked import Omission, RankedItem, Ranking
from lcm_core.retrieval.retriever import Pool
from lcm_core.retrieval.scoring import (
    FLOOR_RULE,
    best_first,
    lower_redundant,
    score_floor,
    score_item,
)
from lcm_core.store.models import MemoryItem
from lcm_core.store.ports import MemoryStore
from lcm_core.text.block_words import ZH
from lcm_core.text.query import QuerySignals
from lcm_core.text.relevance import asks_for_norm

HARD_LIMIT: Final = 100


def anchor_seq_of(store: MemoryStore, session_id: str) -> int | None:
    """The seq recency is measured from: the checkpoint, else the newest stored event."""
    checkpoint = store.get_checkpoint(session_id)
    if checkpoint.last_event_seq >= 0:
        return checkpoint.last_event_seq
    return store.max_event_seq(session_id)


# Why an item is left out when an earlier block that lists it is still in the context.
ALREADY_SHOWN = "already listed by an earlier memory block still in context"
# Why an item is left out whose every source the model can read in this step.
ON_SCREEN: Final = "all source events are still visible in this step"


def rank_items(
    store: MemoryStore,
    session_id: str,
    signals: QuerySignals,
    config: Config,
    *,
    anchor_seq: int | None = None,
    visible_ids: Callable[[Sequence[MemoryItem]], frozenset[str]] | None = None,
    shown_ids: frozenset[str] = frozenset(),
    pool: Pool | None = None,
    floor: float | None = None,
) -> Ranking:
    """Rank the session's active items for the query; the rest come back as omissions.

    `visible_ids` lets assembly drop items the model can already read in this step; it
    gets candidates a chunk of `limit` at a time (so their sources are read in one
    query, and only as far down the list as the selection needs) and returns the ids on
    screen. Those do not take a place under `retrieval.limit`, and neither do
    `shown_ids`, items an earlier memory block still in context already lists.
    `floor` is `score_floor` of the given `pool` when the caller has worked it out.
    """
    if pool is None:
        pool = scored_pool(store, session_id, signals, config)
    if not pool.items:
        return Ranking()
    if anchor_seq is None:
        anchor_seq = anchor_seq_of(store, session_id)
    retrieval = config.retrieval
    norm = asks_for_norm(signals.text)
    # Another session's item (project scope) is never recent here: its seqs are its own.
    scored = [
        score_item(
            item,
            score,
            signals,
            retrieval,
            anchor_seq if item.session_id == session_id else None,
            norm,
        )
        for item, score in pool.items
    ]
    # Equal scores: the newer statement first, then the id, so ties never depend on the store.
    scored.sort(key=best_first)
    scored = lower_redundant(scored, session_id, retrieval)
    min_score = floor if floor is not None else score_floor(pool.best, retrieval)
    limit = min(retrieval.limit, HARD_LIMIT)
    selected: list[RankedItem] = []
    omitted: list[Omission] = []
    listed: list[MemoryItem] = []
    on_screen: frozenset[str] = frozenset()
    checked = 0  # candidates whose visibility is known: asked for a chunk at a time
    for index, ranked in enumerate(scored):
        ref = ranked.item.id
        if visible_ids is not None and index >= checked and len(selected) < limit:
            chunk = [r.item for r in scored[index : index + limit] if r.score >= min_score]
            on_screen = on_screen | (visible_ids(chunk) if chunk else frozenset())
            checked = index + limit
        if ranked.score < min_score:
            reason = f"score {ranked.score:.3f} is below the floor {min_score:.3f} ({FLOOR_RULE})"
            omitted.append(Omission("memory", ref, reason))
        elif ref in on_screen:
            reason = ON_SCREEN
            omitted.append(Omission("memory", ref, reason))
        elif ref in shown_ids:
            omitted.append(Omission("memory", ref, ALREADY_SHOWN))
            listed.append(ranked.item)
        elif len(selected) >= limit:
            omitted.append(Omission("memory", ref, f"beyond retrieval.limit {limit}"))
        else:
            selected.append(ranked)
    return Ranking(tuple(selected), tuple(omitted), len(scored), tuple(listed))


INSUFFICIENT_EVIDENCE: Final = ZH.insufficient  # the English one: block_words.EN


def insufficient_statement() -> str:
    """The fixed statement used when nothing stored supports the query."""
    return INSUFFICIENT_EVIDENCE
