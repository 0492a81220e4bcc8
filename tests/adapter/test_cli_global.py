"""Global options and behaviour: --config, --debug, exit codes, one-line errors, colours."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from lcm_adapter import render
from lcm_adapter.cli import memory as cli_memory
from lcm_adapter.cli.main import cli


@pytest.fixture(scope="module")
def db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("g") / "memory.sqlite"
    assert CliRunner().invoke(cli, ["--db", str(path), "demo"]).exit_code == 0
    return path


def test_json_config_changes_the_budget(db: Path, tmp_path: Path) -> None:
    config = tmp_path / "lcm.json"
    config.write_text(
        json.dumps({"assembly": {"softBudgetTokens": 900, "minBudgetTokens": 600}}),
        encoding="utf-8",
    )
    result = CliRunner().invoke(cli, ["--db", str(db), "--config", str(config), "status", "--json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["budget_tokens"] == 900


def test_toml_config_and_dsh_style_wrapper(db: Path, tmp_path: Path) -> None:
    toml = tmp_path / "lcm.toml"
    toml.write_text("[assembly]\nsoftBudgetTokens = 1100\n", encoding="utf-8")
    wrapped = tmp_path / "patch.json"
    wrapped.write_text('{"config": {"assembly": {"softBudgetTokens": 1300}}}', encoding="utf-8")
    for path, budget in ((toml, 1100), (wrapped, 1300)):
        result = CliRunner().invoke(
            cli, ["--db", str(db), "--config", str(path), "status", "--json"]
        )
        assert json.loads(result.stdout)["budget_tokens"] == budget


def test_config_warnings_go_to_stderr(db: Path, tmp_path: Path) -> None:
    config = tmp_path / "odd.json"
    config.write_text('{"assembly": {"softBudgetTokens": "lots"}}', encoding="utf-8")
    result = CliRunner().invoke(cli, ["--db", str(db), "--config", str(config), "status", "--json"])
    assert result.exit_code == 0
    assert "softBudgetTokens" in result.stderr
    assert json.loads(result.stdout)["config_warnings"]


@pytest.mark.parametrize("content", ["{not json", "[1, 2]"])
def test_bad_config_is_one_line(db: Path, tmp_path: Path, content: str) -> None:
    config = tmp_path / "bad.json"
    config.write_text(content, encoding="utf-8")
    result = CliRunner().invoke(cli, ["--db", str(db), "--config", str(config), "status"])
    assert result.exit_code == 1 and result.stderr.count("\n") == 1
    assert str(config) in result.stderr


def test_missing_config_is_one_line(db: Path, tmp_path: Path) -> None:
    result = CliRunner().invoke(
        cli, ["--db", str(db), "--config", str(tmp_path / "none.json"), "status"]
    )
    assert result.exit_code == 1 and "cannot read config" in result.stderr


def _explode(*args: object, **kwargs: object) -> dict:
    raise RuntimeError("boom: 内部错误\nsecond line")


def test_unexpected_error_is_one_line(db: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(cli_memory, "status_data", _explode)
    result = CliRunner().invoke(cli, ["--db", str(db), "status"])
    assert result.exit_code == 1
    assert result.stderr == "lcm: RuntimeError: boom: 内部错误 (run with --debug for a traceback)\n"


def test_debug_shows_the_traceback(db: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(cli_memory, "status_data", _explode)
    result = CliRunner().invoke(cli, ["--db", str(db), "--debug", "status"])
    assert isinstance(result.exception, RuntimeError)


def test_unknown_command_and_option_are_usage_errors() -> None:
    assert CliRunner().invoke(cli, ["nope"]).exit_code == 2
    assert CliRunner().invoke(cli, ["status", "--nope"]).exit_code == 2


def test_a_file_that_is_not_a_database_is_one_line(tmp_path: Path) -> None:
    path = tmp_path / "notes.txt"
    path.write_text("no database here\n" * 50, encoding="utf-8")
    for command in (["status"], ["stats"], ["search", "x"], ["purge", "--all", "--yes"]):
        result = CliRunner().invoke(cli, ["--db", str(path), *command])
        assert result.exit_code == 1, command
        assert result.stderr.count("\n") == 1 and "Traceback" not in result.output


class _Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_colour_only_on_a_terminal_without_no_color(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("NO_COLOR", raising=False)
    assert render.colour_enabled(_Tty()) is True
    assert render.colour_enabled(io.StringIO()) is False
    monkeypatch.setenv("NO_COLOR", "1")
    assert render.colour_enabled(_Tty()) is False


def test_no_color_output_has_no_escapes(db: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NO_COLOR", "1")
    monkeypatch.setattr(render, "colour_enabled", lambda stream=None: False)
    result = CliRunner().invoke(cli, ["--db", str(db), "explain"])
    assert result.exit_code == 0 and "\x1b[" not in result.stdout


def test_bar_shows_share_and_overflow() -> None:
    assert render.bar(0, 100).plain == "░" * 24 + "   0%"
    assert render.bar(1, 1000).plain.startswith("█░")  # used never looks empty
    assert render.bar(50, 100).plain == "█" * 12 + "░" * 12 + "  50%"
    assert render.bar(150, 100).plain == "█" * 24 + " 150%"
