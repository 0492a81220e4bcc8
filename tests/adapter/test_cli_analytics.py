"""`lcm export` and `lcm stats`: formats, session filter, private files, readable and JSON output."""

from __future__ import annotations

import importlib.util
import io
import json
import stat
from pathlib import Path

import pytest
from click.testing import CliRunner, Result
from rich.console import Console

from lcm_adapter.cli import analytics as cli_analytics
from lcm_adapter.cli.main import cli
from lcm_core.reports.jsonl import read_jsonl
from lcm_core.store.errors import StoreUnavailableError
from lcm_core.store.models import SCHEMA_VERSION, TABLES, Session
from lcm_core.store.registry import open_store

SESSION = "0b6f3c2e-9a41-4d7e-b8c5-1e2f3a4b5c6d"
OTHER = "另一个会话"
HAS_DUCKDB = all(importlib.util.find_spec(m) is not None for m in ("duckdb", "pyarrow"))
needs_duckdb = pytest.mark.skipif(not HAS_DUCKDB, reason="needs the duckdb extra (duckdb, pyarrow)")


def run(db: Path | str, *args: str) -> Result:
    return CliRunner().invoke(cli, ["--db", str(db), *args])


def run_json(db: Path | str, *args: str) -> dict:
    result = run(db, *args, "--json")
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("demo") / "memory.sqlite"
    assert run(path, "demo").exit_code == 0
    store = open_store(str(path))
    store.upsert_session(Session(session_id=OTHER))
    store.close()
    return path


def counts(db: Path) -> dict[str, int]:
    store = open_store(str(db))
    try:
        return store.stats()
    finally:
        store.close()


def test_jsonl_export_needs_no_duckdb(demo: Path, tmp_path: Path) -> None:
    """JSONL is plain Python: every table's rows, a manifest, private modes, CJK kept as text."""
    out = tmp_path / "exports" / "jsonl"
    data = run_json(demo, "export", "--format", "jsonl", "--out", str(out))
    assert data["format"] == "jsonl" and data["schema_version"] == SCHEMA_VERSION
    assert data["tables"] == {t: counts(demo)[t] for t in TABLES}
    assert stat.S_IMODE(out.stat().st_mode) == 0o700
    assert all(stat.S_IMODE(p.stat().st_mode) == 0o600 for p in out.iterdir())
    sessions = list(read_jsonl(out / "sessions.jsonl"))
    assert OTHER in {s["session_id"] for s in sessions}
    assert OTHER in (out / "sessions.jsonl").read_text(encoding="utf-8")


def test_export_readable_line_and_session_filter(demo: Path, tmp_path: Path) -> None:
    """The readable output is one line naming rows, scope and format."""
    result = run(
        demo, "export", "--format", "jsonl", "--out", str(tmp_path / "x"), "--session", OTHER
    )
    assert result.exit_code == 0, result.output
    assert result.stdout.startswith("exported ") and f"session {OTHER}" in result.stdout
    assert result.stdout.count("\n") == 1


@pytest.mark.parametrize(
    "args",
    [
        ["--format", "jsonl"],
        ["--format", "xml", "--out", "x"],
    ],
    ids=["no-out", "bad-format"],
)
def test_export_usage_errors(demo: Path, args: list[str]) -> None:
    assert run(demo, "export", *args).exit_code == 2


def test_export_failures_are_one_line(demo: Path, tmp_path: Path) -> None:
    """An unknown session or an existing target fails with one line and exit code 1."""
    unknown = run(
        demo, "export", "--format", "jsonl", "--out", str(tmp_path / "u"), "--session", "nope"
    )
    assert unknown.exit_code == 1 and unknown.stderr.count("\n") == 1
    out = tmp_path / "twice"
    assert run(demo, "export", "--format", "jsonl", "--out", str(out)).exit_code == 0
    again = run(demo, "export", "--format", "jsonl", "--out", str(out))
    assert again.exit_code == 1 and "--force" in again.stderr and again.stderr.count("\n") == 1
    assert run(demo, "export", "--format", "jsonl", "--out", str(out), "--force").exit_code == 0


@needs_duckdb
@pytest.mark.parametrize("fmt", ["duckdb", "parquet"])
def test_duckdb_and_parquet_exports(demo: Path, tmp_path: Path, fmt: str) -> None:
    """Both analytical formats carry every row; the report over them equals the store's."""
    out = tmp_path / f"export-{fmt}"
    data = run_json(demo, "export", "--format", fmt, "--out", str(out))
    assert data["rows"] == sum(counts(demo)[t] for t in TABLES)
    direct = run_json(demo, "stats", "--limit", "100")
    over = run_json(demo, "stats", "--from", str(out), "--limit", "100")
    assert over["answered_by"] == f"duckdb over {out}"
    for key in ("totals", "sessions", "events_by_type", "memory_items", "supersession", "assembly"):
        assert over[key] == direct[key], key


