"""`lcm doctor | stats | purge` in both output modes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from lcm_adapter.cli.main import cli
from lcm_core.store.models import SCHEMA_VERSION, Session
from lcm_core.store.registry import open_store

SESSION = "0b6f3c2e-9a41-4d7e-b8c5-1e2f3a4b5c6d"


def run(db: Path, *args: str) -> Result:
    return CliRunner().invoke(cli, ["--db", str(db), *args])


def run_json(db: Path, *args: str) -> dict:
    result = run(db, *args, "--json")
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


@pytest.fixture
def db(tmp_path: Path) -> Path:
    path = tmp_path / "memory.sqlite"
    assert run(path, "demo").exit_code == 0
    store = open_store(str(path))
    store.upsert_session(Session(session_id="另一个会话"))
    store.close()
    return path


def test_doctor_reports_paths_extras_and_what_it_cannot_observe(db: Path) -> None:
    data = run_json(db, "doctor")
    assert data["paths"]["db_source"] == "--db"
    assert data["schema_version"] == SCHEMA_VERSION and data["integrity"] == "ok"
    assert data["file_mode"] == "0o600"
    assert "sqlite" in data["backends"] and set(data["extras"]) == {
        "mcp",
        "zstandard",
        "duckdb",
        "psycopg",
    }
    compat = data["compatibility"]
    assert compat["sessions_seen"] == 2 and compat["sessions_with_compaction"] == 1
    assert compat["cannot_observe"]
    readable = run(db, "doctor").stdout
    assert "cannot observe" in readable and "host seen" in readable


def test_doctor_names_the_config_file(db: Path, tmp_path: Path) -> None:
    config = tmp_path / "lcm.json"
    config.write_text('{"assembly": {"softBudgetTokens": 1200}}', encoding="utf-8")
    result = CliRunner().invoke(cli, ["--db", str(db), "--config", str(config), "doctor", "--json"])
    assert json.loads(result.stdout)["paths"]["config"] == str(config)


def test_stats_both_modes(db: Path) -> None:
    data = run_json(db, "stats")
    assert data["totals"]["sessions"] == 2
    sessions = {s["session"]: s for s in data["sessions"]}
    assert sessions[SESSION]["events"] > 100 and sessions["另一个会话"]["events"] == 0
    text = run(db, "stats").stdout
    assert "另一个会话" in text and "events" in text


@pytest.mark.parametrize(
    "args",
    [[], ["--session", "x", "--all", "--yes"]],
    ids=["nothing", "both"],
)
def test_purge_usage_errors(db: Path, args: list[str]) -> None:
    result = run(db, "purge", *args)
    assert result.exit_code == 2
    assert run_json(db, "stats")["totals"]["events"] > 100  # nothing was deleted


def test_purge_one_session_reports_and_leaves_the_other(db: Path) -> None:
    data = run_json(db, "purge", "--session", SESSION, "--yes")
    assert data["scope"] == "session" and data["deleted"]["events"] > 100
    assert data["total"] == sum(data["deleted"].values())
    left = run_json(db, "stats")
    assert [s["session"] for s in left["sessions"]] == ["另一个会话"]
    assert left["totals"]["events"] == 0
    assert run(db, "search", "port", "--session", SESSION).exit_code == 1


def test_purge_all_readable(db: Path) -> None:
    result = run(db, "purge", "--all", "--yes")
    assert result.exit_code == 0 and result.stdout.startswith("purged every session:")
    assert run_json(db, "stats")["totals"]["sessions"] == 0


def test_purge_unknown_session_fails(db: Path) -> None:
    result = run(db, "purge", "--session", "nope")
    assert result.exit_code == 1 and result.stderr.count("\n") == 1
