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

from lcm_adapter.claude.argv import hook_call


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
