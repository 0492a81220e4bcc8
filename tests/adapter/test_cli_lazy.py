"""`lcm` loads only the module of the command it runs; the command map matches the modules."""

from __future__ import annotations

import importlib
import json
import subprocess
import sys
from pathlib import Path

import click
from click.testing import CliRunner

from lcm_adapter.cli.main import COMMAND_MODULES, COMMANDS, cli

DEMO_SESSION = "0b6f3c2e-9a41-4d7e-b8c5-1e2f3a4b5c6d"


def test_the_command_map_names_every_command_of_every_module() -> None:
    registered: dict[str, str] = {}
    for module in COMMAND_MODULES:
        group = click.Group()
        importlib.import_module(module).register(group)
        registered.update(dict.fromkeys(group.commands, module))
    assert registered == COMMANDS


def test_help_lists_every_command() -> None:
    result = CliRunner().invoke(cli, ["--help"])
    assert result.exit_code == 0
    for name in COMMANDS:
        assert f"  {name} " in result.output or f"  {name}\n" in result.output, name


def test_a_hook_imports_neither_rich_nor_the_reports(tmp_path: Path) -> None:
    db = tmp_path / "memory.sqlite"
    assert CliRunner().invoke(cli, ["--db", str(db), "demo"]).exit_code == 0
    script = (
        "import sys, json\n"
        "from lcm_adapter.cli.main import main\n"
        "try:\n    main()\n"
        "except SystemExit:\n    pass\n"
        "heavy = ['rich', 'lcm_adapter.cli.analytics', 'lcm_adapter.dsh.ingest',\n"
        "         'lcm_core.reports.export', 'lcm_adapter.commands', 'lcm_adapter.views']\n"
        "print(json.dumps(sorted(m for m in heavy if m in sys.modules)), file=sys.stderr)\n"
    )
    body = json.dumps({"session_id": DEMO_SESSION, "prompt": "which port? 端口是多少？"})
    done = subprocess.run(
        [sys.executable, "-c", script, "--db", str(db), "hook", "user-prompt-submit"],
        input=body,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    reply = json.loads(done.stdout)
    assert reply["hookSpecificOutput"]["additionalContext"]
    assert json.loads(done.stderr.strip().splitlines()[-1]) == []
