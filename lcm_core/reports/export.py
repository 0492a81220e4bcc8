"""Export any store to DuckDB, Parquet or JSONL, and answer the stats report from DuckDB.

Rows stream from `export_rows` a chunk at a time, so memory stays bounded whatever the
size. Everything is written into a private staging name beside the target and renamed
into place at the end: a failed export leaves no half-written file behind.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from lcm_core.reports.files import (
    FORMATS,
    ExportError,
    Manifest,
    counted,
    load_redactor,
    private_folder,
    redacted_rows,
    write_manifest,
)
from lcm_core.reports.jsonl import write_jsonl
from lcm_core.reports.targets import refuse_database_target
from lcm_core.store.models import TABLES
from lcm_core.store.ports import (
    AdminStore,
    MemoryStore,
    SupportsAnalytics,
    SupportsBulkLoad,
    SupportsParquet,
)
from lcm_core.store.registry import open_store

# Told (table, rows just written) as an export goes along.
Progress = Callable[[str, int], None]


@dataclass(frozen=True, slots=True)
class ExportResult:
    """What an export wrote."""

    format: str
    out: Path
    session: str | None
    redacted: bool
    schema_version: int
    tables: dict[str, int] = field(default_factory=dict)

    @property
    def rows(self) -> int:
        return sum(self.tables.values())


def expected_rows(store: AdminStore, session_id: str | None = None) -> dict[str, int]:
    """Rows each table will give (for a progress bar's totals)."""
    counts = store.stats(session_id)
    return {table: int(counts.get(table, 0)) for table in TABLES}


def open_duckdb(location: str) -> Any:
    """A DuckDB store through the registry (never by name): a file path or `:memory:`."""
    url = "duckdb:///:memory:" if location == ":memory:" else f"duckdb://{Path(location).resolve()}"
    return open_store(url)


def export_store(
    store: MemoryStore,
    fmt: str,
    out: Path,
    *,
    session_id: str | None = None,
    redact: bool = False,
    force: bool = False,
    progress: Progress | None = None,
) -> ExportResult:
    """Write the store (or one session of it) to `out` in `fmt`; returns the row counts."""
    if fmt not in FORMATS:
        raise ExportError(f"unknown export format {fmt!r}; use one of: {', '.join(FORMATS)}")
    out = Path(out).expanduser()
    refuse_database_target(out, store.url)  # before --force is even looked at
    _check_target(out, force)
    if not out.parent.exists():
        private_folder(out.parent)
    redactor = load_redactor() if redact else None
    staging = out.parent / f".{out.name}.partial-{os.getpid()}"
    _remove(staging)

    def rows(table: str) -> Iterator[dict[str, Any]]:
        found: Iterator[dict[str, Any]] = store.export_rows(table, session_id=session_id)
        if redactor is not None:
            found = redacted_rows(table, found, redactor)
        tell = None if progress is None else (lambda n: progress(table, n))
        return counted(found, tell)

    try:
        if fmt == "duckdb":
            tables = _to_duckdb(staging, rows)
        elif fmt == "jsonl":
            private_folder(staging)
            tables = {t: write_jsonl(staging / f"{t}.jsonl", rows(t)) for t in TABLES}
        elif redactor is None and isinstance(store, SupportsParquet):
            private_folder(staging)
            tables = store.write_parquet(staging, session_id=session_id)
            for table, count in tables.items():
                if progress is not None and count:
                    progress(table, count)
        else:
            tables = _to_parquet(staging, rows)
        version = store.schema_version()
        if fmt != "duckdb":
            write_manifest(staging, Manifest(fmt, version, session_id, redact, tables))
        _remove(out)
        os.replace(staging, out)
    except BaseException:
        _remove(staging)
        raise
    return ExportResult(fmt, out, session_id, redact, version, tables)


def _check_target(out: Path, force: bool) -> None:
    if not out.exists():
        return
    if not force:
        raise ExportError(f"{out} exists; add --force to replace it")
    if out.is_dir() and any(out.iterdir()) and not (out / "export.json").exists():
        raise ExportError(f"{out} is a folder that is not an lcm export; refusing to replace it")


def _remove(path: Path) -> None:
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path)
    elif path.exists() or path.is_symlink():
        path.unlink()


def _bulk_target(location: Path) -> Any:
    target = open_duckdb(str(location))
    if not isinstance(target, SupportsBulkLoad):
        target.close()
        raise ExportError("the installed DuckDB backend cannot bulk-load rows")
    return target


def _to_duckdb(staging: Path, rows: Callable[[str], Iterator[dict[str, Any]]]) -> dict[str, int]:
    target = _bulk_target(staging)
    try:
        return {table: target.load_rows(table, rows(table)) for table in TABLES}
    finally:
        target.close()


def _to_parquet(staging: Path, rows: Callable[[str], Iterator[dict[str, Any]]]) -> dict[str, int]:
    # An in-memory DuckDB store knows each table's column types and streams the rows
    # into one COPY ... TO per table: no staging database, one chunk in memory.
    engine = open_duckdb(":memory:")
    try:
        if not isinstance(engine, SupportsParquet):
            raise ExportError("the installed DuckDB backend cannot write Parquet")
        private_folder(staging)
        return {t: engine.write_parquet_rows(staging / f"{t}.parquet", t, rows(t)) for t in TABLES}
    finally:
        engine.close()


def analytics_engine() -> Any:
    """An in-memory DuckDB store that answers the stats report over an export."""
    engine = open_duckdb(":memory:")
    if not isinstance(engine, SupportsAnalytics):
        engine.close()
        raise ExportError("the installed DuckDB backend cannot answer stats")
    return engine


def stats_report(
    store: MemoryStore | None,
    session_id: str | None = None,
    *,
    export: Path | None = None,
    progress: Progress | None = None,
) -> tuple[dict[str, Any], str]:
    """The stats report and how it was answered: over an export, the store, or a copy of it."""
    if export is not None:
        engine = analytics_engine()
        try:
            return engine.analytics(session_id, export=Path(export)), f"duckdb over {export}"
        finally:
            engine.close()
    if store is None:
        raise ExportError("no store and no export to report on")
    if isinstance(store, SupportsAnalytics):
        return store.analytics(session_id), "duckdb store"
    engine = analytics_engine()
    try:
        with tempfile.TemporaryDirectory(prefix="lcm-stats-") as tmp:
            folder = Path(tmp) / "export"
            export_store(store, "parquet", folder, session_id=session_id, progress=progress)
            return engine.analytics(session_id, export=folder), "duckdb over a parquet copy"
    finally:
        engine.close()
