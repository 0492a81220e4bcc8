"""Shared plumbing of the `lcm` commands: state, errors, output modes, store and session."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final, NoReturn, TypeVar

import click

from lcm_adapter.settings import SettingsError, read_settings_file
from lcm_core.config import Config, load_config
from lcm_core.store.errors import StoreError
from lcm_core.store.ports import MemoryStore
from lcm_core.store.registry import open_store

EXIT_OK: Final = 0
EXIT_FAILURE: Final = 1
EXIT_USAGE: Final = 2

F = TypeVar("F", bound=Callable[..., Any])


class CommandError(click.ClickException):
    """A failure a person can act on: one line on stderr, exit code 1."""

    exit_code = EXIT_FAILURE

    def show(self, file: Any = None) -> None:
        click.echo(f"lcm: {self.format_message()}", err=True)


class UsageFailure(CommandError):
    """Like `CommandError`, for a command line that cannot work (exit code 2)."""

    exit_code = EXIT_USAGE


def wants_json(args: list[str]) -> bool:
    """Whether the command line asked for `--json` (its errors are then JSON too)."""
    return "--json" in args


def json_error(message: str, exit_code: int, **details: Any) -> NoReturn:
    """An error as one JSON object on one stderr line, for a caller that parses output."""
    body = {"error": message, "exit_code": exit_code, **details}
    click.echo(json.dumps(body, ensure_ascii=False, sort_keys=True), err=True)
    sys.exit(exit_code)


@dataclass(slots=True)
class CliState:
    """What the global options chose: database, config file, debug mode."""

    db: str
    config_path: str | None = None
    debug: bool = False
    db_given: bool = False  # --db or LCM_DB named it (not the default under DSH_HOME)
    _config: Config | None = field(default=None, repr=False)

    def __getitem__(self, key: str) -> Any:
        """Dict-style access (`ctx.obj["db"]`) for commands written against a dict."""
        return getattr(self, key)

    def config(self) -> Config:
        """The checked configuration: defaults merged with `--config FILE` (JSON or TOML)."""
        if self._config is None:
            self._config = load_config(read_config_file(self.config_path))
            for warning in self._config.warnings:
                click.echo(f"lcm: config: {warning}", err=True)
        return self._config


def read_config_file(path: str | None) -> dict[str, Any] | None:
    """The settings in a JSON or TOML file; a missing or broken file is a `CommandError`."""
    try:
        return read_settings_file(path)
    except SettingsError as exc:
        raise CommandError(str(exc)) from exc


def state(ctx: click.Context) -> CliState:
    """The `CliState` the `lcm` group stored on the context."""
    found = ctx.find_object(CliState)
    if found is None:  # a command invoked without the group (tests of one command)
        from lcm_adapter.paths import db_given, resolve_db_url

        found = CliState(db=resolve_db_url(None), db_given=db_given(None))
        ctx.obj = found
    return found


def fail(message: str) -> NoReturn:
    """Stop with one clear line on stderr and exit code 1."""
    raise CommandError(message)


def dump_json(data: Any) -> str:
    """Stable JSON: sorted keys, UTF-8 text kept readable, two-space indent."""
    return json.dumps(data, ensure_ascii=False, sort_keys=True, indent=2, default=str)


def emit(as_json: bool, data: Any, render: Callable[[Any], str]) -> None:
    """Print `data` as JSON, or the readable text `render` makes of it."""
    click.echo(dump_json(data) if as_json else render(data))


def json_option(func: F) -> F:
    """The `--json` flag every command has."""
    return click.option("--json", "as_json", is_flag=True, help="Print JSON (stable keys).")(func)


def session_option(func: F) -> F:
    """`--session S`, defaulting to the most recently updated session."""
    return click.option(
        "--session",
        "session",
        metavar="ID",
        help="Session id (default: the most recent session).",
    )(func)


def no_database_message(path: Path, given: bool) -> str:
    """The one line a read command gives for a database file that does not exist."""
    if given:
        return f"no database at {path}"
    return f"no database at {path} yet: `lcm status` shows how to start"


@contextmanager
def opened_store(
    ctx: click.Context,
    *,
    create: bool = False,
    reraise: tuple[type[StoreError], ...] = (),
) -> Iterator[MemoryStore]:
    """The store the global options name, closed afterwards; a failure to open is one line.

    Only a command that adds memory passes `create=True`: a read command on a missing
    file fails with one line and leaves nothing behind. Errors of the `reraise` types
    reach the caller (doctor reports a damaged file instead of failing in one line).
    """
    from lcm_adapter.paths import missing_database

    cli_state = state(ctx)
    url = cli_state.db
    missing = missing_database(url)
    if missing is not None and not create:
        fail(no_database_message(missing, cli_state.db_given))
    try:
        store = open_store(url)
    except reraise:
        raise
    except StoreError as exc:
        fail(str(exc))
    try:
        yield store
    finally:
        with suppress(StoreError):
            store.close()


def resolve_session(store: MemoryStore, session: str | None) -> str:
    """The session to use: the one given, else the most recent one; none is an error."""
    from lcm_core.usecases import NoSessionError, pick_session

    try:
        return pick_session(store, session)
    except NoSessionError as exc:
        fail(str(exc))


def handle_unexpected(ctx: click.Context, exc: BaseException, as_json: bool = False) -> NoReturn:
    """An unexpected error: one line and exit 1, or the traceback with `--debug`."""
    found = ctx.find_object(CliState)
    if found is not None and found.debug:
        raise exc
    message = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    if not isinstance(exc, StoreError):
        message = f"{type(exc).__name__}: {message}"
    if as_json:
        json_error(message, EXIT_FAILURE)
    click.echo(f"lcm: {message} (run with --debug for a traceback)", err=True)
    sys.exit(EXIT_FAILURE)
