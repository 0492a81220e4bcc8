"""`lcm import | backup`: an export back into a database, and a consistent copy of a live one."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from lcm_adapter.cli.analytics import progress_bar
from lcm_adapter.cli.base import emit, fail, json_option, opened_store
from lcm_core.reports.backup import backup_store
from lcm_core.reports.files import read_manifest
from lcm_core.reports.importer import import_export
from lcm_core.store.errors import StoreError


@click.command("import")
@click.argument("path", type=click.Path(path_type=Path))
@json_option
@click.pass_context
def import_command(ctx: click.Context, path: Path, as_json: bool) -> None:
    """Read what `lcm export` wrote (JSONL or Parquet folder, DuckDB file) into the database.

    Ids, supersession links and lifecycle rows are kept; rows already stored are skipped,
    so a second import adds nothing; a row that differs from the stored row with its key
    stops the import, and nothing of it is kept.
    """
    with opened_store(ctx, create=True) as store:
        try:
            with progress_bar(_expected(path), "import") as advance:
                result = import_export(store, path, progress=advance)
        except StoreError as exc:
            fail(str(exc))
        target = store.url
    data = {
        "database": target,
        "source": str(result.source),
        "format": result.format,
        "schema_version": result.schema_version,
        "redacted": result.redacted,
        "session": result.session,
        "added": result.added,
        "skipped": result.skipped,
        "renumbered": result.renumbered,
        "rows_added": result.rows_added,
        "rows_skipped": result.rows_skipped,
        "meta_set": result.meta_set,
        "meta_kept": result.meta_kept,
    }
    emit(as_json, data, _render_import)


def _expected(path: Path) -> dict[str, int]:
    """Rows per table an export folder's manifest announces (for the progress bar); {} else."""
    try:
        return read_manifest(path).tables if path.is_dir() else {}
    except StoreError:
        return {}  # the import itself reports what is wrong with the folder


def _render_import(d: dict[str, Any]) -> str:
    added = ", ".join(f"{t}={n}" for t, n in d["added"].items() if n and t != "meta")
    lines = [
        f"imported {d['rows_added']} rows into {d['database']} from {d['source']} "
        f"({d['format']}, schema v{d['schema_version']}): {added or 'nothing'}",
        f"meta (schema, cursors, settings): {d['meta_set']} keys set, {d['meta_kept']} "
        "kept as they were",
    ]
    if d["rows_skipped"]:
        lines.append(f"skipped {d['rows_skipped']} rows already stored")
    if d["renumbered"]:
        moved = ", ".join(f"{t}={n}" for t, n in d["renumbered"].items())
        lines.append(f"under new generated ids (theirs were taken): {moved}")
    if d["redacted"]:
        lines.append("the export was redacted: secrets are stored as [REDACTED:...] markers")
    return "\n".join(lines)


@click.command("backup")
@click.argument("path", type=click.Path(path_type=Path))
@json_option
@click.pass_context
def backup(ctx: click.Context, path: Path, as_json: bool) -> None:
    """Write a consistent copy of the live database to PATH, a new file (SQLite, DuckDB)."""
    with opened_store(ctx) as store:
        try:
            result = backup_store(store, path)
        except StoreError as exc:
            fail(str(exc))
    data = {
        "source": result.source,
        "out": str(result.out),
        "bytes": result.bytes,
        "rows": result.rows,
        "tables": result.tables,
    }
    emit(as_json, data, _render_backup)


def _render_backup(d: dict[str, Any]) -> str:
    counts = ", ".join(f"{t}={n}" for t, n in d["tables"].items() if n and t != "meta")
    return (
        f"backed up {d['source']} to {d['out']} ({d['bytes']} bytes, mode 0600): "
        f"{d['rows']} rows ({counts or 'no rows'}); the copy opened and passed its integrity check"
    )


def register(group: click.Group) -> None:
    """Add `import` and `backup` to the `lcm` group."""
    for command in (import_command, backup):
        group.add_command(command)
