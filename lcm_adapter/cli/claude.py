"""`lcm claude install | uninstall`: lcm's hooks in Claude Code's settings file."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import click

from lcm_adapter.claude.install import (
    HOOK_SETTINGS,
    HOOK_SETTINGS_FILE,
    HOOKS,
    SETTINGS_FILE,
    HookCommand,
    SettingsFileError,
    add_hooks,
    read_settings,
    remove_hooks,
    render,
)
from lcm_adapter.cli.base import CommandError, dump_json, json_option
from lcm_adapter.cli.dsh import without_password
from lcm_adapter.files import write_text_atomic
from lcm_adapter.paths import DATA_FOLDER, claude_home, default_db_path
from lcm_core.store.errors import StoreError

SETTINGS_HELP = (
    "Claude Code settings file to edit (default: $CLAUDE_CONFIG_DIR/settings.json, else "
    "~/.claude/settings.json; a project's .claude/settings.json works too)."
)


@click.group()
def claude() -> None:
    """Claude Code integration: lcm's hooks in its settings file."""


def _settings_file(given: Path | None) -> Path:
    return (given or claude_home() / SETTINGS_FILE).expanduser().absolute()


def _hook_program(lcm_exe: str | None) -> tuple[str, ...]:
    """What the hooks run: this Python on the hook client (no site start-up), or `--lcm`."""
    if lcm_exe:
        return (lcm_exe,)
    from lcm_adapter.claude import client

    return (sys.executable, "-S", str(Path(client.__file__).resolve()))


def _database(ctx: click.Context) -> str:
    """The database the user named (`--db`, `$LCM_DB`), else the default, as an absolute path."""
    given = ctx.find_root().params.get("db") or os.environ.get("LCM_DB")
    if isinstance(given, str) and given.strip():
        db = given.strip()
        return db if "://" in db else str(Path(db).expanduser().absolute())
    return str(default_db_path())


def _hook_settings(ctx: click.Context) -> tuple[Path, bool]:
    """The settings file the hooks read: `--config FILE`, else lcm's own for Claude Code."""
    given = getattr(ctx.obj, "config_path", None)
    if given:
        ctx.obj.config()  # reports bad values now, once
        return Path(given).expanduser().absolute(), False
    return claude_home() / DATA_FOLDER / HOOK_SETTINGS_FILE, True


@claude.command()
@click.option("--settings", "settings_path", type=click.Path(path_type=Path), help=SETTINGS_HELP)
@click.option(
    "--lcm", "lcm_exe", default=None, help="The lcm executable hooks run (default: this one)."
)
@click.option("--print", "print_only", is_flag=True, help="Print the settings file; write nothing.")
@json_option
@click.pass_context
def install(
    ctx: click.Context,
    settings_path: Path | None,
    lcm_exe: str | None,
    print_only: bool,
    as_json: bool,
) -> None:
    """Add lcm's hooks to Claude Code's settings (idempotent; other settings are left alone).

    The hooks name the database and a settings file (memory shared by the sessions of a
    project) explicitly; both are created here, so a hook never creates anything.
    """
    target = _settings_file(settings_path)
    db, had_password = without_password(_database(ctx))
    config, ours = _hook_settings(ctx)
    run = HookCommand(_hook_program(lcm_exe), db, str(config))
    try:
        text = render(add_hooks(read_settings(target), run))
    except SettingsFileError as exc:
        raise CommandError(str(exc)) from exc
    data: dict[str, Any] = {
        "settings": str(target),
        "db": db,
        "config": str(config),
        "hooks": [event for event, _, _ in HOOKS],
    }
    if print_only:
        if as_json:
            click.echo(dump_json({**data, "text": text}))
        else:
            click.echo(text, nl=False)  # the file's text ends with its own newline
        return
    try:
        _create_database(db)
        if ours and not config.exists():
            write_text_atomic(config, render(HOOK_SETTINGS), new_mode=0o600)
        changed = write_text_atomic(target, text)
    except (OSError, StoreError) as exc:
        raise CommandError(f"cannot install the hooks: {exc}") from exc
    data["changed"] = changed
    if as_json:
        click.echo(dump_json(data))
        return
    click.echo(f"{target}: {'updated' if changed else 'already up to date'}")
    click.echo(f"hooks: {', '.join(data['hooks'])}")
    click.echo(f"memory database: {db}")
    click.echo(f"hook settings: {config}")
    if had_password:
        click.echo("the password was left out: give it as PGPASSWORD or in ~/.pgpass")
    click.echo("memory starts with the next Claude Code session; remove with: lcm claude uninstall")


def _create_database(db: str) -> None:
    """Open the database once (creating its folder 0700 and file 0600), then close it."""
    from lcm_adapter.runtime import MemoryRuntime

    MemoryRuntime.open(db).close()


@claude.command()
@click.option("--settings", "settings_path", type=click.Path(path_type=Path), help=SETTINGS_HELP)
@json_option
def uninstall(settings_path: Path | None, as_json: bool) -> None:
    """Remove exactly the hooks `lcm claude install` added; the database is kept."""
    target = _settings_file(settings_path)
    try:
        settings = read_settings(target)
    except SettingsFileError as exc:
        raise CommandError(str(exc)) from exc
    cleaned = remove_hooks(settings)
    removed = cleaned != settings
    try:
        if removed:
            write_text_atomic(target, render(cleaned))
    except OSError as exc:
        raise CommandError(f"cannot write {target}: {exc.strerror or exc}") from exc
    if as_json:
        click.echo(dump_json({"settings": str(target), "removed": removed}))
    elif removed:
        click.echo(f"{target}: removed lcm's hooks; the memory database is kept")
    else:
        click.echo(f"{target}: no lcm hooks there; nothing changed")


def register(group: click.Group) -> None:
    """Add these commands to the `lcm` group."""
    group.add_command(claude)
