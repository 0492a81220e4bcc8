"""Applying one message's extraction to the store: items, corrections, restatements,
promotions and the task state. Every write goes through the port and `lifecycle`.

Replays are safe: an item id is a hash of session, kind and content, so a message seen
again finds its items already there; an item whose `derived_from_seq` is this message is
never revived by it, and a task state already updated by this or a later message is left.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from lcm_core.capture.events import is_generated
from lcm_core.extraction import lifecycle
from lcm_core.extraction.candidates import Candidate, Extraction
from lcm_core.extraction.clauses import clean_content, sentences
from lcm_core.extraction.correct import (
    TargetView,
    is_subject_less,
    pick_target,
    substitute,
    target_view,
)
from lcm_core.extraction.rulebook import RuleBook
from lcm_core.extraction.rules import classify
from lcm_core.extraction.standing import (
    RULE_SCOPE_KEY,
    compatible,
    parse_key,
    rule_key,
    says_revision,
)
from lcm_core.extraction.supersede import item_subject_key, same_subject
from lcm_core.extraction.task import apply_patch
from lcm_core.extraction.values import revises, values_of
from lcm_core.store.errors import StoreConflictError
from lcm_core.store.models import Event, MemoryItem, TaskState
from lcm_core.store.ports import MemoryStore
from lcm_core.text.conditions import find_conditions
from lcm_core.text.numbers import Quantity, parse_quantities
from lcm_core.text.tokens import fingerprint, stable_item_id

EXTRACTOR: Final = "lcm-rules@7"  # bumped when rules change what a message yields
MESSAGE_TYPES: Final = ("user/message", "assistant/message")
_LOOKBACK: Final = 200  # seqs searched for the message a confirmation answers


class ActiveItems:
    """The session's active items a correction may target, newest last.

    Loaded on the first correction of a run and kept in step with the run's own writes,
    so a long session is read once per run, not once per correction. The newest item of
    every subject key is indexed too, so supersession by subject is one lookup. The
    runner calls `reset` after a failed event, whose writes were rolled back. `rules` is
    the run's book of standing rules in force, this session's and its project's.
    """

    def __init__(self, store: MemoryStore, session_id: str) -> None:
        self._store = store
        self._session_id = session_id
        self.rules = RuleBook(store, session_id)
        self._items: dict[str, TargetView] | None = None
        self._subjects: dict[str, str] = {}  # subject key -> newest item id
        self._key_of: dict[str, str] = {}  # item id -> its subject key

    def views(self) -> list[TargetView]:
        return list(self._loaded().values())

    def by_subject(self, key: str) -> MemoryItem | None:
        """The newest active fact or decision whose content states this subject key."""
        items = self._loaded()
        item_id = self._subjects.get(key) if key else None
        view = items.get(item_id) if item_id else None
        return view.item if view is not None else None

    def added(self, item: MemoryItem, event: Event) -> None:
        """An item the run stored as active, stated by `event`."""
        self.rules.added(item, event)
        if self._items is not None and item.status == "active" and item.kind != "proposal":
            self._items.pop(item.id, None)
            self._items[item.id] = target_view(item)
            self._index(item)

    def removed(self, item_id: str) -> None:
        self.rules.removed(item_id)
        if self._items is not None:
            self._items.pop(item_id, None)
            key = self._key_of.pop(item_id, "")
            if self._subjects.get(key) == item_id:
                del self._subjects[key]

    def reset(self) -> None:
        self.rules.reset()
        self._items = None
        self._subjects, self._key_of = {}, {}

    def _loaded(self) -> dict[str, TargetView]:
        if self._items is None:
            listed = self._store.list_items(self._session_id, statuses=("active",))
            # Newest by the conversation's order, not the clock: two items written in the
            # same millisecond must still index the later statement last.
            listed.sort(key=lambda i: -1 if i.derived_from_seq is None else i.derived_from_seq)
            self._items = {i.id: target_view(i) for i in listed if i.kind != "proposal"}
            self._subjects, self._key_of = {}, {}
            for view in self._items.values():
                self._index(view.item)
        return self._items

    def _index(self, item: MemoryItem) -> None:
        key = item_subject_key(item)
        if key:
            self._subjects[key] = item.id
            self._key_of[item.id] = key


@dataclass(slots=True)
class Outcome:
    """What applying one event changed; counted only if its transaction commits."""

    created: int = 0
    superseded: int = 0
    reactivated: int = 0
    promoted: int = 0
    task_updates: int = 0


def apply_event(
    store: MemoryStore, event: Event, extraction: Extraction, active: ActiveItems | None = None
) -> Outcome:
    """Write what `extraction` says about `event`; call inside a store transaction."""
    outcome = Outcome()
    known = active if active is not None else ActiveItems(store, event.session_id)
    for candidate in extraction.candidates:
        _apply_candidate(store, event, candidate, outcome, known)
    if event.type == "user/message" and not is_generated(event):
        _revise_by_value(store, event, extraction, outcome, known)
    if extraction.confirmation:
        _promote_answered(store, event, outcome)
    if extraction.task is not None and not extraction.task.empty:
        state = store.get_task_state(event.session_id) or TaskState(event.session_id)
        if state.updated_by_seq is None or state.updated_by_seq < event.seq:
            store.put_task_state(apply_patch(state, extraction.task, event.seq))
            outcome.task_updates += 1
    return outcome


def _apply_candidate(
    store: MemoryStore, event: Event, cand: Candidate, outcome: Outcome, active: ActiveItems
) -> None:
    # A standing rule replaces the rule in force on its subject, in any session of the
    # project; a plain fact the newest item about its subject; else a correction picks one.
    replacement = (
        active.rules.replacement(cand.rule.key, event)
        if cand.rule is not None and not cand.rule.additive
        else None
    )
    if replacement is not None and replacement.newer:
        _file_as_older(store, event, cand, replacement.item, outcome)
        return
    target = None
    if replacement is not None and (
        replacement.item.session_id != event.session_id
        or replacement.item.content.casefold() != cand.content.casefold()
    ):
        target = replacement.item
    if target is None and cand.subject:
        target = same_subject(cand, active.by_subject(cand.subject))
    if target is None and cand.correction is not None:
        named = (*cand.quantities, *cand.replaced)
        target = pick_target(cand.correction, named, active.views())
        if target is not None and _other_subject(cand, target):
            target = None
    content, quantities = cand.content, cand.quantities
    if target is not None:
        # Only a correction may be subject-less ("make it 5"); a rule or a fact names its own.
        subject_less = cand.correction is not None and is_subject_less(
            cand.correction.body, quantities
        )
        rewritten = substitute(target, quantities[0], cand.replaced) if subject_less else None
        if rewritten is not None:
            content = rewritten
            quantities = tuple(q for q in parse_quantities(content) if not q.negated)
        else:
            # A number the target already holds is the old value named again, not a new one.
            old_values = {n.get("value") for n in target.numbers}
            quantities = tuple(q for q in quantities if q.value not in old_values)
    implicit = cand.correction is not None and not cand.correction.explicit
    if target is None and cand.kind is None and implicit:
        return  # "不是 X，是 Y" with no earlier X: nothing to correct, no cue to keep
    kind = _kind(cand, target, content)
    item = _item(event, cand, kind, content, quantities)
    # An id that exists already is a replay or a restatement, handled below.
    if target is not None and target.id != item.id and store.get_item(item.id) is None:
        stored = lifecycle.supersede(store, target.id, item, detail={"seq": event.seq})
        active.removed(target.id)
        active.added(stored, event)
        outcome.created += 1
        outcome.superseded += 1
        return
    _insert_or_restate(store, event, item, outcome, active)


def _revise_by_value(
    store: MemoryStore, event: Event, extraction: Extraction, outcome: Outcome, active: ActiveItems
) -> None:
    """A message naming a rule's value beside a new one of its shape revises that rule.

    "Please don't use '_l' anymore; '_nv' replaces it" names no subject; the rule whose
    value it retires is the subject. The new rule is the sentence naming the new value,
    under the old rule's key. Only with a word that changes a value, and not when the
    message already set a rule on that subject.
    """
    text = event.text
    if not says_revision(text):
        return
    keys = [c.rule.key for c in extraction.candidates if c.rule is not None]
    for rule in active.rules.in_force():
        key = rule_key(rule.scope)
        if any(compatible(key, mine) for mine in keys) or not revises(rule.content, text):
            continue
        content = _new_value_sentence(text, rule.content)
        if not content:
            continue
        scope = {**rule.scope, RULE_SCOPE_KEY: key}
        candidate = Candidate(
            kind=rule.kind,
            content=content,
            evidence_type="user_explicit",
            scope=scope,
            quantities=tuple(q for q in parse_quantities(content) if not q.negated),
            rule=parse_key(key),
        )
        _apply_candidate(store, event, candidate, outcome, active)
        keys.append(key)


def _new_value_sentence(text: str, old: str) -> str:
    """The sentences of `text` that name a value `old` does not (the new value's words)."""
    before = values_of(old)
    chosen = [
        clean_content(sentence) for sentence in sentences(text) if values_of(sentence) - before
    ]
    return " ".join(c for c in chosen if c)


def _file_as_older(
    store: MemoryStore,
    event: Event,
    cand: Candidate,
    newer: MemoryItem,
    outcome: Outcome,
) -> None:
    """A rule said before the one another session holds in force: kept, as replaced by it.

    Sessions may be captured in any order (`lcm ingest` of a folder); the rule said last
    stays in force whichever was stored first.
    """
    item = _item(event, cand, cand.kind or "constraint", cand.content, cand.quantities)
    if store.get_item(item.id) is not None:
        return  # a replay: the item and its lifecycle are stored already
    lifecycle.file_as_replaced(store, item, newer.id, detail={"seq": event.seq})
    outcome.created += 1
    outcome.superseded += 1


def _other_subject(cand: Candidate, target: MemoryItem) -> bool:
    """Whether a correction about one subject picked an item about another one.

    Subjects differ when each has a term the other lacks ("staging database" / "prod
    database"); a narrower or wider wording ("staging DB" / "staging DB 的 port") is the
    same thing. Naming the replaced value ("…，不是 6432") settles it either way.
    """
    if not cand.subject or cand.correction is None or cand.correction.replaced:
        return False
    key = item_subject_key(target)
    if not key:
        return False
    mine, theirs = (set(k.split(":", 1)[1].split()) for k in (cand.subject, key))
    return bool(mine - theirs) and bool(theirs - mine)


def _kind(cand: Candidate, target: MemoryItem | None, content: str) -> str:
    """A correction keeps the kind of what it corrects unless it states a strong kind itself."""
    if target is not None and (cand.kind is None or cand.strength < 4):
        return target.kind
    if cand.kind is not None:
        return cand.kind
    verdict = classify(content, parse_quantities(content))
    return verdict.kind if verdict else "decision"


def _item(
    event: Event, cand: Candidate, kind: str, content: str, quantities: tuple[Quantity, ...]
) -> MemoryItem:
    numbers = tuple(q.to_dict() for q in quantities)
    conditions = cand.conditions
    if content != cand.content:
        # A rewritten correction carries the conditions of the sentence it rewrote.
        conditions = tuple(dict.fromkeys(c.text for c in find_conditions(content)))
    return MemoryItem(
        id=stable_item_id(event.session_id, kind, content),
        session_id=event.session_id,
        kind=kind,
        content=content,
        content_hash=fingerprint(content),
        evidence_type=cand.evidence_type,
        conditions=conditions,
        scope=cand.scope,
        numbers=numbers,
        source_refs=(f"seq:{event.seq}",),
        extractor=EXTRACTOR,
        derived_from_seq=event.seq,
    )


def _insert_or_restate(
    store: MemoryStore, event: Event, item: MemoryItem, outcome: Outcome, active: ActiveItems
) -> None:
    try:
        stored, created = store.insert_item(item)
    except StoreConflictError:
        # The id exists but is not active: a replay, or a value said again.
        existing = store.get_item(item.id)
        if existing is None:
            raise
        _restate(store, event, existing, outcome, active)
        return
    if created:
        outcome.created += 1
        active.added(stored, event)


def _restate(
    store: MemoryStore, event: Event, existing: MemoryItem, outcome: Outcome, active: ActiveItems
) -> None:
    if existing.status == "forgotten":
        return  # a tombstone: what the user erased is not derived again
    replayed = existing.derived_from_seq is not None and existing.derived_from_seq >= event.seq
    if existing.status in ("active", "disputed") or replayed:
        return
    # The user said a replaced or withdrawn value again: it comes back, its replacement goes.
    head = None
    if existing.status == "superseded" and existing.superseded_by is not None:
        follower = store.get_item(existing.superseded_by)
        head = lifecycle.active_head(store, follower) if follower is not None else None
    if (
        head is not None
        and head.derived_from_seq is not None
        and head.derived_from_seq >= event.seq
    ):
        return  # a replay of a message older than the correction that replaced this value
    revived = lifecycle.restate(
        store,
        existing.id,
        head.id if head is not None else None,
        detail={"seq": event.seq, "reason": "restated"},
    )
    active.added(revived, event)
    outcome.reactivated += 1
    if head is not None:
        active.removed(head.id)
        outcome.superseded += 1


def _promote_answered(store: MemoryStore, event: Event, outcome: Outcome) -> None:
    """A bare "yes" right after an assistant message with one proposal promotes that proposal."""
    earlier = store.list_events(
        event.session_id,
        start_seq=max(0, event.seq - _LOOKBACK),
        end_seq=event.seq - 1,
        types=MESSAGE_TYPES,
    )
    previous = next((e for e in reversed(earlier) if not is_generated(e)), None)
    if previous is None or previous.type != "assistant/message":
        return
    proposals = [
        item
        for item in store.list_items(event.session_id, statuses=("active",), kinds=("proposal",))
        if item.derived_from_seq == previous.seq and item.evidence_type == "assistant_proposal"
    ]
    if len(proposals) != 1:
        return  # nothing proposed, or "yes" to several things at once is ambiguous
    proposal = proposals[0]
    verdict = classify(proposal.content, parse_quantities(proposal.content))
    kind = verdict.kind if verdict and verdict.kind != "proposal" else "decision"
    lifecycle.promote(store, proposal.id, kind=kind, detail={"seq": event.seq})
    outcome.promoted += 1
