"""Evidence clusters: the turns next to a strong match, with a share of its score.

The evidence for a question clusters in a conversation: the question a matching answer
replies to, the message that goes on with it, a run of short messages on one topic, none
of which need share a word with the question. A turn of the same episode (session day,
`retriever.episode_key`) within `retrieval.neighbourRadius` seqs of a strong candidate is
offered `neighbourShare / distance` of that candidate's score; the caller keeps the offer
when it beats the turn's own score, so neighbours compete on the one relevance scale and
under the same floor, and never outrank the match they sit beside. In a chat log a
neighbour another speaker said is offered `neighbourOtherSpeaker` of that (the speaker
going on with a message carries its answer more often than the reply to it). Only the first
`evidenceLimit` strong candidates spread, and the turns not yet known are read in one
store call: the work is bounded by the limit, never by the size of the session.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass

from lcm_core.config.sections import RetrievalSettings
from lcm_core.retrieval.retriever import episode_key
from lcm_core.retrieval.signals import strength
from lcm_core.store.models import Event
from lcm_core.store.ports import MemoryStore
from lcm_core.text.speakers import speaker_of


@dataclass(slots=True)
class Lift:
    """A neighbour's inherited score and the seq of the match it sits beside.

    Not frozen: a step makes a hundred, and a frozen dataclass is slow to build."""

    score: float
    beside: int


def spreads(retrieval: RetrievalSettings) -> bool:
    """True when neighbours are on (`neighbourShare` and `neighbourRadius` above 0)."""
    return strength(retrieval, "neighbours") > 0.0 and retrieval.neighbour_radius > 0


def _other_speaker(turn: Event, match: Event | None) -> bool:
    """True when both turns are headed by a speaker's name ("Emi: ...") and not the same."""
    if match is None:
        return False
    mine, theirs = speaker_of(turn.text), speaker_of(match.text)
    return mine is not None and theirs is not None and mine != theirs


def neighbour_lifts(
    store: MemoryStore,
    session_id: str,
    strong: Sequence[tuple[int, float, Event]],
    known: Mapping[int, Event | None],
    retrieval: RetrievalSettings,
    may_quote: Callable[[Event], bool],
    replaced: Collection[int] = (),
) -> tuple[dict[int, Lift], list[Event]]:
    """The best offer per neighbouring seq, and the neighbours read from the store.

    `strong` are (seq, score, event) of the candidates that may spread, best first;
    `known` the candidates' events by seq. A turn whose statement a newer one replaced
    (`replaced`) or that `may_quote` rejects is never a neighbour.
    """
    share, radius = retrieval.neighbour_share, retrieval.neighbour_radius
    offers: list[tuple[int, float, int, str]] = []  # (seq, score, beside, episode)
    for seq, score, event in strong[: retrieval.evidence_limit]:
        episode = episode_key(event)
        for distance in range(1, radius + 1):
            offered = score * share / distance
            for near in (seq - distance, seq + distance):
                if near >= 0 and near not in replaced:
                    offers.append((near, offered, seq, episode))
    missing = sorted({near for near, _, _, _ in offers if near not in known})
    read = [e for e in store.get_events(session_id, missing) if may_quote(e)] if missing else []
    events = {**known, **{e.seq: e for e in read}}
    lifts: dict[int, Lift] = {}
    other = strength(retrieval, "speaker-neighbours")
    for near, offered, beside, episode in offers:
        found = events.get(near)
        if found is None or episode_key(found) != episode:
            continue
        if other < 1.0 and _other_speaker(found, events.get(beside)):
            offered *= other
        if near not in lifts or offered > lifts[near].score:
            lifts[near] = Lift(offered, beside)
    return lifts, [e for e in read if e.seq in lifts]
