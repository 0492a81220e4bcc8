"""Raw evidence for a query: cited events, exact matches and the best-matching user turns.

Candidates are the sources of the selected items, events holding a number, path or
quoted phrase of the query, and the raw turns of the retriever's pool (so a fact said in
passing, which extraction never made an item, can still be quoted). All are on one
scale (`scoring` states the formula): a cited row carries the score of its best item,
any other row its turn score. Rows go best first, an item's source before a raw turn of
equal score, up to `retrieval.evidenceLimit`; a raw turn under the floor is left out,
like an item. Turns this step cannot quote (its own input, turns
still on screen) never set that floor: they match the question best of all. Evidence
clusters, so a quotable turn of the same day next to a strong candidate competes with a
share of its score (`with_neighbours`; `explain` names the match it sits beside).

Rows are read verbatim (from the archive when the event was archived). Text another
plugin or the runtime generated never counts as evidence, and only the event types in
`assembly.evidenceTypes` may be quoted: tool output can carry injected instructions or
false numbers, so it is searchable but not pasted into the request by default. A
user-role message that carries tool output or model text counts as that type. A raw
turn that is the source of a superseded, retracted or disputed item is not quoted: its
value is not current, and the notice section shows old and disputed values as such. The
source of a superseded item is not quoted as the evidence of any item either. A raw
turn the host still holds in its history (`in_history`, the host's surface) is not
quoted again: the model can read it, and every copy would stay in the history too. Nor
is a raw turn whose words are nearly all in the step's own text (`ECHO_SHARE`): it
says nothing the step does not, as when the same chatter or question comes back.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, replace
from operator import itemgetter
from typing import Final

from lcm_core.capture.events import is_generated
from lcm_core.config import Config
from lcm_core.retrieval.citations import source_seqs
from lcm_core.retrieval.lifts import scored_pool
from lcm_core.retrieval.neighbours import neighbour_lifts, spreads
from lcm_core.retrieval.quoting import (
    Candidate,
    EvidenceSet,
    Walk,
    historical_sources,
    quotable,
)
from lcm_core.retrieval.rank import anchor_seq_of, rank_items
from lcm_core.retrieval.ranked import RankedItem, Ranking
from lcm_core.retrieval.retriever import Pool, Retriever
from lcm_core.retrieval.scoring import EventScorer, score_floor
from lcm_core.retrieval.shown import Shown
from lcm_core.retrieval.signals import ablated
from lcm_core.store.models import Event, MemoryItem
from lcm_core.store.ports import MemoryStore
from lcm_core.text.query import QuerySignals, evidence_terms, exact_hits

# Event types whose rows are searched for exact matches besides the quotable ones, so
# that explain can say why a matching tool result was not quoted. Chunks are left out:
# they repeat the assistant message piece by piece.
REPORTED_TYPES: Final = ("assistant/message", "tool/result")


def without_own_input(
    pool: Pool,
    signals: QuerySignals,
    is_visible: Callable[[Event], bool] | None,
    current_turn: int | None,
) -> Pool:
    """The pool with the turns this step cannot quote marked, so they do not set the floor:
    the current turn's messages, the question's own text and turns still on screen."""
    query = signals.text.strip().casefold()

    def unquotable_turn(event: Event) -> bool:
        return (
            (current_turn is not None and event.turn == current_turn)
            or bool(query and event.text.strip().casefold() == query)
            or (is_visible is not None and is_visible(event))
        )

    if not pool.turns:
        return pool
    # Mostly the best turn may be quoted and nothing is marked: it is found without
    # sorting the pool (the least seq among the best relevance, the sort's first).
    best = max(pooled.relevance for pooled in pool.turns.values())
    first = min(seq for seq, pooled in pool.turns.items() if pooled.relevance == best)
    if not unquotable_turn(pool.turns[first].event):
        return pool
    # Only the turns above the best quotable one can change the floor: stop there.
    unquotable: set[int] = set()
    for seq, turn in sorted(pool.turns.items(), key=lambda p: (-p[1].relevance, p[0])):
        if not unquotable_turn(turn.event):
            break
        unquotable.add(seq)
    if not unquotable or unquotable <= pool.unquotable:
        return pool
    return replace(pool, unquotable=pool.unquotable | frozenset(unquotable))


def gather_evidence(
    store: MemoryStore,
    session_id: str,
    ranked: Sequence[RankedItem],
    signals: QuerySignals,
    config: Config,
    *,
    is_visible: Callable[[Event], bool] | None = None,
    anchor_seq: int | None = None,
    current_turn: int | None = None,
    pool: Pool | None = None,
    in_history: frozenset[int] = frozenset(),
    floor: float | None = None,
) -> EvidenceSet:
    """Sources of the ranked items, exact matches and raw turns, best first, up to the limit.

    Without a `pool` the lexical retriever's pool is built here. `floor` is `score_floor`
    of the given `pool` when the caller has worked it out (it scans the whole pool).

    A raw user message of `current_turn` is the input of this very step, not history,
    and so is a stored turn whose text is the query itself.
    """
    evidence_types = [str(t) for t in config.assembly.evidence_types]
    limit = config.retrieval.evidence_limit
    cited: dict[int, list[str]] = {}
    cited_score: dict[int, float] = {}
    for ranked_item in ranked:
        if ranked_item.item.session_id != session_id:
            continue  # another session's item (project scope): its seqs are not this session's
        for seq in source_seqs(ranked_item.item):
            cited.setdefault(seq, []).append(ranked_item.item.id)
            cited_score.setdefault(seq, ranked_item.score)
    events = {e.seq: e for e in store.get_events(session_id, sorted(cited))} if cited else {}
    exact_terms = evidence_terms(signals)
    if exact_terms:
        types = None if "*" in evidence_types else sorted({*evidence_types, *REPORTED_TYPES})
        for hit in store.search_events(
            session_id, exact_terms, types=types, limit=max(limit * 3, 12)
        ):
            if any(t in exact_terms for t in exact_hits(hit.event.text, signals)):
                events.setdefault(hit.event.seq, hit.event)  # not "30" inside "300"
    given = pool
    if pool is None:
        pool = scored_pool(store, session_id, signals, config)
    pool = without_own_input(pool, signals, is_visible, current_turn)
    if floor is None or pool is not given:
        floor = score_floor(pool.best, config.retrieval)  # this step's own input changed it
    # The raw turns: the retriever's pool, already scored on the items' scale.
    searched: dict[int, float] = {}
    if limit > 0 and not ablated(config.retrieval, "raw-turns"):
        for seq, pooled in pool.turns.items():
            if pooled.relevance > 0.0:
                searched[seq] = pooled.relevance
                events.setdefault(seq, pooled.event)
    scorer = EventScorer(signals, config.retrieval, anchor_seq)
    keyed: list[tuple[tuple[float, int, int], Candidate]] = []
    for index, (seq, item_ids) in enumerate(cited.items()):
        source = Candidate(seq, events.get(seq), tuple(item_ids), cited_score[seq])
        keyed.append((source.key(index), source))
    for seq, event in events.items():
        if seq not in cited:
            search = searched.get(seq)
            if search is None:
                search = pool.relevance_of(event.text)
            score, recent = scorer(event, search)
            turn = Candidate(seq, event, (), score, search, recent)
            keyed.append((turn.key(-seq), turn))
    keyed.sort(key=itemgetter(0))
    candidates = [one for _, one in keyed]
    historical = historical_sources(store, session_id) if candidates else {}
    walk = Walk(store, config, signals, is_visible, historical, current_turn, in_history)
    walk.min_score = floor
    ordered = with_neighbours(
        store, session_id, candidates, config, floor, pool.replaced, walk.quotes
    )
    return walk.select(ordered)


def with_neighbours(
    store: MemoryStore,
    session_id: str,
    ordered: Sequence[Candidate],
    config: Config,
    floor: float,
    replaced: Collection[int] = (),
    quoted: Callable[[Candidate], bool] = lambda one: True,
) -> list[Candidate]:
    """The candidates with the quotable turns next to the strong ones, best first
    (`neighbours`). Only a candidate that will be quoted (`quoted`: not the step's own
    text, not an echo, not on screen, not an old value) and is strong enough to lift a
    neighbour over the floor spreads: a turn left out must not bring its neighbours in."""
    if not spreads(config.retrieval):
        return list(ordered)
    share = config.retrieval.neighbour_share
    # Only the first `evidenceLimit` strong candidates spread: asking whether the rest
    # would be quoted is work for nothing.
    strong: list[tuple[int, float, Event]] = []
    for one in ordered:
        if len(strong) >= config.retrieval.evidence_limit:
            break
        if one.event is not None and one.score * share >= floor and quoted(one):
            strong.append((one.seq, one.score, one.event))
    evidence_types = [str(t) for t in config.assembly.evidence_types]

    def may_quote(event: Event) -> bool:
        # Only a turn that may be quoted is worth a candidate: the walk says why for others.
        return quotable(event, evidence_types) and not is_generated(event)

    known = {one.seq: one.event for one in ordered}
    lifts, read = neighbour_lifts(
        store, session_id, strong, known, config.retrieval, may_quote, replaced
    )
    result: list[Candidate] = []
    for one in ordered:
        lift = lifts.get(one.seq)
        if lift is not None and not one.item_ids and lift.score > one.score:
            one = replace(one, score=lift.score, neighbour_of=lift.beside)
        result.append(one)
    for event in sorted(read, key=lambda e: -e.seq):  # newer first, as raw turns go
        lift = lifts[event.seq]
        result.append(Candidate(event.seq, event, (), lift.score, neighbour_of=lift.beside))
    # Best first, an item's source before a raw turn; a stable sort keeps the order of
    # `key` among equals, and the new turns after them.
    result.sort(key=lambda one: (one.rank, 1 if not one.item_ids else 0))
    return result


@dataclass(frozen=True, slots=True)
class Retrieval:
    """What one query retrieved: the ranked items and the evidence rows."""

    ranking: Ranking
    evidence: EvidenceSet

    def merged(self) -> list[tuple[str, float, tuple[int, ...]]]:
        """Items and raw turns in one list by final score: (ref, score, source seqs).

        This is the order the assembler consumes; an item's own sources are not listed
        again, and an item wins a tie with a raw turn.
        """
        entries = [(r.item.id, r.score, source_seqs(r.item), 0) for r in self.ranking.selected]
        entries += [
            (row.ref, row.score, (row.event.seq,), 1) for row in self.evidence.rows if row.raw
        ]
        keyed = sorted(enumerate(entries), key=lambda p: (-round(p[1][1], 9), p[1][3], p[0]))
        return [(ref, score, seqs) for _, (ref, score, seqs, _raw) in keyed]


def _or_quoted_before(
    is_visible: Callable[[Event], bool] | None, seqs: frozenset[int]
) -> Callable[[Event], bool]:
    """An event an earlier block still in context quotes is as good as on screen."""

    def visible(event: Event) -> bool:
        return event.seq in seqs or (is_visible is not None and is_visible(event))

    return visible


def retrieve(
    store: MemoryStore,
    session_id: str,
    signals: QuerySignals,
    config: Config,
    *,
    visible_ids: Callable[[Sequence[MemoryItem]], frozenset[str]] | None = None,
    is_visible: Callable[[Event], bool] | None = None,
    current_turn: int | None = None,
    shown: Shown | None = None,
    retriever: Retriever | None = None,
    in_history: frozenset[int] = frozenset(),
    budget_tokens: int | None = None,
) -> Retrieval:
    """Pool the candidates, rank items, then gather their evidence and the raw turns.

    `budget_tokens` is the block's budget: a smaller one raises the floor (`floor_ratio`).
    """
    pool = scored_pool(store, session_id, signals, config, retriever)
    anchor = anchor_seq_of(store, session_id) if pool.asked else None
    shown = shown or Shown()
    if shown.seqs:
        is_visible = _or_quoted_before(is_visible, shown.seqs)
    pool = without_own_input(pool, signals, is_visible, current_turn)
    # Ranking and evidence share it: it scans the pool.
    floor = score_floor(pool.best, config.retrieval, budget_tokens)
    ranking = rank_items(
        store,
        session_id,
        signals,
        config,
        anchor_seq=anchor,
        visible_ids=visible_ids,
        shown_ids=shown.items,
        pool=pool,
        floor=floor,
    )
    # The sources of matching items an earlier block still lists are as good as quoted.
    sources = {
        seq for item in ranking.listed if item.session_id == session_id for seq in source_seqs(item)
    }
    if sources:
        is_visible = _or_quoted_before(is_visible, frozenset(sources))

    evidence = gather_evidence(
        store,
        session_id,
        ranking.selected,
        signals,
        config,
        is_visible=is_visible,
        anchor_seq=anchor,
        current_turn=current_turn,
        pool=pool,
        in_history=in_history,
        floor=floor,
    )
    return Retrieval(ranking, evidence)