@needs_duckdb
def test_stats_json_on_sqlite(demo: Path) -> None:
    """DuckDB answers over a copy of the SQLite store; the numbers match the store's counts."""
    data = run_json(demo, "stats")
    assert data["answered_by"] == "duckdb over a parquet copy"
    assert data["totals"] == counts(demo)
    assert sum(data["events_by_type"].values()) == data["totals"]["events"]
    assert data["memory_items"]["total"] == data["totals"]["memory_items"]
    assert data["supersession"]["chains"] >= 1
    chain = data["supersession"]["longest"][0]["items"]
    assert [step["status"] for step in chain][-1] == "active"
    assert data["assembly"]["runs"] == data["totals"]["assembly_logs"]
    sessions = {s["session"]: s for s in data["sessions"]}
    assert sessions[SESSION]["events"] > 100 and sessions[OTHER]["events"] == 0


@needs_duckdb
def test_stats_readable_and_per_session(demo: Path) -> None:
    """The readable report has every section; --session narrows it to one session."""
    text = run(demo, "stats").stdout
    for heading in (
        "events by type",
        "memory items",
        "supersession chains",
        "assembly token use",
        "omission reasons",
        "validation",
    ):
        assert heading in text, heading
    one = run_json(demo, "stats", "--session", OTHER)
    assert [s["session"] for s in one["sessions"]] == [OTHER]
    assert one["totals"]["events"] == 0 and one["session"] == OTHER


@needs_duckdb
def test_stats_on_a_duckdb_store(demo: Path, tmp_path: Path) -> None:
    """A DuckDB store answers itself; an export file opens as a store."""
    out = tmp_path / "copy.duckdb"
    assert run(demo, "export", "--format", "duckdb", "--out", str(out)).exit_code == 0
    data = run_json(f"duckdb://{out}", "stats")
    assert data["answered_by"] == "duckdb store" and data["totals"] == counts(demo)


def test_stats_without_duckdb_gives_row_counts(demo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Without the duckdb extra, stats still answers with the counts the store gives."""

    def missing(*args: object, **kwargs: object) -> None:
        raise StoreUnavailableError("the duckdb backend is not installed")

    monkeypatch.setattr(cli_analytics, "stats_report", missing)
    data = run_json(demo, "stats")
    assert data["answered_by"].startswith("row counts only")
    assert data["totals"] == counts(demo)
    text = run(demo, "stats").stdout
    assert OTHER in text and "events by type" not in text


def test_stats_from_a_folder_that_is_not_an_export(tmp_path: Path) -> None:
    """--from a foreign folder is one line, exit 1."""
    result = CliRunner().invoke(cli, ["stats", "--from", str(tmp_path)])
    assert result.exit_code == 1 and result.stderr.count("\n") == 1


def test_progress_bar_only_for_large_jobs_on_a_terminal() -> None:
    """Small jobs and pipes get no bar; a large job on a terminal gets a callback."""
    terminal = Console(file=io.StringIO(), force_terminal=True)
    with cli_analytics.progress_bar({"events": 10}, "export", terminal) as advance:
        assert advance is None
    piped = Console(file=io.StringIO(), force_terminal=False)
    with cli_analytics.progress_bar({"events": 10**6}, "export", piped) as advance:
        assert advance is None
    with cli_analytics.progress_bar({"events": 10**6}, "export", terminal) as advance:
        assert advance is not None
        advance("events", 5000)


@pytest.mark.skipif(
    importlib.util.find_spec("lcm_core.text.redact") is None, reason="no lcm_core.text.redact"
)
def test_export_redact_flag(tmp_path: Path) -> None:
    """--redact keeps a key out of the exported text and says so in the manifest."""
    db = tmp_path / "m.sqlite"
    store = open_store(str(db))
    from lcm_core.testing.builders import make_event

    store.insert_events(
        [make_event("s", 0, "部署 token: ghp_0123456789abcdefghijABCDEFGHIJ012345")]
    )
    store.close()
    out = tmp_path / "red"
    data = run_json(db, "export", "--format", "jsonl", "--out", str(out), "--redact")
    assert data["redacted"] is True
    text = (out / "events.jsonl").read_text(encoding="utf-8")
    assert "ghp_0123456789" not in text and "[REDACTED:" in text and "部署" in text
