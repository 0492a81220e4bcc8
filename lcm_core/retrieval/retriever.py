"""The Retriever seam and its first implementation: one lexical candidate pool per query.

A retriever answers one question: for this query, which memory items and which raw
turns are candidates, and how relevant is each, on ONE scale. Ranking (kind, evidence,
supersession and recency priors, the exact-match boost, limits) happens after, in
`retrieval` and `evidence`, whatever retriever produced the pool; a semantic retriever
can be plugged in later without touching them.

`LexicalRetriever` scores with `relevance.bm25`, idf taken over the session's turns:

    turn  = (own + contextWeight * previous message) * (1 + episodeWeight * episode / best episode)
            * (1 + speakerWeight, when the question names the turn's speaker)
            * (1 + dayWeight, when the question names the day the turn was said or speaks of)
            * (1 + answerKindWeight, when among the best `rerankDepth` it holds the kind
               of token the question asks for: a date, a place, a name, a number; `rerank`)
    item  = the larger of its own text's BM25 and its best-scoring source turn's

A turn's context is the message right before it (the turn it answers or follows). An
episode is the turn's session day (its `time` date), or a window of `EPISODE_SEQS`
seqs when events carry no time; an episode's score is BM25 over the episode as a whole
(each term counted once per matching turn, saturated), so the turns of the day a topic
was discussed rise together. In a chat log ("Emi: ...", `text.speakers`) a question that
names a speaker ("What did Emi paint?") is mostly answered by that speaker's own turns,
while the name itself, heading half the turns, weighs almost nothing in BM25.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Final, Protocol

from lcm_core.capture.project import sibling_sessions
from lcm_core.config import Config
from lcm_core.retrieval.citations import source_seqs
from lcm_core.retrieval.project import (
    PROJECT_FACTOR,
    newest_per_subject,
    project_items,
    project_scope,
)
from lcm_core.retrieval.rerank import kind_factors
from lcm_core.store.models import Event, MemoryItem
from lcm_core.store.ports import MemoryStore
from lcm_core.text.dates import named_days, on_named_day, said_on, speaks_of_named_day
from lcm_core.text.relevance import (
    Bag,
    Corpus,
    QueryTerms,
    Scorer,
    asks_for_norm,
    corpus_of,
    query_terms,
    saturation,
    text_bag,
)
from lcm_core.text.speakers import chat_speakers, speaker_of, writes_names
from lcm_core.text.tokens import WORD_RUN_RE

# Raw turns read per query: enough that term frequencies stay close to the session's.
TURN_POOL: Final = 400
ITEM_POOL: Final = 100
# Turns whose context is read: the best by their own score.
CONTEXT_POOL: Final = 120
# Without timestamps an episode is a window of this many seqs.
EPISODE_SEQS: Final = 50
# The newest seqs whose turns say whether the session is a chat log ("Emi: ...").
CHAT_LOG_WINDOW: Final = 200
# Message types whose text is a turn of the conversation (context of the next one).
MESSAGE_TYPES: Final = ("user/message", "assistant/message")


@dataclass(frozen=True, slots=True)
class ScoredTurn:
    """A raw turn and the parts of its relevance."""

    event: Event
    relevance: float
    own: float
    context: float = 0.0
    episode: float = 0.0


@dataclass(frozen=True, slots=True)
class Pool:
    """One query's candidates on one relevance scale: items and raw turns."""

    terms: QueryTerms
    corpus: Corpus = field(default_factory=lambda: Corpus(0, {}, 1.0))
    items: tuple[tuple[MemoryItem, float], ...] = ()
    turns: dict[int, ScoredTurn] = field(default_factory=dict)
    # The question asks about a rule, limit or liking (see `relevance.asks_for_norm`).
    norm: bool = False
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
    """Anything that turns a query into a scored candidate pool for one session."""

    def pool(
        self,
        store: MemoryStore,
        session_id: str,
        text: str,
        config: Config,
        turn_types: Sequence[str] | None,
    ) -> Pool: ...


