"""`lcm doctor | purge | reextract`: health, deletion and re-derivation of the store.

(`stats` is in cli_analytics.)
"""

from __future__ import annotations

import importlib.util
import os
import platform
import stat
import sys
from pathlib import Path
from typing import Any, Final

import click

from lcm_adapter import render
from lcm_adapter.cli.base import (
    EXIT_FAILURE,
    emit,
    fail,
    json_option,
    opened_store,
    state,
)
from lcm_adapter.cli.damaged import damage_data, render_damage
from lcm_adapter.paths import default_db_path, dsh_home
from lcm_core import usecases
from lcm_core.steps import reextract as rederive
from lcm_core.store.errors import DamagedStoreError
from lcm_core.store.models import SESSION_TABLES, TABLES
from lcm_core.store.ports import MemoryStore
from lcm_core.store.registry import available_backends, parse_store_url

# The extras a user may lack (rich, click and sqlite-utils are always installed).
OPTIONAL_MODULES: Final = ("mcp", "zstandard", "duckdb", "psycopg")
STATS_SESSIONS: Final = 20
# What lcm can see from its own store, and what it cannot know about the host.
CANNOT_OBSERVE: Final = (
    "which host profile and plugins are loaded (DSH patches, Claude Code settings)",
    "which compaction plugin the host runs and its thresholds, until compaction events arrive",
    "events the host committed while no lcm process was listening (ingest the session log)",
    "whether the host applied the injected message (only pre-step skips it reports are logged)",
    "the model's own tokenizer, unless the host supplies a token meter",
)


def _mode(path: Path) -> str | None:
    try:
        return oct(stat.S_IMODE(os.stat(path).st_mode))
    except OSError:
        return None


def _db_source(ctx: click.Context) -> str:
    if ctx.find_root().params.get("db"):
        return "--db"
    return "LCM_DB" if os.environ.get("LCM_DB", "").strip() else "default"


def _version() -> str:
    try:
        from importlib.metadata import version

        return version("long-conversation-memory")
    except Exception:
        return "unknown"


def _compatibility(store: Any) -> dict[str, Any]:
    """What the stored sessions show about the host, and what no store can show."""
    sessions = store.list_sessions()
    versions = {s.dsh_version for s in sessions[:STATS_SESSIONS] if s.dsh_version}
    compaction = usecases.sessions_with_compaction(store, sessions[:STATS_SESSIONS])
    return {
        "sessions_seen": len(sessions),
        "sessions_with_compaction": compaction,
        "host_versions": sorted(versions),
        "cannot_observe": list(CANNOT_OBSERVE),
    }


@click.command()
@json_option
@click.pass_context
def doctor(ctx: click.Context, as_json: bool) -> None:
    """Check the store: path, schema, integrity, file modes, installed extras, host visibility."""
    cli_state = state(ctx)
    try:
        with opened_store(ctx, reraise=(DamagedStoreError,)) as store:
            _doctor(ctx, store, as_json)
    except DamagedStoreError as exc:
        data = damage_data(exc.report(), cli_state.db, str(exc))
        emit(as_json, data, render_damage)
        ctx.exit(EXIT_FAILURE)


def _doctor(ctx: click.Context, store: MemoryStore, as_json: bool) -> None:
    """The report of a store that opened."""
    cli_state = state(ctx)
    location = parse_store_url(cli_state.db).location
    checked = usecases.health(store)
    problems = list(checked.problems)
    server = checked.server
    # A server URL is shown as the store redacts it (no password), and has no files.
    on_disk = server is None and location != ":memory:"
    path = Path(location)
    data: dict[str, Any] = {
        "url": checked.url,
        "path": location if server is None else checked.url,
        "server": server,
        "schema_version": checked.schema_version,
        "integrity": problems if problems else "ok",
        "file_mode": _mode(path) if on_disk else None,
        "folder_mode": _mode(path.parent) if on_disk else None,
        "wal_mode": _mode(Path(location + "-wal")) if on_disk else None,
        "counts": checked.counts,
        "layout": checked.layout,
        "paths": {
            "db_source": _db_source(ctx),
            "dsh_home": str(dsh_home()),
            "default_db": str(default_db_path()),
            "config": cli_state.config_path,
        },
        "versions": {"lcm": _version(), "python": platform.python_version()},
        "backends": sorted(available_backends()),
        "extras": {name: importlib.util.find_spec(name) is not None for name in OPTIONAL_MODULES},
        "compatibility": _compatibility(store),
    }
    emit(as_json, data, _render_doctor)
    if problems:
        ctx.exit(EXIT_FAILURE)


def _fts_line(layout: dict[str, Any]) -> str:
    """Which tables sqlite-utils and Datasette can search, and the trigger count."""
    found = [f"{table} -> {fts}" for table, fts in sorted(layout["fts"].items()) if fts]
    return f"{', '.join(found) or 'none'}  ({len(layout['triggers'])} triggers)"


