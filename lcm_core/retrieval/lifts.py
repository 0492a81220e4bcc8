"""After any retriever: the turn lifts, item relevance and project merging of `scoring`.

A retriever's pool holds its own relevance of each turn and of each item's text, for
one session. Here the turns a question points at are lifted (a chat log's speaker it
names, a day it names, the kind of token it asks for), then an item takes the better of
its own relevance and its source turns', and with `memory.scope` project the durable
items of the project's other sessions join, scored on the pool's scale
(`Pool.relevance_of`) times their share. None of it depends on how the retriever scored,
so a new retriever keeps them all.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Final

from lcm_core.capture.project import sibling_sessions
from lcm_core.config import Config
from lcm_core.config.sections import RetrievalSettings
from lcm_core.retrieval.citations import source_seqs
from lcm_core.retrieval.project import (
    PROJECT_FACTOR,
    newest_per_subject,
    project_items,
    project_scope,
)
from lcm_core.retrieval.rerank import kind_factors
from lcm_core.retrieval.retriever import (
    Pool,
    Retriever,
    ScoredTurn,
    question_terms,
    retriever_for,
)
from lcm_core.retrieval.signals import ablated, strength
from lcm_core.store.models import MemoryItem, Session
from lcm_core.store.ports import MemoryStore
from lcm_core.text.dates import named_days, on_named_day, speaks_of_named_day
from lcm_core.text.query import QuerySignals
from lcm_core.text.relevance import text_bag
from lcm_core.text.speakers import chat_speakers, may_name, named_speakers, speaker_of, writes_names
from lcm_core.text.tokens import WORD_RUN_RE

# The newest seqs whose turns say whether the session is a chat log ("Emi: ...").
CHAT_LOG_WINDOW: Final = 200


def turn_types(config: Config) -> list[str] | None:
    """The event types a pooled turn may have: the quotable ones (`assembly.evidenceTypes`)."""
    evidence_types = [str(t) for t in config.assembly.evidence_types]
    return None if "*" in evidence_types else sorted(set(evidence_types))


def scored_pool(
    store: MemoryStore,
    session_id: str,
    signals: QuerySignals,
    config: Config,
    retriever: Retriever | None = None,
) -> Pool:
    """The pool of `retriever` (else the one `retrieval.retriever` names), lifted and merged."""
    finder = retriever if retriever is not None else retriever_for(config.retrieval)
    types = turn_types(config)
    pool = finder.pool(store, session_id, signals.text, types)
    if not pool.asked:
        return pool
    siblings = sibling_sessions(store, session_id) if project_scope(config) else ()
    return lifted(store, session_id, signals.text, pool, config.retrieval, types, siblings)


def lifted(
    store: MemoryStore,
    session_id: str,
    text: str,
    pool: Pool,
    retrieval: RetrievalSettings,
    types: Sequence[str] | None,
    siblings: Sequence[Session] = (),
) -> Pool:
    """`pool` with its turns lifted, its items' relevance made and project items merged."""
    turns = dict(pool.turns)
    if turns and strength(retrieval, "speaker") > 0:
        _lift_named_speakers(store, session_id, text, types, turns, retrieval)
    if turns and strength(retrieval, "day") > 0:
        _lift_named_days(turns, named_days(text), 1.0 + retrieval.day_weight)
    if turns and retrieval.rerank_depth > 0:
        _second_look(turns, text, retrieval)
    if ablated(retrieval, "items"):
        return replace(pool, items=(), turns=turns, session_id=session_id)
    items: list[tuple[MemoryItem, float]] = []
    for item, relevance in pool.items:
        if item.session_id != session_id:
            continue  # a retriever answers for one session; the project's come below
        for seq in source_seqs(item):
            if seq in turns:
                relevance = max(relevance, turns[seq].relevance)
        items.append((item, relevance))
    others: list[tuple[MemoryItem, float]] = []
    if siblings:
        # Their text is scored on this pool's scale; their source turns are another
        # session's, so only their own text counts.
        found = project_items(
            store, session_id, siblings, question_terms(text, retrieval).filters()
        )
        others = [(item, PROJECT_FACTOR * pool.relevance_of(item.content)) for item in found]
    replaced: set[int] = set()
    if others:
        kept = newest_per_subject(items + others, lambda entry: entry[0])
        # This session's statements a newer one of the project replaced are old values
        # now: their turns are no current raw evidence either.
        kept_ids = {item.id for item, _ in kept}
        for item, _ in items:
            if item.id not in kept_ids:
                for seq in source_seqs(item):
                    turns.pop(seq, None)
                    replaced.add(seq)
        items = kept
    return replace(
        pool,
        items=tuple(items),
        turns=turns,
        session_id=session_id,
        replaced=pool.replaced | frozenset(replaced),
    )


def _lift_named_speakers(
    store: MemoryStore,
    session_id: str,
    text: str,
    types: Sequence[str] | None,
    turns: dict[int, ScoredTurn],
    retrieval: RetrievalSettings,
) -> None:
    """Multiply the turns of a chat log's speakers the question names by 1 + speakerWeight.

    Whether the session is a chat log is asked of its newest turns, not of the pool: a
    question about errors pools the "Error: ..." turns of a work session.
    """
    heads = {seq: speaker_of(turn.event.text) for seq, turn in turns.items()}
    names = {name for name in heads.values() if name is not None}
    if not names:
        return
    stop, stemmed = not ablated(retrieval, "stopwords"), not ablated(retrieval, "stemming")
    terms = question_terms(text, retrieval)
    asked = {
        name
        for name in names
        if any(t in terms.weights for t in text_bag(name, stop, stemmed).counts)
    }
    newest = store.max_event_seq(session_id)
    if newest is None or not (asked or may_name(text)):
        return  # the question names no one: nothing to read
    start = max(newest - CHAT_LOG_WINDOW + 1, 0)
    recent = store.list_events(session_id, start_seq=start, end_seq=newest, types=types)
    if not writes_names(event.text for event in recent):
        return
    texts = {event.seq: event.text for event in recent}
    texts.update((seq, turn.event.text) for seq, turn in turns.items())
    speakers = chat_speakers(texts.values())
    named = (asked & speakers) | named_speakers(text, texts.values(), speakers)
    if not named:
        return
    factor = 1.0 + retrieval.speaker_weight
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


def _second_look(turns: dict[int, ScoredTurn], text: str, retrieval: RetrievalSettings) -> None:
    """Lift the best `rerankDepth` turns that hold the kind of token the question asks for
    (`rerank`): a date for "when", a place for "where", a name for "who", a number."""
    weight = strength(retrieval, "answer-kind")
    if weight <= 0:
        return
    best = sorted(turns.items(), key=lambda p: (-p[1].relevance, p[0]))[: retrieval.rerank_depth]
    texts = {seq: turn.event.text for seq, turn in best}
    # The question's words and the speakers' names are no answer: they are asked about.
    known = {word.casefold() for word in WORD_RUN_RE.findall(text)}
    known |= {name.casefold() for t in texts.values() if (name := speaker_of(t)) is not None}
    for seq, factor in kind_factors(texts, text, known, weight).items():
        turns[seq] = replace(turns[seq], relevance=turns[seq].relevance * factor)
