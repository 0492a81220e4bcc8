"""Re-derive a session's items from its stored events after the extraction rules changed.

The session's messages are extracted afresh into a scratch store (the caller supplies an
empty one: the core never opens a backend), then the real store is reconciled with that
derivation, nothing deleted:
- an item whose content is derived again keeps its id (ids hash session, kind, content),
  and gets the derived status: superseded by the derived replacement, or active again;
- a derived item the store lacks is added;
- an active extractor item that is no longer derived is retracted;
- an item the user touched (any lifecycle row by an actor other than the extractor) is
  left exactly as it is: user overrides win.
Every change is a lifecycle row with actor `reextract`, and the report lists them.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field, replace
from typing import Any, Final

from lcm_core.config import Config
from lcm_core.extraction import lifecycle
from lcm_core.extraction.apply import EXTRACTOR, MESSAGE_TYPES
from lcm_core.extraction.run import run_extraction
from lcm_core.store.errors import StoreConflictError
from lcm_core.store.models import MemoryItem
from lcm_core.store.ports import MemoryStore

ACTOR: Final = "reextract"
VERSION_KEY: Final = "extraction_version"
MACHINE_ACTORS: Final = frozenset({"extractor", ACTOR})
MAX_CHANGE_LINES: Final = 200
_LIVE: Final = frozenset({"active", "disputed"})
_RULES_PREFIX: Final = EXTRACTOR.split("@", 1)[0] + "@"


@dataclass(slots=True)
class ReextractReport:
    """What re-extraction changed in one session; counts are `kind/status` pairs."""

    session_id: str
    extractor: str = EXTRACTOR
    kept: int = 0
    added: int = 0
    retired: int = 0
    superseded: int = 0
    revived: int = 0
    overrides_kept: int = 0
    before: dict[str, int] = field(default_factory=dict)
    after: dict[str, int] = field(default_factory=dict)
    changes: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready view for `--json` output."""
        return {name: getattr(self, name) for name in self.__slots__}

    def note(self, line: str) -> None:
        if len(self.changes) < MAX_CHANGE_LINES:
            self.changes.append(line)


def item_counts(items: list[MemoryItem]) -> dict[str, int]:
    """Items per `kind/status`, sorted, for before/after tables."""
    return dict(sorted(Counter(f"{i.kind}/{i.status}" for i in items).items()))


def needs_reextract(store: MemoryStore) -> bool:
    """Whether some stored item was derived by older rules and the store is not marked current."""
    if store.get_meta(VERSION_KEY) == EXTRACTOR:
        return False
    return any(
        item.extractor.startswith(_RULES_PREFIX) and item.extractor != EXTRACTOR
        for session in store.list_sessions()
        for item in store.list_items(session.session_id)
    )


def mark_current(store: MemoryStore) -> None:
    """Record that every session's items now come from the current rules."""
    store.set_meta(VERSION_KEY, EXTRACTOR)


def reextract_session(
    store: MemoryStore, scratch: MemoryStore, session_id: str, config: Config
) -> ReextractReport:
    """Reconcile one session's items with a fresh derivation; see the module docstring."""
    report = ReextractReport(session_id)
    stored = {item.id: item for item in store.list_items(session_id)}
    report.before = item_counts(list(stored.values()))
    scratch.insert_events(store.list_events(session_id, types=MESSAGE_TYPES))
    run = run_extraction(scratch, session_id, config)
    report.errors.extend(run.errors)
    derived = sorted(scratch.list_items(session_id), key=lambda i: (i.derived_from_seq or 0, i.id))
    touched = {
        row.memory_id
        for row in store.list_memory_events(session_id=session_id)
        if row.actor not in MACHINE_ACTORS
    }
    with store.transaction():
        _retire(store, stored, {d.id for d in derived}, touched, report)
        _add(store, stored, derived, touched, report)
        _relink(store, derived, touched, report)
    report.after = item_counts(store.list_items(session_id))
    return report


def _detail(reason: str) -> dict[str, Any]:
    return {"reason": reason, "extractor": EXTRACTOR}


def _retire(
    store: MemoryStore,
    stored: dict[str, MemoryItem],
    derived_ids: set[str],
    touched: set[str],
    report: ReextractReport,
) -> None:
    for item in stored.values():
        if item.id in touched:
            report.overrides_kept += 1
        elif item.id in derived_ids:
            report.kept += 1
        elif item.status in _LIVE:
            lifecycle.retract(store, item.id, actor=ACTOR, detail=_detail("no longer derived"))
            report.retired += 1
            report.note(f"retired {item.kind} {item.id}: {item.content[:80]}")


def _add(
    store: MemoryStore,
    stored: dict[str, MemoryItem],
    derived: list[MemoryItem],
    touched: set[str],
    report: ReextractReport,
) -> None:
    for item in derived:
        if item.id in stored or item.id in touched:
            continue
        fresh = replace(item, status="active", superseded_by=None, supersedes=())
        try:
            _, created = store.insert_item(fresh, actor=ACTOR)
        except StoreConflictError:
            continue  # an equal active twin exists already
        if created:
            report.added += 1
            report.note(f"added {item.kind} {item.id}: {item.content[:80]}")


def _relink(
    store: MemoryStore, derived: list[MemoryItem], touched: set[str], report: ReextractReport
) -> None:
    """Give every derived item its derived status: replaced by its successor, or active."""
    for item in derived:
        current = store.get_item(item.id)
        if current is None or item.id in touched:
            continue
        if item.status == "superseded" and item.superseded_by and current.status in _LIVE:
            successor = store.get_item(item.superseded_by)
            if successor is None or successor.id in touched:
                continue
            lifecycle.supersede(store, item.id, successor, actor=ACTOR, detail=_detail("rederived"))
            report.superseded += 1
            report.note(f"superseded {item.id} by {successor.id}")
        elif item.status == "active" and current.status in ("superseded", "retracted"):
            try:
                lifecycle.reactivate(store, item.id, actor=ACTOR, detail=_detail("rederived"))
            except StoreConflictError:
                continue
            report.revived += 1
            report.note(f"revived {item.kind} {item.id}: {item.content[:80]}")
