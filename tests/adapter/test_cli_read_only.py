"""Read commands never create anything: a typo in `--db` leaves no stray file or folder.

An explicit `--db` (or `LCM_DB`) that does not exist is one line, "no database at PATH",
exit 1. A fresh install (the default database not created yet) gets a first-run screen
from `lcm status`, exit 0, and still nothing on disk.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from lcm_adapter.cli.main import cli
from lcm_core.config import load_config

# Every command that only reads the store (or, for purge/enable/override, changes rows
# that must already exist), with the arguments it needs.
READ_COMMANDS = [
    ["status"],
    ["doctor"],
    ["search", "端口 port"],
    ["explain"],
    ["inspect", "mem_1"],
    ["assemble"],
    ["stats"],
    ["export", "--format", "jsonl", "--out", "OUT"],
    ["skills", "list"],
    ["skills", "enable", "x"],
    ["skills", "disable", "x"],
    ["rules", "list"],
    ["rules", "override", "r1", "--inactive"],
    ["purge", "--session", "s", "--yes"],
    ["purge", "--all", "--yes"],
    ["backup", "OUT"],
]
IDS = [" ".join(c[:2]) for c in READ_COMMANDS]


def files_under(folder: Path) -> list[str]:
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*"))


def invoke(args: list[str], tmp_path: Path, env: dict[str, str] | None = None) -> Result:
    args = [str(tmp_path / "export-out") if a == "OUT" else a for a in args]
    return CliRunner().invoke(cli, args, env=env)


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty DSH_HOME that does not exist yet, and no LCM_DB."""
    monkeypatch.setenv("DSH_HOME", str(tmp_path / "dsh-home"))
    monkeypatch.delenv("LCM_DB", raising=False)
    return tmp_path / "dsh-home"


@pytest.mark.parametrize("args", READ_COMMANDS, ids=IDS)
def test_a_missing_explicit_db_is_one_line_and_creates_nothing(
    args: list[str], tmp_path: Path, home: Path
) -> None:
    missing = tmp_path / "typo 拼写" / "memory.sqlite"
    result = invoke(["--db", str(missing), *args], tmp_path)
    assert result.exit_code == 1, result.output
    assert result.stderr == f"lcm: no database at {missing}\n"
    assert files_under(tmp_path) == []


@pytest.mark.parametrize("args", READ_COMMANDS[:4], ids=IDS[:4])
def test_a_missing_lcm_db_and_a_url_are_refused_the_same_way(
    args: list[str], tmp_path: Path, home: Path
) -> None:
    missing = tmp_path / "nope" / "m.sqlite"
    by_env = invoke(args, tmp_path, env={"LCM_DB": str(missing)})
    by_url = invoke(["--db", f"sqlite://{missing}", *args], tmp_path)
    for result in (by_env, by_url):
        assert result.exit_code == 1, result.output
        assert result.stderr == f"lcm: no database at {missing}\n"
    assert files_under(tmp_path) == []


@pytest.mark.parametrize("args", READ_COMMANDS[1:], ids=IDS[1:])
def test_on_a_fresh_install_read_commands_point_at_status(
    args: list[str], tmp_path: Path, home: Path
) -> None:
    result = invoke(args, tmp_path)
    assert result.exit_code == 1, result.output
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and "`lcm status` shows how to start" in lines[0]
    assert files_under(tmp_path) == []


def test_status_on_a_fresh_install_shows_where_and_how(tmp_path: Path, home: Path) -> None:
    result = invoke(["status"], tmp_path)
    assert result.exit_code == 0, result.output
    database = home / "long-conversation-memory" / "memory.sqlite"
    assert f"database: {database}" in result.stdout
    for command in ("lcm demo", "lcm dsh install", f"lcm ingest {home / 'sessions'}"):
        assert command in result.stdout
    data = json.loads(invoke(["status", "--json"], tmp_path).stdout)
    assert data["database"] == str(database) and data["exists"] is False
    assert [s["command"] for s in data["next_steps"]][:2] == ["lcm demo", "lcm dsh install"]
    assert files_under(tmp_path) == []


def test_the_mcp_tools_do_not_create_a_database(tmp_path: Path) -> None:
    pytest.importorskip("pydantic")
    from lcm_adapter.mcp.server import Tools

    missing = tmp_path / "nope" / "memory.sqlite"
    tools = Tools(str(missing), load_config(None))
    for call in (tools.status, tools.explain, lambda: tools.search("端口")):
        with pytest.raises(LookupError, match="no database at"):
            call()
    assert files_under(tmp_path) == []


def test_commands_that_add_memory_still_create_the_database(tmp_path: Path, home: Path) -> None:
    db = tmp_path / "new" / "memory.sqlite"
    skills = tmp_path / "skills" / "demo"
    skills.mkdir(parents=True)
    (skills / "SKILL.md").write_text(
        "---\nname: demo\ndescription: d\n---\n- Always run tests 总是先跑测试\n", encoding="utf-8"
    )
    result = invoke(["--db", str(db), "skills", "ingest", str(tmp_path / "skills")], tmp_path)
    assert result.exit_code == 0, result.output
    assert db.is_file()
