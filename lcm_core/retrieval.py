"""Deterministic ranking of memory items for one query, plus inspection helpers.

The score of a candidate follows the spec's formula:

    score = KIND_WEIGHT[kind] + min(search, 10) / 10 + boost * min(exact, 3) / 3
    score *= EVIDENCE_WEIGHT[evidence_type]
    score *= 0.4 when the item still carries a `superseded_by` link
    score += recencyBoost when its newest source is within `recencyWindow` seqs of the
             session's checkpoint

Ties go to the item with the newer source, then to the smaller id, so the same state
always yields the same order.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Final

from lcm_core.config import Config
from lcm_core.models import Event, MemoryEvent, MemoryItem
from lcm_core.ports import MemoryStore
from lcm_core.query import QuerySignals, exact_hits, search_terms

KIND_WEIGHT: Final[dict[str, float]] = {
    "decision": 1.0,
    "constraint": 1.0,
    "fact": 0.95,
    "preference": 0.8,
    "open_question": 0.8,
    "proposal": 0.5,
}
EVIDENCE_WEIGHT: Final[dict[str, float]] = {
    "user_explicit": 1.0,
    "artifact_verified": 0.95,
    "skill": 0.9,
    "assistant_proposal": 0.6,
    "inferred": 0.4,
}
# Kinds or evidence types the spec does not name get the lowest listed weight.
UNKNOWN_KIND_WEIGHT: Final = 0.5
UNKNOWN_EVIDENCE_WEIGHT: Final = 0.4
SUPERSESSION_FACTOR: Final = 0.4
SEARCH_SCORE_CAP: Final = 10.0
EXACT_HITS_CAP: Final = 3
HARD_LIMIT: Final = 100

_SEQ_REF_RE: Final = re.compile(r"^seq:(\d+)$")


@dataclass(frozen=True, slots=True)
class Omission:
    """Something retrieval or assembly considered and left out, with the reason why."""

    section: str
    ref: str
    reason: str

    def to_dict(self) -> dict[str, str]:
        return {"section": self.section, "ref": self.ref, "reason": self.reason}


@dataclass(frozen=True, slots=True)
class RankedItem:
    """A scored candidate and the parts of its score, for explain output."""

    item: MemoryItem
    score: float
    search_score: float
    exact: tuple[str, ...] = ()
    recent: bool = False
    superseded_link: bool = False

    def to_dict(self) -> dict[str, Any]:
        return {
            "ref": self.item.id,
            "score": round(self.score, 4),
            "search": round(self.search_score, 4),
            "exact": list(self.exact),
            "recent": self.recent,
            "supersededLink": self.superseded_link,
        }


@dataclass(frozen=True, slots=True)
class Ranking:
    """The items chosen for a query, best first, and the candidates left out."""

    selected: tuple[RankedItem, ...] = ()
    omitted: tuple[Omission, ...] = ()
    candidates: int = 0
    # Matching items left out because an earlier block still in context lists them.
    listed: tuple[MemoryItem, ...] = ()


def source_seqs(item: MemoryItem) -> tuple[int, ...]:
    """The event seqs an item cites (`seq:N` refs), ascending; other refs are ignored."""
    seqs = {int(m.group(1)) for ref in item.source_refs if (m := _SEQ_REF_RE.match(ref))}
    return tuple(sorted(seqs))


def newest_source_seq(item: MemoryItem) -> int | None:
    """The latest seq that produced the item: its sources, else `derived_from_seq`."""
    seqs = source_seqs(item)
    if seqs:
        return seqs[-1]
    return item.derived_from_seq


def base_score(
    kind_weight: float, evidence_weight: float, search_score: float, exact: int, config: Config
) -> float:
    """`(kind weight + capped search + exact boost) * evidence weight`, the spec's core."""
    boost = float(config.get("retrieval.exactMatchBoost"))
    capped_search = min(max(search_score, 0.0), SEARCH_SCORE_CAP) / SEARCH_SCORE_CAP
    score = kind_weight + capped_search + boost * min(exact, EXACT_HITS_CAP) / EXACT_HITS_CAP
    return score * evidence_weight


