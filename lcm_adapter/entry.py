"""The `lcm` console command: hooks are answered directly, everything else goes to click.

A Claude Code hook starts a fresh `lcm` process on every prompt and tool call, so what it
imports is most of its cost. `lcm [--db URL] [--config FILE] [--debug] hook EVENT` is
recognised here: it asks the warm hook server of its database (`lcm_adapter.claude.client`,
a few milliseconds), and when none answers it is answered by `lcm_adapter.claude.run`
in this process without importing click or the command modules, and a server is
started for the next call. Any other form, including `--help`, goes to the click group,
which answers it the same way.
"""

from __future__ import annotations

import sys

_VALUED = ("--db", "--config")


def hook_call(argv: list[str]) -> tuple[str, str | None, str | None] | None:
    """`(event, db, config)` when argv is exactly a hook call; None sends it to click."""
    options: dict[str, str] = {}
    index = 0
    while index < len(argv) and argv[index].startswith("-"):
        word = argv[index]
        name, equals, value = word.partition("=")
        if name in _VALUED and equals:
            options[name] = value
        elif word in _VALUED and index + 1 < len(argv):
            index += 1
            options[word] = argv[index]
        elif word != "--debug":
            return None
        index += 1
    rest = argv[index:]
    if len(rest) != 2 or rest[0] != "hook" or rest[1].startswith("-"):
        return None
    return rest[1], options.get("--db"), options.get("--config")


def main() -> None:
    """Console entry point."""
    call = hook_call(sys.argv[1:])
    if call is None:
        from lcm_adapter.cli.main import main as cli_main

        cli_main()
        return
    from lcm_adapter.claude.client import answer_hook

    answer_hook(*call)
    sys.exit(0)