def _render_doctor(d: dict[str, Any]) -> str:
    integrity = d["integrity"] if d["integrity"] == "ok" else "; ".join(d["integrity"])
    comp = d["compatibility"]
    rows: list[tuple[str, Any]] = [
        ("database", f"{d['path']}  (from {d['paths']['db_source']})"),
        ("schema", f"v{d['schema_version']}"),
        ("integrity", integrity),
        *(
            [("file mode", f"{d['file_mode']}  (folder {d['folder_mode']}, wal {d['wal_mode']})")]
            if not d.get("server")
            else []
        ),
        ("rows", ", ".join(f"{k}={v}" for k, v in d["counts"].items() if v) or "none"),
        *([("full-text", _fts_line(d["layout"]))] if d.get("layout") else []),
        ("DSH home", d["paths"]["dsh_home"]),
        ("config", d["paths"]["config"] or "defaults"),
        ("versions", f"lcm {d['versions']['lcm']}, python {d['versions']['python']}"),
        ("backends", ", ".join(d["backends"])),
        ("extras", ", ".join(f"{k} {'yes' if v else 'no'}" for k, v in d["extras"].items())),
        (
            "host seen",
            f"{comp['sessions_seen']} sessions, {comp['sessions_with_compaction']} with "
            f"compaction, versions {', '.join(comp['host_versions']) or 'unknown'}",
        ),
    ]
    if d.get("server"):
        server = d["server"]
        who = server["server"]
        rows.append(
            (
                "server",
                f"PostgreSQL {who.get('version')}, role {who.get('role')}, "
                f"database {who.get('database')}",
            )
        )
        rows.append(("extensions", ", ".join(sorted(server["extensions"])) or "none"))
        denied = [table for table, ok in server["privileges"].items() if not ok]
        rows.append(
            (
                "privileges",
                "read and write on every table"
                if not denied
                else f"missing on {', '.join(denied)}",
            )
        )
    rows.extend(("cannot observe", line) for line in comp["cannot_observe"])
    return render.to_text(render.pairs(rows))


@click.command()
@click.option("--session", "session", metavar="ID", help="Delete every row of this session.")
@click.option("--all", "purge_all", is_flag=True, help="Delete every session.")
@click.option("--yes", is_flag=True, help="Delete without asking (needed when not on a terminal).")
@json_option
@click.pass_context
def purge(
    ctx: click.Context, session: str | None, purge_all: bool, yes: bool, as_json: bool
) -> None:
    """Delete a session's rows, or everything with --all; asks first unless --yes."""
    if bool(session) == purge_all:
        raise click.UsageError("give either --session ID or --all")
    with opened_store(ctx) as store:
        if session:
            if not usecases.has_session(store, session):
                fail(f"no session {session!r} in {store.url}")
            planned = _purge_counts(store.stats(session), SESSION_TABLES)
        else:
            planned = _purge_counts(store.stats(), tuple(t for t in TABLES if t != "meta"))
        what = f"session {session}" if session else f"every session in {store.url}"
        if not yes:
            _confirm_purge(what, planned, "--session ID" if session else "--all")
        deleted = usecases.purge(store, session or None)
    data = {
        "scope": "all" if purge_all else "session",
        "session": session,
        "deleted": deleted,
        "total": sum(deleted.values()),
    }
    emit(as_json, data, _render_purge)


def _purge_counts(counts: dict[str, int], tables: tuple[str, ...]) -> dict[str, int]:
    return {table: int(counts.get(table, 0)) for table in tables}


def _stdin_is_terminal() -> bool:
    """Whether a person can answer a question (a seam the tests replace)."""
    return sys.stdin.isatty()


def _confirm_purge(what: str, planned: dict[str, int], flag: str) -> None:
    """Show what would go and ask; without a terminal, fail with the flag that confirms."""
    total = sum(planned.values())
    detail = ", ".join(f"{table}={n}" for table, n in planned.items() if n) or "no rows"
    if not _stdin_is_terminal():
        fail(
            f"purge would delete {what}: {total} rows ({detail}); "
            f"not on a terminal, so add --yes to confirm (lcm purge {flag} --yes)"
        )
    click.echo(f"purge will delete {what}: {total} rows", err=True)
    for table, n in planned.items():
        if n:
            click.echo(f"  {table:<20} {n:>8}", err=True)
    if not click.confirm("Delete them?", default=False, err=True):
        fail("purge cancelled; nothing was deleted")


def _render_purge(d: dict[str, Any]) -> str:
    what = "every session" if d["scope"] == "all" else f"session {d['session']}"
    detail = ", ".join(f"{table}={n}" for table, n in d["deleted"].items() if n) or "nothing"
    return f"purged {what}: {d['total']} rows ({detail})"


@click.command()
@click.option("--session", "session", metavar="ID", help="Only this session (default: all).")
@json_option
@click.pass_context
def reextract(ctx: click.Context, session: str | None, as_json: bool) -> None:
    """Re-derive memory items from stored events with the current rules; keeps user overrides."""
    with opened_store(ctx) as store:
        if session and not usecases.has_session(store, session):
            fail(f"no session {session!r} in {store.url}")
        reports = rederive.reextract(store, state(ctx).config(), session)
    data = {"sessions": [r.to_dict() for r in reports]}
    emit(as_json, data, _render_reextract)


def _render_reextract(d: dict[str, Any]) -> str:
    lines: list[str] = []
    for r in d["sessions"]:
        lines.append(
            f"{r['session_id']}: kept {r['kept']}, added {r['added']}, retired {r['retired']}, "
            f"superseded {r['superseded']}, revived {r['revived']}, "
            f"user overrides kept {r['overrides_kept']} ({r['extractor']})"
        )
        for key in sorted(set(r["before"]) | set(r["after"])):
            lines.append(f"  {key:<28} {r['before'].get(key, 0):>6} -> {r['after'].get(key, 0):>6}")
        lines.extend(f"  error: {e}" for e in r["errors"])
    return "\n".join(lines) or "no sessions"


def register(group: click.Group) -> None:
    """Add the store commands to the `lcm` group."""
    for command in (doctor, purge, reextract):
        group.add_command(command)