def _ablated(config: Config, name: str) -> bool:
    return name in config.retrieval.ablate


def episode_key(event: Event) -> str:
    """The episode a turn belongs to: its day, or a window of seqs when it has no time."""
    return said_on(event.time) or f"#{event.seq // EPISODE_SEQS}"


class LexicalRetriever:
    """BM25 over the session's turns, with the previous turn as context and an episode prior."""

    def pool(
        self,
        store: MemoryStore,
        session_id: str,
        text: str,
        config: Config,
        turn_types: Sequence[str] | None,
    ) -> Pool:
        terms = query_terms(
            text,
            bridge=not _ablated(config, "bridge"),
            stop=not _ablated(config, "stopwords"),
            stemmed=not _ablated(config, "stemming"),
        )
        if terms.empty:
            return Pool(terms)
        tokens = _Bags(
            stop=not _ablated(config, "stopwords"), stemmed=not _ablated(config, "stemming")
        )
        filters = list(terms.filters())
        hits = store.search_events(session_id, filters, types=turn_types, limit=TURN_POOL)
        newest = store.max_event_seq(session_id)
        scope = (newest + 1) if newest is not None else len(hits)
        events = [hit.event for hit in hits]
        bags = [tokens(e.text) for e in events]
        corpus = corpus_of(bags, scope, terms)
        if _ablated(config, "idf"):
            corpus = Corpus(corpus.rows, {}, corpus.average_length)
        score = Scorer.of(terms, corpus)
        own = {e.seq: score(bag) for e, bag in zip(events, bags, strict=True)}
        turns = self._turns(store, session_id, events, bags, own, score, config, tokens)
        if events and not _ablated(config, "speaker") and config.retrieval.speaker_weight > 0:
            _lift_named_speakers(
                store, session_id, newest, turn_types, turns, score, tokens, config
            )
        if events and not _ablated(config, "day") and config.retrieval.day_weight > 0:
            _lift_named_days(turns, named_days(text), 1.0 + config.retrieval.day_weight)
        if events and config.retrieval.rerank_depth > 0:
            _second_look(turns, text, config)
        items: list[tuple[MemoryItem, float]] = []
        replaced: set[int] = set()
        if not _ablated(config, "items"):
            found = store.search_items(session_id, filters, statuses=("active",), limit=ITEM_POOL)
            for hit in found:
                relevance = score(tokens(hit.item.content))
                for seq in source_seqs(hit.item):
                    if seq in turns:
                        relevance = max(relevance, turns[seq].relevance)
                items.append((hit.item, relevance))
            if project_scope(config):
                kept = self._with_project(store, session_id, filters, items, score, tokens)
                # This session's statements a newer one of the project replaced are old
                # values now: their turns are no current raw evidence either.
                kept_ids = {item.id for item, _ in kept}
                for item, _ in items:
                    if item.id not in kept_ids:
                        for seq in source_seqs(item):
                            turns.pop(seq, None)
                            replaced.add(seq)
                items = kept
        return Pool(
            terms,
            corpus,
            tuple(items),
            turns,
            asks_for_norm(text),
            session_id=session_id,
            replaced=frozenset(replaced),
        )

    @staticmethod
    def _with_project(
        store: MemoryStore,
        session_id: str,
        filters: Sequence[str],
        items: list[tuple[MemoryItem, float]],
        score: Scorer,
        tokens: _Bags,
    ) -> list[tuple[MemoryItem, float]]:
        """Add the project's other sessions' durable items, scored below this session's.

        Their text is scored on this session's idf (one scale); their source turns are
        another session's, so only their own text counts.
        """
        siblings = sibling_sessions(store, session_id)
        if not siblings:
            return items
        found = project_items(store, session_id, siblings, filters)
        merged = items + [(item, PROJECT_FACTOR * score(tokens(item.content))) for item in found]
        return newest_per_subject(merged, lambda entry: entry[0])

    @staticmethod
    def _turns(
        store: MemoryStore,
        session_id: str,
        events: Sequence[Event],
        bags: Sequence[Bag],
        own: dict[int, float],
        score: Scorer,
        config: Config,
        tokens: _Bags,
    ) -> dict[int, ScoredTurn]:
        context_weight = 0.0 if _ablated(config, "context") else config.retrieval.context_weight
        episode_weight = 0.0 if _ablated(config, "episode") else config.retrieval.episode_weight
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
            scored[seq] = ScoredTurn(
                event, base * (1.0 + episode_weight * share), own[seq], before, share
            )
        return scored


