"""Contracts of memory item inserts: active-hash dedupe, the created row, reads and listing."""

from __future__ import annotations

import dataclasses

import pytest

from lcm_core.store.errors import StoreConflictError
from lcm_core.store.models import MemoryItem
from lcm_core.store.ports import MemoryStore
from lcm_core.testing.base import StoreContractBase
from lcm_core.testing.builders import CHINESE, make_item, supersede


class ItemContract(StoreContractBase):
    """insert_item dedupes on the active (session_id, content_hash) and logs what it creates."""

    def test_insert_creates_item_and_one_created_row(self, store: MemoryStore) -> None:
        """a new item is stored, reported created, and gets exactly one `created` lifecycle row."""
        item = make_item("s1", "the budget is 3000 yuan")
        stored, created = store.insert_item(item, actor="unit-test")
        assert created is True
        assert stored.id == item.id and stored.content == item.content
        assert store.get_item(item.id) == stored
        rows = store.list_memory_events(memory_id=item.id)
        assert [(r.event, r.actor, r.session_id) for r in rows] == [("created", "unit-test", "s1")]

    def test_item_round_trip_keeps_every_field(self, store: MemoryStore) -> None:
        """every field of an item comes back as written, JSON fields and Chinese included."""
        item = make_item(
            "s1",
            CHINESE,
            kind="constraint",
            evidence_type="assistant_proposal",
            conditions=("含税", "per order"),
            scope={"project": "旅行", "tags": ["a", "b"], "depth": 2},
            numbers=({"raw": "3000元", "value": 3000, "unit": "元"}, {"value": 0.5}),
            source_refs=("seq:1", "seq:4"),
            supersedes=("mem_old",),
            extractor="rules-v1",
            derived_from_seq=4,
            created_at="2025-01-01T00:00:00.000+00:00",
            updated_at="2025-01-01T00:00:00.000+00:00",
        )
        stored, _ = store.insert_item(item)
        assert stored == item
        assert store.get_item(item.id) == item

    def test_insert_fills_empty_timestamps(self, store: MemoryStore) -> None:
        """an item written without timestamps gets created_at and updated_at from the store."""
        stored, _ = store.insert_item(make_item("s1", "fill my times"))
        assert stored.created_at != "" and stored.updated_at != ""
        assert store.get_item(stored.id) == stored

    def test_same_session_and_hash_returns_existing(self, store: MemoryStore) -> None:
        """a second item with an active item's session and hash returns that item, not created."""
        first, _ = store.insert_item(make_item("s1", "tea over coffee", item_id="mem_first"))
        twin = make_item("s1", "tea over coffee", item_id="mem_twin", kind="preference")
        stored, created = store.insert_item(twin)
        assert created is False
        assert stored == first
        assert store.get_item("mem_twin") is None
        assert len(store.list_memory_events(session_id="s1")) == 1

    def test_same_hash_in_other_session_is_new(self, store: MemoryStore) -> None:
        """dedupe is per session: the same hash in another session creates a new item."""
        store.insert_item(make_item("s1", "shared words", item_id="mem_a"))
        stored, created = store.insert_item(make_item("s2", "shared words", item_id="mem_b"))
        assert created is True and stored.id == "mem_b"
        assert {i.id for i in store.list_items()} == {"mem_a", "mem_b"}

    def test_inactive_item_does_not_block_same_hash(self, store: MemoryStore) -> None:
        """a superseded item with the same hash does not stop a new active item with another id."""
        old, _ = store.insert_item(make_item("s1", "the answer", item_id="mem_old"))
        bridge, _ = store.insert_item(make_item("s1", "a replacement", item_id="mem_bridge"))
        supersede(store, old, bridge)
        again, created = store.insert_item(make_item("s1", "the answer", item_id="mem_again"))
        assert created is True and again.id == "mem_again" and again.status == "active"
        old_now = store.get_item("mem_old")
        assert old_now is not None and old_now.status == "superseded"
        assert old_now.superseded_by == "mem_bridge"

    def test_insert_of_existing_id_with_other_hash_conflicts(self, store: MemoryStore) -> None:
        """inserting an id that already exists, with another content, raises StoreConflictError."""
        first, _ = store.insert_item(make_item("s1", "first content", item_id="mem_x"))
        with pytest.raises(StoreConflictError):
            store.insert_item(make_item("s1", "other content", item_id="mem_x"))
        assert store.get_item("mem_x") == first
        assert len(store.list_memory_events(memory_id="mem_x")) == 1

    def test_insert_of_existing_inactive_id_conflicts(self, store: MemoryStore) -> None:
        """re-inserting the id of a superseded item raises StoreConflictError and changes nothing."""
        old, _ = store.insert_item(make_item("s1", "old value", item_id="mem_old"))
        new, _ = store.insert_item(make_item("s1", "new value", item_id="mem_new"))
        supersede(store, old, new)
        before = store.get_item("mem_old")
        rows_before = store.list_memory_events()
        with pytest.raises(StoreConflictError):
            store.insert_item(make_item("s1", "old value", item_id="mem_old"))
        assert store.get_item("mem_old") == before
        assert store.list_memory_events() == rows_before

    def test_unknown_item_is_none(self, store: MemoryStore) -> None:
        """get_item of an id never written returns None."""
        assert store.get_item("mem_missing") is None

    def test_list_items_in_creation_order_then_id(self, store: MemoryStore) -> None:
        """list_items orders by creation time, then by id among items created together."""
        stamp = "2025-01-01T00:00:00.000+00:00"
        later = "2025-01-02T00:00:00.000+00:00"
        store.insert_item(make_item("s1", "second", item_id="mem_a", created_at=later))
        store.insert_item(make_item("s1", "first z", item_id="mem_z", created_at=stamp))
        store.insert_item(make_item("s1", "first b", item_id="mem_b", created_at=stamp))
        assert [i.id for i in store.list_items("s1")] == ["mem_b", "mem_z", "mem_a"]

    def test_list_items_filters(self, store: MemoryStore) -> None:
        """list_items filters by session, statuses and kinds, each alone or combined."""
        store.insert_item(make_item("s1", "fact one", item_id="mem_1"))
        store.insert_item(make_item("s1", "pref one", item_id="mem_2", kind="preference"))
        store.insert_item(make_item("s1", "fact two", item_id="mem_3", status="disputed"))
        store.insert_item(make_item("s2", "fact other", item_id="mem_4"))

        def ids(items: list[MemoryItem]) -> set[str]:
            return {i.id for i in items}

        assert ids(store.list_items()) == {"mem_1", "mem_2", "mem_3", "mem_4"}
        assert ids(store.list_items("s1")) == {"mem_1", "mem_2", "mem_3"}
        assert ids(store.list_items("s1", statuses=["active"])) == {"mem_1", "mem_2"}
        assert ids(store.list_items(kinds=["fact"])) == {"mem_1", "mem_3", "mem_4"}
        assert ids(store.list_items("s1", statuses=["active"], kinds=["fact"])) == {"mem_1"}
        assert store.list_items("s3") == []

    def test_inserted_status_is_kept(self, store: MemoryStore) -> None:
        """an item inserted disputed stays disputed and does not dedupe a later active twin."""
        stored, created = store.insert_item(
            make_item("s1", "claim", item_id="mem_disputed", status="disputed")
        )
        assert created is True and stored.status == "disputed"
        active, created = store.insert_item(make_item("s1", "claim", item_id="mem_active"))
        assert created is True and active.status == "active"
        assert store.get_item("mem_disputed") == stored

    def test_returned_item_matches_storage(self, store: MemoryStore) -> None:
        """the item insert_item returns is the one later reads return, input fields unchanged."""
        item = make_item("s1", "exact state")
        stored, _ = store.insert_item(item)
        assert store.get_item(item.id) == stored
        blank_stored = dataclasses.replace(stored, created_at="", updated_at="")
        assert blank_stored == dataclasses.replace(item, created_at="", updated_at="")
