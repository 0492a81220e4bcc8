"""The Retriever seam: one query's candidates on one relevance scale, and the retrievers.

A retriever answers one question: for this query, which memory items and which raw
turns are candidates, and how relevant is each, on ONE scale. What happens after (the
lifts, project merging, priors, the floor: `scoring` states the whole formula) applies
whatever retriever produced the pool, and `retrieval.retriever` selects one:

- `lexical` (the default): BM25 over the session's turns with the previous message as
  context and the turn's day (episode) as a prior;
- `plain`: the same BM25 of a turn's own text only (no context, no day prior), a
  reference with the same lifts after it. It is not the bench's frozen BM25 baseline
  (`bench/bm25.py`): it keeps lcm's tokens, stems, bridge and idf.

A retriever answers for one session: the project's other sessions are searched after
it (`lifts`), on its scale (`Pool.relevance_of`).

A turn's context is the message right before it (the turn it answers or follows). An
episode is the turn's session day (its `time` date), or a window of `EPISODE_SEQS`
seqs when events carry no time; an episode's score is BM25 over the episode as a whole
(each term counted once per matching turn, saturated), so the turns of the day a topic
was discussed rise together.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Final, Protocol

from lcm_core.config.sections import RetrievalSettings
from lcm_core.retrieval.citations import source_seqs
from lcm_core.retrieval.signals import ablated, strength
from lcm_core.store.models import Event, MemoryItem
from lcm_core.store.ports import MemoryStore
from lcm_core.text.dates import said_on
from lcm_core.text.relevance import (
    Bag,
    Corpus,
    QueryTerms,
    Scorer,
    corpus_of,
    query_terms,
    saturation,
    text_bag,
)

# Raw turns read per query: enough that term frequencies stay close to the session's.
TURN_POOL: Final = 400
ITEM_POOL: Final = 100
# Turns whose context is read: the best by their own score.
CONTEXT_POOL: Final = 120
# Without timestamps an episode is a window of this many seqs.
EPISODE_SEQS: Final = 50
# Message types whose text is a turn of the conversation (context of the next one).
MESSAGE_TYPES: Final = ("user/message", "assistant/message")


@dataclass(frozen=True, slots=True)
class ScoredTurn:
    """A raw turn and its relevance on the pool's scale."""

    event: Event
    relevance: float


def _irrelevant(text: str) -> float:
    return 0.0


@dataclass(frozen=True, slots=True)
class Pool:
    """One query's candidates on one relevance scale: items and raw turns.

    Until `lifts.lifted` has run, an item's relevance is its own text's; after, it is
    the item relevance of `scoring`'s formula.
    """

    items: tuple[tuple[MemoryItem, float], ...] = ()
    turns: dict[int, ScoredTurn] = field(default_factory=dict)
    # False when the query gave nothing to look for (a question of stop words only).
    asked: bool = True
    # The relevance of any other text on the pool's scale (an exact match found apart).
    relevance_of: Callable[[str], float] = field(default=_irrelevant, compare=False)
    # Turns that can never be quoted in this step (the question's own turn, turns on
    # screen): they match the question best of all, so they must not set the floor.
    unquotable: frozenset[int] = frozenset()
    # The session the pool is for: items of another session (project scope) cite seqs
    # of their own session, never this one's turns.
    session_id: str = ""
    # Turns whose statement a newer one of the project replaced: old values, never
    # quoted as current (not even beside a matching turn).
    replaced: frozenset[int] = frozenset()

    @property
    def best(self) -> float:
        """The highest relevance among the candidates that may be quoted (0 when none)."""
        scores = [
            s
            for item, s in self.items
            if item.session_id != self.session_id
            or not (seqs := source_seqs(item))
            or not set(seqs) <= self.unquotable
        ]
        scores += [t.relevance for seq, t in self.turns.items() if seq not in self.unquotable]
        return max(scores, default=0.0)


class Retriever(Protocol):
    """Anything that turns a query into a scored candidate pool for one session.

    `turn_types` are the event types a turn may have (None: any). Items of another
    session in its pool are dropped: project scope is added after it, for any retriever.
    """

    def pool(
        self,
        store: MemoryStore,
        session_id: str,
        text: str,
        turn_types: Sequence[str] | None,
    ) -> Pool: ...


def question_terms(text: str, retrieval: RetrievalSettings) -> QueryTerms:
    """The question's relevance terms with the query signals' switches applied: the one
    set of terms the retriever, the lifts and the quoting use."""
    return query_terms(
        text,
        bridge=not ablated(retrieval, "bridge"),
        stop=not ablated(retrieval, "stopwords"),
        stemmed=not ablated(retrieval, "stemming"),
        concepts=not ablated(retrieval, "concepts"),
    )


def episode_key(event: Event) -> str:
    """The episode a turn belongs to: its day, or a window of seqs when it has no time."""
    return said_on(event.time) or f"#{event.seq // EPISODE_SEQS}"


