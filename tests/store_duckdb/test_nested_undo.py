"""DuckDB has no savepoints: inner transactions undo their writes from before-images."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("duckdb")

from lcm_core.store.errors import StoreError
from lcm_core.store.models import TABLES, ItemChange
from lcm_core.testing.builders import lifecycle, make_event, make_item, populate
from lcm_store_duckdb import DuckDBMemoryStore


class Boom(Exception):
    """The failure raised on purpose inside an inner transaction."""


@pytest.fixture
def store(tmp_path: Path) -> Iterator[DuckDBMemoryStore]:
    """A file store holding two populated sessions."""
    handle = DuckDBMemoryStore(tmp_path / "m.duckdb")
    populate(handle, "s0")
    populate(handle, "s1")
    yield handle
    handle.close()


def snapshot(store: DuckDBMemoryStore) -> dict[str, list[dict[str, Any]]]:
    """Every row of every table, plus the search side tables, as seen by the store's own handle."""
    tables: dict[str, list[dict[str, Any]]] = {}
    with store._db.guarded("snapshot") as raw:
        for table in (*TABLES, "events_search", "memory_search"):
            cursor = raw.execute(f"SELECT * FROM {table} ORDER BY ALL")
            names = [d[0] for d in cursor.description or ()]
            tables[table] = [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]
    return tables


def every_kind_of_write(store: DuckDBMemoryStore) -> None:
    """Writes to every table, including replacements, deletes and purges."""
    populate(store, "s2")
    store.insert_events([make_event("s0", 0, "replayed"), make_event("s0", 40, "new text")])
    item, _ = store.insert_item(make_item("s0", "inner item", item_id="mem_inner"))
    store.update_item(item.id, ItemChange(status="retracted"), lifecycle(item, "retracted"))
    store.record_pending("s0", 1, "retried")
    store.clear_pending("s1", 1)
    store.set_meta("test.populated.s0", "changed")
    store.purge_session("s1")


def test_caught_inner_failure_restores_every_table(store: DuckDBMemoryStore) -> None:
    """a failed inner level puts back every row of every table, side tables included."""
    with store.transaction():
        before = snapshot(store)
        with pytest.raises(Boom), store.transaction():
            every_kind_of_write(store)
            raise Boom
        assert snapshot(store) == before
    assert snapshot(store) == before
    assert store.integrity_check() == []


def test_purge_all_inside_failed_inner_level_is_undone(store: DuckDBMemoryStore) -> None:
    """even purge_all is undone by a failing inner level, and search sees the old rows."""
    with store.transaction():
        before = snapshot(store)
        with pytest.raises(Boom), store.transaction():
            store.purge_all()
            assert store.search_events(None, ["zebra"]) == []
            raise Boom
    assert snapshot(store) == before
    assert {h.event.session_id for h in store.search_events(None, ["zebra"])} == {"s0", "s1"}


def test_succeeded_level_is_undone_by_failing_parent(store: DuckDBMemoryStore) -> None:
    """a level that succeeded inside a level that fails is undone with its parent."""
    with store.transaction():
        before = snapshot(store)
        with pytest.raises(Boom), store.transaction():
            with store.transaction():
                every_kind_of_write(store)
            store.insert_event(make_event("s9", 0, "parent write"))
            raise Boom
        assert snapshot(store) == before
        store.insert_event(make_event("s9", 1, "kept"))
    assert [e.seq for e in store.list_events("s9")] == [1]


def test_outer_commit_keeps_inner_success(store: DuckDBMemoryStore) -> None:
    """inner levels that succeed are committed with the outermost level."""
    with store.transaction():
        with store.transaction():
            every_kind_of_write(store)
        expected = snapshot(store)
    assert snapshot(store) == expected
    assert store.integrity_check() == []


def test_driver_error_aborts_the_whole_transaction(store: DuckDBMemoryStore) -> None:
    """a database error inside a transaction loses all its writes and says so at the end."""
    before = snapshot(store)
    with pytest.raises(StoreError, match="aborted"), store.transaction():
        store.insert_event(make_event("s5", 0, "lost"))
        try:
            with store._db.guarded("a broken statement") as raw:
                raw.execute("SELECT * FROM no_such_table")
        except StoreError:
            pass
    assert snapshot(store) == before
    store.insert_event(make_event("s5", 1, "usable again"))
    assert store.get_event("s5", 1) is not None
