"""The `lcm` entry answers hooks without the command line, exactly as `lcm hook` through click does."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from lcm_adapter.claude.argv import hook_call
from lcm_adapter.cli.main import cli

DEMO_SESSION = "0b6f3c2e-9a41-4d7e-b8c5-1e2f3a4b5c6d"
# Runs the console entry and reports on stderr's last line whether click was imported.
ENTRY = (
    "import atexit, sys\n"
    "atexit.register(lambda: sys.stderr.write('\\nclick imported: %s' % ('click' in sys.modules)))\n"
    "from lcm_adapter.entry import main\n"
    "main()\n"
)


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (["hook", "user-prompt-submit"], ("user-prompt-submit", None, None)),
        (["--db", "m.sqlite", "hook", "stop"], ("stop", "m.sqlite", None)),
        (
            ["--db=记忆.sqlite", "--config", "c.toml", "--debug", "hook", "PreToolUse"],
            ("PreToolUse", "记忆.sqlite", "c.toml"),
        ),
        (["hook"], None),
        (["hook", "--help"], None),
        (["--help"], None),
        (["hook", "stop", "extra"], None),
        (["--json", "hook", "stop"], None),
        (["--db"], None),
        (["status"], None),
    ],
)
def test_only_a_plain_hook_call_takes_the_fast_path(argv: list[str], expected: object) -> None:
    assert hook_call(argv) == expected


@pytest.fixture
def demo(tmp_path: Path) -> Path:
    db = tmp_path / "demo.sqlite"
    result = CliRunner().invoke(cli, ["--db", str(db), "demo"])
    assert result.exit_code == 0, result.output
    return db


def _entry(db: Path, payload: bytes, *args: str) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [sys.executable, "-c", ENTRY, "--db", str(db), "hook", *args],
        input=payload,
        capture_output=True,
        check=False,
        timeout=120,
    )


def test_the_fast_hook_answers_as_the_click_command_does(demo: Path, tmp_path: Path) -> None:
    """Same reply bytes for a mixed-language prompt, and click is never imported."""
    payload = json.dumps(
        {"session_id": DEMO_SESSION, "prompt": "端口定了哪个？and the budget?"},
        ensure_ascii=False,
    ).encode("utf-8")
    twin = tmp_path / "twin.sqlite"
    shutil.copyfile(demo, twin)
    fast = _entry(demo, payload, "user-prompt-submit")
    slow = CliRunner().invoke(cli, ["--db", str(twin), "hook", "user-prompt-submit"], input=payload)
    assert fast.returncode == 0 and slow.exit_code == 0
    assert fast.stdout.decode("utf-8") == slow.stdout
    assert "additionalContext" in json.loads(fast.stdout)["hookSpecificOutput"]
    assert fast.stderr.decode().strip().endswith("click imported: False")


def test_bad_input_through_the_fast_hook_exits_0_and_is_logged(demo: Path) -> None:
    done = _entry(demo, b"not json", "user-prompt-submit")
    assert done.returncode == 0 and done.stdout == b""
    assert "bad hook input" in done.stderr.decode()
    assert "bad hook input" in (demo.parent / "hooks.log").read_text("utf-8")
