"""`lcm demo`: the newcomer's first command, run as a user would on a clean home."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from click.testing import CliRunner

from lcm_adapter.cli import demo as cli_demo
from lcm_adapter.cli.main import cli
from lcm_adapter.demo import next_step, session_log

LCM = [sys.executable, "-c", "from lcm_adapter.cli.main import main; main()"]
HEADER = "[长对话记忆 · long-conversation-memory"


def clean_env(tmp_path: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("LCM_", "DSH_"))}
    env.update(HOME=str(tmp_path / "home"), TMPDIR=str(tmp_path / "tmp"), NO_COLOR="1")
    (tmp_path / "home").mkdir()
    (tmp_path / "tmp").mkdir()
    return env


def test_demo_in_a_subprocess_on_a_clean_home(tmp_path: Path) -> None:
    env = clean_env(tmp_path)
    proc = subprocess.run(
        [*LCM, "demo"], env=env, capture_output=True, text=True, timeout=120, check=False
    )
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    assert HEADER in out
    assert "the memory block the next step gets" in out and "share of the budget" in out
    # It built in a temp folder, said where, removed it, and left the user's home alone.
    assert not (tmp_path / "home" / ".dsh").exists()
    assert list((tmp_path / "tmp").iterdir()) == []
    assert f"The demo used a temporary database, {tmp_path / 'tmp'}/lcm-demo-" in out
    assert "now removed" in out and "  lcm --db lcm-demo.sqlite demo\n" in out


def test_demo_keep_leaves_a_database_the_printed_commands_explore(tmp_path: Path) -> None:
    env = clean_env(tmp_path)
    proc = subprocess.run(
        [*LCM, "demo", "--keep"], env=env, capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 0, proc.stderr
    built = list((tmp_path / "tmp").glob("lcm-demo-*/memory.sqlite"))
    assert len(built) == 1 and f"The demo database is {built[0]}. Explore it:" in proc.stdout
    commands = [line.strip() for line in proc.stdout.splitlines() if line.startswith("  lcm ")]
    assert [c.split()[3] for c in commands] == ["status", "explain", "search", "inspect"]
    for command in commands:
        argv = shlex.split(command)[1:]
        done = subprocess.run([*LCM, *argv], env=env, capture_output=True, text=True, timeout=60)
        assert done.returncode == 0, (command, done.stderr)
        assert done.stdout.strip()


def test_demo_removes_its_folder_even_when_it_fails(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    monkeypatch.setattr(tempfile, "tempdir", None)

    def broken(url: str, config: object) -> None:
        assert Path(url).parent.is_dir()
        raise RuntimeError("disk gone")

    monkeypatch.setattr(cli_demo, "run_demo", broken)
    result = CliRunner().invoke(cli, ["demo"])
    assert result.exit_code == 1 and "disk gone" in result.stderr
    assert list(tmp_path.iterdir()) == []


def test_demo_json_names_its_database_and_the_explore_commands(tmp_path: Path) -> None:
    db = tmp_path / "my demo.sqlite"
    data = json.loads(CliRunner().invoke(cli, ["--db", str(db), "demo", "--json"]).stdout)
    assert data["db"] == str(db) and not data["temporary"] and not data["removed"]
    assert data["explore"][0] == f"lcm --db '{db}' status"
    assert db.is_file()


def test_demo_block_shows_corrections_and_leaves_the_injection_out(tmp_path: Path) -> None:
    result = CliRunner().invoke(cli, ["--db", str(tmp_path / "m.sqlite"), "demo", "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["injected"] and data["block"].startswith(HEADER)
    assert data["inserted"] > 100 and data["explain"]["assembly"]["item_ids"]
    block = data["block"]
    # Both corrections: the new values are in, the old ones are marked as replaced.
    assert "8080" in block and "批大小应该是500" in block and "旧值" in block
    assert "exfil.example.net" not in block and "30000" not in block
    assert data["message"]["source"]["kind"] == "long-conversation-memory"
    assert data["explain"]["assembly"]["trigger"] == "post-compaction"
    assert data["issues"] == []


def test_demo_batch_size_is_500_only_and_1000_is_shown_as_old(tmp_path: Path) -> None:
    """The Chinese correction replaces the English decision: 1000 only on an old-value line."""
    result = CliRunner().invoke(cli, ["--db", str(tmp_path / "m.sqlite"), "demo", "--json"])
    block = json.loads(result.stdout)["block"]
    assert "规则 batch-size: “批大小应该是500”" in block
    lines = [line for line in block.splitlines() if "1000" in line]
    assert lines and all(line.startswith("- 旧值") for line in lines)


def test_demo_is_deterministic_and_idempotent(tmp_path: Path) -> None:
    db = tmp_path / "m.sqlite"
    first = json.loads(CliRunner().invoke(cli, ["--db", str(db), "demo", "--json"]).stdout)
    again = json.loads(CliRunner().invoke(cli, ["--db", str(db), "demo", "--json"]).stdout)
    assert again["inserted"] == 0 and again["events"] == first["events"]
    other = tmp_path / "other.sqlite"
    fresh = json.loads(CliRunner().invoke(cli, ["--db", str(other), "demo", "--json"]).stdout)
    assert fresh["block"] == first["block"]


def test_the_bundled_session_is_a_dsh_log(tmp_path: Path) -> None:
    with session_log() as path:
        lines = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
        session_id, message, turn = next_step(path)
    assert lines[0]["type"] == "session" and lines[0]["id"] == session_id
    types = {row["type"] for row in lines[1:]}
    assert {"user/message", "assistant/message", "tool/call", "tool/result"} <= types
    assert {"compaction/start", "compaction/summary", "compaction/end", "text-chunks"} <= types
    text = json.dumps(lines, ensure_ascii=False)
    assert "预算" in text and "ignore all previous instructions" in text
    assert message["source"]["kind"] == "user" and turn == max(
        row["data"]["turn"] for row in lines if row["type"] == "turn/start"
    )
    # `lcm ingest` reads the same file.
    result = CliRunner().invoke(
        cli, ["--db", str(tmp_path / "i.sqlite"), "ingest", str(path), "--json", "--quiet"]
    )
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["sessions"] == 1


@pytest.mark.parametrize("flag", [[], ["--json"]])
def test_demo_both_modes_exit_zero(tmp_path: Path, flag: list[str]) -> None:
    result = CliRunner().invoke(cli, ["--db", str(tmp_path / "m.sqlite"), "demo", *flag])
    assert result.exit_code == 0 and result.stderr == ""


def test_demo_says_why_its_block_is_chinese_and_how_to_switch(tmp_path: Path) -> None:
    """The bilingual session gives a Chinese block under `auto`; the first screen says so,
    and the command it names gives the English block (quotes keep their own language)."""
    db = tmp_path / "m.sqlite"
    shown = CliRunner().invoke(cli, ["--db", str(db), "demo"]).stdout
    before_block = shown.split("the memory block the next step gets", 1)[0]
    assert "Headings are Chinese" in before_block and "assembly.language" in before_block
    assert "For English headings: lcm demo --language en\n" in before_block
    english = json.loads(
        CliRunner().invoke(cli, ["--db", str(db), "demo", "--language", "en", "--json"]).stdout
    )
    assert english["language"] == "en" and not english["block"].startswith(HEADER)
    assert english["block"].startswith("[long-conversation-memory")
    assert "预算不超过3000元（含税）" in english["block"]
    assert "For Chinese headings: lcm demo --language zh" in english["language_hint"]


def test_demo_language_agrees_with_a_config_file(tmp_path: Path) -> None:
    """`--language en` is `assembly.language = "en"`: the same English block (its lines
    compared as a set: two fresh files may order the rules of one message apart)."""
    setting = tmp_path / "en.json"
    setting.write_text('{"assembly": {"language": "en"}}', encoding="utf-8")
    by_file = CliRunner().invoke(
        cli, ["--config", str(setting), "--db", str(tmp_path / "a.sqlite"), "demo", "--json"]
    )
    by_flag = CliRunner().invoke(
        cli, ["--db", str(tmp_path / "b.sqlite"), "demo", "--language", "en", "--json"]
    )
    file_block, flag_block = (json.loads(r.stdout)["block"] for r in (by_file, by_flag))
    assert file_block.startswith("[long-conversation-memory")
    assert sorted(file_block.splitlines()) == sorted(flag_block.splitlines())
