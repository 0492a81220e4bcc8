"""`lcm import` and `lcm backup` through the CLI: round trips, idempotence, bad input, live copies."""

from __future__ import annotations

import hashlib
import importlib.util
import json
import sqlite3
import threading
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from lcm_adapter.cli.main import cli
from lcm_adapter.dsh.sample import conversation, sample_turns, user
from lcm_adapter.runtime import MemoryRuntime

HAS_DUCKDB = all(importlib.util.find_spec(m) is not None for m in ("duckdb", "pyarrow"))
needs_duckdb = pytest.mark.skipif(not HAS_DUCKDB, reason="needs the duckdb extra")
SID = "会话-restore"
SAMPLE_EVENTS = len(conversation(sample_turns()))


def lcm(*args: str) -> Result:
    return CliRunner().invoke(cli, list(args))


def ok(*args: str) -> Result:
    result = lcm(*args)
    assert result.exit_code == 0, (args, result.output, result.stderr)
    return result


def one_line_error(result: Result, *words: str) -> str:
    assert result.exit_code == 1, result.output
    line = result.stderr.strip()
    assert "\n" not in line and line.startswith("lcm: "), line
    for word in words:
        assert word in line, line
    return line


@pytest.fixture
def source(tmp_path: Path) -> Path:
    """A database with a bilingual session: items, a correction (supersession), logs."""
    db = tmp_path / "source.sqlite"
    runtime = MemoryRuntime.open(str(db))
    try:
        runtime.on_events(SID, conversation(sample_turns() * 3))
        runtime.on_events("second", conversation([("端口改成 8080。", "好。")]))
        runtime.pre_step(SID, [], 9, 1, query="预算多少？")
    finally:
        runtime.close()
    return db


def tree(folder: Path) -> dict[str, str]:
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(folder.iterdir())}


def target_url(tmp_path: Path, backend: str, name: str = "target") -> str:
    return (
        f"{backend}://{tmp_path / f'{name}.{backend}'}"
        if backend == "duckdb"
        else str(tmp_path / f"{name}.sqlite")
    )


@pytest.mark.parametrize("backend", ["sqlite", pytest.param("duckdb", marks=needs_duckdb)])
def test_export_import_export_is_byte_identical(source: Path, tmp_path: Path, backend: str) -> None:
    """A JSONL export imported into an empty database exports to the same bytes, Chinese included."""
    first, second = tmp_path / "first", tmp_path / "second"
    ok("--db", str(source), "export", "--format", "jsonl", "--out", str(first))
    assert "预算" in (first / "events.jsonl").read_text("utf-8")
    assert '"superseded"' in (first / "memory_items.jsonl").read_text("utf-8")
    target = target_url(tmp_path, backend)
    data = json.loads(ok("--db", target, "import", str(first), "--json").stdout)
    assert data["rows_added"] > 0 and data["renumbered"] == {}
    ok("--db", target, "export", "--format", "jsonl", "--out", str(second))
    assert tree(second) == tree(first)


@pytest.mark.parametrize("backend", ["sqlite", pytest.param("duckdb", marks=needs_duckdb)])
def test_importing_twice_adds_nothing(source: Path, tmp_path: Path, backend: str) -> None:
    """The second import of the same export adds no row and changes none."""
    export = tmp_path / "export"
    ok("--db", str(source), "export", "--format", "jsonl", "--out", str(export))
    target = target_url(tmp_path, backend)
    first = json.loads(ok("--db", target, "import", str(export), "--json").stdout)
    ok("--db", target, "export", "--format", "jsonl", "--out", str(tmp_path / "once"))
    second = json.loads(ok("--db", target, "import", str(export), "--json").stdout)
    assert second["rows_added"] == 0
    assert second["rows_skipped"] == first["rows_added"] + first["rows_skipped"]
    ok("--db", target, "export", "--format", "jsonl", "--out", str(tmp_path / "twice"))
    assert tree(tmp_path / "twice") == tree(tmp_path / "once")


