"""Export reading on DuckDB: a DuckDB export file or a Parquet/JSONL folder read back as rows."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from lcm_core.store.models import EXPORT_ORDER

if TYPE_CHECKING:
    from lcm_store_duckdb.connection import Connection

_BATCH: Final = 1000


class ExportReadingMixin:
    """`read_export_rows`; needs `self._db` and the analytics mixin's `_relations`."""

    _db: Connection

    def read_export_rows(self, export: Path, table: str) -> Iterator[dict[str, Any]]:
        """One table of a DuckDB export file or a Parquet/JSONL folder, every column kept."""
        with self._db.guarded(f"read {export}") as raw, self._relations(raw, export) as relations:  # type: ignore[attr-defined]
            cursor = raw.execute(f"SELECT * FROM {relations[table]} ORDER BY {EXPORT_ORDER[table]}")
            names = [str(d[0]) for d in cursor.description or ()]
            while batch := cursor.fetchmany(_BATCH):
                for values in batch:
                    yield dict(zip(names, values, strict=True))
