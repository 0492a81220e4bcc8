"""`lcm claude install | uninstall`: our hooks in, and out of, a Claude Code settings file."""

from __future__ import annotations

import json
import shlex
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from lcm_adapter.claude.install import HOOKS, is_ours
from lcm_adapter.cli.main import cli

THEIRS = {
    "model": "opus",
    "env": {"LANGUAGE": "中文"},
    "hooks": {
        "Stop": [{"hooks": [{"type": "command", "command": "notify-send 完成"}]}],
        "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "audit.sh"}]}],
    },
}


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A HOME with Claude Code's folder and no DSH: a Claude-Code-only user."""
    monkeypatch.setenv("HOME", str(tmp_path))
    for name in ("DSH_HOME", "CLAUDE_CONFIG_DIR", "LCM_DB"):
        monkeypatch.delenv(name, raising=False)
    (tmp_path / ".claude").mkdir()
    return tmp_path


def run(*args: str) -> Result:
    return CliRunner().invoke(cli, list(args))


def settings(home: Path) -> dict[str, Any]:
    return dict(json.loads((home / ".claude" / "settings.json").read_text(encoding="utf-8")))


def our_commands(data: dict[str, Any]) -> dict[str, list[str]]:
    return {
        event: [h["command"] for g in groups for h in g["hooks"] if is_ours(h["command"])]
        for event, groups in data.get("hooks", {}).items()
    }


def test_install_adds_our_hooks_keeps_theirs_and_twice_changes_nothing(home: Path) -> None:
    path = home / ".claude" / "settings.json"
    path.write_text(json.dumps(THEIRS, ensure_ascii=False), encoding="utf-8")
    first = run("claude", "install", "--lcm", "/opt/lcm/bin/lcm", "--json")
    assert first.exit_code == 0, first.output
    report = json.loads(first.stdout)
    db = home / ".claude" / "long-conversation-memory" / "memory.sqlite"
    assert report["db"] == str(db) and report["changed"] is True
    assert db.is_file() and oct(db.stat().st_mode & 0o777) == "0o600"
    data = settings(home)
    assert data["model"] == "opus" and data["env"] == THEIRS["env"]
    assert data["hooks"]["Stop"][0] == THEIRS["hooks"]["Stop"][0]
    assert data["hooks"]["PreToolUse"] == THEIRS["hooks"]["PreToolUse"]
    ours = our_commands(data)
    for event, name, _ in HOOKS:
        [command] = ours[event]
        words = shlex.split(command)
        assert words[0] == "/opt/lcm/bin/lcm" and words[-2:] == ["hook", name]
        assert words[words.index("--db") + 1] == str(db)
        config = Path(words[words.index("--config") + 1])
        assert json.loads(config.read_text(encoding="utf-8"))["memory"]["scope"] == "project"
    before = path.read_bytes()
    second = run("claude", "install", "--lcm", "/opt/lcm/bin/lcm", "--json")
    assert json.loads(second.stdout)["changed"] is False and path.read_bytes() == before


def test_uninstall_takes_out_exactly_ours_and_keeps_the_database(home: Path) -> None:
    path = home / ".claude" / "settings.json"
    path.write_text(json.dumps(THEIRS, ensure_ascii=False), encoding="utf-8")
    assert run("claude", "install").exit_code == 0
    result = run("claude", "uninstall")
    assert result.exit_code == 0, result.output
    assert "the memory database is kept" in result.stdout
    assert settings(home) == THEIRS
    assert (home / ".claude" / "long-conversation-memory" / "memory.sqlite").exists()
    again = run("claude", "uninstall", "--json")
    assert json.loads(again.stdout) == {"removed": False, "settings": str(path)}


def test_print_writes_nothing(home: Path) -> None:
    result = run("claude", "install", "--print")
    assert result.exit_code == 0, result.output
    assert "hook user-prompt-submit" in result.stdout
    as_json = json.loads(run("claude", "install", "--print", "--json").stdout)
    assert json.loads(as_json["text"])["hooks"].keys() == {event for event, _, _ in HOOKS}
    assert not (home / ".claude" / "settings.json").exists()
    assert not (home / ".claude" / "long-conversation-memory").exists()


def test_a_broken_settings_file_is_refused_and_left_alone(home: Path) -> None:
    path = home / ".claude" / "settings.json"
    path.write_text('{"hooks": [1, 2', encoding="utf-8")
    result = run("claude", "install")
    assert result.exit_code == 1
    assert "not valid JSON" in result.stderr and len(result.stderr.strip().splitlines()) == 1
    assert path.read_text(encoding="utf-8") == '{"hooks": [1, 2'
    assert not (home / ".claude" / "long-conversation-memory").exists()


def test_a_named_database_and_a_project_settings_file(home: Path, tmp_path: Path) -> None:
    project = tmp_path / "发票服务" / ".claude" / "settings.json"
    db = tmp_path / "memory" / "团队.sqlite"
    result = run("--db", str(db), "claude", "install", "--settings", str(project))
    assert result.exit_code == 0, result.output
    commands = our_commands(json.loads(project.read_text(encoding="utf-8")))
    assert all(str(db) in shlex.split(c) for cs in commands.values() for c in cs)
    assert db.is_file() and not (home / ".claude" / "settings.json").exists()


def test_the_installed_command_runs_the_hook_client_without_site(home: Path) -> None:
    """What Claude Code runs: `python -S .../client.py`, answering even with no server."""
    import subprocess

    assert run("claude", "install").exit_code == 0
    [command] = our_commands(settings(home))["UserPromptSubmit"]
    words = shlex.split(command)
    assert words[1] == "-S" and words[2].endswith("lcm_adapter/claude/client.py")
    body = json.dumps(
        {"session_id": "s-1", "prompt": "预算不超过3000元（含税）。"}, ensure_ascii=False
    )
    env = {"HOME": str(home), "PATH": "/usr/bin:/bin", "LCM_HOOK_SERVER": "0"}
    done = subprocess.run(
        ["/bin/sh", "-c", command], input=body.encode(), env=env, capture_output=True, timeout=120
    )
    assert done.returncode == 0 and done.stderr == b"", done.stderr
    bad = subprocess.run(
        ["/bin/sh", "-c", command], input=b"[]", env=env, capture_output=True, timeout=120
    )
    assert bad.returncode == 0 and bad.stdout == b"" and b"not an object" in bad.stderr
