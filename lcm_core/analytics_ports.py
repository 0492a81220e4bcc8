"""Optional store capabilities for export and analytics (candidates for `lcm_core.ports`).

A backend offers each one by having the method; callers test with `isinstance`, so a
store without one is served by a slower generic path, never refused.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any, Protocol, runtime_checkable


@runtime_checkable
class SupportsBulkLoad(Protocol):
    """A backend that stores exported rows verbatim, fast, ids and timestamps included."""

    def load_rows(self, table: str, rows: Iterable[dict[str, Any]]) -> int:
        """Append rows (as `export_rows` yields them) to an empty table; returns the count.

        Rows are consumed a chunk at a time, so an iterator of any length stays bounded in
        memory. `meta` rows replace the keys they name. Chunks commit one by one: a failure
        leaves the chunks before it stored.
        """
        ...


@runtime_checkable
class SupportsParquet(Protocol):
    """A backend that writes its tables as Parquet files without a row passing through Python."""

    def write_parquet(self, folder: Path, *, session_id: str | None = None) -> dict[str, int]:
        """Write `<table>.parquet` for every table into an existing folder; rows per table."""
        ...

    def write_parquet_rows(self, path: Path, table: str, rows: Iterable[dict[str, Any]]) -> int:
        """Stream one table's rows (from any store) into a new Parquet file; the count."""
        ...


@runtime_checkable
class SupportsAnalytics(Protocol):
    """A backend that answers the stats report (see `lcm_core.analytics_sql`) with SQL."""

    def analytics(
        self, session_id: str | None = None, *, export: Path | None = None
    ) -> dict[str, Any]:
        """The report over this store, or over the export (DuckDB file, Parquet or JSONL folder)."""
        ...
