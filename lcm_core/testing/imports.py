"""Contracts of import (`SupportsImport`): exported rows go back as they were, once."""

from __future__ import annotations

from typing import Any

import pytest

from lcm_core.reports.importer import ImportConflictError, import_rows
from lcm_core.store.errors import StoreConflictError, StoreError
from lcm_core.store.models import GENERATED_ID_TABLES, TABLES, ItemChange
from lcm_core.store.ports import MemoryStore, SupportsImport
from lcm_core.testing.base import StoreContractBase, require
from lcm_core.testing.builders import CHINESE, lifecycle, make_event, make_item, populate

Snapshot = dict[str, list[dict[str, Any]]]


def snapshot(store: MemoryStore) -> Snapshot:
    """Every table's exported rows."""
    return {table: list(store.export_rows(table)) for table in TABLES}


def without_generated_ids(rows: Snapshot) -> Snapshot:
    """The rows with generated ids (and references to them) left out, for stores that renumber."""
    out: Snapshot = {}
    for table, found in rows.items():
        drop = {"id"} if table in GENERATED_ID_TABLES else set()
        if table == "skill_versions":
            drop.add("supersedes")
        if table == "skill_files":
            drop.add("version_id")
        kept = [{k: v for k, v in row.items() if k not in drop} for row in found]
        out[table] = sorted(kept, key=repr) if drop else kept
    return out


def populated_with_history(store: MemoryStore) -> None:
    """Two sessions (one Chinese), a supersession with its lifecycle rows."""
    populate(store, "s1")
    populate(store, "会话2")
    old, _ = store.insert_item(make_item("会话2", "预算不超过3000元"))
    new, _ = store.insert_item(make_item("会话2", "预算改成2500元"))
    store.update_item(
        old.id,
        ItemChange(status="superseded", superseded_by=new.id),
        lifecycle(old, "superseded", by=new.id),
    )


