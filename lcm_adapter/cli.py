"""The `lcm` command line: readable output for people, `--json` for machines.

Exit codes: 0 ok, 1 failure (one line on stderr), 2 usage. An unexpected error is one
line too; `--debug` shows its traceback instead.
"""

from __future__ import annotations

import importlib
from typing import Any, Final

import click

from lcm_adapter.cli_base import CliState, handle_unexpected
from lcm_adapter.paths import resolve_db_url

# Modules that add commands to the group, in help order. Each defines `register(cli)`.
# Modules another piece of work provides are skipped while they do not exist yet.
COMMAND_MODULES: Final = (
    "lcm_adapter.cli_memory",
    "lcm_adapter.cli_admin",
    "lcm_adapter.cli_analytics",
    "lcm_adapter.cli_skills",
    "lcm_adapter.cli_demo",
    "lcm_adapter.cli_faces",
    "lcm_adapter.cli_dsh",
    "lcm_adapter.cli_tenants",
)


class LcmGroup(click.Group):
    """A group that turns any unexpected exception into one line on stderr."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except (click.exceptions.ClickException, click.exceptions.Exit, click.Abort):
            raise
        except (SystemExit, KeyboardInterrupt):
            raise
        except Exception as exc:
            handle_unexpected(ctx, exc)


@click.group(cls=LcmGroup)
@click.option(
    "--db",
    "db",
    metavar="URL",
    help="Database: a path, sqlite:///PATH or duckdb:///PATH (env LCM_DB).",
)
@click.option(
    "--config",
    "config_path",
    metavar="FILE",
    type=click.Path(dir_okay=False),
    help="Settings file (JSON or TOML) merged over the defaults.",
)
@click.option("--debug", is_flag=True, help="Show a traceback on unexpected errors.")
@click.version_option(package_name="long-conversation-memory", prog_name="lcm")
@click.pass_context
def cli(ctx: click.Context, db: str | None, config_path: str | None, debug: bool) -> None:
    """Durable, deterministic memory for long agent conversations.

    Start with `lcm demo`. Colours are off when output is piped or NO_COLOR is set.
    """
    ctx.obj = CliState(db=resolve_db_url(db), config_path=config_path, debug=debug)


def _register_all() -> None:
    for name in COMMAND_MODULES:
        try:
            module = importlib.import_module(name)
        except ModuleNotFoundError as exc:
            if exc.name == name:
                continue  # that piece of work has not landed yet
            raise
        register = getattr(module, "register", None)
        if callable(register):
            register(cli)
            continue
        # A module without `register`: add the commands it defines at top level.
        for value in vars(module).values():
            callback = getattr(value, "callback", None)
            if (
                isinstance(value, click.Command)
                and getattr(callback, "__module__", None) == name
                and value.name not in cli.commands
            ):
                cli.add_command(value)


_register_all()


def main() -> None:
    """Console entry point."""
    cli(prog_name="lcm")
