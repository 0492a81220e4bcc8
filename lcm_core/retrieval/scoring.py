"""How every candidate's score is made: the whole formula, and the factors it multiplies.

A retriever (`retrieval.retriever`, see `retriever`) gives each raw turn and each memory
item of one session a relevance on one scale. The lexical one (the default) scores a turn as

    turn relevance = (BM25(own text) + contextWeight * BM25(the message before it))
                     * (1 + episodeWeight * BM25(its episode as a whole) / best episode's)

with BM25's idf over the session's turns (`text.relevance`); the context is read for the
best CONTEXT_POOL turns by their own score, when the event before is a message; an
episode is the turn's day, or a window of EPISODE_SEQS seqs when events carry no time.
Everything below applies to the pool of any retriever; each [name] is a signal of
`signals` (its setting, what it does, its ablation), and docs/ranking.md is written from
this docstring and that list:

    turn relevance *= (1 + speakerWeight)     a chat log's speaker the question names: by
                                              the name heading her turns, another spelling
                                              of it, or the name the other speaker calls
                                              her by ("Hey Kate!") [speaker]
                   *= (1 + dayWeight)         said on a day the question names, or calling
                                              it yesterday / tomorrow [day]
                   *= (1 + answerKindWeight)  among the best rerankDepth turns, holds the
                                              asked kind of token: date, place, name,
                                              number [answer-kind]
    item relevance  = max(its own text's relevance, the turn relevance of its source
                      turns in the pool)
    project item    = PROJECT_FACTOR * its own text's relevance: a durable item of the
                      project's other sessions (memory.scope project); of two items
                      stating one subject across sessions the newest stays
    item score      = item relevance
                   * (1 + priorShare * (KIND_PRIOR[kind] + EVIDENCE_PRIOR[evidence]) / 2)  [priors]
                   * (1 + intentBoost)        a preference, constraint or decision, when the
                                              question asks about a rule or liking [intent]
                   * (1 + exactMatchBoost * min(exact, EXACT_HITS_CAP) / EXACT_HITS_CAP)
                                              exact identifiers, numbers, paths, quoted
                                              phrases [exact-boost]
                   * (1 - SUPERSESSION_PENALTY)  it still carries a superseded_by link [supersession]
                   * (1 + recencyBoost)       newest source within recencyWindow seqs of the
                                              checkpoint, else of the newest event (never a
                                              project item) [recency]
                   then * (1 - redundancyPenalty) when a better item already cites every
                                              source of it [redundancy]
    turn score      = turn relevance * the exact-boost and recency factors (a raw turn has
                      no kind or evidence type, so its prior is 1); a turn found only by
                      an exact search takes its own text's relevance on the pool's scale;
                      an item's source turn takes its best item's score
    neighbour offer = match score * neighbourShare / distance, within neighbourRadius seqs
                      of the same episode [neighbours]; * neighbourOtherSpeaker when the
                      other speaker of a chat log said it [speaker-neighbours]
    floor           = max(minScore, ratio * the best relevance among the candidates this
                      step may quote), ratio = relativeMinScore, raised for a block under
                      FLOOR_BUDGET_TOKENS tokens up to FLOOR_RATIO_CAP (`floor_ratio`)

With the defaults kind and evidence move a score by at most 10%, recency by 5%, a
supersession link takes 20% and a redundant item 60%. Ties go to the item with the newer
source, then to the smaller id, so the same state always yields the same order.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Final

from lcm_core.config.sections import RetrievalSettings
from lcm_core.retrieval.citations import newest_source_seq, source_seqs
from lcm_core.retrieval.ranked import RankedItem
from lcm_core.retrieval.signals import ablated, strength
from lcm_core.store.models import Event, MemoryItem
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


def prior_factor(
    kind: str | None, evidence_type: str | None, retrieval: RetrievalSettings
) -> float:
    """The bounded kind-and-evidence prior: 1 +/- `retrieval.priorShare` at most."""
    share = strength(retrieval, "priors")
    if share == 0.0:
        return 1.0
    kind_prior = KIND_PRIOR.get(kind, UNKNOWN_PRIOR) if kind is not None else 0.0
    evidence = EVIDENCE_PRIOR.get(evidence_type, UNKNOWN_PRIOR) if evidence_type else 0.0
    return 1.0 + share * (kind_prior + evidence) / 2.0


def exact_factor(exact: int, retrieval: RetrievalSettings) -> float:
    """1 + `retrieval.exactMatchBoost` for each exact identifier, number, path or phrase (up to 3)."""
    boost = strength(retrieval, "exact-boost")
    if boost == 0.0:
        return 1.0
    return 1.0 + boost * min(exact, EXACT_HITS_CAP) / EXACT_HITS_CAP


def recency_factor(recent: bool, retrieval: RetrievalSettings) -> float:
    """1 + `retrieval.recencyBoost` for a recent source."""
    if not recent:
        return 1.0
    return 1.0 + strength(retrieval, "recency")


def is_recent(newest: int | None, anchor_seq: int | None, retrieval: RetrievalSettings) -> bool:
    """True when `newest` lies within `retrieval.recencyWindow` seqs of the anchor."""
    if anchor_seq is None or newest is None:
        return False
    return anchor_seq - newest <= retrieval.recency_window


def intent_factor(kind: str, norm_question: bool, retrieval: RetrievalSettings) -> float:
    """1 + `retrieval.intentBoost` for a preference, constraint or decision when the
    question asks about a rule, limit or liking ("what should I avoid?", 晚饭不能吃什么)."""
    if not norm_question or kind not in NORM_KINDS:
        return 1.0
    return 1.0 + strength(retrieval, "intent")


def score_item(
    item: MemoryItem,
    relevance: float,
    signals: QuerySignals,
    retrieval: RetrievalSettings,
    anchor_seq: int | None,
    norm_question: bool = False,
) -> RankedItem:
    """An item's final score: its relevance times the bounded priors."""
    exact = exact_hits(item.content, signals)
    score = relevance * prior_factor(item.kind, item.evidence_type, retrieval)
    score *= intent_factor(item.kind, norm_question, retrieval)
    score *= exact_factor(len(exact), retrieval)
    linked = item.superseded_by is not None
    if linked and not ablated(retrieval, "supersession"):
        score *= 1.0 - SUPERSESSION_PENALTY
    recent = is_recent(newest_source_seq(item), anchor_seq, retrieval)
    score *= recency_factor(recent, retrieval)
    return RankedItem(item, score, relevance, exact, recent, linked)


