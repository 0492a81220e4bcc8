"""Lifecycle transitions: one status change and one lifecycle row, in one transaction."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from lcm_core.extraction import lifecycle
from lcm_core.extraction.lifecycle import LifecycleError
from lcm_core.store.errors import StoreConflictError, StoreNotFoundError
from lcm_core.store.memory import InMemoryStore
from lcm_core.store.models import MemoryItem
from lcm_core.store.ports import MemoryStore
from lcm_core.testing.builders import make_item

SESSION = "s-life"


@pytest.fixture
def store() -> Iterator[InMemoryStore]:
    opened = InMemoryStore()
    yield opened
    opened.close()


def add(store: MemoryStore, content: str, **fields: Any) -> MemoryItem:
    item, created = store.insert_item(make_item(SESSION, content, **fields))
    assert created
    return item


def rows(store: MemoryStore, item: MemoryItem) -> list[str]:
    return [r.event for r in store.list_memory_events(memory_id=item.id)]


def test_supersede_links_both_sides_and_keeps_the_old_value(store: InMemoryStore) -> None:
    """superseding stores the new item, marks the old one, and the old one stays readable."""
    old = add(store, "预算不超过3000元（含税）", kind="constraint")
    new = make_item(SESSION, "预算不超过3500元（含税）", kind="constraint")
    stored = lifecycle.supersede(store, old.id, new, detail={"seq": 7})
    after_old = store.get_item(old.id)
    assert after_old is not None and after_old.status == "superseded"
    assert after_old.superseded_by == stored.id and stored.supersedes == (old.id,)
    assert rows(store, old) == ["created", "superseded"] and rows(store, stored) == ["created"]
    detail = store.list_memory_events(memory_id=old.id)[-1].detail
    assert detail == {"by": stored.id, "seq": 7}
    hits = store.search_items(SESSION, ["3000"], statuses=("superseded",))
    assert [h.item.id for h in hits] == [old.id]


def test_supersede_rolls_back_when_marking_the_old_item_fails(store: InMemoryStore) -> None:
    """if the old item cannot be marked, the new item is not left behind either."""
    old = add(store, "use port 3000", kind="decision")

    class FailingUpdate:
        def __init__(self, inner: InMemoryStore) -> None:
            self.inner = inner

        def __getattr__(self, name: str) -> Any:
            return getattr(self.inner, name)

        def update_item(self, *args: Any, **kwargs: Any) -> MemoryItem:
            raise RuntimeError("disk on fire")

    with pytest.raises(RuntimeError):
        lifecycle.supersede(FailingUpdate(store), old.id, make_item(SESSION, "use port 8080"))  # type: ignore[arg-type]
    assert [i.content for i in store.list_items(SESSION)] == ["use port 3000"]
    assert store.get_item(old.id) == old and rows(store, old) == ["created"]


def test_supersede_onto_an_existing_active_item_links_without_duplicating(
    store: InMemoryStore,
) -> None:
    """when the replacement already exists, it is linked, not inserted a second time."""
    old = add(store, "use port 3000", kind="decision")
    existing = add(store, "use port 8080", kind="decision")
    stored = lifecycle.supersede(
        store, old.id, make_item(SESSION, "use port 8080", kind="decision")
    )
    assert stored.id == existing.id and old.id in stored.supersedes
    assert len(store.list_items(SESSION)) == 2
    assert rows(store, existing) == ["created", "revised"]


def test_superseding_a_retracted_item_is_refused(store: InMemoryStore) -> None:
    """a withdrawn item cannot be superseded; nothing is written."""
    old = add(store, "ship on Friday")
    lifecycle.retract(store, old.id)
    before = store.list_memory_events()
    with pytest.raises(LifecycleError):
        lifecycle.supersede(store, old.id, make_item(SESSION, "ship on Monday"))
    assert store.list_memory_events() == before and len(store.list_items(SESSION)) == 1


def test_promote_turns_a_confirmed_proposal_into_user_evidence(store: InMemoryStore) -> None:
    """a proposal the user confirmed becomes user_explicit with the confirmed kind, once."""
    proposal = add(
        store, "I suggest a cache warm-up step", kind="proposal", evidence_type="assistant_proposal"
    )
    promoted = lifecycle.promote(store, proposal.id, kind="constraint", detail={"seq": 3})
    assert (promoted.evidence_type, promoted.kind, promoted.status) == (
        "user_explicit",
        "constraint",
        "active",
    )
    assert rows(store, proposal) == ["created", "promoted"]
    assert store.list_memory_events(memory_id=proposal.id)[-1].detail == {
        "from_kind": "proposal",
        "to_kind": "constraint",
        "seq": 3,
    }
    assert lifecycle.promote(store, proposal.id) == promoted
    assert rows(store, proposal) == ["created", "promoted"]


def test_promote_defaults_to_decision(store: InMemoryStore) -> None:
    """without a kind from the confirmation, accepting a proposal records a decision."""
    proposal = add(store, "我建议加索引", kind="proposal", evidence_type="assistant_proposal")
    assert lifecycle.promote(store, proposal.id).kind == "decision"


def test_promote_refuses_user_facts(store: InMemoryStore) -> None:
    """only assistant proposals can be promoted."""
    fact = add(store, "our db is postgres")
    with pytest.raises(LifecycleError):
        lifecycle.promote(store, fact.id)
    assert rows(store, fact) == ["created"]


def test_disputed_items_both_stay_retrievable(store: InMemoryStore) -> None:
    """both sides of a conflict are disputed and both still come back from search."""
    left = add(store, "deploy on Friday")
    right = add(store, "deploy on Monday")
    lifecycle.dispute(store, left.id, detail={"against": right.id})
    lifecycle.dispute(store, right.id, detail={"against": left.id})
    lifecycle.dispute(store, right.id)
    hits = store.search_items(SESSION, ["deploy"], statuses=("active", "disputed"))
    assert sorted(h.item.id for h in hits) == sorted([left.id, right.id])
    assert {h.item.status for h in hits} == {"disputed"}
    assert rows(store, right) == ["created", "disputed"]


def test_retract_hides_from_retrieval_but_keeps_audit(store: InMemoryStore) -> None:
    """a retracted item is out of active search, still readable, with its history."""
    item = add(store, "never log tokens", kind="constraint")
    lifecycle.retract(store, item.id, detail={"why": "wrong session"})
    assert store.search_items(SESSION, ["tokens"]) == []
    stored = store.get_item(item.id)
    assert stored is not None and stored.status == "retracted"
    assert rows(store, item) == ["created", "retracted"]
    lifecycle.retract(store, item.id)
    assert rows(store, item) == ["created", "retracted"]


def test_reactivate_brings_back_a_superseded_item(store: InMemoryStore) -> None:
    """reactivation clears superseded_by and writes one `reactivated` row."""
    old = add(store, "use port 3000")
    lifecycle.supersede(store, old.id, make_item(SESSION, "use port 8080"))
    back = lifecycle.reactivate(store, old.id)
    assert back.status == "active" and back.superseded_by is None
    assert rows(store, old) == ["created", "superseded", "reactivated"]


def test_reactivate_beside_an_active_twin_changes_nothing(store: InMemoryStore) -> None:
    """reactivating into a duplicate active value raises and leaves every row as it was."""
    old = add(store, "same claim", item_id="mem_old")
    lifecycle.supersede(store, old.id, make_item(SESSION, "bridge"))
    add(store, "same claim", item_id="mem_twin")
    before = (store.list_items(SESSION), store.list_memory_events())
    with pytest.raises(StoreConflictError):
        lifecycle.reactivate(store, old.id)
    assert (store.list_items(SESSION), store.list_memory_events()) == before


def test_restate_swaps_the_values_in_one_transaction(store: InMemoryStore) -> None:
    """restating revives the old value and retires its replacement, linked both ways."""
    old = add(store, "use port 3000")
    new = lifecycle.supersede(store, old.id, make_item(SESSION, "use port 8080"))
    revived = lifecycle.restate(store, old.id, new.id, detail={"seq": 9})
    retired = store.get_item(new.id)
    assert revived.status == "active" and new.id in revived.supersedes
    assert retired is not None and (retired.status, retired.superseded_by) == ("superseded", old.id)
    assert rows(store, old) == ["created", "superseded", "reactivated"]
    assert rows(store, new) == ["created", "superseded"]


def test_restate_failure_leaves_both_items_untouched(store: InMemoryStore) -> None:
    """if the revival conflicts, the replacement is not retired either (one transaction)."""
    old = add(store, "same claim", item_id="mem_old")
    new = lifecycle.supersede(store, old.id, make_item(SESSION, "bridge"))
    add(store, "same claim", item_id="mem_twin")
    before = (store.list_items(SESSION), store.list_memory_events())
    with pytest.raises(StoreConflictError):
        lifecycle.restate(store, old.id, new.id)
    assert (store.list_items(SESSION), store.list_memory_events()) == before


def test_unknown_items_raise_not_found(store: InMemoryStore) -> None:
    """every transition on an unknown id raises StoreNotFoundError and writes nothing."""
    for call in (lifecycle.dispute, lifecycle.retract, lifecycle.reactivate, lifecycle.promote):
        with pytest.raises(StoreNotFoundError):
            call(store, "mem_missing")
    assert store.list_memory_events() == []


def test_each_transition_writes_exactly_one_row(store: InMemoryStore) -> None:
    """dispute, reactivate, retract and promote each append exactly one lifecycle row."""
    item = add(
        store, "we could shard by tenant", kind="proposal", evidence_type="assistant_proposal"
    )
    steps = [
        (lifecycle.dispute, "disputed"),
        (lifecycle.reactivate, "reactivated"),
        (lifecycle.promote, "promoted"),
        (lifecycle.retract, "retracted"),
    ]
    for call, name in steps:
        before = len(store.list_memory_events())
        call(store, item.id)
        after = store.list_memory_events()
        assert len(after) == before + 1 and after[-1].event == name
