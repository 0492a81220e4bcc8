"""Which evidence candidates may be quoted, and why each other one is left out.

A candidate is an event that may be quoted: the source of a selected item, an exact
match, a pooled raw turn or a neighbour of a strong one. `Walk` goes through them best
first and quotes each that may be quoted, up to `retrieval.evidenceLimit`; for every
other one it records the reason `explain` shows (generated text, a type that is not
quotable, still on screen, an old value, in the host's history, this step's own input,
under the floor, an echo of the step's words, past the limit).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from lcm_core.capture.events import is_generated
from lcm_core.config import Config
from lcm_core.retrieval.citations import source_seqs
from lcm_core.retrieval.inspection import verbatim_text
from lcm_core.retrieval.ranked import Omission
from lcm_core.retrieval.scoring import FLOOR_RULE
from lcm_core.store.models import Event
from lcm_core.store.ports import MemoryStore
from lcm_core.text.query import QuerySignals, evidence_terms, exact_hits
from lcm_core.text.questions import asks
from lcm_core.text.tokens import MAX_QUERY_TOKENS, normalize_text, per_text_cache, tokenize

# Items whose sources must not be quoted as current raw turns.
HISTORICAL_STATUSES: Final = ("superseded", "retracted", "disputed")
# A raw turn with at least this share of its terms in the step's own text echoes it.
ECHO_SHARE: Final = 0.8
ECHO_MIN_TERMS: Final = 3
# The type a user-role message's text really is when a tool or the model wrote it.
_TEXT_TYPE_OF_KIND: Final = {"tool": "tool/result", "model": "assistant/message"}


# Not frozen: a step builds hundreds of these, and a frozen dataclass's __init__ costs
# about four times as much (a call per field). Nothing changes one once built.
@dataclass(slots=True)
class EvidenceRow:
    """One quotable event, why it was picked, its score and its verbatim text."""

    event: Event
    text: str
    item_ids: tuple[str, ...] = ()
    matched: tuple[str, ...] = ()
    score: float = 0.0
    search_score: float = 0.0
    recent: bool = False
    # The matching turn this one was quoted beside (an evidence cluster), or None.
    neighbour_of: int | None = None

    @property
    def ref(self) -> str:
        return f"seq:{self.event.seq}"

    @property
    def raw(self) -> bool:
        """True for a turn no selected item cites: it was ranked on its own."""
        return not self.item_ids

    def to_dict(self) -> dict[str, Any]:
        return {
            "ref": self.ref,
            "score": round(self.score, 4),
            "search": round(self.search_score, 4),
            "items": list(self.item_ids),
            "exact": list(self.matched),
            "recent": self.recent,
            **({"beside": f"seq:{self.neighbour_of}"} if self.neighbour_of is not None else {}),
        }


@dataclass(frozen=True, slots=True)
class EvidenceSet:
    """The evidence rows in priority order and the events left out."""

    rows: tuple[EvidenceRow, ...] = ()
    omitted: tuple[Omission, ...] = ()


def text_type(event: Event) -> str:
    """The event's type, or the type of what a user-role message really holds (tool, model)."""
    if event.type == "user/message" and event.source_kind in _TEXT_TYPE_OF_KIND:
        return _TEXT_TYPE_OF_KIND[event.source_kind]
    return event.type


def quotable(event: Event, evidence_types: Sequence[str]) -> bool:
    """True when `assembly.evidenceTypes` lets this event's text be quoted inline."""
    return quotes_type(text_type(event), evidence_types)


def quotes_type(kind: str, evidence_types: Sequence[str]) -> bool:
    """True when `assembly.evidenceTypes` lets text of this event type be quoted inline."""
    return "*" in evidence_types or kind in evidence_types


def _not_type_reason(event: Event) -> str:
    kind = text_type(event)
    what = event.type if kind == event.type else f"{event.type} from source {event.source_kind}"
    return f"event type {what} is not inline-quotable (assembly.evidenceTypes)"


def echoes(text: str, signals: QuerySignals) -> bool:
    """True when nearly every term of `text` is also a term of the step's own text.

    Not when the step asks and `text` states: "Nicolas: I'm in the hospital" holds every
    word of "When did Nicolas end up in the hospital?" because it is the answer.
    """
    terms = _echo_terms(text)
    if len(terms) < ECHO_MIN_TERMS or not signals.tokens:
        return False
    if len(terms & set(signals.tokens)) < ECHO_SHARE * len(terms):
        return False
    return not asks(signals.text) or asks(text)


@per_text_cache(maxsize=16_384)
def _echo_terms(text: str) -> frozenset[str]:
    """A stored turn's distinct terms (cached: the same turns come back step after step)."""
    return frozenset(tokenize(normalize_text(text), MAX_QUERY_TOKENS))


def historical_sources(store: MemoryStore, session_id: str) -> dict[int, tuple[str, str]]:
    """seq -> (status, item id) for the sources of superseded, retracted and disputed items."""
    found: dict[int, tuple[str, str]] = {}
    # By id, not the store's created_at order: two items written in the same millisecond
    # in one run and not in the next would name another item for one turn.
    items = sorted(store.list_items(session_id, statuses=HISTORICAL_STATUSES), key=lambda i: i.id)
    for item in items:
        for seq in source_seqs(item):
            found.setdefault(seq, (item.status, item.id))
    return found