def lower_redundant(
    scored: Sequence[RankedItem], session_id: str, retrieval: RetrievalSettings
) -> list[RankedItem]:
    """The ranked items (best first) with each one whose every source turn a better item
    already cites scored `redundancyPenalty` lower, and sorted again: a second sentence of
    the same turn adds no evidence, so it does not take a place the next turn could have."""
    penalty = strength(retrieval, "redundancy")
    if penalty <= 0:
        return list(scored)
    cited: set[int] = set()
    result: list[RankedItem] = []
    for ranked in scored:
        seqs = source_seqs(ranked.item) if ranked.item.session_id == session_id else ()
        if seqs and cited.issuperset(seqs):
            ranked = replace(ranked, score=ranked.score * (1.0 - penalty))
        cited.update(seqs)
        result.append(ranked)
    result.sort(key=best_first)
    return result


def best_first(ranked: RankedItem) -> tuple[float, int, str]:
    """The items' order: score, then the newer statement, then the id (never the store's)."""
    return (-round(ranked.score, 9), -(newest_source_seq(ranked.item) or -1), ranked.item.id)


class EventScorer:
    """A raw turn's score on the items' scale, and whether it earned the recency boost.

    The factors that do not depend on the turn are worked out once: a step scores every
    pooled turn, hundreds of them. Same products, same order as an item's."""

    def __init__(
        self, signals: QuerySignals, retrieval: RetrievalSettings, anchor: int | None
    ) -> None:
        self.signals, self.retrieval, self.anchor = signals, retrieval, anchor
        self.prior = prior_factor(None, None, retrieval)
        self.exact: dict[int, float] = {}
        self.recency = (recency_factor(False, retrieval), recency_factor(True, retrieval))

    def __call__(self, event: Event, relevance: float) -> tuple[float, bool]:
        hits = len(exact_hits(event.text, self.signals))
        factor = self.exact.get(hits)
        if factor is None:
            factor = self.exact[hits] = exact_factor(hits, self.retrieval)
        score = relevance * self.prior * factor
        recent = is_recent(event.seq, self.anchor, self.retrieval)
        return score * self.recency[recent], recent


# `relativeMinScore` is the floor's ratio for a block of this many tokens; a smaller block
# raises it in proportion (up to FLOOR_RATIO_CAP): a block that holds a fifth as much
# should hold only what is clearly relevant. REALTALK block recall by budget and ratio:
# 600 tokens 0.40 at 0.1, 0.55 at 0.3, 0.56 at 0.4; 1 200 tokens 0.59 at 0.1, 0.64 at 0.2
# and 0.3; 3 000 tokens 0.73 at 0.1, 0.67 at 0.3. The cap: at 600 tokens 0.4 costs the
# original synthetic set 0.023 of block recall, 0.3 nothing (docs/measurements.md). With
# concept expansion the default ratio is 0.22: REALTALK 0.731 in 1 408 tokens at 3 000
# (0.720 in 1 271 at 0.25, below the 0.727 it had at 0.1 before concepts).
FLOOR_BUDGET_TOKENS: Final = 3000
FLOOR_RATIO_CAP: Final = 0.3
FLOOR_RULE: Final = (
    "retrieval.minScore, or retrieval.relativeMinScore of the best candidate, raised for a "
    f"budget under {FLOOR_BUDGET_TOKENS} tokens"
)


def floor_ratio(retrieval: RetrievalSettings, budget_tokens: int | None = None) -> float:
    """The share of the best candidate's score an entry needs, for a block of this budget."""
    ratio = retrieval.relative_min_score
    if not budget_tokens or budget_tokens >= FLOOR_BUDGET_TOKENS:
        return ratio
    return max(ratio, min(ratio * FLOOR_BUDGET_TOKENS / budget_tokens, FLOOR_RATIO_CAP))


def score_floor(
    best: float | None, retrieval: RetrievalSettings, budget_tokens: int | None = None
) -> float:
    """The least score an entry needs: `minScore`, or `floor_ratio` of the best candidate."""
    floor = retrieval.min_score
    if best is None:
        return floor
    return max(floor, floor_ratio(retrieval, budget_tokens) * best)
