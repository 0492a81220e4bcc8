"""`lcm doctor`: the first thing a user runs reports the store, or one clear error line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from lcm_adapter.cli.main import cli
from lcm_core.store.models import SCHEMA_VERSION
from lcm_core.store.registry import open_store


def created(path: Path) -> Path:
    """A new, empty store (doctor only reads: it never creates one)."""
    open_store(str(path)).close()
    return path


def test_doctor_reports_the_default_store_under_dsh_home(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DSH_HOME", str(tmp_path / "dsh"))
    monkeypatch.delenv("LCM_DB", raising=False)
    expected = created(tmp_path / "dsh" / "long-conversation-memory" / "memory.sqlite")
    result = CliRunner().invoke(cli, ["doctor", "--json"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.output)
    assert report["path"] == str(expected)
    assert report["schema_version"] == SCHEMA_VERSION
    assert report["layout"]["fts"]["events"] == "events_fts"
    assert report["layout"]["fts"]["memory_items"] == "memory_fts"
    assert report["integrity"] == "ok"
    assert (report["file_mode"], report["folder_mode"]) == ("0o600", "0o700")


def test_doctor_readable_output(tmp_path: Path) -> None:
    result = CliRunner().invoke(cli, ["--db", str(created(tmp_path / "m.sqlite")), "doctor"])
    assert result.exit_code == 0
    lines = {line.split()[0]: line.split()[1:] for line in result.output.splitlines() if line}
    assert lines["schema"] == [f"v{SCHEMA_VERSION}"] and lines["integrity"] == ["ok"]


def test_doctor_on_a_non_database_fails_with_one_line(tmp_path: Path) -> None:
    path = tmp_path / "notes.md"
    path.write_text("# not a database\n" * 100, encoding="utf-8")
    result = CliRunner().invoke(cli, ["--db", str(path), "doctor"])
    assert result.exit_code == 1
    assert result.stderr.count("\n") == 1 and str(path) in result.stderr
    assert "Traceback" not in result.output
    assert path.read_text(encoding="utf-8") == "# not a database\n" * 100


def test_lcm_db_environment_variable_is_used(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("LCM_DB", str(created(tmp_path / "env.sqlite")))
    result = CliRunner().invoke(cli, ["doctor", "--json"])
    assert result.exit_code == 0
    assert json.loads(result.output)["path"] == str(tmp_path / "env.sqlite")
