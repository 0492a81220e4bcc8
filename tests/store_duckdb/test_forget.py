"""Forgetting on a DuckDB store: the same tombstones, and what its file keeps (see docs/privacy.md)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

pytest.importorskip("duckdb")

from click.testing import CliRunner

from lcm_adapter.cli.main import cli
from lcm_core import usecases
from lcm_core.config import load_config
from lcm_core.extraction import control
from lcm_core.store.models import Event
from lcm_core.testing.builders import make_item
from lcm_store_duckdb import DuckDBMemoryStore

SECRET = "银行卡背面写着 Quokka-4412 这串字"


def _store(path: Path) -> tuple[DuckDBMemoryStore, str]:
    store = DuckDBMemoryStore(path)
    store.insert_events(Event("s1", n, "tool/result", f"第 {n} 行 line {n}") for n in range(50))
    store.insert_event(Event("s1", 60, "user/message", SECRET, role="user", source_kind="user"))
    item, _ = store.insert_item(
        make_item("s1", SECRET, kind="constraint", source_refs=("seq:60",), derived_from_seq=60)
    )
    return store, item.id


def test_a_forgotten_item_leaves_search_blocks_and_exports(tmp_path: Path) -> None:
    """Search, a block and the export rows hold no trace of the text; the tombstone stays."""
    store, item_id = _store(tmp_path / "m.duckdb")
    try:
        report = control.forget_item(store, item_id, "错了")
        assert report.items == [item_id] and report.events == [60]
        assert report.scrub == {"checkpoint": "complete"}
        found = usecases.search(store, "s1", "Quokka 银行卡", load_config({}), 10)
        assert found.items == () and found.events == ()
        rows = [
            json.dumps(row, ensure_ascii=False)
            for table in ("events", "memory_items", "memory_events", "archive")
            for row in store.export_rows(table)
        ]
        assert not any("Quokka" in row or "银行卡" in row for row in rows)
        tomb = store.get_item(item_id)
        assert tomb is not None and tomb.status == "forgotten" and tomb.content == ""
    finally:
        store.close()


def test_a_duckdb_export_of_the_store_holds_no_byte_of_it(tmp_path: Path) -> None:
    """DuckDB's CHECKPOINT may leave freed blocks in the file; a fresh copy (docs/privacy.md's
    step for DuckDB) holds only the live rows, so none of the forgotten bytes."""
    path = tmp_path / "m.duckdb"
    store, item_id = _store(path)
    control.forget_item(store, item_id)
    store.close()
    out = tmp_path / "copy.duckdb"
    run = CliRunner().invoke(
        cli, ["--db", f"duckdb:///{path}", "export", "--format", "duckdb", "--out", str(out)]
    )
    assert run.exit_code == 0, run.output
    assert SECRET.encode() not in out.read_bytes() and b"Quokka" not in out.read_bytes()


def test_parquet_and_duckdb_exports_of_a_sqlite_store_carry_only_the_tombstone(
    tmp_path: Path,
) -> None:
    """`lcm export --format parquet|duckdb` after `lcm forget`: no byte of the text, and the
    tombstone row (status forgotten, no content) is there for an import to keep."""
    from lcm_store_sqlite import SQLiteMemoryStore

    path = tmp_path / "m.sqlite"
    store = SQLiteMemoryStore(path)
    store.insert_event(Event("s1", 0, "user/message", SECRET, role="user", source_kind="user"))
    item, _ = store.insert_item(make_item("s1", SECRET, source_refs=("seq:0",)))
    store.close()
    runner = CliRunner()
    assert runner.invoke(cli, ["--db", str(path), "forget", item.id]).exit_code == 0
    for fmt in ("parquet", "duckdb"):
        out = tmp_path / f"export-{fmt}"
        run = runner.invoke(cli, ["--db", str(path), "export", "--format", fmt, "--out", str(out)])
        assert run.exit_code == 0, run.output
        files = [out] if out.is_file() else sorted(out.iterdir())
        assert not any(b"Quokka" in f.read_bytes() for f in files), fmt
    copy = DuckDBMemoryStore(tmp_path / "export-duckdb")
    try:
        tomb = copy.get_item(item.id)
        event = copy.get_event("s1", 0)
        assert tomb is not None and (tomb.status, tomb.content) == ("forgotten", "")
        assert event is not None and (event.store, event.text) == ("forgotten", "")
    finally:
        copy.close()
