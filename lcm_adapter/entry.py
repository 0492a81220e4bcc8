"""The `lcm` console command: hooks are answered directly, everything else goes to click.

A Claude Code hook starts a fresh `lcm` process on every prompt and tool call, so what it
imports is most of its cost. `lcm [--db URL] [--config FILE] [--debug] hook EVENT` is
recognised here and answered by `lcm_adapter.claude.run` without importing click or the
command modules (~20 ms); any other form, including `--help`, goes to the click group,
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
    from lcm_adapter.claude.run import run_hook, stdin_bytes
    from lcm_adapter.paths import db_given, resolve_db_url

    event, db, config = call
    run = run_hook(event, resolve_db_url(db), config, stdin_bytes(), named=db_given(db))
    for line in run.errors:
        print(line, file=sys.stderr)
    if run.reply is not None:
        sys.stdout.write(run.reply + "\n")
        sys.stdout.flush()
    sys.exit(0)