def is_recent(newest: int | None, anchor_seq: int | None, config: Config) -> bool:
    """True when `newest` lies within `retrieval.recencyWindow` seqs of the anchor."""
    if anchor_seq is None or newest is None:
        return False
    return anchor_seq - newest <= int(config.get("retrieval.recencyWindow"))


def score_item(
    item: MemoryItem,
    search_score: float,
    signals: QuerySignals,
    config: Config,
    anchor_seq: int | None,
) -> RankedItem:
    """Score one candidate with the spec's formula."""
    exact = exact_hits(item.content, signals)
    score = base_score(
        KIND_WEIGHT.get(item.kind, UNKNOWN_KIND_WEIGHT),
        EVIDENCE_WEIGHT.get(item.evidence_type, UNKNOWN_EVIDENCE_WEIGHT),
        search_score,
        len(exact),
        config,
    )
    linked = item.superseded_by is not None
    if linked:
        score *= SUPERSESSION_FACTOR
    recent = is_recent(newest_source_seq(item), anchor_seq, config)
    if recent:
        score += float(config.get("retrieval.recencyBoost"))
    return RankedItem(item, score, search_score, exact, recent, linked)


def anchor_seq_of(store: MemoryStore, session_id: str) -> int | None:
    """The seq recency is measured from: the checkpoint, else the newest stored event."""
    checkpoint = store.get_checkpoint(session_id)
    if checkpoint.last_event_seq >= 0:
        return checkpoint.last_event_seq
    return store.max_event_seq(session_id)


# Why an item is left out when an earlier block that lists it is still in the context.
ALREADY_SHOWN = "already listed by an earlier memory block still in context"


def rank_items(
    store: MemoryStore,
    session_id: str,
    signals: QuerySignals,
    config: Config,
    *,
    anchor_seq: int | None = None,
    visible_ids: Callable[[Sequence[MemoryItem]], frozenset[str]] | None = None,
    shown_ids: frozenset[str] = frozenset(),
) -> Ranking:
    """Rank the session's active items for the query; the rest come back as omissions.

    `visible_ids` lets assembly drop items the model can already read in this step; it
    gets candidates a chunk of `limit` at a time (so their sources are read in one
    query, and only as far down the list as the selection needs) and returns the ids on
    screen. Those do not take a place under `retrieval.limit`, and neither do
    `shown_ids`, items an earlier memory block still in context already lists.
    """
    terms = search_terms(signals)
    if not terms:
        return Ranking()
    hits = store.search_items(session_id, terms, statuses=("active",), limit=HARD_LIMIT)
    if anchor_seq is None:
        anchor_seq = anchor_seq_of(store, session_id)
    scored = [score_item(hit.item, hit.score, signals, config, anchor_seq) for hit in hits]
    # Equal scores: the newer statement first, then the id, so ties never depend on the store.
    scored.sort(key=lambda r: (-round(r.score, 9), -(newest_source_seq(r.item) or -1), r.item.id))
    min_score = float(config.get("retrieval.minScore"))
    limit = min(int(config.get("retrieval.limit")), HARD_LIMIT)
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
            reason = f"score {ranked.score:.3f} is below retrieval.minScore {min_score:g}"
            omitted.append(Omission("memory", ref, reason))
        elif ref in on_screen:
            reason = "all source events are still visible in this step"
            omitted.append(Omission("memory", ref, reason))
        elif ref in shown_ids:
            omitted.append(Omission("memory", ref, ALREADY_SHOWN))
            listed.append(ranked.item)
        elif len(selected) >= limit:
            omitted.append(Omission("memory", ref, f"beyond retrieval.limit {limit}"))
        else:
            selected.append(ranked)
    return Ranking(tuple(selected), tuple(omitted), len(scored), tuple(listed))


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
        match = _SEQ_REF_RE.match(ref)
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


INSUFFICIENT_EVIDENCE: Final = (
    "证据不足：本会话的记忆中没有与当前问题相关的已提交证据。"
    "不要推断或编造过去的对话内容；如被问及，请回答 “insufficient evidence”。"
)


def insufficient_statement() -> str:
    """The fixed statement used when nothing stored supports the query."""
    return INSUFFICIENT_EVIDENCE
