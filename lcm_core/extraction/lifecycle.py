"""Lifecycle of memory items: supersede, promote, dispute, retract, reactivate, restate.

Each transition is one `store.update_item` call, which changes the row and appends its
`memory_events` row in one transaction; `supersede` and `restate` touch two items and
wrap both in one `store.transaction()`. Nothing is ever deleted. Asking for the state an
item already has returns it unchanged and writes no row, so replays stay idempotent.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any, Final

from lcm_core.store.errors import StoreNotFoundError
from lcm_core.store.models import MEMORY_KINDS, ItemChange, MemoryEvent, MemoryItem
from lcm_core.store.ports import MemoryStore

_REPLACEABLE: Final = frozenset({"active", "disputed"})
_REVIVABLE: Final = frozenset({"superseded", "disputed", "retracted"})


class LifecycleError(ValueError):
    """A transition the item's current state does not allow (e.g. promoting a user fact)."""


def _load(store: MemoryStore, item_id: str) -> MemoryItem:
    item = store.get_item(item_id)
    if item is None:
        raise StoreNotFoundError(f"memory item {item_id} does not exist")
    return item


def _event(
    item: MemoryItem, name: str, actor: str, detail: Mapping[str, Any] | None
) -> MemoryEvent:
    return MemoryEvent(
        memory_id=item.id,
        session_id=item.session_id,
        event=name,
        actor=actor,
        detail=dict(detail or {}),
    )


def supersede(
    store: MemoryStore,
    old_id: str,
    new_item: MemoryItem,
    *,
    actor: str = "extractor",
    detail: Mapping[str, Any] | None = None,
) -> MemoryItem:
    """Store `new_item` as the replacement of `old_id`; the old item stays, marked superseded.

    Returns the stored new item. If an active item with the same content already exists
    it becomes the replacement instead of a duplicate.
    """
    with store.transaction():
        old = _load(store, old_id)
        if old.status not in _REPLACEABLE:
            raise LifecycleError(
                f"{old_id} is {old.status}; only active or disputed items can be superseded"
            )
        links = tuple(dict.fromkeys((*new_item.supersedes, old_id)))
        stored, created = store.insert_item(replace(new_item, supersedes=links), actor=actor)
        if stored.id == old_id:
            return stored  # the "new" value is the old one: nothing to replace
        if not created and old_id not in stored.supersedes:
            stored = store.update_item(
                stored.id,
                ItemChange(supersedes=(*stored.supersedes, old_id)),
                _event(stored, "revised", actor, {"supersedes": old_id, **(detail or {})}),
            )
        store.update_item(
            old_id,
            ItemChange(status="superseded", superseded_by=stored.id),
            _event(old, "superseded", actor, {"by": stored.id, **(detail or {})}),
        )
        return stored


def file_as_replaced(
    store: MemoryStore,
    item: MemoryItem,
    head_id: str,
    *,
    actor: str = "extractor",
    detail: Mapping[str, Any] | None = None,
) -> MemoryItem:
    """Store `item`, said before the active `head_id` on the same subject, as replaced by it.

    The item's history reads "created", then "superseded" by the head, which gains the
    link; the head stays in force.
    """
    with store.transaction():
        head = _load(store, head_id)
        stored, _ = store.insert_item(item, actor=actor)
        if stored.status not in _REPLACEABLE or stored.id == head_id:
            return stored
        store.update_item(
            stored.id,
            ItemChange(status="superseded", superseded_by=head_id),
            _event(stored, "superseded", actor, {"by": head_id, **(detail or {})}),
        )
        if stored.id not in head.supersedes:
            store.update_item(
                head_id,
                ItemChange(supersedes=(*head.supersedes, stored.id)),
                _event(head, "revised", actor, {"supersedes": stored.id, **(detail or {})}),
            )
        return _load(store, stored.id)


