"""Contracts of administration: meta, schema version, stats, export, purge, integrity."""

from __future__ import annotations

import pytest

from lcm_core.store.errors import StoreError
from lcm_core.store.models import SCHEMA_VERSION, TABLES, ItemChange
from lcm_core.store.ports import MemoryStore
from lcm_core.testing.base import StoreContractBase
from lcm_core.testing.builders import (
    POPULATED_COUNTS,
    lifecycle,
    make_event,
    make_item,
    populate,
    supersede,
)

# Tables whose rows belong to a session (the others are global).
SESSION_TABLES = tuple(POPULATED_COUNTS)
GLOBAL_TABLES = ("skill_versions", "skill_files", "rules", "rule_overrides")


class AdminContract(StoreContractBase):
    """Whole-store operations report and remove exactly the rows they name."""

    def test_meta_get_and_set(self, store: MemoryStore) -> None:
        """set_meta stores a value get_meta returns; a second set overwrites; unknown keys are None."""
        assert store.get_meta("test.key") is None
        store.set_meta("test.key", "一")
        assert store.get_meta("test.key") == "一"
        store.set_meta("test.key", "two")
        assert store.get_meta("test.key") == "two"

    def test_schema_version(self, store: MemoryStore) -> None:
        """a new store reports the schema version this code defines."""
        assert store.schema_version() == SCHEMA_VERSION

    def test_store_satisfies_the_port(self, store: MemoryStore) -> None:
        """the store under test has every method and attribute of the MemoryStore Protocol."""
        assert isinstance(store, MemoryStore)

    def test_url_is_text(self, store: MemoryStore) -> None:
        """the store names its location in a non-empty url string."""
        assert isinstance(store.url, str) and store.url != ""

    def test_stats_cover_every_table(self, store: MemoryStore) -> None:
        """stats has an integer count for every table, zero for data tables of a new store."""
        counts = store.stats()
        assert set(TABLES) <= set(counts)
        assert all(isinstance(counts[table], int) for table in TABLES)
        assert all(counts[table] == 0 for table in TABLES if table != "meta")

    def test_stats_count_inserted_rows(self, store: MemoryStore) -> None:
        """stats counts every inserted row, overall and per session."""
        populate(store, "s1")
        populate(store, "s2")
        overall = store.stats()
        for table, count in POPULATED_COUNTS.items():
            assert overall[table] == 2 * count, table
        for table in GLOBAL_TABLES:
            assert overall[table] == 2, table
        one = store.stats("s1")
        assert set(TABLES) <= set(one)
        for table, count in POPULATED_COUNTS.items():
            assert one[table] == count, table

    def test_export_covers_every_table(self, store: MemoryStore) -> None:
        """export_rows yields column-to-value rows for every table of a populated store."""
        populate(store, "s1")
        for table in TABLES:
            rows = list(store.export_rows(table))
            assert rows, table
            assert all(isinstance(row, dict) and row for row in rows), table
            assert all(isinstance(key, str) for row in rows for key in row), table
        assert len(list(store.export_rows("events"))) == POPULATED_COUNTS["events"]

    def test_export_unknown_table_fails_clearly(self, store: MemoryStore) -> None:
        """exporting a table that does not exist raises StoreError naming the known tables."""
        populate(store, "s1")
        with pytest.raises(StoreError) as info:
            list(store.export_rows("events; DROP TABLE events"))
        assert "memory_items" in str(info.value)
        assert len(list(store.export_rows("events"))) == POPULATED_COUNTS["events"]

    def test_export_is_stable(self, store: MemoryStore) -> None:
        """two exports of unchanged data are equal, row for row."""
        populate(store, "s2")
        populate(store, "s1")
        for table in TABLES:
            assert list(store.export_rows(table)) == list(store.export_rows(table)), table

    def test_export_session_filter(self, store: MemoryStore) -> None:
        """a session filter exports only that session's rows of session tables."""
        populate(store, "s1")
        populate(store, "s2")
        for table, count in POPULATED_COUNTS.items():
            rows = list(store.export_rows(table, session_id="s1"))
            assert len(rows) == count, table
            assert {row["session_id"] for row in rows} == {"s1"}, table

    def test_purge_session_removes_only_that_session(self, store: MemoryStore) -> None:
        """purge_session deletes one session's rows, reports them per table, and spares others."""
        populate(store, "s1")
        populate(store, "s2")
        before = store.stats("s2")
        removed = store.purge_session("s1")
        for table, count in POPULATED_COUNTS.items():
            assert removed.get(table) == count, table
        after = store.stats("s1")
        assert all(after[table] == 0 for table in POPULATED_COUNTS)
        assert store.stats("s2") == before
        assert store.get_event("s1", 0) is None and store.get_event("s2", 0) is not None
        assert store.list_items("s1") == [] and len(store.list_items("s2")) == 2
        assert store.get_task_state("s1") is None and store.get_session("s2") is not None

    def test_purged_text_is_not_found(self, store: MemoryStore) -> None:
        """after purge_session, search no longer returns the purged events or items."""
        populate(store, "s1")
        populate(store, "s2")
        store.insert_item(make_item("s1", "xylophone lessons"))
        store.insert_event(make_event("s1", 10, "xylophone lessons"))
        store.purge_session("s1")
        assert store.search_items(None, ["xylophone"]) == []
        assert store.search_events(None, ["xylophone"]) == []
        assert {h.event.session_id for h in store.search_events(None, ["zebra"])} == {"s2"}
        assert [h.item.session_id for h in store.search_items(None, ["s1 prefers"])] == []

    def test_purge_unknown_session_deletes_nothing(self, store: MemoryStore) -> None:
        """purging a session that has no rows deletes nothing and reports zeros."""
        populate(store, "s1")
        before = store.stats()
        removed = store.purge_session("nobody")
        assert all(count == 0 for count in removed.values())
        assert store.stats() == before

    def test_purge_all_keeps_schema(self, store: MemoryStore) -> None:
        """purge_all empties every data table, reports the counts, and keeps the schema version."""
        populate(store, "s1")
        populate(store, "s2")
        removed = store.purge_all()
        for table, count in POPULATED_COUNTS.items():
            assert removed.get(table) == 2 * count, table
        counts = store.stats()
        assert all(counts[table] == 0 for table in TABLES if table != "meta")
        assert store.schema_version() == SCHEMA_VERSION
        store.insert_event(make_event("s1", 0, "life after purge"))
        assert store.get_event("s1", 0) is not None

    def test_integrity_check_on_healthy_store(self, store: MemoryStore) -> None:
        """integrity_check reports no problem for a new, a populated and a purged store."""
        assert store.integrity_check() == []
        populate(store, "s1")
        populate(store, "s2")
        assert store.integrity_check() == []
        store.purge_session("s1")
        assert store.integrity_check() == []

    def test_integrity_check_accepts_supersession(self, store: MemoryStore) -> None:
        """a store with superseded items, a chain and a cleared link, is healthy."""
        old, _ = store.insert_item(make_item("s1", "deadline is monday"))
        mid, _ = store.insert_item(make_item("s1", "deadline is tuesday"))
        new, _ = store.insert_item(make_item("s1", "截止日期是周三"))
        supersede(store, old, mid)
        supersede(store, mid, new)
        assert store.integrity_check() == []
        store.update_item(
            mid.id,
            ItemChange(status="active", clear_superseded_by=True),
            lifecycle(mid, "restored"),
        )
        assert store.integrity_check() == []

    def test_integrity_check_reports_missing_successor(self, store: MemoryStore) -> None:
        """a supersession link to an item that does not exist is reported, naming one problem."""
        old, _ = store.insert_item(make_item("s1", "deadline is monday"))
        store.insert_item(make_item("s1", "budget is 3000"))
        store.update_item(
            old.id,
            ItemChange(status="superseded", superseded_by="mem_missing"),
            lifecycle(old, "superseded", by="mem_missing"),
        )
        problems = store.integrity_check()
        assert len(problems) == 1 and isinstance(problems[0], str) and problems[0], problems
