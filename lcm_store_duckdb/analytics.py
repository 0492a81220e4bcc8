"""Bulk load, Parquet export and the stats report of the DuckDB store (export and analytics).

The report's SQL lives in `lcm_core.reports.analytics`, so SQLite can run the very same text
(benchmarks/analytics_bench.py compares them). Here it runs over this store's tables, or
over an export: a DuckDB file attached read-only, or a folder of Parquet or JSONL files
read in place.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

import duckdb

from lcm_core.reports.analytics import build_report
from lcm_core.reports.files import read_manifest
from lcm_core.store.errors import StoreError
from lcm_core.store.models import EXPORT_ORDER, SCHEMA_VERSION, SESSION_TABLES, TABLES
from lcm_store_duckdb import bulk

if TYPE_CHECKING:
    from lcm_store_duckdb.connection import Connection

_ATTACHED: Final = "lcm_export"


def _quiet(raw: duckdb.DuckDBPyConnection) -> duckdb.DuckDBPyConnection:
    """Turn off DuckDB's own progress bar, which would print into lcm's output on long work."""
    raw.execute("SET enable_progress_bar = false")
    return raw


def _literal(text: str) -> str:
    """A SQL string literal (file paths cannot be statement parameters)."""
    return "'" + text.replace("'", "''") + "'"


class AnalyticsMixin:
    """`load_rows`, `write_parquet` and `analytics`; needs `self._db`."""

    _db: Connection

    def load_rows(self, table: str, rows: Iterable[dict[str, Any]]) -> int:
        """Append exported rows to an empty table a chunk at a time (search rows included)."""
        if not bulk.known_table(table):
            raise StoreError(f"unknown table {table!r}; tables are: {', '.join(TABLES)}")
        with self._db.guarded(f"load {table}") as raw:
            columns = bulk.table_columns(_quiet(raw), table)
        total = 0
        for chunk in bulk.chunks(rows):
            with self._db.transaction(), self._db.guarded(f"load {table}") as raw:
                if self._db.nested:
                    raise StoreError("load_rows cannot run inside an open transaction")
                total += bulk.insert_chunk(raw, table, columns, chunk)
        if total and table in bulk.SEQUENCE_TABLES:
            with self._db.guarded(f"load {table}") as raw:
                bulk.advance_sequence(raw, table)
        return total

    def write_parquet(self, folder: Path, *, session_id: str | None = None) -> dict[str, int]:
        """Write `<table>.parquet` (mode 0600) for every table, in export order."""
        counts: dict[str, int] = {}
        with self._db.guarded("write parquet") as raw:
            _quiet(raw)
            for table in TABLES:
                where, params = "", []
                if session_id is not None and table in SESSION_TABLES:
                    where, params = " WHERE session_id = ?", [session_id]
                target = Path(folder) / f"{table}.parquet"
                row = raw.execute(
                    f"COPY (SELECT * FROM {table}{where} ORDER BY {EXPORT_ORDER[table]}) "
                    f"TO {_literal(str(target))} (FORMAT parquet)",
                    params,
                ).fetchone()
                os.chmod(target, 0o600)
                counts[table] = int(row[0]) if row else 0
        return counts

    def write_parquet_rows(self, path: Path, table: str, rows: Iterable[dict[str, Any]]) -> int:
        """Stream rows of `table` (any store's `export_rows`) into one new Parquet file, 0600."""
        if not bulk.known_table(table):
            raise StoreError(f"unknown table {table!r}; tables are: {', '.join(TABLES)}")
        target = Path(path)
        with self._db.guarded(f"write {target.name}") as raw:
            columns = bulk.table_columns(_quiet(raw), table)
            count = bulk.copy_rows_to_parquet(raw, table, columns, rows, _literal(str(target)))
        os.chmod(target, 0o600)
        return count

    def analytics(
        self, session_id: str | None = None, *, export: Path | None = None
    ) -> dict[str, Any]:
        """The stats report over this store, or over the export at `export`."""
        with self._db.guarded("stats") as raw, self._relations(_quiet(raw), export) as relations:

            def run(sql: str, params: Any) -> list[tuple[Any, ...]]:
                return raw.execute(sql, list(params)).fetchall()

            try:
                return build_report(run, relations, session_id, dialect="duckdb")
            except duckdb.Error as exc:
                where = f"{export}" if export is not None else self._db.label
                message = str(exc).splitlines()[0]
                raise StoreError(f"stats over {where}: {message}") from exc

    @contextlib.contextmanager
    def _relations(
        self, raw: duckdb.DuckDBPyConnection, export: Path | None
    ) -> Iterator[dict[str, str]]:
        """Where each table is read from: this store, an attached file, or files in a folder."""
        if export is None:
            yield {t: t for t in TABLES}
            return
        path = Path(export)
        if path.is_dir():
            yield self._folder_relations(raw, path)
            return
        if not path.is_file():
            raise StoreError(f"{path}: no such export (a DuckDB file or an export folder)")
        raw.execute(f"ATTACH {_literal(str(path))} AS {_ATTACHED} (READ_ONLY)")
        try:
            row = raw.execute(
                f"SELECT value FROM {_ATTACHED}.main.meta WHERE key = 'schema'"
            ).fetchone()
            _check_version(path, None if row is None else row[0])
            yield {t: f"{_ATTACHED}.main.{t}" for t in TABLES}
        finally:
            with contextlib.suppress(duckdb.Error):
                raw.execute(f"DETACH {_ATTACHED}")

    def _folder_relations(self, raw: duckdb.DuckDBPyConnection, folder: Path) -> dict[str, str]:
        manifest = read_manifest(folder)
        _check_version(folder, manifest.schema_version)
        relations: dict[str, str] = {}
        for table in TABLES:
            file = folder / f"{table}.{manifest.format}"
            if not file.is_file():
                raise StoreError(f"{folder}: export lacks {file.name}")
            if manifest.format == "parquet":
                relations[table] = f"read_parquet({_literal(str(file))})"
            else:
                # Declared columns: an empty file gives DuckDB nothing to infer them from.
                columns = ", ".join(
                    f"{_literal(c.name)}: {_literal(c.type)}"
                    for c in bulk.table_columns(raw, table)
                )
                relations[table] = (
                    f"read_json({_literal(str(file))}, format = 'newline_delimited', "
                    f"columns = {{{columns}}})"
                )
        return relations


_OLDEST_READABLE: Final = 2


def _check_version(where: Path, value: object) -> None:
    try:
        version = int(str(value))
    except ValueError:
        raise StoreError(f"{where}: export records no schema version") from None
    # v2 and v3 hold the same tables and columns (v3 changed SQLite's FTS declarations only).
    if not _OLDEST_READABLE <= version <= SCHEMA_VERSION:
        raise StoreError(
            f"{where}: export has schema v{version}; this lcm reads "
            f"v{_OLDEST_READABLE} to v{SCHEMA_VERSION}"
        )
