"""Contracts of item transitions: update_item changes a row and logs it atomically."""

from __future__ import annotations

import pytest

from lcm_core.store.errors import StoreConflictError, StoreNotFoundError
from lcm_core.store.models import ItemChange, MemoryEvent
from lcm_core.store.ports import MemoryStore
from lcm_core.testing.base import StoreContractBase
from lcm_core.testing.builders import lifecycle, make_item, supersede

# (lifecycle event, change, expected status, expected evidence type) for each transition.
TRANSITIONS = [
    ("disputed", ItemChange(status="disputed"), "disputed", "assistant_proposal"),
    ("retracted", ItemChange(status="retracted"), "retracted", "assistant_proposal"),
    ("promoted", ItemChange(evidence_type="user_explicit"), "active", "user_explicit"),
    ("revised", ItemChange(kind="decision"), "active", "assistant_proposal"),
]


class LifecycleContract(StoreContractBase):
    """Supersede, dispute, retract, reactivate and promote each write one lifecycle row."""

    def test_supersede_links_both_items(self, store: MemoryStore) -> None:
        """superseding sets the old item's status and superseded_by; the new one lists the old."""
        old, _ = store.insert_item(make_item("s1", "budget is 2000", item_id="mem_old"))
        new, _ = store.insert_item(
            make_item("s1", "budget is 3000", item_id="mem_new", supersedes=("mem_old",))
        )
        returned = supersede(store, old, new)
        stored_old, stored_new = store.get_item("mem_old"), store.get_item("mem_new")
        assert stored_old is not None and stored_new is not None
        assert returned == stored_old
        assert stored_old.status == "superseded"
        assert stored_old.superseded_by == "mem_new"
        assert "mem_old" in stored_new.supersedes
        assert stored_new.status == "active" and stored_new.superseded_by is None

    def test_supersedes_can_be_set_by_update(self, store: MemoryStore) -> None:
        """ItemChange.supersedes replaces the item's list of superseded ids."""
        item, _ = store.insert_item(make_item("s1", "merged value", item_id="mem_new"))
        change = ItemChange(supersedes=("mem_a", "mem_b"))
        updated = store.update_item(item.id, change, lifecycle(item, "revised"))
        assert updated.supersedes == ("mem_a", "mem_b")
        assert store.get_item(item.id) == updated

    @pytest.mark.parametrize(("event", "change", "status", "evidence"), TRANSITIONS)
    def test_transition_applies_change_and_one_row(
        self, store: MemoryStore, event: str, change: ItemChange, status: str, evidence: str
    ) -> None:
        """each transition changes only its fields and appends exactly one lifecycle row."""
        item, _ = store.insert_item(
            make_item("s1", "we might use redis", evidence_type="assistant_proposal")
        )
        rows_before = store.list_memory_events(memory_id=item.id)
        updated = store.update_item(item.id, change, lifecycle(item, event, why="test"))
        assert (updated.status, updated.evidence_type) == (status, evidence)
        assert updated.kind == ("decision" if event == "revised" else "fact")
        assert updated.content == item.content and updated.content_hash == item.content_hash
        assert store.get_item(item.id) == updated
        rows = store.list_memory_events(memory_id=item.id)
        assert rows[: len(rows_before)] == rows_before
        assert [(r.event, r.actor, r.detail) for r in rows[len(rows_before) :]] == [
            (event, "tester", {"why": "test"})
        ]

    def test_reactivate_clears_superseded_by(self, store: MemoryStore) -> None:
        """reactivating a superseded item can make it active again with no superseded_by."""
        old, _ = store.insert_item(make_item("s1", "value one", item_id="mem_old"))
        new, _ = store.insert_item(make_item("s1", "value two", item_id="mem_new"))
        supersede(store, old, new)
        store.update_item(new.id, ItemChange(status="retracted"), lifecycle(new, "retracted"))
        change = ItemChange(status="active", clear_superseded_by=True)
        revived = store.update_item(old.id, change, lifecycle(old, "reactivated"))
        assert revived.status == "active" and revived.superseded_by is None
        events = [r.event for r in store.list_memory_events(memory_id=old.id)]
        assert events == ["created", "superseded", "reactivated"]

    def test_reactivate_disputed_item(self, store: MemoryStore) -> None:
        """a disputed item can return to active, keeping its other fields."""
        item, _ = store.insert_item(make_item("s1", "contested claim"))
        store.update_item(item.id, ItemChange(status="disputed"), lifecycle(item, "disputed"))
        back = store.update_item(
            item.id, ItemChange(status="active"), lifecycle(item, "reactivated")
        )
        assert back.status == "active" and back.kind == item.kind

    def test_reactivate_into_conflict_changes_nothing(self, store: MemoryStore) -> None:
        """reactivating beside an active twin raises StoreConflictError and leaves both rows as they were."""
        old, _ = store.insert_item(make_item("s1", "same claim", item_id="mem_old"))
        bridge, _ = store.insert_item(make_item("s1", "bridge", item_id="mem_bridge"))
        supersede(store, old, bridge)
        _, created = store.insert_item(make_item("s1", "same claim", item_id="mem_twin"))
        assert created is True
        before = (store.get_item("mem_old"), store.get_item("mem_twin"))
        rows_before = store.list_memory_events()
        change = ItemChange(status="active", clear_superseded_by=True)
        with pytest.raises(StoreConflictError):
            store.update_item(old.id, change, lifecycle(old, "reactivated"))
        assert (store.get_item("mem_old"), store.get_item("mem_twin")) == before
        assert store.list_memory_events() == rows_before

    def test_update_unknown_item_raises_and_logs_nothing(self, store: MemoryStore) -> None:
        """update_item of an unknown id raises StoreNotFoundError and writes no lifecycle row."""
        store.insert_item(make_item("s1", "bystander"))
        rows_before = store.list_memory_events()
        ghost = MemoryEvent(memory_id="mem_ghost", session_id="s1", event="disputed")
        with pytest.raises(StoreNotFoundError):
            store.update_item("mem_ghost", ItemChange(status="disputed"), ghost)
        assert store.list_memory_events() == rows_before
        assert store.list_memory_events(memory_id="mem_ghost") == []
        assert store.get_item("mem_ghost") is None

    def test_unchanged_fields_stay(self, store: MemoryStore) -> None:
        """fields an ItemChange leaves as None keep their stored values."""
        item, _ = store.insert_item(
            make_item(
                "s1",
                "keep my links",
                evidence_type="inferred",
                supersedes=("mem_prev",),
                source_refs=("seq:9",),
            )
        )
        updated = store.update_item(
            item.id, ItemChange(status="disputed"), lifecycle(item, "disputed")
        )
        assert updated.supersedes == ("mem_prev",) and updated.source_refs == ("seq:9",)
        assert updated.evidence_type == "inferred" and updated.kind == item.kind

    def test_change_without_link_keeps_successor(self, store: MemoryStore) -> None:
        """a change naming no successor keeps a superseded item's link to its successor."""
        old, _ = store.insert_item(make_item("s1", "端口是 3000"))
        new, _ = store.insert_item(make_item("s1", "端口是 8080"))
        supersede(store, old, new)
        updated = store.update_item(
            old.id, ItemChange(evidence_type="user_explicit"), lifecycle(old, "promoted")
        )
        assert updated.superseded_by == new.id
        stored = store.get_item(old.id)
        assert stored is not None and stored.superseded_by == new.id

    def test_lifecycle_rows_in_write_order(self, store: MemoryStore) -> None:
        """list_memory_events returns rows in the order they were written, with ids assigned."""
        a, _ = store.insert_item(make_item("s1", "alpha", item_id="mem_a"))
        b, _ = store.insert_item(make_item("s1", "beta", item_id="mem_b"))
        store.update_item(a.id, ItemChange(status="disputed"), lifecycle(a, "disputed"))
        store.update_item(b.id, ItemChange(status="retracted"), lifecycle(b, "retracted"))
        store.update_item(a.id, ItemChange(status="active"), lifecycle(a, "reactivated"))
        rows = store.list_memory_events()
        assert [(r.memory_id, r.event) for r in rows] == [
            ("mem_a", "created"),
            ("mem_b", "created"),
            ("mem_a", "disputed"),
            ("mem_b", "retracted"),
            ("mem_a", "reactivated"),
        ]
        assert all(isinstance(r.id, int) for r in rows)
        assert all(r.at != "" for r in rows)

    def test_lifecycle_filters(self, store: MemoryStore) -> None:
        """list_memory_events filters by memory_id and by session_id."""
        a, _ = store.insert_item(make_item("s1", "alpha", item_id="mem_a"))
        store.insert_item(make_item("s1", "beta", item_id="mem_b"))
        store.insert_item(make_item("s2", "gamma", item_id="mem_c"))
        store.update_item(a.id, ItemChange(status="disputed"), lifecycle(a, "disputed"))
        assert [r.event for r in store.list_memory_events(memory_id="mem_a")] == [
            "created",
            "disputed",
        ]
        assert {r.memory_id for r in store.list_memory_events(session_id="s1")} == {
            "mem_a",
            "mem_b",
        }
        assert [r.memory_id for r in store.list_memory_events(session_id="s2")] == ["mem_c"]
        assert store.list_memory_events(memory_id="mem_a", session_id="s2") == []

    def test_lifecycle_row_keeps_detail(self, store: MemoryStore) -> None:
        """a lifecycle row keeps the actor, time and JSON detail it was written with."""
        item, _ = store.insert_item(make_item("s1", "detail holder"))
        event = MemoryEvent(
            memory_id=item.id,
            session_id="s1",
            event="disputed",
            actor="user",
            detail={"reason": "用户更正", "seqs": [3, 4], "nested": {"ok": True}},
            at="2025-03-04T05:06:07.000+00:00",
        )
        store.update_item(item.id, ItemChange(status="disputed"), event)
        row = store.list_memory_events(memory_id=item.id)[-1]
        assert (row.event, row.actor, row.detail, row.at) == (
            "disputed",
            "user",
            event.detail,
            event.at,
        )
