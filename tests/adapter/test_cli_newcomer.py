"""A newcomer's first hour: what they copy from the screen works, and empty is not an error.

Each test is a friction a new user hit: an item id broken across two lines of a table
(so it could not be pasted into `lcm inspect`), epoch milliseconds where every other
screen shows ISO times, a fresh import that "skipped 1 rows already stored", and
`lcm status` exiting 1 after `lcm purge --all` where a fresh install exits 0.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from lcm_adapter.cli.main import cli
from lcm_adapter.dsh.sample import conversation
from lcm_adapter.runtime import MemoryRuntime

ID = re.compile(r"mem_[0-9a-f]{8}_[0-9a-f]{16}")
DEMO = "0b6f3c2e-9a41-4d7e-b8c5-1e2f3a4b5c6d"
UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")


def run(db: Path, *args: str, columns: int = 100) -> Result:
    return CliRunner().invoke(cli, ["--db", str(db), *args], env={"COLUMNS": str(columns)})


def run_json(db: Path, *args: str) -> dict:
    result = run(db, *args, "--json")
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


@pytest.fixture(scope="module")
def demo_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The demo session, and a second session that also speaks of deploying (部署)."""
    db = tmp_path_factory.mktemp("newcomer") / "memory.sqlite"
    assert run(db, "demo", "--json").exit_code == 0
    runtime = MemoryRuntime.open(str(db))
    turns = [
        ("部署窗口改成每周四下午，不要在周五部署 (no deploys on Fridays).", "好的。"),
        ("The deploy checklist lives in docs/deploy.md; keep it under 20 steps.", "Noted."),
    ]
    runtime.on_events("2f9c1d7e-5b3a-4e8f-9d21-c0ffee123456", conversation(turns))
    runtime.close()
    return db


def _whole_on_one_line(text: str, wanted: list[str]) -> None:
    """Every wanted id is on one line of the text; no line ends in a cut piece of one."""
    for ident in wanted:
        assert any(ident in line for line in text.splitlines()), f"{ident} is broken:\n{text}"
    for line in text.splitlines():
        assert not re.search(r"\bmem_[0-9a-f_]{0,24}$", line.rstrip()), line


@pytest.mark.parametrize("query", ["port 8080", "批大小", "部署 deploy"])
@pytest.mark.parametrize("columns", [100, 80, 60])
def test_search_tables_never_break_an_id(demo_db: Path, query: str, columns: int) -> None:
    """Item ids and session ids stay whole at any width, so they paste into `lcm inspect`."""
    data = run_json(demo_db, "search", *query.split(), "--scope", "all")
    ids = [item["id"] for item in data["items"]]
    sessions = sorted({row["session"] for row in [*data["items"], *data["events"]]})
    assert ids and sessions
    text = run(demo_db, "search", *query.split(), "--scope", "all", columns=columns).stdout
    _whole_on_one_line(text, ids + sessions)
    assert all(len(line) <= columns for line in text.splitlines())


def test_one_sessions_results_name_it_once_and_give_content_room(demo_db: Path) -> None:
    text = run(demo_db, "search", "批大小", "--session", DEMO).stdout
    assert f"memory items for '批大小' in session {DEMO}" in text
    assert "批大小应该是500，不是1000" in text  # the content fits on its line, not one char a line
    assert len(UUID.findall(text)) == 2  # the two titles; no session column


def test_the_pasted_id_inspects(demo_db: Path) -> None:
    text = run(demo_db, "search", "port", "--session", DEMO).stdout
    first = ID.search(text)
    assert first is not None
    shown = run(demo_db, "inspect", first.group(0))
    assert shown.exit_code == 0 and "8080" in shown.stdout


@pytest.mark.parametrize("columns", [100, 60])
def test_explain_and_inspect_tables_keep_ids_whole(demo_db: Path, columns: int) -> None:
    explain = run_json(demo_db, "explain", "--session", DEMO)["assembly"]
    refs = [o["ref"] for o in explain["omitted"] if o["ref"].startswith("mem_")]
    assert refs
    shown = run(demo_db, "explain", "--session", DEMO, columns=columns)
    _whole_on_one_line(shown.stdout, refs)
    event = run_json(demo_db, "inspect", "seq:51", "--session", DEMO)
    cited = [item["id"] for item in event["derived"]]
    assert cited
    shown = run(demo_db, "inspect", "seq:51", "--session", DEMO, columns=columns)
    _whole_on_one_line(shown.stdout, cited)


def test_inspect_an_event_shows_an_iso_time(demo_db: Path) -> None:
    """`time` reads like every other time lcm prints; --json keeps what the host wrote."""
    raw = run_json(demo_db, "inspect", "seq:45", "--session", DEMO)
    assert raw["event"]["time"] == "1796000073400"
    text = run(demo_db, "inspect", "seq:45", "--session", DEMO).stdout
    assert "time   2026-11-30T00:54:33.400+00:00" in text and "1796000073400" not in text
    chinese = run(demo_db, "inspect", "seq:51", "--session", DEMO).stdout
    assert re.search(r"^time +2026-11-30T\d\d:\d\d:\d\d\.\d{3}\+00:00$", chinese, re.MULTILINE)
    assert "不对，批大小应该是500" in chinese


def test_the_memory_command_shows_an_iso_time_too(demo_db: Path) -> None:
    runtime = MemoryRuntime.open(str(demo_db))
    try:
        answer = runtime.command_result(DEMO, ["inspect", "seq:45"])
    finally:
        runtime.close()
    assert answer.ok and "2026-11-30T00:54:33.400+00:00" in answer.text


def test_a_fresh_import_skips_nothing_and_counts_meta_apart(demo_db: Path, tmp_path: Path) -> None:
    out = tmp_path / "export"
    assert run(demo_db, "export", "--format", "jsonl", "--out", str(out)).exit_code == 0
    fresh = tmp_path / "fresh.sqlite"
    first = run(fresh, "import", str(out))
    assert first.exit_code == 0, first.output
    assert "skipped" not in first.stdout and "already stored" not in first.stdout
    assert re.search(r"meta \(schema, cursors, settings\): \d+ keys set, 1 kept", first.stdout)
    data = run_json(fresh, "import", str(out))
    assert data["rows_added"] == 0 and data["meta_set"] == 0
    exported = json.loads((out / "export.json").read_text(encoding="utf-8"))["tables"]
    assert data["rows_skipped"] == sum(n for table, n in exported.items() if table != "meta")
    assert data["meta_kept"] == exported["meta"]
    again = run(fresh, "import", str(out)).stdout
    assert f"skipped {data['rows_skipped']} rows already stored" in again


def test_status_of_an_emptied_store_is_the_first_run_screen(demo_db: Path, tmp_path: Path) -> None:
    """After `purge --all`, status says there is no memory yet and exits 0, as a fresh
    install does; a session that is not there is still an error."""
    db = tmp_path / "m.sqlite"
    db.write_bytes(demo_db.read_bytes())
    assert run(db, "purge", "--all", "--yes").exit_code == 0
    shown = run(db, "status")
    assert shown.exit_code == 0, shown.output
    assert "no memory yet" in shown.stdout and "it holds no session yet" in shown.stdout
    assert "lcm demo" in shown.stdout
    data = run_json(db, "status")
    assert data["exists"] is True and data["next_steps"][0]["command"] == "lcm demo"
    unknown = run(db, "status", "--session", DEMO)
    assert unknown.exit_code == 1 and "no session" in unknown.stderr
