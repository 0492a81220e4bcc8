"""The `lcm` command line: readable output for people, `--json` for machines.

Exit codes: 0 ok, 1 failure (one line on stderr), 2 usage. An unexpected error is one
line too; `--debug` shows its traceback instead.
"""

from __future__ import annotations

import importlib
from typing import Any, Final

import click

from lcm_adapter.cli.base import CliState, handle_unexpected, json_error, wants_json
from lcm_adapter.paths import db_given, resolve_db_url

# Modules that add commands to the group. Each defines `register(cli)`.
COMMAND_MODULES: Final = (
    "lcm_adapter.cli.memory",
    "lcm_adapter.cli.admin",
    "lcm_adapter.cli.analytics",
    "lcm_adapter.cli.skills",
    "lcm_adapter.cli.demo",
    "lcm_adapter.cli.faces",
    "lcm_adapter.cli.dsh",
    "lcm_adapter.cli.tenants",
    "lcm_adapter.cli.browse",
    "lcm_adapter.cli.restore",
    "lcm_adapter.cli.control",
    "lcm_adapter.cli.claude",
)
# Which module registers each command: a run imports only the module of the command it
# runs, so `lcm hook` (called before every prompt) does not pay for rich, the analytics or
# the DSH ingest. tests/adapter/test_cli_lazy.py keeps this map equal to the modules.
COMMANDS: Final[dict[str, str]] = {
    **dict.fromkeys(("assemble", "explain", "inspect", "search", "status"), COMMAND_MODULES[0]),
    **dict.fromkeys(("doctor", "purge", "reextract"), COMMAND_MODULES[1]),
    **dict.fromkeys(("export", "stats"), COMMAND_MODULES[2]),
    **dict.fromkeys(("rules", "skills"), COMMAND_MODULES[3]),
    "demo": COMMAND_MODULES[4],
    **dict.fromkeys(("bench", "hook", "mcp"), COMMAND_MODULES[5]),
    **dict.fromkeys(("dsh", "ingest", "serve"), COMMAND_MODULES[6]),
    "admin": COMMAND_MODULES[7],
    "browse": COMMAND_MODULES[8],
    **dict.fromkeys(("backup", "import"), COMMAND_MODULES[9]),
    **dict.fromkeys(("forget", "pin", "remember", "unpin"), COMMAND_MODULES[10]),
    "claude": COMMAND_MODULES[11],
}


class LcmGroup(click.Group):
    """A group that loads a command's module when it is used, and turns any unexpected
    exception into one line on stderr."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*self.commands, *COMMANDS})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name not in self.commands and cmd_name in COMMANDS:
            importlib.import_module(COMMANDS[cmd_name]).register(self)
        return super().get_command(ctx, cmd_name)

    def invoke(self, ctx: click.Context) -> Any:
        # The words after the group's own options: `--json` among them makes errors JSON.
        as_json = wants_json([*getattr(ctx, "_protected_args", []), *ctx.args])
        try:
            return super().invoke(ctx)
        except click.exceptions.ClickException as exc:
            if as_json:
                json_error(exc.format_message(), exc.exit_code)
            raise
        except (click.exceptions.Exit, click.Abort):
            raise
        except (SystemExit, KeyboardInterrupt):
            raise
        except Exception as exc:
            handle_unexpected(ctx, exc, as_json)


@click.group(cls=LcmGroup, context_settings={"help_option_names": ["-h", "--help"]})
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
    if db is not None and not db.strip():
        # An empty --db (an unset shell variable, `--db "$DB"`) must not mean the default.
        raise click.BadParameter(
            "is empty: give a path or URL, or leave --db out for the default database",
            param_hint="--db",
        )
    ctx.obj = CliState(
        db=resolve_db_url(db), config_path=config_path, debug=debug, db_given=db_given(db)
    )


def register_all() -> None:
    """Load every command now (for tools that walk `cli.commands`, like the docs test)."""
    for name in COMMAND_MODULES:
        importlib.import_module(name).register(cli)


def main() -> None:
    """Console entry point."""
    cli(prog_name="lcm")
