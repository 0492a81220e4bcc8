"""A damaged memory file: called damaged (not "not an lcm database"), left untouched, and
`lcm doctor` says what can still be read and how to recover, with steps that work."""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from lcm_adapter.cli.main import cli
from lcm_adapter.dsh.sample import conversation, write_plain

PAGE = 4096


def run(db: Path, *args: str) -> Result:
    return CliRunner().invoke(cli, ["--db", str(db), *args])


@pytest.fixture(scope="module")
def good(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A demo database whose WAL is checkpointed into the file (the store closed)."""
    db = tmp_path_factory.mktemp("good") / "memory.sqlite"
    assert run(db, "demo", "--json").exit_code == 0
    assert not Path(f"{db}-wal").exists() or Path(f"{db}-wal").stat().st_size == 0
    return db


def _state(folder: Path) -> dict[str, str]:
    """Every file of the folder with its content hash and mtime: what must not change."""
    return {
        p.name: f"{hashlib.sha256(p.read_bytes()).hexdigest()} {p.stat().st_mtime_ns}"
        for p in sorted(folder.iterdir())
    }


def _truncated(good: Path, folder: Path) -> Path:
    folder.mkdir(parents=True)
    db = folder / "损坏的记忆.sqlite"
    data = good.read_bytes()
    db.write_bytes(data[: len(data) // 2])
    return db


def _overwritten(good: Path, folder: Path) -> Path:
    """Six pages in the last third replaced by noise: the schema is readable, rows are not."""
    folder.mkdir(parents=True)
    db = folder / "memory.sqlite"
    data = bytearray(good.read_bytes())
    pages = len(data) // PAGE
    start = pages * 2 // 3
    noise = hashlib.sha256(b"lcm").digest() * (6 * PAGE // 32)
    data[start * PAGE : (start + 6) * PAGE] = noise
    db.write_bytes(bytes(data))
    return db


def test_a_truncated_file_is_called_damaged_and_left_as_it_is(good: Path, tmp_path: Path) -> None:
    db = _truncated(good, tmp_path / "记忆")
    log = write_plain(tmp_path / "logs" / "session.v4.jsonl", "新", conversation([("你好", "好")]))
    before = _state(db.parent)
    for command in (["status"], ["search", "预算"], ["ingest", str(log)], ["explain"]):
        result = run(db, *command)
        assert result.exit_code == 1, (command, result.output)
        assert result.stderr.count("\n") == 1 and "Traceback" not in result.output
        assert "the database is damaged" in result.stderr
        assert "lcm changed nothing in it" in result.stderr and "doctor" in result.stderr
        assert "not an lcm memory database" not in result.stderr
    assert _state(db.parent) == before


def test_doctor_says_what_is_left_and_how_to_recover(good: Path, tmp_path: Path) -> None:
    db = _truncated(good, tmp_path / "记忆")
    before = _state(db.parent)
    shown = run(db, "doctor")
    assert shown.exit_code == 1
    text = shown.stdout
    assert "state           damaged: database disk image is malformed" in text
    assert re.search(r"SQLite 3 header, page size \d+, (\d+) pages declared, \d+ in the file", text)
    assert "can be read     no rows" in text and "lcm changed nothing in the file" in text
    assert "lcm backup PATH" in text and ".recover" in text and "损坏的记忆.sqlite.damaged" in text
    data = json.loads(run(db, "doctor", "--json").stdout)
    assert data["state"] == "damaged" and data["changed"] is False
    assert data["bytes"] == db.stat().st_size and data["readable"] == {}
    assert "events" in data["unreadable"] and len(data["recover"]) == 6
    assert _state(db.parent) == before


def test_doctor_counts_the_rows_a_partly_damaged_file_still_holds(
    good: Path, tmp_path: Path
) -> None:
    db = _overwritten(good, tmp_path / "d")
    before = _state(db.parent)
    data = json.loads(run(db, "doctor", "--json").stdout)
    assert data["state"] == "damaged", data
    assert data["readable"].get("meta", 0) > 0 and data["checks"]
    assert _state(db.parent) == before


@pytest.mark.skipif(shutil.which("sqlite3") is None, reason="the sqlite3 shell is not installed")
def test_the_recovery_steps_doctor_prints_bring_the_memory_back(
    good: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Steps 2, 4, 5 and 6 run as printed (copy, salvage by .recover or else .dump, export
    and import, check): the fresh file passes doctor and still answers a search."""
    db = _overwritten(good, tmp_path / "d")
    steps = json.loads(run(db, "doctor", "--json").stdout)["recover"]
    lcm = f"{sys.executable} -c 'from lcm_adapter.cli.main import main; main()'"
    monkeypatch.chdir(db.parent)

    def shell(command: str) -> subprocess.CompletedProcess[str]:
        command = re.sub(r"(^|&& )lcm ", lambda m: f"{m.group(1)}{lcm} ", command)
        return subprocess.run(command, shell=True, capture_output=True, text=True, timeout=120)

    assert shell(steps[1].split(": ", 1)[1].split(" (", 1)[0]).returncode == 0
    found = re.search(r": (sqlite3 .+?) \(an older .+?: (sqlite3 .+)\)$", steps[3])
    assert found, steps[3]
    recover, dump = found.groups()
    scratch = db.parent / "memory.salvage.sqlite"
    salvaged = shell(recover)
    if "SQL logic error" in salvaged.stdout + salvaged.stderr or salvaged.returncode:
        for leftover in db.parent.glob("memory.salvage.sqlite*"):
            leftover.unlink()
        assert shell(dump).returncode == 0
    assert scratch.exists()
    carried = shell(steps[4].split(": ", 1)[1])
    assert carried.returncode == 0, carried.stderr
    new = db.parent / "memory.recovered.sqlite"
    assert oct(new.stat().st_mode & 0o777) == "0o600"
    checked = run(new, "doctor", "--json")
    assert checked.exit_code == 0, checked.output
    report = json.loads(checked.stdout)
    assert report["integrity"] == "ok" and report["counts"]["memory_items"] > 0
    hits = json.loads(run(new, "search", "预算", "--json").stdout)["items"]
    assert any("预算不超过3000元" in item["content"] for item in hits)


def test_a_file_that_is_not_sqlite_is_still_not_an_lcm_database(tmp_path: Path) -> None:
    db = tmp_path / "notes.sqlite"
    db.write_bytes("这不是数据库 / not a database\n".encode() * 200)
    before = db.read_bytes()
    result = run(db, "status")
    assert result.exit_code == 1 and "not an lcm memory database" in result.stderr
    assert "damaged" not in result.stderr and db.read_bytes() == before
    assert sorted(os.listdir(tmp_path)) == ["notes.sqlite"]