def promote(
    store: MemoryStore,
    item_id: str,
    *,
    kind: str | None = None,
    actor: str = "user",
    detail: Mapping[str, Any] | None = None,
) -> MemoryItem:
    """Make an assistant proposal the user confirmed a user_explicit item of `kind`."""
    item = _load(store, item_id)
    if item.evidence_type == "user_explicit" and any(
        row.event == "promoted" for row in store.list_memory_events(memory_id=item_id)
    ):
        return item  # promoted before: a replayed confirmation changes nothing
    if item.evidence_type != "assistant_proposal" or item.status not in _REPLACEABLE:
        raise LifecycleError(f"{item_id} is not an open assistant proposal")
    new_kind = kind or ("decision" if item.kind == "proposal" else item.kind)
    if new_kind not in MEMORY_KINDS or new_kind == "proposal":
        raise LifecycleError(f"cannot promote to kind {new_kind!r}")
    change = ItemChange(evidence_type="user_explicit", kind=new_kind)
    payload = {"from_kind": item.kind, "to_kind": new_kind, **(detail or {})}
    return store.update_item(item_id, change, _event(item, "promoted", actor, payload))


def dispute(
    store: MemoryStore,
    item_id: str,
    *,
    actor: str = "user",
    detail: Mapping[str, Any] | None = None,
) -> MemoryItem:
    """Mark an item contested; it stays retrievable (call it for each side of a conflict)."""
    item = _load(store, item_id)
    if item.status == "disputed":
        return item
    if item.status != "active":
        raise LifecycleError(f"{item_id} is {item.status}; only active items can be disputed")
    return store.update_item(
        item_id, ItemChange(status="disputed"), _event(item, "disputed", actor, detail)
    )


def retract(
    store: MemoryStore,
    item_id: str,
    *,
    actor: str = "user",
    detail: Mapping[str, Any] | None = None,
) -> MemoryItem:
    """Withdraw an item: retrieval skips it, the audit trail keeps it."""
    item = _load(store, item_id)
    if item.status == "retracted":
        return item
    return store.update_item(
        item_id, ItemChange(status="retracted"), _event(item, "retracted", actor, detail)
    )


def reactivate(
    store: MemoryStore,
    item_id: str,
    *,
    actor: str = "user",
    detail: Mapping[str, Any] | None = None,
    supersedes: tuple[str, ...] | None = None,
) -> MemoryItem:
    """Bring a superseded, disputed or retracted item back to active.

    Raises `StoreConflictError` (from the store) if an active twin with the same content exists.
    """
    item = _load(store, item_id)
    if item.status == "active":
        return item
    if item.status not in _REVIVABLE:
        raise LifecycleError(f"{item_id} is {item.status}; it cannot be reactivated")
    change = ItemChange(status="active", clear_superseded_by=True, supersedes=supersedes)
    return store.update_item(item_id, change, _event(item, "reactivated", actor, detail))


def restate(
    store: MemoryStore,
    old_id: str,
    current_id: str | None,
    *,
    actor: str = "extractor",
    detail: Mapping[str, Any] | None = None,
) -> MemoryItem:
    """The user said an earlier value again: revive it and retire the value that replaced it."""
    with store.transaction():
        old = _load(store, old_id)
        links = old.supersedes
        if current_id is not None and current_id != old_id:
            current = _load(store, current_id)
            if current.status in _REPLACEABLE:
                store.update_item(
                    current_id,
                    ItemChange(status="superseded", superseded_by=old_id),
                    _event(current, "superseded", actor, {"by": old_id, **(detail or {})}),
                )
                links = tuple(dict.fromkeys((*old.supersedes, current_id)))
        return reactivate(store, old_id, actor=actor, detail=detail, supersedes=links)


def active_head(store: MemoryStore, item: MemoryItem, *, max_hops: int = 50) -> MemoryItem | None:
    """The item that currently stands in for `item`: follow superseded_by to the end."""
    seen = {item.id}
    current = item
    for _ in range(max_hops):
        if current.superseded_by is None:
            return current if current.status in _REPLACEABLE else None
        nxt = store.get_item(current.superseded_by)
        if nxt is None or nxt.id in seen:
            return None
        seen.add(nxt.id)
        current = nxt
    return None