@needs_duckdb
@pytest.mark.parametrize("fmt", ["parquet", "duckdb"])
def test_parquet_and_duckdb_exports_import_alike(source: Path, tmp_path: Path, fmt: str) -> None:
    """Parquet and DuckDB exports restore the same rows a JSONL export does."""
    reference = tmp_path / "reference"
    ok("--db", str(source), "export", "--format", "jsonl", "--out", str(reference))
    export = tmp_path / ("export.duckdb" if fmt == "duckdb" else "export")
    ok("--db", str(source), "export", "--format", fmt, "--out", str(export))
    target = str(tmp_path / "target.sqlite")
    data = json.loads(ok("--db", target, "import", str(export), "--json").stdout)
    assert data["format"] == fmt
    ok("--db", target, "export", "--format", "jsonl", "--out", str(tmp_path / "again"))
    assert tree(tmp_path / "again") == tree(reference)


def test_restored_memory_answers_search_and_assemble(source: Path, tmp_path: Path) -> None:
    """After an import the memory is usable: search finds the corrected budget, the block shows it."""
    export = tmp_path / "export"
    ok("--db", str(source), "export", "--format", "jsonl", "--out", str(export))
    target = str(tmp_path / "target.sqlite")
    ok("--db", target, "import", str(export))
    found = ok("--db", target, "search", "预算", "--session", SID).stdout
    assert "650" in found
    block = ok("--db", target, "assemble", "--session", SID, "--query", "预算是多少").stdout
    assert "650" in block


def test_bad_input_is_one_line_and_stores_nothing(source: Path, tmp_path: Path) -> None:
    """Missing path, corrupt line, foreign file, newer schema: one line each, the database unchanged."""
    target = tmp_path / "target.sqlite"
    runtime = MemoryRuntime.open(str(target))
    runtime.on_events("kept", [user(0, "保留这一条 keep this")])
    runtime.close()
    ok("--db", str(target), "export", "--format", "jsonl", "--out", str(tmp_path / "before"))
    export = tmp_path / "export"
    ok("--db", str(source), "export", "--format", "jsonl", "--out", str(export))
    one_line_error(lcm("--db", str(target), "import", str(tmp_path / "absent")), "no such export")
    foreign = tmp_path / "notes.txt"
    foreign.write_text("just some notes\n", "utf-8")
    one_line_error(lcm("--db", str(target), "import", str(foreign)), "not an lcm export")
    events = export / "events.jsonl"
    lines = events.read_text("utf-8").splitlines()
    events.write_text("\n".join([*lines[:5], '{"session_id": "broken', *lines[5:]]) + "\n", "utf-8")
    one_line_error(lcm("--db", str(target), "import", str(export)), "events.jsonl:6", "not a JSON")
    events.write_text("\n".join(lines) + "\n", "utf-8")
    manifest = json.loads((export / "export.json").read_text("utf-8"))
    (export / "export.json").write_text(json.dumps({**manifest, "schema_version": 99}), "utf-8")
    one_line_error(lcm("--db", str(target), "import", str(export)), "v99", "upgrade")
    ok("--db", str(target), "export", "--format", "jsonl", "--out", str(tmp_path / "after"))
    assert tree(tmp_path / "after") == tree(tmp_path / "before")


def test_a_conflicting_row_refuses_the_import(source: Path, tmp_path: Path) -> None:
    """A database holding the same event with other text refuses the import whole, in one line."""
    export = tmp_path / "export"
    ok("--db", str(source), "export", "--format", "jsonl", "--out", str(export))
    target = tmp_path / "target.sqlite"
    runtime = MemoryRuntime.open(str(target))
    runtime.on_events(SID, [user(0, "另一段文字 different text")])
    runtime.close()
    ok("--db", str(target), "export", "--format", "jsonl", "--out", str(tmp_path / "before"))
    line = one_line_error(lcm("--db", str(target), "import", str(export)), "nothing was imported")
    assert SID in line
    ok("--db", str(target), "export", "--format", "jsonl", "--out", str(tmp_path / "after"))
    assert tree(tmp_path / "after") == tree(tmp_path / "before")