@dataclass(slots=True)
class Candidate:
    """An event that may be quoted: the items citing it (none for a raw turn) and its score.

    Not frozen: a step builds hundreds, and a frozen dataclass's `__init__` costs about
    four times as much. Nothing changes one once built; `replace` makes a new one.
    """

    seq: int
    event: Event | None
    item_ids: tuple[str, ...]
    score: float
    search_score: float = 0.0
    recent: bool = False
    neighbour_of: int | None = None
    # The score's place in the order, -round(score, 9): worked out once per candidate,
    # as the candidates are sorted twice and a rounding to 9 digits is not cheap.
    rank: float = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        self.rank = -round(self.score, 9)

    def key(self, position: int) -> tuple[float, int, int]:
        """Best score first; an item's source before a raw turn; items' order, newer turns."""
        return (self.rank, 1 if not self.item_ids else 0, position)


class Walk:
    """Goes through the candidates best first: quotes what may be quoted, says why not."""

    def __init__(
        self,
        store: MemoryStore,
        config: Config,
        signals: QuerySignals,
        is_visible: Callable[[Event], bool] | None,
        historical: dict[int, tuple[str, str]],
        current_turn: int | None,
        in_history: frozenset[int] = frozenset(),
    ) -> None:
        self.store, self.signals, self.is_visible = store, signals, is_visible
        self.query = signals.text.strip().casefold()
        self.historical, self.current_turn = historical, current_turn
        self.in_history = in_history
        self.evidence_types = [str(t) for t in config.assembly.evidence_types]
        self.limit = config.retrieval.evidence_limit
        self.min_score = config.retrieval.min_score
        # The reasons that depend on the candidate alone, not on its score or the rows
        # taken, by (seq, raw): the strong candidates are asked twice (`quotes`, then
        # `select`). A walk's candidates are one session's, so a seq names one event.
        self._fixed: dict[tuple[int, bool], str | None] = {}
        self._echoes: dict[int, bool] = {}
        # The type checks by (type, source kind): a step has hundreds of candidates
        # and a handful of kinds.
        self._kind_reasons: dict[tuple[str, str | None], str | None] = {}

    def reason(self, one: Candidate, event: Event, taken: int) -> str | None:
        """Why this candidate is not quoted, or None when it is."""
        raw = not one.item_ids
        key = (one.seq, raw)
        if key in self._fixed:
            fixed = self._fixed[key]
        else:
            fixed = self._fixed[key] = self._fixed_reason(one, event, raw)
        if fixed is not None:
            return fixed
        if raw and one.score < self.min_score:
            return f"score {one.score:.3f} is below the floor {self.min_score:.3f} ({FLOOR_RULE})"
        if raw and taken < self.limit and self._echo(one.seq, event):
            return "repeats the step's own words; says nothing new"
        if taken >= self.limit:
            return f"beyond retrieval.evidenceLimit {self.limit}"
        return None

    def _echo(self, seq: int, event: Event) -> bool:
        """`echoes` for this candidate's event, worked out once per walk."""
        found = self._echoes.get(seq)
        if found is None:
            found = self._echoes[seq] = echoes(event.text, self.signals)
        return found

    def _kind_reason(self, event: Event) -> str | None:
        """Why text of this event's type and source kind is never quoted, or None."""
        kind = (event.type, event.source_kind)
        if kind in self._kind_reasons:
            return self._kind_reasons[kind]
        reason = None
        if is_generated(event):
            reason = f"generated by {event.source_kind}; never quoted as evidence"
        elif not quotable(event, self.evidence_types):
            reason = _not_type_reason(event)
        self._kind_reasons[kind] = reason
        return reason

    def _fixed_reason(self, one: Candidate, event: Event, raw: bool) -> str | None:
        """The reasons that do not depend on the score or the rows taken, in `reason`'s order."""
        kind_reason = self._kind_reason(event)
        if kind_reason is not None:
            return kind_reason
        if self.is_visible is not None and self.is_visible(event):
            return "still visible in this step"
        if one.seq in self.historical:
            status, item_id = self.historical[one.seq]
            if raw:
                return f"source of {status} item {item_id}; not quoted as a current raw turn"
            if status == "superseded":
                return f"source of superseded item {item_id}; its old value is in the notice"
        if raw and one.seq in self.in_history:
            return "still in the host's history; not quoted again"
        if raw and self.current_turn is not None and event.turn == self.current_turn:
            return "a message of the current turn: this step's input, not history"
        if raw and self.query and event.text.strip().casefold() == self.query:
            return "the question itself: never quoted back as its own evidence"
        return None

    def quotes(self, one: Candidate) -> bool:
        """True when this candidate would be quoted, limit aside."""
        return one.event is not None and self.reason(one, one.event, 0) is None

    def select(self, candidates: Sequence[Candidate]) -> EvidenceSet:
        wanted = set(evidence_terms(self.signals))
        rows: list[EvidenceRow] = []
        omitted: list[Omission] = []
        for one in candidates:
            ref = f"seq:{one.seq}"
            event = one.event
            if event is None:
                omitted.append(Omission("evidence", ref, "cited event is no longer stored"))
                continue
            reason = self.reason(one, event, len(rows))
            if reason is not None:
                omitted.append(Omission("evidence", ref, reason))
                continue
            matched = tuple(t for t in exact_hits(event.text, self.signals) if t in wanted)
            text = verbatim_text(self.store, event)
            rows.append(
                EvidenceRow(
                    event,
                    text,
                    one.item_ids,
                    matched,
                    one.score,
                    one.search_score,
                    one.recent,
                    one.neighbour_of,
                )
            )
        return EvidenceSet(tuple(rows), tuple(omitted))