class LexicalRetriever:
    """BM25 over the session's turns, with the previous turn as context and an episode prior."""

    def __init__(self, retrieval: RetrievalSettings, *, parts: bool = True) -> None:
        self.retrieval = retrieval
        # `plain` is this without the context and the episode parts.
        self.parts = parts

    def pool(
        self,
        store: MemoryStore,
        session_id: str,
        text: str,
        turn_types: Sequence[str] | None,
    ) -> Pool:
        retrieval = self.retrieval
        stop, stemmed = not ablated(retrieval, "stopwords"), not ablated(retrieval, "stemming")
        terms = question_terms(text, retrieval)
        if terms.empty:
            return Pool(asked=False)

        def tokens(one: str) -> Bag:
            return text_bag(one, stop, stemmed)

        filters = list(terms.filters())
        hits = store.search_events(session_id, filters, types=turn_types, limit=TURN_POOL)
        newest = store.max_event_seq(session_id)
        scope = (newest + 1) if newest is not None else len(hits)
        events = [hit.event for hit in hits]
        bags = [tokens(e.text) for e in events]
        corpus = corpus_of(bags, scope, terms)
        if ablated(retrieval, "idf"):
            corpus = Corpus(corpus.rows, {}, corpus.average_length)
        score = Scorer.of(terms, corpus)
        own = {e.seq: score(bag) for e, bag in zip(events, bags, strict=True)}
        turns = self._turns(store, session_id, events, bags, own, score, tokens)
        found = store.search_items(session_id, filters, statuses=("active",), limit=ITEM_POOL)
        items = [(hit.item, score(tokens(hit.item.content))) for hit in found]
        return Pool(
            tuple(items),
            turns,
            relevance_of=lambda one: score(tokens(one)),
            session_id=session_id,
        )

    def _turns(
        self,
        store: MemoryStore,
        session_id: str,
        events: Sequence[Event],
        bags: Sequence[Bag],
        own: dict[int, float],
        score: Scorer,
        tokens: Callable[[str], Bag],
    ) -> dict[int, ScoredTurn]:
        context_weight = strength(self.retrieval, "context") if self.parts else 0.0
        episode_weight = strength(self.retrieval, "episode") if self.parts else 0.0
        context: dict[int, float] = {}
        if context_weight > 0 and events:
            context = _context_scores(store, session_id, events, own, score, tokens)
        keys = [episode_key(e) for e in events]
        episodes: dict[str, float] = {}
        if episode_weight > 0:
            episodes = _episode_scores(keys, bags, score)
        top_episode = max(episodes.values(), default=0.0)
        scored: dict[int, ScoredTurn] = {}
        for event, key in zip(events, keys, strict=True):
            seq = event.seq
            before = context.get(seq, 0.0)
            base = own[seq] + context_weight * before
            share = episodes.get(key, 0.0) / top_episode if top_episode else 0.0
            scored[seq] = ScoredTurn(event, base * (1.0 + episode_weight * share))
        return scored


# `retrieval.retriever` -> how to build it from the retrieval settings.
RETRIEVERS: Final[dict[str, Callable[[RetrievalSettings], Retriever]]] = {
    "lexical": LexicalRetriever,
    "plain": lambda retrieval: LexicalRetriever(retrieval, parts=False),
}


def retriever_for(retrieval: RetrievalSettings) -> Retriever:
    """The retriever `retrieval.retriever` names."""
    return RETRIEVERS[retrieval.retriever](retrieval)


def _context_scores(
    store: MemoryStore,
    session_id: str,
    events: Sequence[Event],
    own: dict[int, float],
    score: Scorer,
    tokens: Callable[[str], Bag],
) -> dict[int, float]:
    """seq -> the BM25 of the message right before it, for the best turns by own score."""
    context: dict[int, float] = {}
    best = sorted(events, key=lambda e: (-own[e.seq], e.seq))[:CONTEXT_POOL]
    wanted = sorted({e.seq - 1 for e in best if e.seq > 0})
    before = {e.seq: e for e in store.get_events(session_id, wanted)}
    for event in best:
        previous = before.get(event.seq - 1)
        if previous is not None and previous.type in MESSAGE_TYPES:
            # A pooled previous turn's BM25 is its own score: the same sum.
            known = own.get(previous.seq)
            if known is None:
                known = score(tokens(previous.text))
            context[event.seq] = known
    return context


def _episode_scores(keys: Sequence[str], bags: Sequence[Bag], score: Scorer) -> dict[str, float]:
    """Episode -> BM25 over the episode as a whole (each term counted once per turn)."""
    per_term: dict[str, dict[str, int]] = {}
    terms = tuple(score.factors)
    for key, bag in zip(keys, bags, strict=True):
        counts = bag.counts
        for token in terms:
            if token in counts:
                held = per_term.setdefault(key, {})
                held[token] = held.get(token, 0) + 1
    # Summed in term order: a set's order changes with the process's hash seed, and a
    # float sum in another order differs in its last bits.
    return {
        key: sum(score.factors[t] * saturation(n) for t, n in sorted(counts.items()))
        for key, counts in per_term.items()
    }
