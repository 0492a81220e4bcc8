"""Every command is documented in README.md or docs/, every option in --help."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import click
import pytest

from lcm_adapter.claude.hooks import EVENTS
from lcm_adapter.cli.main import cli, register_all

ROOT = Path(__file__).resolve().parents[2]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
MCP_TOOLS = (
    "memory_search",
    "memory_inspect",
    "memory_explain",
    "memory_status",
    "memory_assemble",
    "memory_forget",
    "memory_remember",
)


def docs_text() -> str:
    return "\n".join(p.read_text(encoding="utf-8") for p in DOCS if p.exists())


def walk(group: click.Group, prefix: str = "lcm") -> Iterator[tuple[str, click.Command]]:
    for name in sorted(group.commands):
        command = group.commands[name]
        path = f"{prefix} {name}"
        if isinstance(command, click.Group):
            yield from walk(command, path)
        else:
            yield path, command


register_all()
COMMANDS = list(walk(cli))


@pytest.mark.parametrize(("path", "command"), COMMANDS, ids=[p for p, _ in COMMANDS])
def test_command_is_documented(path: str, command: click.Command) -> None:
    assert f"`{path}" in docs_text(), f"{path} is not in README.md or docs/"
    assert (command.help or "").strip(), f"{path} has no help text"


@pytest.mark.parametrize(("path", "command"), COMMANDS, ids=[p for p, _ in COMMANDS])
def test_every_option_has_help(path: str, command: click.Command) -> None:
    for param in command.params:
        if isinstance(param, click.Option):
            assert (param.help or "").strip(), f"{path} {param.opts[0]} has no help"


def test_global_options_have_help_and_are_documented() -> None:
    text = docs_text()
    for param in cli.params:
        if isinstance(param, click.Option) and param.name != "version":
            assert (param.help or "").strip()
            assert param.opts[0] in text, param.opts[0]
    assert "LCM_DB" in text and "NO_COLOR" in text


def test_mcp_tools_and_hook_events_are_documented() -> None:
    text = docs_text()
    assert all(tool in text for tool in MCP_TOOLS)
    assert all(event in text for event in EVENTS)
    assert all(host_name in text for host_name in EVENTS.values())


def test_lcm_demo_is_the_first_command_shown() -> None:
    text = (ROOT / "docs" / "cli.md").read_text(encoding="utf-8")
    first_block = text.split("```bash\n", 1)[1].split("```", 1)[0]
    assert first_block.strip() == "lcm demo"
