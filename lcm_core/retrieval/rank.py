"""Deterministic ranking of memory items for one query, plus inspection helpers.

Items and raw turns are scored on one scale: the lexical relevance a `Retriever` gives
them (BM25 over the session's turns, see `retriever`). What the spec's formula did with
constant weights is done here with bounded priors that break near-ties and never lift
an item over a clearly more relevant turn:

    score = relevance
            * (1 + priorShare * (KIND_PRIOR[kind] + EVIDENCE_PRIOR[evidence]) / 2)
            * (1 + exactMatchBoost * min(exact, 3) / 3)
            * (1 - SUPERSESSION_PENALTY) when the item still carries a superseded_by link
            * (1 + recencyBoost) when its newest source is within recencyWindow seqs
            * (1 - redundancyPenalty) when a better item already cites all its sources

With the defaults (priorShare 0.1, recencyBoost 0.05) kind and evidence move a score
by at most 10%, recency by 5%, a supersession link takes 20%; a second item of a turn
a better item already cites (another sentence of it) takes 60%, so the next turn's
item is listed before it. Ties go to the item with the newer source, then to the
smaller id, so the same state always yields the same order.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any, Final

from lcm_core.config import Config
from lcm_core.retrieval.citations import SEQ_REF_RE, source_seqs
from lcm_core.retrieval.retriever import LexicalRetriever, Pool
from lcm_core.store.models import Event, MemoryEvent, MemoryItem
from lcm_core.store.ports import MemoryStore
from lcm_core.text.block_words import ZH
from lcm_core.text.query import QuerySignals, exact_hits
from lcm_core.text.relevance import NORM_KINDS

# Priors in [-1, 1]: what a kind or evidence type says about an entry's worth, before
# relevance. A raw user turn sits at 0 on both.
KIND_PRIOR: Final[dict[str, float]] = {
    "constraint": 1.0,
    "decision": 0.8,
    "fact": 0.6,
    "preference": 0.5,
    "open_question": 0.0,
    "proposal": -1.0,
}
EVIDENCE_PRIOR: Final[dict[str, float]] = {
    "user_explicit": 1.0,
    "artifact_verified": 0.8,
    "skill": 0.5,
    "assistant_proposal": -1.0,
    "inferred": -1.0,
}
# Kinds or evidence types the spec does not name get the lowest prior.
UNKNOWN_PRIOR: Final = -1.0
SUPERSESSION_PENALTY: Final = 0.2
EXACT_HITS_CAP: Final = 3
HARD_LIMIT: Final = 100

# Negative seqs are the user's own `memory/remember` events (`extraction.control`).

# Ranking features that `retrieval.ablate` (and `lcm bench retrieval --ablate`) can
# switch off one at a time, so each is measured alone. Name -> what switching it off does.
ABLATIONS: Final[dict[str, str]] = {
    "priors": "kind and evidence type do not move a score",
    "exact-boost": "no boost for exact identifiers, numbers, paths or phrases",
    "supersession": "an item with a superseded_by link keeps its whole score",
    "recency": "no boost for recent sources",
    "raw-turns": "raw user turns do not compete; only items and their sources",
    "items": "memory items do not compete; only raw turns",
    "stemming": "words are matched as written, not by their Snowball stem",
    "stopwords": "function words count like any other term",
    "idf": "every term weighs the same (no inverse document frequency)",
    "context": "a turn is scored without the message before it",
    "episode": "no prior for the session day (episode) a turn belongs to",
    "speaker": "a question naming a chat log's speaker does not favour that speaker's turns",
    "day": "a question naming a date does not favour the turns said that day",
    "bridge": "no English-Chinese query expansion",
    "intent": "a question about a rule or liking does not favour such items",
    "neighbours": "the turns next to a strong match are not quoted with it",
    "answer-kind": "a turn holding the kind of token the question asks for is not lifted",
    "redundancy": "an item whose source turns a better item already cites keeps its score",
    "speaker-neighbours": "a neighbour said by the other speaker of a chat log is offered as much",
}


def ablated(config: Config, feature: str) -> bool:
    """True when `retrieval.ablate` switches this ranking feature off."""
    return feature in config.retrieval.ablate


# Not frozen: a step builds hundreds of these, and a frozen dataclass's __init__ costs
# about four times as much (a call per field). Nothing changes one once built.
@dataclass(slots=True)
class Omission:
    """Something retrieval or assembly considered and left out, with the reason why."""

    section: str
    ref: str
    reason: str

    def to_dict(self) -> dict[str, str]:
        return {"section": self.section, "ref": self.ref, "reason": self.reason}


# Not frozen: a step builds hundreds of these, and a frozen dataclass's __init__ costs
# about four times as much (a call per field). Nothing changes one once built.
@dataclass(slots=True)
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


def newest_source_seq(item: MemoryItem) -> int | None:
    """The latest seq that produced the item: its sources, else `derived_from_seq`."""
    seqs = source_seqs(item)
    if seqs:
        return seqs[-1]
    return item.derived_from_seq


def prior_factor(kind: str | None, evidence_type: str | None, config: Config) -> float:
    """The bounded kind-and-evidence prior: 1 +/- `retrieval.priorShare` at most."""
    if ablated(config, "priors"):
        return 1.0
    kind_prior = KIND_PRIOR.get(kind, UNKNOWN_PRIOR) if kind is not None else 0.0
    evidence = EVIDENCE_PRIOR.get(evidence_type, UNKNOWN_PRIOR) if evidence_type else 0.0
    return 1.0 + config.retrieval.prior_share * (kind_prior + evidence) / 2.0


def exact_factor(exact: int, config: Config) -> float:
    """1 + `retrieval.exactMatchBoost` for each exact identifier, number, path or phrase (up to 3)."""
    if ablated(config, "exact-boost"):
        return 1.0
    boost = config.retrieval.exact_match_boost
    return 1.0 + boost * min(exact, EXACT_HITS_CAP) / EXACT_HITS_CAP


def recency_factor(recent: bool, config: Config) -> float:
    """1 + `retrieval.recencyBoost` for a recent source."""
    if not recent or ablated(config, "recency"):
        return 1.0
    return 1.0 + config.retrieval.recency_boost


def default_pool(
    store: MemoryStore, session_id: str, signals: QuerySignals, config: Config
) -> Pool:
    """The lexical retriever's pool over the quotable turn types (`assembly.evidenceTypes`)."""
    evidence_types = [str(t) for t in config.assembly.evidence_types]
    types = None if "*" in evidence_types else sorted(set(evidence_types))
    return LexicalRetriever().pool(store, session_id, signals.text, config, types)


