"""`lcm doctor | purge | reextract`: health, deletion and re-derivation of the store.

(`stats` is in cli_analytics.)
"""

from __future__ import annotations

import importlib.util
import os
import platform
import stat
from pathlib import Path
from typing import Any, Final

import click

from lcm_adapter import render
from lcm_adapter.cli_base import (
    EXIT_FAILURE,
    emit,
    fail,
    json_option,
    opened_store,
    state,
)
from lcm_adapter.paths import default_db_path, dsh_home
from lcm_adapter.reextract import reextract_store
from lcm_core.errors import StoreError
from lcm_core.ports import MemoryStore
from lcm_core.registry import available_backends, parse_store_url

OPTIONAL_MODULES: Final = ("rich", "mcp", "zstandard", "duckdb")
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
    compaction = 0
    versions: set[str] = set()
    for session in sessions[:STATS_SESSIONS]:
        if session.dsh_version:
            versions.add(session.dsh_version)
        if store.list_events(
            session.session_id,
            types=("compaction/start", "compaction/summary", "compaction/end", "compaction/prune"),
            limit=1,
        ):
            compaction += 1
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
    with opened_store(ctx) as store:
        location = parse_store_url(cli_state.db).location
        problems = store.integrity_check()
        write_problem = _write_probe(store)
        if write_problem:
            problems = [*problems, write_problem]
        on_disk = location != ":memory:"
        path = Path(location)
        data: dict[str, Any] = {
            "url": store.url,
            "path": location,
            "schema_version": store.schema_version(),
            "integrity": problems if problems else "ok",
            "file_mode": _mode(path) if on_disk else None,
            "folder_mode": _mode(path.parent) if on_disk else None,
            "wal_mode": _mode(Path(location + "-wal")) if on_disk else None,
            "counts": store.stats(),
            "paths": {
                "db_source": _db_source(ctx),
                "dsh_home": str(dsh_home()),
                "default_db": str(default_db_path()),
                "config": cli_state.config_path,
            },
            "versions": {"lcm": _version(), "python": platform.python_version()},
            "backends": sorted(available_backends()),
            "extras": {
                name: importlib.util.find_spec(name) is not None for name in OPTIONAL_MODULES
            },
            "compatibility": _compatibility(store),
        }
    emit(as_json, data, _render_doctor)
    if problems:
        ctx.exit(EXIT_FAILURE)


class _ProbeRollback(Exception):
    """Raised inside the write probe so its transaction never commits."""


def _write_probe(store: MemoryStore) -> str | None:
    """Whether the store takes writes (a read-only file or folder loses new memory).

    The probe writes one meta row inside a transaction that is then rolled back.
    """
    try:
        with store.transaction():
            store.set_meta("doctor.write_probe", "1")
            raise _ProbeRollback
    except _ProbeRollback:
        return None
    except StoreError as exc:
        return f"cannot write: {exc}"


def _render_doctor(d: dict[str, Any]) -> str:
    integrity = d["integrity"] if d["integrity"] == "ok" else "; ".join(d["integrity"])
    comp = d["compatibility"]
    rows: list[tuple[str, Any]] = [
        ("database", f"{d['path']}  (from {d['paths']['db_source']})"),
        ("schema", f"v{d['schema_version']}"),
        ("integrity", integrity),
        ("file mode", f"{d['file_mode']}  (folder {d['folder_mode']}, wal {d['wal_mode']})"),
        ("rows", ", ".join(f"{k}={v}" for k, v in d["counts"].items() if v) or "none"),
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
    rows.extend(("cannot observe", line) for line in comp["cannot_observe"])
    return render.to_text(render.pairs(rows))


@click.command()
@click.option("--session", "session", metavar="ID", help="Delete every row of this session.")
@click.option("--all", "purge_all", is_flag=True, help="Delete every session (needs --yes).")
@click.option("--yes", is_flag=True, help="Confirm --all.")
@json_option
@click.pass_context
def purge(
    ctx: click.Context, session: str | None, purge_all: bool, yes: bool, as_json: bool
) -> None:
    """Delete a session's rows, or everything with --all --yes; prints what was deleted."""
    if bool(session) == purge_all:
        raise click.UsageError("give either --session ID or --all --yes")
    if purge_all and not yes:
        raise click.UsageError("--all deletes every session: add --yes to confirm")
    with opened_store(ctx) as store:
        if session:
            if store.get_session(session) is None and store.max_event_seq(session) is None:
                fail(f"no session {session!r} in {store.url}")
            deleted = store.purge_session(session)
        else:
            deleted = store.purge_all()
    data = {
        "scope": "all" if purge_all else "session",
        "session": session,
        "deleted": deleted,
        "total": sum(deleted.values()),
    }
    emit(as_json, data, _render_purge)


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
        if session and store.max_event_seq(session) is None:
            fail(f"no session {session!r} in {store.url}")
        reports = reextract_store(store, state(ctx).config(), session)
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