def test_backup_during_writes_opens_with_the_rows(tmp_path: Path) -> None:
    """A backup taken while another connection writes is a healthy file with every row committed before it."""
    db = tmp_path / "live.sqlite"
    runtime = MemoryRuntime.open(str(db))
    runtime.on_events(SID, conversation(sample_turns()))
    runtime.close()
    stop = threading.Event()
    written: list[int] = []

    def writer() -> None:
        other = MemoryRuntime.open(str(db))
        try:
            seq = 100
            while not stop.is_set() and seq < 5_000:
                other.on_events("writer", [user(seq, f"第 {seq} 条 message {seq}")])
                written.append(seq)
                seq += 1
        finally:
            other.close()

    thread = threading.Thread(target=writer)
    thread.start()
    try:
        while len(written) < 20:
            stop.wait(0.01)
        before = len(written)
        copy = tmp_path / "copy.sqlite"
        data = json.loads(ok("--db", str(db), "backup", str(copy), "--json").stdout)
    finally:
        stop.set()
        thread.join()
    assert len(written) > before  # the writer went on while the copy was taken
    assert copy.stat().st_mode & 0o777 == 0o600
    with sqlite3.connect(copy) as check:
        assert check.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        count = "SELECT count(*) FROM events WHERE session_id = ?"
        rows = check.execute(count, ("writer",)).fetchone()[0]
        assert rows >= before
        assert check.execute(count, (SID,)).fetchone()[0] == SAMPLE_EVENTS
    assert data["tables"]["events"] == rows + SAMPLE_EVENTS
    found = ok("--db", str(copy), "search", "预算", "--session", SID).stdout
    assert "650" in found


def test_backup_refuses_an_existing_file_and_the_source(tmp_path: Path) -> None:
    """An existing target or the database itself is refused in one line and left as it was."""
    db = tmp_path / "live.sqlite"
    runtime = MemoryRuntime.open(str(db))
    runtime.on_events(SID, conversation(sample_turns()))
    runtime.close()
    existing = tmp_path / "existing.sqlite"
    existing.write_bytes(b"keep me")
    one_line_error(lcm("--db", str(db), "backup", str(existing)), "exists")
    assert existing.read_bytes() == b"keep me"
    digest = hashlib.sha256(db.read_bytes()).hexdigest()
    one_line_error(lcm("--db", str(db), "backup", str(db)), "database being read")
    one_line_error(
        lcm("--db", str(db), "backup", str(tmp_path / "no" / "dir.sqlite")), "no such folder"
    )
    assert hashlib.sha256(db.read_bytes()).hexdigest() == digest
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(".")) == []


@needs_duckdb
def test_backup_of_a_duckdb_store(tmp_path: Path) -> None:
    """A DuckDB store's backup is a DuckDB file that opens with the same rows."""
    url = f"duckdb://{tmp_path / 'live.duckdb'}"
    runtime = MemoryRuntime.open(url)
    runtime.on_events(SID, conversation(sample_turns()))
    runtime.close()
    copy = tmp_path / "copy.duckdb"
    data: dict[str, Any] = json.loads(ok("--db", url, "backup", str(copy), "--json").stdout)
    assert data["tables"]["events"] == SAMPLE_EVENTS
    found = ok("--db", f"duckdb://{copy}", "search", "预算", "--session", SID).stdout
    assert "650" in found


def test_a_forgotten_item_stays_forgotten_and_a_pin_stays_through_import(
    source: Path, tmp_path: Path
) -> None:
    """Tombstones and pins travel: the restored database neither shows the forgotten text
    nor loses the pin, and its export is the same bytes."""

    def items(db: str, query: str) -> list[dict[str, Any]]:
        found: list[dict[str, Any]] = json.loads(
            ok("--db", db, "search", query, "--session", SID, "--json").stdout
        )["items"]
        return found

    budget = next(item for item in items(str(source), "预算") if "650" in item["content"])
    ok("--db", str(source), "forget", budget["id"], "--reason", "说错了")
    pinned = next(item for item in items(str(source), "Redis") if item["id"] != budget["id"])
    ok("--db", str(source), "pin", pinned["id"])
    first, second = tmp_path / "first", tmp_path / "second"
    ok("--db", str(source), "export", "--format", "jsonl", "--out", str(first))
    target = str(tmp_path / "restored.sqlite")
    ok("--db", target, "import", str(first))
    ok("--db", target, "export", "--format", "jsonl", "--out", str(second))
    assert tree(second) == tree(first)
    rows = [json.loads(line) for line in (second / "memory_items.jsonl").open(encoding="utf-8")]
    tombstone = next(row for row in rows if row["id"] == budget["id"])
    assert (tombstone["status"], tombstone["content"]) == ("forgotten", "")
    assert all(item["id"] != budget["id"] for item in items(target, "预算"))
    again = json.loads(ok("--db", target, "pin", pinned["id"], "--json").stdout)
    assert again["changed"] is False and pinned["id"] in again["pins"]