class ImportContract(StoreContractBase):
    """Imported rows are the exported rows: ids, links, lifecycle and text kept; twice adds nothing."""

    def test_round_trip_restores_every_row(self, store: MemoryStore) -> None:
        """rows exported, purged and imported back export equal (generated ids aside), meta too."""
        require(store, SupportsImport)
        populated_with_history(store)
        before = snapshot(store)
        store.purge_all()
        counts = import_rows(store, lambda table: before[table])
        after = snapshot(store)
        assert without_generated_ids(after) == without_generated_ids(before)
        assert counts.added["events"] == len(before["events"])
        assert counts.added["memory_items"] == len(before["memory_items"])
        superseded = [r for r in after["memory_items"] if r["status"] == "superseded"]
        assert len(superseded) == 1 and superseded[0]["superseded_by"] is not None
        assert store.get_item(superseded[0]["superseded_by"]) is not None

    def test_imported_rows_are_searchable(self, store: MemoryStore) -> None:
        """an imported event and item are found by search, Chinese included."""
        require(store, SupportsImport)
        populated_with_history(store)
        before = snapshot(store)
        store.purge_all()
        import_rows(store, lambda table: before[table])
        assert store.search_events("会话2", ["含税"], limit=5)
        assert store.search_items("会话2", ["2500"], limit=5)

    def test_second_import_adds_nothing(self, store: MemoryStore) -> None:
        """importing the same rows again skips every one and changes no row."""
        require(store, SupportsImport)
        populated_with_history(store)
        rows = snapshot(store)
        store.purge_all()
        import_rows(store, lambda table: rows[table])
        once = snapshot(store)
        counts = import_rows(store, lambda table: rows[table])
        assert sum(counts.added.values()) == 0
        assert snapshot(store) == once

    def test_import_into_a_store_holding_the_same_rows_adds_nothing(
        self, store: MemoryStore
    ) -> None:
        """a store's own export imported into it is all skipped."""
        require(store, SupportsImport)
        populated_with_history(store)
        rows = snapshot(store)
        counts = import_rows(store, lambda table: rows[table])
        assert sum(counts.added.values()) == 0
        assert snapshot(store) == rows

    def test_conflicting_row_refuses_the_whole_import(self, store: MemoryStore) -> None:
        """a row differing from the stored row with its key stops the import; nothing is kept."""
        require(store, SupportsImport)
        store.insert_events([make_event("s1", 0, "stored text")])
        before = snapshot(store)
        rows: Snapshot = {t: [] for t in TABLES}
        rows["sessions"] = [{"session_id": "new", "created_at": "t", "updated_at": "t"}]
        changed = dict(before["events"][0], text="other text", content_hash="x")
        rows["events"] = [changed]
        with pytest.raises(ImportConflictError, match="events"):
            import_rows(store, lambda table: rows[table])
        assert snapshot(store) == before

    def test_generated_id_clash_is_added_under_a_new_id(self, store: MemoryStore) -> None:
        """a lifecycle row whose id another row holds is added once, under a new id."""
        require(store, SupportsImport)
        item, _ = store.insert_item(make_item("s1", "port is 8080"))
        own = list(store.export_rows("memory_events"))
        foreign = dict(own[0], event="disputed", detail_json='{"why":"导入"}')
        rows: Snapshot = {t: [] for t in TABLES}
        rows["memory_events"] = [foreign]
        first = import_rows(store, lambda table: rows[table])
        assert first.added["memory_events"] == 1
        events = store.list_memory_events(memory_id=item.id)
        assert [e.event for e in events] == ["created", "disputed"]
        second = import_rows(store, lambda table: rows[table])
        assert second.added["memory_events"] == 0
        assert len(store.list_memory_events(memory_id=item.id)) == 2
        # The id generator continues past every stored id.
        store.update_item(item.id, ItemChange(status="active"), lifecycle(item, "reactivated"))
        assert len({e.id for e in store.list_memory_events(memory_id=item.id)}) == 3

    def test_meta_takes_the_export_value_but_not_the_schema(self, store: MemoryStore) -> None:
        """meta keys take the exported value; the database keeps its own schema version."""
        require(store, SupportsImport)
        store.set_meta("test.cursor", "1")
        version = store.schema_version()
        rows: Snapshot = {t: [] for t in TABLES}
        rows["meta"] = [{"key": "test.cursor", "value": "7"}, {"key": "schema", "value": "1"}]
        import_rows(store, lambda table: rows[table])
        assert store.get_meta("test.cursor") == "7"
        assert store.schema_version() == version

    def test_find_and_put_row_primitives(self, store: MemoryStore) -> None:
        """put_row stores the columns given; find_row matches NULL and refuses unknown names."""
        require(store, SupportsImport)
        importer: Any = store
        row = dict(
            session_id="s1",
            seq=3,
            type="user/message",
            text=f"恢复的消息 {CHINESE}",
            time=None,
            turn=None,
            step=None,
            role="user",
            source_kind=None,
            source_form=None,
            tool_name=None,
            call_id=None,
            store="host",
            content_hash="h",
            truncated=0,
            ingested_at="2026-01-01T00:00:00.000+00:00",
        )
        with store.transaction():
            assert importer.put_row("events", row) is None
        assert importer.find_row("events", {"session_id": "s1", "seq": 3}) == row
        assert importer.find_row("events", {"session_id": "s1", "time": None}) == row
        assert importer.find_row("events", {"session_id": "s2"}) is None
        with pytest.raises(StoreConflictError):
            importer.put_row("events", row)
        with pytest.raises(StoreError, match="nonexistent"):
            importer.find_row("events", {"nonexistent": 1})
        with pytest.raises(StoreError, match="nonexistent"):
            importer.put_row("events", dict(row, seq=4, nonexistent=1))
        with pytest.raises(StoreError):
            importer.find_row("events; DROP TABLE events", {"seq": 1})
        assert store.get_event("s1", 3) is not None
