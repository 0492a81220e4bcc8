"""The DSH commands of `lcm`: `serve` (the plugin's sidecar), `dsh install`, and `ingest`."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

import click

from lcm_adapter.cli.base import (
    CommandError,
    UsageFailure,
    dump_json,
    json_error,
    json_option,
    read_config_file,
)
from lcm_adapter.dsh import plugin_path
from lcm_adapter.dsh.ingest import (
    IngestError,
    IngestReport,
    Skipped,
    discover,
    ingest_files,
)
from lcm_adapter.dsh.ingest_progress import IngestProgress
from lcm_adapter.dsh.patch import (
    PatchError,
    PluginRow,
    merge,
    patch_path,
    render_block,
    unmerge,
    write_patch,
)
from lcm_adapter.paths import DATA_FOLDER, DB_FILE, dsh_home
from lcm_adapter.runtime import MemoryRuntime
from lcm_core.reports.targets import refuse_database_target
from lcm_core.store.errors import StoreError

EXIT_FAILURE = 1
EXIT_USAGE = 2
DEFAULT_PROFILE = "web"


def _fail(message: str, code: int = EXIT_FAILURE) -> None:
    # Raised, not printed: the group shows it as one line (one JSON object with --json).
    raise (UsageFailure if code == EXIT_USAGE else CommandError)(message)


@click.command()
@click.pass_context
def serve(ctx: click.Context) -> None:
    """Serve a host plugin: newline-delimited JSON-RPC on stdin/stdout.

    Settings from `--config` are the defaults; a host's `initialize` settings replace them.
    """
    from lcm_adapter.dsh.sidecar import main

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
@json_option
@click.pass_context
def install(
    ctx: click.Context,
    profile: str,
    dsh_home: Path | None,
    python_exe: str | None,
    with_commands: bool,
    print_only: bool,
    as_json: bool,
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
        refuse_database_target(target, db)
        existing = target.read_text(encoding="utf-8") if target.exists() else None
        text = merge(existing, render_block(row))
    except (PatchError, StoreError, OSError, UnicodeDecodeError) as exc:
        _fail(str(exc))
        return
    data: dict[str, Any] = {"patch": str(target), "profile": profile, "db": db}
    if print_only:
        if as_json:
            click.echo(dump_json({**data, "text": text}))
        else:
            click.echo(text, nl=False)
        return
    try:
        changed = write_patch(target, text)
    except OSError as exc:
        _fail(f"cannot write {target}: {exc.strerror or exc}")
        return
    data.update(changed=changed, start=f"dsh --profile {profile}")
    if as_json:
        click.echo(dump_json(data))
        return
    click.echo(f"{target}: {'updated' if changed else 'already up to date'}")
    click.echo(f"memory database: {db}")
    if had_password:
        click.echo(
            "the password was left out of the profile: give it to DSH's environment as "
            "PGPASSWORD, or put it in ~/.pgpass (mode 0600)"
        )
    click.echo(f"start DSH with: dsh --profile {profile}")


@dsh.command()
@click.option("--profile", default=DEFAULT_PROFILE, show_default=True, help="DSH profile to clean.")
@click.option(
    "--dsh-home",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="DSH home folder (default: $DSH_HOME, else ~/.dsh).",
)
@json_option
def uninstall(profile: str, dsh_home: Path | None, as_json: bool) -> None:
    """Remove exactly what `lcm dsh install` added to a profile; the database is kept."""
    home = (dsh_home or _default_home()).expanduser().absolute()
    try:
        target = patch_path(home, profile)
        existing = target.read_text(encoding="utf-8") if target.exists() else None
        text = None if existing is None else unmerge(existing)
    except (PatchError, OSError, UnicodeDecodeError) as exc:
        _fail(str(exc))
        return
    removed = existing is not None and text != existing
    try:
        if removed and text is None:
            target.unlink()  # the file held only what install created
        elif removed and text is not None:
            write_patch(target, text)
    except OSError as exc:
        _fail(f"cannot write {target}: {exc.strerror or exc}")
        return
    data = {
        "patch": str(target),
        "profile": profile,
        "removed": removed,
        "deleted_file": removed and text is None,
    }
    if as_json:
        click.echo(dump_json(data))
    elif not removed:
        click.echo(f"{target}: the memory plugin was not installed there; nothing changed")
    else:
        what = (
            "removed the file (install had created it)" if text is None else "removed the lcm block"
        )
        click.echo(f"{target}: {what}; the memory database is kept")


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


# Skipped files listed one per line on stderr before "... and N more" (`--json` has all).
SKIPPED_SHOWN = 20
EXIT_INTERRUPTED = 130


@click.command()
@click.argument("paths", nargs=-1, required=True, type=click.Path(path_type=Path))
@json_option
@click.option("--quiet", is_flag=True, help="No progress on stderr.")
@click.pass_context
def ingest(ctx: click.Context, paths: tuple[Path, ...], as_json: bool, quiet: bool) -> None:
    """Backfill DSH session logs (files, session folders or a sessions tree), read-only.

    In a folder, every *.jsonl, *.jsonl.zst and *.jsonl.zstd whose first line is a DSH
    session line is read; the other files are listed as skipped, with the reason.
    """
    try:
        found = discover(paths)
    except IngestError as exc:
        _fail(str(exc), EXIT_USAGE)
        return
    if not found.files:
        if not as_json:
            _print_skipped(found.skipped)
        where = ", ".join(str(p) for p in paths)
        _fail(f"no DSH session logs in {where} ({len(found.skipped)} files skipped)")
        return
    try:
        runtime = MemoryRuntime.open(ctx.obj["db"], ctx.obj.config())
    except StoreError as exc:
        _fail(str(exc))
        return
    report = IngestReport()
    try:
        with IngestProgress(found.files, quiet) as progress:
            ingest_files(runtime, found.files, progress, report)
    except KeyboardInterrupt:
        # Each batch commits on its own: what was stored stays, and a rerun skips it.
        message = (
            f"interrupted: {report.inserted} new events committed "
            f"({report.events} read from {report.files} files); run the same command again "
            "to resume: stored events are skipped"
        )
        if as_json:
            json_error(message, EXIT_INTERRUPTED)
        click.echo(f"lcm: {message}", err=True)
        sys.exit(EXIT_INTERRUPTED)
    finally:
        runtime.close()
    report.skipped = found.skipped
    _print_report(report, as_json)
    if report.issues and as_json:
        issues = [str(issue) for issue in report.issues]
        json_error(f"{len(issues)} problems while reading the logs", EXIT_FAILURE, issues=issues)
    if report.issues:
        sys.exit(EXIT_FAILURE)


def _print_skipped(skipped: list[Skipped]) -> None:
    for skip in skipped[:SKIPPED_SHOWN]:
        click.echo(f"lcm: skipped {skip}", err=True)
    if len(skipped) > SKIPPED_SHOWN:
        more = len(skipped) - SKIPPED_SHOWN
        click.echo(f"lcm: skipped {more} more files (`--json` lists them all)", err=True)


def _print_report(report: IngestReport, as_json: bool) -> None:
    # Problems go to stderr: one line each, or (with --json) one JSON object afterwards.
    data: dict[str, Any] = report.to_dict()
    if not as_json:
        for issue in report.issues:
            click.echo(f"lcm: {issue}", err=True)
        for note in report.repaired:
            click.echo(f"lcm: {note}", err=True)
    if as_json:
        click.echo(json.dumps(data, ensure_ascii=False, sort_keys=True, indent=2))
        return
    _print_skipped(report.skipped)
    repaired = (
        f"; {report.replaced_bytes} bytes that were not UTF-8 read as U+FFFD in "
        f"{len(report.repaired)} lines"
        if report.repaired
        else ""
    )
    click.echo(
        f"{data['events']} events from {data['files']} files in {data['sessions']} sessions: "
        f"{data['inserted']} new, {data['duplicates']} already stored "
        f"({data['events_per_second']:,.0f} events/s){repaired}"
    )


def register(group: click.Group) -> None:
    """Add these commands to the `lcm` group."""
    group.add_command(serve)
    group.add_command(dsh)
    group.add_command(ingest)
