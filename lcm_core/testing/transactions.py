"""Contracts of transactions, durability across handles, and the optional capabilities."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import cast

import pytest

from lcm_core.store.errors import StoreConflictError
from lcm_core.store.models import (
    SCHEMA_VERSION,
    TABLES,
    ArchiveEntry,
    AssemblyLog,
    Checkpoint,
    ItemChange,
    RuleOverride,
    Session,
    TaskState,
)
from lcm_core.store.ports import MemoryStore, SupportsBackup, SupportsSharedFile, SupportsVacuum
from lcm_core.testing.base import StoreContractBase, StoreFactory, require
from lcm_core.testing.builders import CHINESE, lifecycle, make_event, make_item, populate, supersede


class Boom(Exception):
    """The failure the tests raise on purpose inside a transaction."""


class TransactionContract(StoreContractBase):
    """Writes inside transaction() commit together, roll back together, and nest."""

    def test_transaction_commits_all_writes(self, store: MemoryStore) -> None:
        """writes made inside a transaction are all there after it ends."""
        with store.transaction():
            store.insert_event(make_event("s1", 0))
            store.insert_item(make_item("s1", "inside"))
            store.set_meta("test.tx", "1")
        assert store.get_event("s1", 0) is not None
        assert len(store.list_items("s1")) == 1 and store.get_meta("test.tx") == "1"

    def test_reads_inside_transaction_see_its_writes(self, store: MemoryStore) -> None:
        """a transaction reads back what it has written before it commits."""
        with store.transaction():
            store.insert_event(make_event("s1", 5, "pending write"))
            assert store.max_event_seq("s1") == 5
            assert [h.event.seq for h in store.search_events("s1", ["pending"])] == [5]

    def test_failed_transaction_leaves_nothing(self, store: MemoryStore) -> None:
        """an exception inside a transaction undoes every write it made, nested ones too."""
        store.insert_event(make_event("s1", 0, "before"))
        with pytest.raises(Boom), store.transaction():
            store.insert_events([make_event("s1", 1), make_event("s1", 2)])
            item, _ = store.insert_item(make_item("s1", "doomed item"))
            with store.transaction():
                store.update_item(
                    item.id, ItemChange(status="disputed"), lifecycle(item, "disputed")
                )
                store.put_task_state(TaskState("s1", goal="doomed"))
                store.put_archive(ArchiveEntry("s1", "seq:1", "doomed"))
            store.set_meta("test.tx", "doomed")
            raise Boom
        assert [e.seq for e in store.list_events("s1")] == [0]
        assert store.list_items() == [] and store.list_memory_events() == []
        assert store.get_task_state("s1") is None and store.get_archive("s1", "seq:1") is None
        assert store.get_meta("test.tx") is None
        assert store.search_items(None, ["doomed"]) == []

    def test_failure_in_nested_transaction_undoes_all(self, store: MemoryStore) -> None:
        """an exception escaping a nested transaction rolls back the outer one as well."""
        with pytest.raises(Boom), store.transaction():
            store.insert_event(make_event("s1", 1))
            with store.transaction():
                store.insert_event(make_event("s1", 2))
                raise Boom
        assert store.list_events("s1") == []

    def test_caught_inner_failure_undoes_only_inner(self, store: MemoryStore) -> None:
        """a nested transaction that fails and is caught rolls back only its own writes."""
        with store.transaction():
            store.insert_event(make_event("s1", 1, "outer before"))
            try:
                with store.transaction():
                    store.insert_event(make_event("s1", 2, "inner"))
                    store.insert_item(make_item("s1", "inner item"))
                    raise Boom
            except Boom:
                pass
            store.insert_event(make_event("s1", 3, "outer after"))
        assert [e.seq for e in store.list_events("s1")] == [1, 3]
        assert store.list_items() == [] and store.list_memory_events() == []

    def test_caught_inner_failure_restores_replaced_rows(self, store: MemoryStore) -> None:
        """a caught inner failure restores every row its writes replaced, pruned or deleted."""
        populate(store, "s1")
        populate(store, "s2")
        logged = store.add_assembly_log(
            AssemblyLog("s1", "pre-step", 100, 5, reasons=({"kind": "query", "text": CHINESE},)),
            retention=10,
        )
        before = {table: list(store.export_rows(table)) for table in TABLES}
        with store.transaction():
            try:
                with store.transaction():
                    assert store.rewrite_assembly_log_reasons(logged, ({"kind": "query"},))
                    store.add_assembly_log(AssemblyLog("s1", "pre-step", 100, 5), retention=1)
                    store.record_pending("s1", 1, "again")
                    store.put_task_state(TaskState("s1", goal="replaced"))
                    store.put_checkpoint(Checkpoint("s1", last_event_seq=99))
                    store.upsert_session(Session("s1", cwd="/elsewhere"))
                    store.set_meta("test.populated.s1", "changed")
                    store.put_archive(ArchiveEntry("s1", "seq:9", CHINESE))
                    for rule in store.list_rules(skill_name="skill-s1"):
                        store.upsert_rule(dataclasses.replace(rule, id="other", text="new"))
                    store.put_rule_override(RuleOverride("rule-s1", category="style"))
                    store.clear_pending("s2", 1)
                    store.purge_session("s2")
                    raise Boom
            except Boom:
                pass
        after = {table: list(store.export_rows(table)) for table in TABLES}
        for table in TABLES:
            assert after[table] == before[table], table

    def test_failed_insert_inside_transaction_keeps_outer(self, store: MemoryStore) -> None:
        """an insert_item of a taken id, caught inside a transaction, undoes only itself."""
        store.insert_item(make_item("s1", "first content", item_id="mem_x"))
        with store.transaction():
            store.insert_event(make_event("s1", 1, "kept"))
            with pytest.raises(StoreConflictError):
                store.insert_item(make_item("s1", "其他内容", item_id="mem_x"))
            store.insert_event(make_event("s1", 2, "kept too"))
        assert [e.seq for e in store.list_events("s1")] == [1, 2]
        assert [i.content for i in store.list_items("s1")] == ["first content"]

    def test_failed_update_inside_transaction_keeps_outer(self, store: MemoryStore) -> None:
        """a conflicting update_item caught inside a transaction undoes only itself."""
        old, _ = store.insert_item(make_item("s1", "twin claim", item_id="mem_old"))
        new, _ = store.insert_item(make_item("s1", "other claim", item_id="mem_new"))
        supersede(store, old, new)
        store.insert_item(make_item("s1", "twin claim", item_id="mem_twin"))
        rows_before = store.list_memory_events()
        with store.transaction():
            store.insert_event(make_event("s1", 1, "kept"))
            with pytest.raises(StoreConflictError):
                change = ItemChange(status="active", clear_superseded_by=True)
                store.update_item(old.id, change, lifecycle(old, "reactivated"))
            store.insert_event(make_event("s1", 2, "kept too"))
        assert [e.seq for e in store.list_events("s1")] == [1, 2]
        assert store.list_memory_events() == rows_before
        stored = store.get_item("mem_old")
        assert stored is not None and stored.status == "superseded"


class PersistenceContract(StoreContractBase):
    """Committed data survives reopening and is shared by handles on the same database."""

    def test_data_survives_reopen(self, store_factory: StoreFactory) -> None:
        """rows written and committed before close() are all there after reopening."""
        self.need_persistent()
        first = store_factory()
        try:
            populate(first, "s1")
            first.insert_event(make_event("s1", 10, CHINESE))
            counts = first.stats()
        finally:
            first.close()
        second = store_factory()
        try:
            assert second.stats() == counts
            stored = second.get_event("s1", 10)
            assert stored is not None and stored.text == CHINESE
            assert second.schema_version() == SCHEMA_VERSION
            assert second.integrity_check() == []
            assert {h.event.seq for h in second.search_events("s1", ["不超过"])} == {1, 10}
        finally:
            second.close()

    def test_two_handles_see_each_other(self, store_factory: StoreFactory) -> None:
        """two open handles on one database each read what the other committed."""
        self.need_persistent()
        left = store_factory()
        try:
            require(left, SupportsSharedFile)
            if not cast(SupportsSharedFile, left).shares_file():
                pytest.skip("this store's file cannot be shared between handles")
            right = store_factory()
            try:
                left.insert_event(make_event("s1", 0, "from left"))
                stored = right.get_event("s1", 0)
                assert stored is not None and stored.text == "from left"
                right.insert_item(make_item("s1", "from right", item_id="mem_r"))
                assert left.get_item("mem_r") is not None
                right.set_meta("test.shared", "yes")
                assert left.get_meta("test.shared") == "yes"
            finally:
                right.close()
        finally:
            left.close()

    def test_vacuum_keeps_data(self, store: MemoryStore) -> None:
        """vacuum after a purge leaves the remaining data intact."""
        require(store, SupportsVacuum)
        populate(store, "s1")
        populate(store, "s2")
        store.purge_session("s1")
        before = store.stats()
        cast(SupportsVacuum, store).vacuum()
        assert store.stats() == before
        assert store.integrity_check() == []

    def test_backup_writes_a_file(self, store: MemoryStore, tmp_path: Path) -> None:
        """backup writes a non-empty copy and leaves the store usable."""
        require(store, SupportsBackup)
        populate(store, "s1")
        target = tmp_path / "backup-copy"
        cast(SupportsBackup, store).backup(target)
        assert target.exists() and target.stat().st_size > 0
        store.insert_event(make_event("s1", 50))
        assert store.get_event("s1", 50) is not None
