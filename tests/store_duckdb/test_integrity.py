"""DuckDB integrity checks the port cannot reach: rows written behind the store's back."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("duckdb")

import duckdb

from lcm_core.store.models import SCHEMA_VERSION
from lcm_core.testing.builders import make_event, make_item, populate
from lcm_store_duckdb import DuckDBMemoryStore


def _store_with_rows(path: Path) -> str:
    """A populated file; returns the id of one active item."""
    with DuckDBMemoryStore(path) as store:
        populate(store, "s1")
        item, _ = store.insert_item(make_item("s1", "预算 3000 元"))
        store.insert_event(make_event("s1", 10, "one more event"))
        assert store.integrity_check() == []
    return item.id


def _write(path: Path, *statements: str) -> None:
    """Run SQL on the file directly, as another tool or a bug might."""
    raw = duckdb.connect(str(path))
    for sql in statements:
        raw.execute(sql)
    raw.close()


def test_duplicate_active_items_are_reported(tmp_path: Path) -> None:
    """two active items with one content hash (no partial unique index stops it) are reported."""
    path = tmp_path / "m.duckdb"
    item_id = _store_with_rows(path)
    _write(
        path,
        "INSERT INTO memory_items SELECT * REPLACE ('mem_dup' AS id) "
        f"FROM memory_items WHERE id = '{item_id}'",
        "INSERT INTO memory_search SELECT * REPLACE ('mem_dup' AS id) "
        f"FROM memory_search WHERE id = '{item_id}'",
    )
    with DuckDBMemoryStore(path) as store:
        assert store.integrity_check() == ["1 content hashes have more than one active item"]


@pytest.mark.parametrize(
    ("sql", "problem"),
    [
        (
            "DELETE FROM events_search WHERE seq = 10",
            "1 rows of events have no search row in events_search",
        ),
        (
            "INSERT INTO memory_search VALUES ('mem_ghost', 's1', 'ghost', 3)",
            "1 rows of memory_search have no content row in memory_items",
        ),
    ],
)
def test_side_tables_checked(tmp_path: Path, sql: str, problem: str) -> None:
    """a content row without its search row, or a search row without its content, is named."""
    path = tmp_path / "m.duckdb"
    _store_with_rows(path)
    _write(path, sql)
    with DuckDBMemoryStore(path) as store:
        assert store.integrity_check() == [problem]


def test_wrong_schema_version_is_reported(tmp_path: Path) -> None:
    """a file whose recorded schema version is not this code's is named by integrity_check."""
    with DuckDBMemoryStore(tmp_path / "m.duckdb") as store:
        store.set_meta("schema", "1")
        assert store.integrity_check() == [f"schema version is 1, expected {SCHEMA_VERSION}"]