# `relativeMinScore` is the floor's ratio for a block of this many tokens; a smaller block
# raises it in proportion (up to FLOOR_RATIO_CAP): a block that holds a fifth as much
# should hold only what is clearly relevant. REALTALK block recall by budget and ratio:
# 600 tokens 0.40 at 0.1, 0.55 at 0.3, 0.56 at 0.4; 1 200 tokens 0.59 at 0.1, 0.64 at 0.2
# and 0.3; 3 000 tokens 0.73 at 0.1, 0.67 at 0.3. The cap: at 600 tokens 0.4 costs the
# original synthetic set 0.023 of block recall, 0.3 nothing (docs/measurements.md).
FLOOR_BUDGET_TOKENS: Final = 3000
FLOOR_RATIO_CAP: Final = 0.3
FLOOR_RULE: Final = (
    "retrieval.minScore, or retrieval.relativeMinScore of the best candidate, raised for a "
    f"budget under {FLOOR_BUDGET_TOKENS} tokens"
)


def floor_ratio(config: Config, budget_tokens: int | None = None) -> float:
    """The share of the best candidate's score an entry needs, for a block of this budget."""
    ratio = config.retrieval.relative_min_score
    if not budget_tokens or budget_tokens >= FLOOR_BUDGET_TOKENS:
        return ratio
    return max(ratio, min(ratio * FLOOR_BUDGET_TOKENS / budget_tokens, FLOOR_RATIO_CAP))


