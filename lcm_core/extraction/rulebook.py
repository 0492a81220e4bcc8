"""The standing rules in force that a new rule may replace, in this session and its project.

A rule governs its subject across the project: "end method names with '_x'" said in
one session is replaced by "以后方法名改成以 '_p' 结尾" said in a later one. The rule book
of one extraction run holds the active rules of the session and of the other sessions
of its project, loaded once and kept in step with the run's own writes. The newest
statement wins by when it was said (the events' own times), not by when it was
captured, so sessions ingested out of order still leave the latest version in force.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Final

from lcm_core.capture.project import sibling_sessions
from lcm_core.extraction.lifecycle import active_head
from lcm_core.extraction.standing import compatible, rule_key
from lcm_core.store.models import Event, MemoryItem
from lcm_core.store.ports import MemoryStore
from lcm_core.text.dates import instant

# Statuses a rule may have and still be replaced.
_IN_FORCE: Final = ("active",)
# The meta key holding the ids of a session's rules in force (a JSON list), so a pre-step
# reads a few rows instead of listing every item of every session of the project.
INDEX_PREFIX: Final = "rules:"


def index_key(session_id: str) -> str:
    """The meta key of a session's index of rules in force."""
    return f"{INDEX_PREFIX}{session_id}"


def write_index(store: MemoryStore, session_id: str) -> list[str]:
    """Record the session's rules in force (its index): its active rules, and the rule of
    another session of the project that replaced one of its own."""
    listed = [
        item
        for item in store.list_items(session_id, statuses=("active", "superseded"))
        if rule_key(item.scope)
    ]
    listed.sort(key=lambda i: (-1 if i.derived_from_seq is None else i.derived_from_seq, i.id))
    ids: list[str] = []
    for item in listed:
        head = item if item.status == "active" else _head_elsewhere(store, item)
        if head is not None and head.id not in ids:
            ids.append(head.id)
    store.set_meta(index_key(session_id), json.dumps(ids))
    return ids


def _head_elsewhere(store: MemoryStore, item: MemoryItem) -> MemoryItem | None:
    """The active rule of another session that stands in for a replaced rule, if any."""
    head = active_head(store, item)
    if head is None or head.session_id == item.session_id or not rule_key(head.scope):
        return None
    return head


def read_index(store: MemoryStore, session_id: str) -> Sequence[str] | None:
    """The ids a session's index lists, or None when it has none (or an unreadable one)."""
    raw = store.get_meta(index_key(session_id))
    if raw is None:
        return None
    try:
        ids = json.loads(raw)
    except ValueError:
        return None
    return [i for i in ids if isinstance(i, str)] if isinstance(ids, list) else None


@dataclass(frozen=True, slots=True)
class Replacement:
    """The rule a new one meets: `newer` when the stored rule was said after the new one."""

    item: MemoryItem
    newer: bool


class RuleBook:
    """The active rules of a session and its project's other sessions, by subject key."""

    def __init__(self, store: MemoryStore, session_id: str) -> None:
        self._store = store
        self._session_id = session_id
        self._rules: dict[str, MemoryItem] | None = None  # id -> rule, oldest said first
        self._said: dict[str, int | None] = {}  # id -> when its source was said (epoch ms)
        self.touched: set[str] = set()  # sessions whose rules in force changed in this run

    def replacement(self, key: str, event: Event) -> Replacement | None:
        """The rule in force whose subject `key` governs too, or None.

        An exact key wins over a compatible one; among several compatible rules of
        different elements ("decorator" meeting `decorator/method` and `decorator/class`)
        none is chosen, since which one is meant cannot be told.
        """
        rules = self._loaded()
        exact = [rule for rule in rules.values() if rule_key(rule.scope) == key]
        near = [rule for rule in rules.values() if compatible(rule_key(rule.scope), key)]
        chosen = exact or (near if len({rule_key(r.scope) for r in near}) == 1 else [])
        if not chosen:
            return None
        newest = max(chosen, key=self._order)
        said = instant(event.time)
        theirs = self._said.get(newest.id)
        newer = (
            newest.session_id != event.session_id
            and said is not None
            and theirs is not None
            and theirs > said
        )
        return Replacement(newest, newer)

    def added(self, item: MemoryItem, event: Event) -> None:
        """A rule the run stored as active (said at `event`)."""
        if rule_key(item.scope):
            self.touched.add(item.session_id)
        if self._rules is not None and rule_key(item.scope) and item.status in _IN_FORCE:
            self._rules[item.id] = item
            self._said[item.id] = instant(event.time)

    def removed(self, item_id: str) -> None:
        if self._rules is not None:
            gone = self._rules.pop(item_id, None)
            if gone is not None:
                self.touched.add(gone.session_id)

    def reset(self) -> None:
        self._rules = None
        self._said = {}

    def write_indexes(self) -> None:
        """Bring the index of every session this run changed (and of its own) up to date."""
        sessions = set(self.touched)
        if read_index(self._store, self._session_id) is None:
            sessions.add(self._session_id)
        for session_id in sorted(sessions):
            write_index(self._store, session_id)
        self.touched.clear()

    def _order(self, item: MemoryItem) -> tuple[int, str, int]:
        said = self._said.get(item.id)
        seq = item.derived_from_seq if item.derived_from_seq is not None else -1
        return (said if said is not None else -1, item.session_id, seq)

    def _loaded(self) -> dict[str, MemoryItem]:
        if self._rules is None:
            siblings = sibling_sessions(self._store, self._session_id)
            sessions = [self._session_id, *(s.session_id for s in siblings)]
            found = [
                item
                for session_id in sessions
                for item in self._store.list_items(session_id, statuses=_IN_FORCE)
                if rule_key(item.scope)
            ]
            self._said = dict(self._said_times(found))
            self._rules = {item.id: item for item in found}
        return self._rules

    def _said_times(self, items: Iterable[MemoryItem]) -> Iterable[tuple[str, int | None]]:
        """Each rule's source time, one store read per session."""
        by_session: dict[str, list[MemoryItem]] = {}
        for item in items:
            by_session.setdefault(item.session_id, []).append(item)
        for session_id, group in sorted(by_session.items()):
            seqs = sorted({i.derived_from_seq for i in group if i.derived_from_seq is not None})
            times = {e.seq: e.time for e in self._store.get_events(session_id, seqs)}
            for item in group:
                seq = item.derived_from_seq
                yield item.id, instant(times.get(seq)) if seq is not None else None
