"""People in control of memory: forget an item or an event, remember a text, pin an item.

Forget erases text and keeps the row as a tombstone (`records.erase_item`,
`records.erase_event`): an item becomes status `forgotten` with no content and one
`forgotten` lifecycle row saying who, when and why; the events it was derived from keep
their seq, type and time but lose their text (store `forgotten`, archive entry gone).
Nothing is deleted, so ids, supersession links and provenance stay whole, and the
tombstone's id stops the same item from being derived again (extraction and `reextract`
leave an item with a user's lifecycle row alone). Forgetting an item never makes the item
it replaced current again: the predecessors are reported and stay superseded.

Remember stores the user's own words as a `user_explicit` item whose source is a
`memory/remember` event. Those events take negative seqs (-1, -2, ...): the host numbers
its events from 0, so the two never collide, and no capture or extraction cursor (which
start at -1 and move up) ever reaches them. Pins are lifecycle rows (`pinned`,
`unpinned`): the newest decides, so export and import carry them like any other row.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from lcm_core.extraction.rules import classify
from lcm_core.store.errors import StoreNotFoundError
from lcm_core.store.models import Event, ItemChange, MemoryEvent, MemoryItem, TaskState
from lcm_core.store.ports import MemoryStore, SupportsScrub
from lcm_core.text.conditions import find_conditions
from lcm_core.text.numbers import parse_quantities
from lcm_core.text.query import LOGGED_QUERY_CHARS
from lcm_core.text.tokens import fingerprint, normalize_text, sha256_hex, stable_item_id

USER: Final = "user"
REMEMBER_TYPE: Final = "memory/remember"
MANUAL_SOURCE: Final = "manual"
MANUAL_EXTRACTOR: Final = "manual"
REMEMBER_KINDS: Final = ("constraint", "decision", "fact", "preference")
PIN_EVENTS: Final = ("pinned", "unpinned")
MAX_REMEMBER_CHARS: Final = 4000


class ControlError(ValueError):
    """A request the stored state does not allow (one clear line for the user)."""


@dataclass(slots=True)
class ForgetReport:
    """What one forget erased, what it left alone, and whether the file was scrubbed."""

    session_id: str
    items: list[str] = field(default_factory=list)
    events: list[int] = field(default_factory=list)
    # Items the forgotten one had replaced: they stay superseded, not current again.
    still_superseded: list[str] = field(default_factory=list)
    # Other items from the same messages: they keep their content (their source is gone).
    kept_from_same_events: list[str] = field(default_factory=list)
    task_entries_removed: int = 0
    # Assembly logs whose record of the step's own text quoted the erased text.
    log_entries_erased: int = 0
    already_forgotten: bool = False
    scrub: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {name: getattr(self, name) for name in self.__slots__}


def _seqs(item: MemoryItem) -> list[int]:
    """The event seqs an item names: its `seq:N` refs and the seq it was derived from."""
    found = set()
    for ref in item.source_refs:
        number = ref[4:] if ref.startswith("seq:") else ""
        if number.lstrip("-").isdigit():
            found.add(int(number))
    if item.derived_from_seq is not None:
        found.add(item.derived_from_seq)
    return sorted(found)


def forget_item(
    store: MemoryStore, item_id: str, reason: str = "", *, actor: str = USER
) -> ForgetReport:
    """Erase an item and the text of the events it came from; see the module docstring."""
    item = store.get_item(item_id)
    if item is None:
        raise StoreNotFoundError(f"no memory item {item_id!r} (find ids with `lcm search`)")
    report = ForgetReport(item.session_id)
    if item.status == "forgotten":
        report.already_forgotten = True
        return report
    seqs = _seqs(item)
    with store.transaction():
        _erase_item(store, item, reason, actor, {"seqs": seqs}, report)
        _erase_events(store, item.session_id, seqs, report)
    report.kept_from_same_events = [
        other.id
        for other in store.list_items(item.session_id)
        if other.status != "forgotten" and set(_seqs(other)) & set(report.events)
    ]
    report.scrub = scrub(store)
    return report


def forget_event(
    store: MemoryStore, session_id: str, seq: int, reason: str = "", *, actor: str = USER
) -> ForgetReport:
    """Erase one event's text; each item whose every source is now erased is forgotten too.

    An item that also cites a living event keeps its content (the rest of its evidence is
    still there) and is listed in `kept_from_same_events`.
    """
    event = store.get_event(session_id, seq)
    if event is None:
        raise StoreNotFoundError(f"no event seq:{seq} in session {session_id!r}")
    report = ForgetReport(session_id)
    with store.transaction():
        _erase_events(store, session_id, [seq], report)
        for item in store.list_items(session_id):
            seqs = _seqs(item)
            if item.status == "forgotten" or seq not in seqs:
                continue
            living = [e for e in store.get_events(session_id, seqs) if e.store != "forgotten"]
            if living:
                report.kept_from_same_events.append(item.id)
            else:
                _erase_item(store, item, reason, actor, {"event": seq}, report)
    report.scrub = scrub(store)
    return report


def _erase_item(
    store: MemoryStore,
    item: MemoryItem,
    reason: str,
    actor: str,
    detail: dict[str, Any],
    report: ForgetReport,
) -> None:
    if item.id in pinned_ids(store, item.session_id):
        unpin = MemoryEvent(item.id, item.session_id, "unpinned", actor=actor)
        store.update_item(item.id, ItemChange(), unpin)
    row = MemoryEvent(
        item.id, item.session_id, "forgotten", actor=actor, detail={"reason": reason, **detail}
    )
    store.forget_item(item.id, row)
    report.items.append(item.id)
    for old_id in item.supersedes:
        old = store.get_item(old_id)
        if old is not None and old.status == "superseded" and old.superseded_by == item.id:
            report.still_superseded.append(old_id)
    report.task_entries_removed += _scrub_task_state(store, item.session_id, [item.content])
    report.log_entries_erased += _scrub_logs(store, item.session_id, [item.content])


def _erase_events(
    store: MemoryStore, session_id: str, seqs: Sequence[int], report: ForgetReport
) -> None:
    texts = [e.text for e in store.get_events(session_id, seqs) if e.text]
    for seq in seqs:
        if store.forget_event(session_id, seq) is not None:
            report.events.append(seq)
    report.task_entries_removed += _scrub_task_state(store, session_id, texts)
    report.log_entries_erased += _scrub_logs(store, session_id, texts)


def _scrub_logs(store: MemoryStore, session_id: str, texts: Sequence[str]) -> int:
    """Blank the step's own words an assembly log kept where they quote erased text: the
    `query` reason (text and terms) and the exact terms other reasons say they matched, so
    `explain` and an export never show them again."""
    wanted = [normalize_text(t) for t in texts if t.strip()]
    if not wanted:
        return 0
    changed = 0
    for log in store.list_assembly_logs(session_id):
        if log.id is not None and _quotes_erased(log.reasons, wanted):
            reasons = tuple(_without_query_words(reason) for reason in log.reasons)
            changed += int(store.rewrite_assembly_log_reasons(log.id, reasons))
    return changed


def _quotes_erased(reasons: Sequence[dict[str, Any]], wanted: Sequence[str]) -> bool:
    # The log keeps the step's normalised text cut to its first characters: it quotes an
    # erased text when either holds the other, or when the cut runs through the erased
    # text and leaves its beginning at the end.
    for reason in reasons:
        said = reason.get("text")
        if reason.get("kind") == "query" and isinstance(said, str) and said.strip():
            return any(said in text or text in said or _cut_through(said, text) for text in wanted)
    return False


def _cut_through(said: str, text: str) -> bool:
    if len(said) < LOGGED_QUERY_CHARS:
        return False
    return any(said.endswith(text[:size]) for size in range(2, min(len(text), len(said))))


def _without_query_words(reason: dict[str, Any]) -> dict[str, Any]:
    if reason.get("kind") == "query":
        return {"kind": "query", "text": "", "terms": [], "erased": True}
    return {**reason, "exact": []} if reason.get("exact") else reason


def _scrub_task_state(store: MemoryStore, session_id: str, texts: Sequence[str]) -> int:
    """Drop task-state entries quoting erased text (goal, progress, blockers, open items)."""
    state = store.get_task_state(session_id)
    wanted = [t for t in texts if t.strip()]
    if state is None or not wanted:
        return 0

    def quotes(entry: str | None) -> bool:
        if not entry:
            return False
        return any(entry in text or text in entry for text in wanted)

    removed = 0

    def keep(entries: tuple[str, ...]) -> tuple[str, ...]:
        nonlocal removed
        kept = tuple(e for e in entries if not quotes(e))
        removed += len(entries) - len(kept)
        return kept

    cleaned = TaskState(
        session_id,
        goal=None if quotes(state.goal) else state.goal,
        progress=keep(state.progress),
        blockers=keep(state.blockers),
        open_items=keep(state.open_items),
        superseded=keep(state.superseded),
        updated_by_seq=state.updated_by_seq,
    )
    removed += int(cleaned.goal is None and state.goal is not None)
    if removed:
        store.put_task_state(cleaned)
    return removed


def scrub(store: MemoryStore) -> dict[str, Any]:
    """Wipe erased text from the store's files where the backend can; what it did."""
    if isinstance(store, SupportsScrub):
        return store.scrub()
    return {"checkpoint": "not supported by this backend (see docs/privacy.md)"}