def _lift_named_speakers(
    store: MemoryStore,
    session_id: str,
    newest: int | None,
    turn_types: Sequence[str] | None,
    turns: dict[int, ScoredTurn],
    score: Scorer,
    tokens: _Bags,
    config: Config,
) -> None:
    """Multiply the turns of a chat log's speakers the question names by 1 + speakerWeight.

    Whether the session is a chat log is asked of its newest turns, not of the pool: a
    question about errors pools the "Error: ..." turns of a work session.
    """
    heads = {seq: speaker_of(turn.event.text) for seq, turn in turns.items()}
    asked = {
        name
        for name in set(heads.values())
        if name is not None and any(t in score.factors for t in tokens(name).counts)
    }
    if newest is None or not asked:
        return  # no pooled turn is headed by a name the question holds: nothing to read
    start = max(newest - CHAT_LOG_WINDOW + 1, 0)
    recent = store.list_events(session_id, start_seq=start, end_seq=newest, types=turn_types)
    if not writes_names(event.text for event in recent):
        return
    texts = {event.seq: event.text for event in recent}
    texts.update((seq, turn.event.text) for seq, turn in turns.items())
    named = asked & chat_speakers(texts.values())
    factor = 1.0 + config.retrieval.speaker_weight
    for seq, turn in turns.items():
        if heads[seq] in named:
            turns[seq] = replace(turn, relevance=turn.relevance * factor)


def _lift_named_days(turns: dict[int, ScoredTurn], days: frozenset[str], factor: float) -> None:
    """Multiply the turns said on a day the question names ("on 29 Dec 2023"), or that speak
    of it as "yesterday" or "tomorrow" the day after or before, by `factor`."""
    if not days:
        return
    for seq, turn in turns.items():
        event = turn.event
        if on_named_day(event.time, days) or speaks_of_named_day(event.time, event.text, days):
            turns[seq] = replace(turn, relevance=turn.relevance * factor)


def _second_look(turns: dict[int, ScoredTurn], text: str, config: Config) -> None:
    """Lift the best `rerankDepth` turns that hold the kind of token the question asks for
    (`rerank`): a date for "when", a place for "where", a name for "who", a number."""
    weight = 0.0 if _ablated(config, "answer-kind") else config.retrieval.answer_kind_weight
    if weight <= 0:
        return
    depth = config.retrieval.rerank_depth
    best = sorted(turns.items(), key=lambda p: (-p[1].relevance, p[0]))[:depth]
    texts = {seq: turn.event.text for seq, turn in best}
    # The question's words and the speakers' names are no answer: they are asked about.
    known = {word.casefold() for word in WORD_RUN_RE.findall(text)}
    known |= {name.casefold() for t in texts.values() if (name := speaker_of(t)) is not None}
    for seq, factor in kind_factors(texts, text, known, weight).items():
        turns[seq] = replace(turns[seq], relevance=turns[seq].relevance * factor)


def _context_scores(
    store: MemoryStore,
    session_id: str,
    events: Sequence[Event],
    own: dict[int, float],
    score: Scorer,
    tokens: _Bags,
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


@dataclass(frozen=True, slots=True)
class _Bags:
    """Bags of relevance tokens with the ablation switches applied."""

    stop: bool = True
    stemmed: bool = True

    def __call__(self, text: str) -> Bag:
        return text_bag(text, self.stop, self.stemmed)
