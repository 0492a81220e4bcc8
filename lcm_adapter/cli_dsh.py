"""The DSH commands of `lcm`: `serve` (the plugin's sidecar), `dsh install`, and `ingest`."""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

import click

from lcm_adapter.cli_base import read_config_file
from lcm_adapter.dsh import plugin_path
from lcm_adapter.dsh.patch import (
    PatchError,
    PluginRow,
    merge,
    patch_path,
    render_block,
    write_patch,
)
from lcm_adapter.ingest import IngestError, IngestReport, ingest_paths
from lcm_adapter.paths import DATA_FOLDER, DB_FILE, dsh_home
from lcm_adapter.runtime import MemoryRuntime
from lcm_core.errors import StoreError

EXIT_FAILURE = 1
EXIT_USAGE = 2
DEFAULT_PROFILE = "web"


def _fail(message: str, code: int = EXIT_FAILURE) -> None:
    click.echo(f"lcm: {message}", err=True)
    sys.exit(code)


@click.command()
@click.pass_context
def serve(ctx: click.Context) -> None:
    """Serve a host plugin: newline-delimited JSON-RPC on stdin/stdout.

    Settings from `--config` are the defaults; a host's `initialize` settings replace them.
    """
    from lcm_adapter.sidecar import main

    sys.exit(main(ctx.obj["db"], read_config_file(getattr(ctx.obj, "config_path", None))))


@click.group()
def dsh() -> None:
    """DeepSeek Harness integration."""


@dsh.command()
@click.option("--profile", default=DEFAULT_PROFILE, show_default=True, help="DSH profile to patch.")
@click.option(
    "--dsh-home",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="DSH home folder (default: $DSH_HOME, else ~/.dsh).",
)
@click.option("--python", "python_exe", default=None, help="Python that runs the sidecar.")
@click.option(
    "--with-commands",
    is_flag=True,
    help="Also load the commands service (profiles such as sdk-minimal lack it).",
)
@click.option("--print", "print_only", is_flag=True, help="Print the patch file; write nothing.")
@click.pass_context
def install(
    ctx: click.Context,
    profile: str,
    dsh_home: Path | None,
    python_exe: str | None,
    with_commands: bool,
    print_only: bool,
) -> None:
    """Load the memory plugin in a DSH profile (idempotent; other rows are left alone)."""
    home = (dsh_home or _default_home()).expanduser().absolute()
    db, had_password = without_password(_explicit_db(ctx) or str(home / DATA_FOLDER / DB_FILE))
    row = PluginRow(
        plugin=plugin_path(),
        python=python_exe or sys.executable,
        db=db,
        with_commands=with_commands,
        settings=_settings(ctx),
    )
    try:
        target = patch_path(home, profile)
        existing = target.read_text(encoding="utf-8") if target.exists() else None
        text = merge(existing, render_block(row))
    except (PatchError, OSError, UnicodeDecodeError) as exc:
        _fail(str(exc))
        return
    if print_only:
        click.echo(text, nl=False)
        return
    try:
        changed = write_patch(target, text)
    except OSError as exc:
        _fail(f"cannot write {target}: {exc.strerror or exc}")
        return
    state = "updated" if changed else "already up to date"
    click.echo(f"{target}: {state}")
    click.echo(f"memory database: {db}")
    if had_password:
        click.echo(
            "the password was left out of the profile: give it to DSH's environment as "
            "PGPASSWORD, or put it in ~/.pgpass (mode 0600)"
        )
    click.echo(f"start DSH with: dsh --profile {profile}")


def _default_home() -> Path:
    return dsh_home()


def _settings(ctx: click.Context) -> dict[str, Any] | None:
    """The settings of `lcm --config FILE`, checked the same way the sidecar will."""
    path = getattr(ctx.obj, "config_path", None)
    if not path:
        return None
    ctx.obj.config()  # reports bad values now, once, as one line each
    return read_config_file(path)


def without_password(db: str) -> tuple[str, bool]:
    """The database URL fit to write into a profile file: any password taken out.

    A server URL's password belongs in PGPASSWORD or ~/.pgpass, which libpq reads, never
    in a file other tools copy around; a path or a URL without one is returned as is.
    """
    parts = urlsplit(db)
    if not parts.scheme.startswith("postgres"):
        return db, False
    query = parse_qsl(parts.query, keep_blank_values=True)
    kept = [(key, value) for key, value in query if key != "password"]
    if parts.password is None and len(kept) == len(query):
        return db, False
    netloc = parts.netloc.rpartition("@")[2]
    if parts.username:
        netloc = f"{parts.username}@{netloc}"
    return urlunsplit(parts._replace(netloc=netloc, query=urlencode(kept, safe="/"))), True


def _explicit_db(ctx: click.Context) -> str | None:
    """The database the user named (`--db` or `$LCM_DB`), not the computed default."""
    given = ctx.find_root().params.get("db") or os.environ.get("LCM_DB")
    return given.strip() if isinstance(given, str) and given.strip() else None


class _Progress:
    """Progress on stderr: redrawn in place on a terminal, a line every few seconds otherwise."""

    def __init__(self, quiet: bool) -> None:
        self.quiet = quiet
        self.tty = sys.stderr.isatty()
        self.last = 0.0

    def __call__(self, report: IngestReport, path: Path) -> None:
        now = time.monotonic()
        if self.quiet or now - self.last < (0.2 if self.tty else 5.0):
            return
        self.last = now
        line = (
            f"ingest: {report.events} events ({report.inserted} new) from {report.files} files, "
            f"{report.rate:,.0f} events/s"
        )
        click.echo(("\r" + line) if self.tty else line, err=True, nl=not self.tty)

    def done(self) -> None:
        if self.tty and not self.quiet and self.last:
            click.echo("", err=True)


@click.command()
@click.argument("paths", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.option("--quiet", is_flag=True, help="No progress on stderr.")
@click.pass_context
def ingest(ctx: click.Context, paths: tuple[Path, ...], as_json: bool, quiet: bool) -> None:
    """Backfill DSH session logs (files, session folders or a sessions tree), read-only."""
    try:
        runtime = MemoryRuntime.open(ctx.obj["db"], ctx.obj.config())
    except StoreError as exc:
        _fail(str(exc))
        return
    progress = _Progress(quiet)
    try:
        report = ingest_paths(runtime, paths, progress)
    except IngestError as exc:
        _fail(str(exc), EXIT_USAGE)
        return
    finally:
        progress.done()
        runtime.close()
    _print_report(report, as_json)
    if report.issues:
        sys.exit(EXIT_FAILURE)


def _print_report(report: IngestReport, as_json: bool) -> None:
    # Problems go to stderr, one line each, in both output modes.
    for issue in report.issues:
        click.echo(f"lcm: {issue}", err=True)
    data: dict[str, Any] = report.to_dict()
    if as_json:
        click.echo(json.dumps(data, ensure_ascii=False, sort_keys=True, indent=2))
        return
    click.echo(
        f"{data['events']} events from {data['files']} files in {data['sessions']} sessions: "
        f"{data['inserted']} new, {data['duplicates']} already stored "
        f"({data['events_per_second']:,.0f} events/s)"
    )


def register(group: click.Group) -> None:
    """Add these commands to the `lcm` group."""
    group.add_command(serve)
    group.add_command(dsh)
    group.add_command(ingest)