def score_floor(pool: Pool | None, config: Config, budget_tokens: int | None = None) -> float:
    """The least score an entry needs: `minScore`, or `floor_ratio` of the pool's best."""
    floor = config.retrieval.min_score
    if pool is None:
        return floor
    return max(floor, floor_ratio(config, budget_tokens) * pool.best)


def is_recent(newest: int | None, anchor_seq: int | None, config: Config) -> bool:
    """True when `newest` lies within `retrieval.recencyWindow` seqs of the anchor."""
    if anchor_seq is None or newest is None:
        return False
    return anchor_seq - newest <= config.retrieval.recency_window


def intent_factor(kind: str, norm_question: bool, config: Config) -> float:
    """1 + `retrieval.intentBoost` for a preference, constraint or decision when the
    question asks about a rule, limit or liking ("what should I avoid?", 晚饭不能吃什么)."""
    if not norm_question or kind not in NORM_KINDS or ablated(config, "intent"):
        return 1.0
    return 1.0 + config.retrieval.intent_boost


def score_item(
    item: MemoryItem,
    relevance: float,
    signals: QuerySignals,
    config: Config,
    anchor_seq: int | None,
    norm_question: bool = False,
) -> RankedItem:
    """An item's final score: its relevance times the bounded priors."""
    exact = exact_hits(item.content, signals)
    score = relevance * prior_factor(item.kind, item.evidence_type, config)
    score *= intent_factor(item.kind, norm_question, config)
    score *= exact_factor(len(exact), config)
    linked = item.superseded_by is not None
    if linked and not ablated(config, "supersession"):
        score *= 1.0 - SUPERSESSION_PENALTY
    recent = is_recent(newest_source_seq(item), anchor_seq, config)
    score *= recency_factor(recent, config)
    return RankedItem(item, score, relevance, exact, recent, linked)


def lower_redundant(
    scored: Sequence[RankedItem], session_id: str, penalty: float
) -> list[RankedItem]:
    """The ranked items (best first) with each one whose every source turn a better item
    already cites scored `penalty` lower, and sorted again: a second sentence of the
    same turn adds no evidence, so it does not take a place the next turn could have."""
    cited: set[int] = set()
    result: list[RankedItem] = []
    for ranked in scored:
        seqs = source_seqs(ranked.item) if ranked.item.session_id == session_id else ()
        if seqs and cited.issuperset(seqs):
            ranked = replace(ranked, score=ranked.score * (1.0 - penalty))
        cited.update(seqs)
        result.append(ranked)
    result.sort(key=lambda r: (-round(r.score, 9), -(newest_source_seq(r.item) or -1), r.item.id))
    return result


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
        pool = default_pool(store, session_id, signals, config)
    if not pool.items:
        return Ranking()
    if anchor_seq is None:
        anchor_seq = anchor_seq_of(store, session_id)
    # Another session's item (project scope) is never recent here: its seqs are its own.
    scored = [
        score_item(
            item,
            score,
            signals,
            config,
            anchor_seq if item.session_id == session_id else None,
            pool.norm,
        )
        for item, score in pool.items
    ]
    # Equal scores: the newer statement first, then the id, so ties never depend on the store.
    scored.sort(key=lambda r: (-round(r.score, 9), -(newest_source_seq(r.item) or -1), r.item.id))
    penalty = 0.0 if ablated(config, "redundancy") else config.retrieval.redundancy_penalty
    if penalty > 0:
        scored = lower_redundant(scored, session_id, penalty)
    min_score = floor if floor is not None else score_floor(pool, config)
    limit = min(config.retrieval.limit, HARD_LIMIT)
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


INSUFFICIENT_EVIDENCE: Final = ZH.insufficient  # the English one: block_words.EN


def insufficient_statement() -> str:
    """The fixed statement used when nothing stored supports the query."""
    return INSUFFICIENT_EVIDENCE
