"""`lcm assemble --log`: a dry run that `lcm explain` can show, marked as a dry run."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from lcm_adapter.cli.main import cli
from lcm_adapter.demo import session_log
from lcm_core.store.registry import open_store


def run(db: Path, *args: str) -> Result:
    return CliRunner().invoke(cli, ["--db", str(db), *args])


@pytest.fixture
def ingested(tmp_path: Path) -> Path:
    """A session backfilled from its log: events and memory, but no assembly yet."""
    db = tmp_path / "memory.sqlite"
    with session_log() as path:
        result = run(db, "ingest", str(path), "--quiet")
    assert result.exit_code == 0, result.output
    return db


def cursor(db: Path) -> int:
    store = open_store(str(db))
    try:
        (session,) = store.list_sessions()
        return store.get_checkpoint(session.session_id).last_assembly_seq
    finally:
        store.close()


def test_without_log_nothing_is_recorded(ingested: Path) -> None:
    assert run(ingested, "assemble").exit_code == 0
    explained = run(ingested, "explain")
    assert explained.exit_code == 1 and "lcm assemble" in explained.stderr


def test_log_records_a_dry_run_that_explain_shows(ingested: Path) -> None:
    before = cursor(ingested)
    made = run(ingested, "assemble", "--log", "--query", "批大小 batch size")
    assert made.exit_code == 0, made.output
    assert "logged as assembly #" in made.stdout and "(dry-run)" in made.stdout
    shown = run(ingested, "explain")
    assert shown.exit_code == 0, shown.output
    assert "dry-run" in shown.stdout.splitlines()[0]
    data = json.loads(run(ingested, "explain", "--json").stdout)
    logged = json.loads(run(ingested, "assemble", "--log", "--json").stdout)["logged"]
    again = json.loads(run(ingested, "explain", "--json").stdout)
    assert data["assembly"]["trigger"].startswith("dry-run") and again["assembly"]["id"] == logged
    assert cursor(ingested) == before  # a dry run never moves the assembly cursor