# --- remember ---------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class Remembered:
    """The item `remember` stored (or found already stored) and its source event's seq."""

    item: MemoryItem
    seq: int | None
    created: bool

    def to_dict(self) -> dict[str, Any]:
        """The answer every face gives (CLI `--json`, MCP `memory_remember`)."""
        item = self.item
        return {
            "created": self.created,
            "seq": self.seq,
            "item": {
                "id": item.id,
                "session": item.session_id,
                "kind": item.kind,
                "evidence_type": item.evidence_type,
                "content": item.content,
                "source_refs": list(item.source_refs),
            },
        }


def remember(
    store: MemoryStore,
    session_id: str,
    text: str,
    kind: str | None = None,
    *,
    actor: str = USER,
    time: str | None = None,
) -> Remembered:
    """Store `text` as a `user_explicit` item with a `memory/remember` event as its source.

    Without `kind` the extraction rules' classifier picks one (a fact when it finds none).
    The same text said again returns the active item that holds it and stores nothing.
    """
    content = " ".join(text.split())
    if not content:
        raise ControlError("nothing to remember: the text is empty")
    if len(content) > MAX_REMEMBER_CHARS:
        raise ControlError(f"the text is longer than {MAX_REMEMBER_CHARS} characters")
    if kind is not None and kind not in REMEMBER_KINDS:
        raise ControlError(f"kind must be one of {', '.join(REMEMBER_KINDS)}, not {kind!r}")
    quantities = [q for q in parse_quantities(content) if not q.negated]
    if kind is None:
        verdict = classify(content, quantities)
        kind = verdict.kind if verdict is not None and verdict.kind in REMEMBER_KINDS else "fact"
    manual = store.list_events(session_id, end_seq=-1, limit=1)
    seq = min(-1, manual[0].seq - 1) if manual else -1
    item_id = stable_item_id(session_id, kind, content)
    existing = store.get_item(item_id)
    if existing is not None and existing.status != "active":
        # A forgotten (or replaced) item owns this id: the new statement gets its own.
        item_id = stable_item_id(session_id, kind, f"{content}\n{sha256_hex(str(seq))}")
    item = MemoryItem(
        id=item_id,
        session_id=session_id,
        kind=kind,
        content=content,
        content_hash=fingerprint(content),
        evidence_type="user_explicit",
        conditions=tuple(dict.fromkeys(c.text for c in find_conditions(content))),
        numbers=tuple(q.to_dict() for q in quantities),
        source_refs=(f"seq:{seq}",),
        extractor=MANUAL_EXTRACTOR,
        derived_from_seq=seq,
    )
    with store.transaction():
        stored, created = store.insert_item(item, actor=actor)
        if not created:
            return Remembered(stored, None, False)
        store.insert_event(
            Event(
                session_id,
                seq,
                REMEMBER_TYPE,
                text=content,
                time=time,
                role="user",
                source_kind=MANUAL_SOURCE,
            )
        )
    return Remembered(stored, seq, True)


