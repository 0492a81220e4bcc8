"""Small things a new user notices: -h, JSON errors, long queries, doctor's extras, dsh install/uninstall."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from lcm_adapter.cli.main import cli
from lcm_adapter.dsh.patch import BEGIN

TEMPLATE = "# Your patch layer for this dsh profile.\n# a YAML array.\n[]\n"
USER_ROWS = "- id: time-context\n  config:\n    timeZone: Asia/Shanghai  # 北京时间\n"


def run(*args: str) -> Result:
    return CliRunner().invoke(cli, list(args))


@pytest.fixture(scope="module")
def demo_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("polish") / "memory.sqlite"
    assert run("--db", str(path), "demo").exit_code == 0
    return path


@pytest.mark.parametrize("args", [["-h"], ["search", "-h"], ["dsh", "install", "-h"]])
def test_dash_h_is_help(args: list[str]) -> None:
    result = run(*args)
    assert result.exit_code == 0 and result.stdout.startswith("Usage: ")


def test_a_long_query_is_not_echoed_in_full(demo_db: Path) -> None:
    query = "批大小 batch size " + "and more words " * 40
    result = run("--db", str(demo_db), "search", query)
    assert result.exit_code == 0, result.output
    assert query.strip() not in result.stdout and "…" in result.stdout.splitlines()[0]
    data = json.loads(run("--db", str(demo_db), "search", query, "--json").stdout)
    assert data["query"] == query.strip()  # the JSON keeps it whole


def test_doctor_does_not_list_rich_as_optional(demo_db: Path) -> None:
    data = json.loads(run("--db", str(demo_db), "doctor", "--json").stdout)
    assert "rich" not in data["extras"]
    assert "rich" not in run("--db", str(demo_db), "doctor").stdout.split("extras", 1)[1]


@pytest.mark.parametrize(
    ("args", "code", "words"),
    [
        (["status", "--session", "没有", "--json"], 1, "no session"),
        (["search", "x", "--json", "--session", "nope"], 1, "no session"),
        (["purge", "--all", "--json"], 1, "add --yes"),
        (["export", "--format", "jsonl", "--json"], 2, "--out"),
        (["inspect", "mem_nope", "--json"], 1, "no memory item"),
        (["ingest", "/no/such/folder", "--json"], 2, "no such file"),
    ],
)
def test_json_errors_are_one_object_on_stderr(
    demo_db: Path, args: list[str], code: int, words: str
) -> None:
    result = run("--db", str(demo_db), *args)
    assert result.exit_code == code, result.output
    assert result.stdout == ""
    lines = result.stderr.splitlines()
    assert len(lines) == 1, result.stderr
    error = json.loads(lines[0])
    assert error["exit_code"] == code and words in error["error"]


def test_a_missing_database_with_json_is_a_json_error(tmp_path: Path) -> None:
    result = run("--db", str(tmp_path / "nope.sqlite"), "explain", "--json")
    assert result.exit_code == 1
    assert json.loads(result.stderr) == {
        "error": f"no database at {tmp_path / 'nope.sqlite'}",
        "exit_code": 1,
    }
    assert not (tmp_path / "nope.sqlite").exists()


def patch_file(home: Path) -> Path:
    return home / "profiles" / "web" / "cordis.patch.yml"


def test_dsh_install_json(tmp_path: Path) -> None:
    result = run("dsh", "install", "--dsh-home", str(tmp_path), "--json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["patch"] == str(patch_file(tmp_path)) and data["changed"] is True
    assert data["db"] == str(tmp_path / "long-conversation-memory" / "memory.sqlite")
    assert data["start"] == "dsh --profile web"
    again = json.loads(run("dsh", "install", "--dsh-home", str(tmp_path), "--json").stdout)
    assert again["changed"] is False
    shown = json.loads(
        run("dsh", "install", "--dsh-home", str(tmp_path), "--print", "--json").stdout
    )
    assert BEGIN in shown["text"]


@pytest.mark.parametrize(
    "before",
    [None, TEMPLATE, USER_ROWS, TEMPLATE.replace("[]\n", "") + USER_ROWS, "# only a comment\n"],
    ids=["no-file", "fresh-template", "user-rows", "comments-and-rows", "comment-only"],
)
def test_uninstall_removes_exactly_what_install_added(tmp_path: Path, before: str | None) -> None:
    target = patch_file(tmp_path)
    if before is not None:
        target.parent.mkdir(parents=True)
        target.write_text(before, encoding="utf-8")
    assert run("dsh", "install", "--dsh-home", str(tmp_path), "--with-commands").exit_code == 0
    assert BEGIN in target.read_text(encoding="utf-8")
    rerun = run("dsh", "install", "--dsh-home", str(tmp_path), "--with-commands")
    assert "already up to date" in rerun.stdout
    result = run("dsh", "uninstall", "--dsh-home", str(tmp_path), "--json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["removed"] is True and data["deleted_file"] is (before is None)
    if before is None:
        assert not target.exists()
    else:
        assert target.read_text(encoding="utf-8") == before
    again = run("dsh", "uninstall", "--dsh-home", str(tmp_path))
    assert again.exit_code == 0 and "nothing changed" in again.stdout


def test_uninstall_refuses_damaged_markers(tmp_path: Path) -> None:
    target = patch_file(tmp_path)
    target.parent.mkdir(parents=True)
    damaged = USER_ROWS + BEGIN + "\n- insert: []\n"
    target.write_text(damaged, encoding="utf-8")
    result = run("dsh", "uninstall", "--dsh-home", str(tmp_path))
    assert result.exit_code == 1 and "damaged" in result.stderr
    assert target.read_text(encoding="utf-8") == damaged


@pytest.mark.parametrize("shell", ["bash", "zsh", "fish"])
def test_the_documented_completion_command_prints_a_script(shell: str) -> None:
    docs = (Path(__file__).resolve().parents[2] / "docs" / "cli.md").read_text(encoding="utf-8")
    assert f"_LCM_COMPLETE={shell}_source lcm" in docs
    env = {k: v for k, v in os.environ.items() if not k.startswith("_LCM")}
    env["_LCM_COMPLETE"] = f"{shell}_source"
    proc = subprocess.run(
        [sys.executable, "-c", "from lcm_adapter.cli.main import main; main()"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert proc.returncode == 0 and "_LCM_COMPLETE" in proc.stdout


def test_the_serve_methods_are_documented() -> None:
    from lcm_adapter.dsh import sidecar

    docs = (Path(__file__).resolve().parents[2] / "docs" / "cli.md").read_text(encoding="utf-8")
    section = docs.split("## The `lcm serve` protocol", 1)[1].split("\n## ", 1)[0]
    for method in [*sidecar._CALLS, *sidecar._NOTIFICATIONS]:
        assert f"| `{method}`" in section, method
