"""`lcm purge` asks before it deletes: counts per table on a terminal, `--yes` to skip.

Without a terminal and without `--yes` it deletes nothing and says to add `--yes`.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from lcm_adapter.cli import admin as cli_admin
from lcm_adapter.cli.main import cli
from lcm_core.store.models import Session
from lcm_core.store.registry import open_store

SESSION = "0b6f3c2e-9a41-4d7e-b8c5-1e2f3a4b5c6d"
OTHER = "另一个会话"


def run(db: Path, *args: str, answer: str | None = None) -> Result:
    return CliRunner().invoke(cli, ["--db", str(db), *args], input=answer)


@pytest.fixture(scope="module")
def seeded(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("seed") / "memory.sqlite"
    assert run(path, "demo").exit_code == 0
    store = open_store(str(path))
    store.upsert_session(Session(session_id=OTHER))
    store.close()
    return path


@pytest.fixture
def db(seeded: Path, tmp_path: Path) -> Path:
    path = tmp_path / "memory.sqlite"
    shutil.copy(seeded, path)
    return path


@pytest.fixture
def terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(cli_admin, "_stdin_is_terminal", lambda: True)


def counts(db: Path) -> dict[str, int]:
    store = open_store(str(db))
    try:
        return store.stats()
    finally:
        store.close()


@pytest.mark.parametrize("scope", [["--session", SESSION], ["--all"]], ids=["session", "all"])
def test_without_a_terminal_and_without_yes_nothing_is_deleted(db: Path, scope: list[str]) -> None:
    before = counts(db)
    result = run(db, "purge", *scope)
    assert result.exit_code == 1
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "add --yes" in lines[0] and "events=" in lines[0], result.stderr
    assert counts(db) == before


@pytest.mark.usefixtures("terminal")
@pytest.mark.parametrize("scope", [["--session", SESSION], ["--all"]], ids=["session", "all"])
def test_on_a_terminal_it_shows_counts_and_no_keeps_everything(db: Path, scope: list[str]) -> None:
    before = counts(db)
    result = run(db, "purge", *scope, answer="n\n")
    assert result.exit_code == 1
    assert re.search(rf"^\s+events\s+{before['events']}$", result.stderr, re.MULTILINE)
    assert "memory_items" in result.stderr and "Delete them?" in result.stderr
    assert "nothing was deleted" in result.stderr
    assert counts(db) == before


@pytest.mark.usefixtures("terminal")
def test_on_a_terminal_yes_deletes_the_session_only(db: Path) -> None:
    result = run(db, "purge", "--session", SESSION, answer="y\n")
    assert result.exit_code == 0, result.output
    assert f"purge will delete session {SESSION}" in result.stderr
    assert result.stdout.startswith(f"purged session {SESSION}:")
    left = counts(db)
    assert left["events"] == 0 and left["sessions"] == 1  # the other session stays


@pytest.mark.usefixtures("terminal")
def test_yes_skips_the_question(db: Path) -> None:
    result = run(db, "purge", "--all", "--yes")
    assert result.exit_code == 0, result.output
    assert "Delete them?" not in result.output
    assert counts(db)["sessions"] == 0


def test_json_output_keeps_the_question_off_stdout(db: Path, terminal: None) -> None:
    result = run(db, "purge", "--session", SESSION, "--json", answer="y\n")
    assert result.exit_code == 0, result.output
    assert result.stdout.lstrip().startswith("{") and "Delete them?" not in result.stdout