# --- pins --------------------------------------------------------------------------------
def pinned_ids(store: MemoryStore, session_id: str) -> list[str]:
    """The ids pinned now (their newest pin row says `pinned`), the earliest pinned first."""
    state: dict[str, int | None] = {}
    for row in store.list_memory_events(session_id=session_id, events=PIN_EVENTS):
        state[row.memory_id] = row.id if row.event == "pinned" else None
    pinned = [(order, item_id) for item_id, order in state.items() if order is not None]
    return [item_id for _, item_id in sorted(pinned)]


@dataclass(frozen=True, slots=True)
class PinChange:
    """What `set_pin` did, and the session's pins after it, earliest pinned first."""

    item_id: str
    session_id: str
    pinned: bool
    changed: bool
    pins: tuple[str, ...]

    def to_dict(self) -> dict[str, Any]:
        return {name: getattr(self, name) for name in self.__slots__}


def set_pin(store: MemoryStore, item_id: str, pinned: bool, *, actor: str = USER) -> PinChange:
    """Pin (or unpin) an item; only an active item can be pinned. Idempotent."""
    item = store.get_item(item_id)
    if item is None:
        raise StoreNotFoundError(f"no memory item {item_id!r} (find ids with `lcm search`)")
    if pinned and item.status != "active":
        raise ControlError(f"{item_id} is {item.status}; only an active item can be pinned")
    before = pinned_ids(store, item.session_id)
    changed = (item_id in before) != pinned
    if changed:
        name = "pinned" if pinned else "unpinned"
        row = MemoryEvent(item_id, item.session_id, name, actor)
        store.update_item(item_id, ItemChange(), row)
    after = tuple(pinned_ids(store, item.session_id)) if changed else tuple(before)
    return PinChange(item_id, item.session_id, pinned, changed, after)
