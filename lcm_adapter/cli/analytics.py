"""`lcm export | stats`: the store as DuckDB, Parquet or JSONL, and the DuckDB stats report."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Final

import click
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

from lcm_adapter import render
from lcm_adapter.cli.base import emit, fail, json_option, opened_store
from lcm_core import usecases
from lcm_core.reports.export import Progress as ProgressFn
from lcm_core.reports.export import expected_rows, export_store, stats_report
from lcm_core.reports.files import FORMATS
from lcm_core.store.errors import StoreError, StoreUnavailableError
from lcm_core.store.models import REPORT_TABLES
from lcm_core.store.ports import MemoryStore

STATS_SESSIONS: Final = 20
# Below this many rows an export is over before a bar would help.
PROGRESS_MIN_ROWS: Final = 20_000


@contextmanager
def progress_bar(
    totals: dict[str, int], label: str, console: Console | None = None
) -> Iterator[ProgressFn | None]:
    """A rich bar on stderr for a large job on a terminal; None (no bar) otherwise."""
    total = sum(totals.values())
    console = console if console is not None else Console(stderr=True)
    if total < PROGRESS_MIN_ROWS or not console.is_terminal:
        yield None
        return
    columns = (
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeRemainingColumn(),
    )
    with Progress(*columns, console=console, transient=True) as bar:
        task = bar.add_task(label, total=total)

        def advance(table: str, rows: int) -> None:
            bar.update(task, advance=rows, description=f"{label} {table}")

        yield advance


def _known_session(store: MemoryStore, session: str | None) -> None:
    if session is not None and not usecases.has_session(store, session):
        fail(f"no session {session!r} in {store.url}")


@click.command("export")
@click.option(
    "--format",
    "fmt",
    type=click.Choice(FORMATS),
    required=True,
    help="duckdb: one DuckDB file (itself a store); parquet or jsonl: a folder with one file per table and export.json.",
)
@click.option(
    "--out",
    "out",
    type=click.Path(path_type=Path),
    required=True,
    help="The file (duckdb) or folder (parquet, jsonl) to create.",
)
@click.option(
    "--session",
    "session",
    metavar="ID",
    help="Only this session's rows (skills, rules and meta are kept whole).",
)
@click.option(
    "--redact", is_flag=True, help="Replace secret-shaped strings in text and JSON columns."
)
@click.option("--force", is_flag=True, help="Replace an existing export at --out.")
@json_option
@click.pass_context
def export(
    ctx: click.Context,
    fmt: str,
    out: Path,
    session: str | None,
    redact: bool,
    force: bool,
    as_json: bool,
) -> None:
    """Write the store (or one session) to DuckDB, Parquet or JSONL, streaming; files are 0600."""
    with opened_store(ctx) as store:
        _known_session(store, session)
        totals = expected_rows(store, session)
        try:
            with progress_bar(totals, "export") as advance:
                result = export_store(
                    store,
                    fmt,
                    out,
                    session_id=session,
                    redact=redact,
                    force=force,
                    progress=advance,
                )
        except StoreError as exc:
            fail(str(exc))
        source = store.url
    data = {
        "source": source,
        "format": result.format,
        "out": str(result.out),
        "session": result.session,
        "redacted": result.redacted,
        "schema_version": result.schema_version,
        "tables": result.tables,
        "rows": result.rows,
    }
    emit(as_json, data, _render_export)


def _render_export(d: dict[str, Any]) -> str:
    scope = f"session {d['session']}" if d["session"] else "every session"
    counts = ", ".join(f"{t}={n}" for t, n in d["tables"].items() if n) or "no rows"
    redacted = ", redacted" if d["redacted"] else ""
    return (
        f"exported {d['rows']} rows of {scope} to {d['out']} "
        f"({d['format']}, schema v{d['schema_version']}{redacted}): {counts}"
    )


@click.command()
@click.option("--session", "session", metavar="ID", help="Report on this session only.")
@click.option(
    "--from",
    "source",
    type=click.Path(exists=True, path_type=Path),
    help="Read an export (DuckDB file, Parquet or JSONL folder) instead of the store.",
)
@click.option("--limit", default=STATS_SESSIONS, show_default=True, help="Sessions to list.")
@json_option
@click.pass_context
def stats(
    ctx: click.Context, session: str | None, source: Path | None, limit: int, as_json: bool
) -> None:
    """Events by session and type, items, supersession chains, assembly and validation (DuckDB)."""
    if source is not None:
        data = _report(lambda: stats_report(None, session, export=source), str(source))
    else:
        with opened_store(ctx) as store:
            _known_session(store, session)
            totals = expected_rows(store, session)

            def answer() -> tuple[dict[str, Any], str]:
                with progress_bar(totals, "copy") as advance:
                    return stats_report(store, session, progress=advance)

            data = _report(answer, store.url, store, session)
    data["sessions"] = data["sessions"][: max(0, limit)]
    emit(as_json, data, _render_stats)


def _report(
    answer: Callable[[], tuple[dict[str, Any], str]],
    database: str,
    store: MemoryStore | None = None,
    session: str | None = None,
) -> dict[str, Any]:
    """The DuckDB report; without DuckDB, the row counts the store itself can give."""
    try:
        report, how = answer()
    except StoreUnavailableError as exc:
        if store is None:
            fail(str(exc))
        report, how = _counts_only(store, session), f"row counts only; {exc}"
    except StoreError as exc:
        fail(str(exc))
    return {"database": database, "answered_by": how, **report}


def _counts_only(store: MemoryStore, session: str | None) -> dict[str, Any]:
    """What the port alone answers: rows per table and per session."""
    sessions = []
    for found in store.list_sessions():
        if session is not None and found.session_id != session:
            continue
        counts = store.stats(found.session_id)
        sessions.append(
            {
                "session": found.session_id,
                "updated_at": found.updated_at,
                "events": counts.get("events", 0),
                "memory_items": counts.get("memory_items", 0),
                "assembly_logs": counts.get("assembly_logs", 0),
            }
        )
    return {"session": session, "totals": store.stats(session), "sessions": sessions}


def _render_stats(d: dict[str, Any]) -> str:
    parts = [
        render.table(
            ("table", "rows"),
            ((t, d["totals"].get(t, 0)) for t in REPORT_TABLES),
            title=f"rows in {d['database']} ({d['answered_by']})",
            right=("rows",),
        ),
        render.table(
            ("session", "updated", "events", "items", "assemblies"),
            (
                (s["session"], s["updated_at"], s["events"], s["memory_items"], s["assembly_logs"])
                for s in d["sessions"]
            ),
            title=f"sessions, most recent first ({len(d['sessions'])} shown)",
            right=("events", "items", "assemblies"),
        ),
    ]
    if "events_by_type" in d:
        parts.extend(_analytics_views(d))
    return render.to_text(*parts)


def _analytics_views(d: dict[str, Any]) -> list[Any]:
    items = d["memory_items"]
    chains = d["supersession"]
    assembly = d["assembly"]
    validation = d["validation"]
    lengths = ", ".join(f"{r['length']}: {r['chains']}" for r in chains["by_length"]) or "none"
    return [
        render.table(
            ("event type", "events"),
            d["events_by_type"].items(),
            title="events by type",
            right=("events",),
        ),
        render.table(
            ("kind", "status", "evidence", "items"),
            (
                (r["kind"], r["status"], r["evidence_type"], r["count"])
                for r in items["by_kind_status_evidence"]
            ),
            title=f"memory items ({items['total']})",
            right=("items",),
        ),
        render.table(
            ("session", "length", "oldest to newest"),
            (
                (c["session"], c["length"], " > ".join(step["id"] for step in c["items"]))
                for c in chains["longest"]
            ),
            title=f"supersession chains: {chains['chains']} (by length {lengths})",
            right=("length",),
        ),
        render.table(
            ("day", "runs", "injected", "mean used", "max used", "budget"),
            (
                (
                    r["day"],
                    r["runs"],
                    r["injected"],
                    r["mean_used_tokens"],
                    r["max_used_tokens"],
                    r["budget_tokens"],
                )
                for r in assembly["by_day"]
            ),
            title=f"assembly token use by day ({assembly['runs']} runs, {assembly['used_tokens']} tokens)",
            right=("runs", "injected", "mean used", "max used", "budget"),
        ),
        render.table(
            ("reason", "omissions"),
            assembly["omissions"]["by_reason"].items(),
            title=f"omission reasons ({assembly['omissions']['total']})",
            right=("omissions",),
        ),
        render.table(
            ("check", "type", "violations", "runs"),
            ((r["check"], r["type"], r["violations"], r["runs"]) for r in validation["by_check"]),
            title=(
                f"validation: {validation['runs']} runs, {validation['failed']} failed, "
                f"{validation['blocked']} blocked"
            ),
            right=("violations", "runs"),
        ),
    ]


def register(group: click.Group) -> None:
    """Add `export` and `stats` (replacing any simpler `stats`) to the `lcm` group."""
    for command in (export, stats):
        group.add_command(command)
