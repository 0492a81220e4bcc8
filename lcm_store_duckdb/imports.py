"""`SupportsImport` and export reading on DuckDB: exported rows back in, and exports read.

An imported event or item also gets its search side row (case-folded text, trigram
count), as every other insert does. Ids given explicitly leave the sequences behind, so
`end_import` moves each past the largest stored id.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from lcm_core.store.import_sql import find_row_query, insert_row_query
from lcm_core.store.models import EXPORT_ORDER, GENERATED_ID_TABLES, ROW_KEYS, TABLES
from lcm_store_duckdb import bulk
from lcm_store_duckdb.fetch import fetch_dict
from lcm_store_duckdb.search import fold, trigram_count

if TYPE_CHECKING:
    from lcm_store_duckdb.connection import Connection

_BATCH: Final = 1000


class ImportMixin:
    """`find_row`, `put_row`, `end_import`, `read_export_rows`; needs `self._db`."""

    _db: Connection

    def _columns(self, table: str) -> list[str]:
        cache: dict[str, list[str]] = self.__dict__.setdefault("_import_columns", {})
        if table not in TABLES:
            return []
        if table not in cache:
            with self._db.guarded(f"columns of {table}") as raw:
                cache[table] = [c.name for c in bulk.table_columns(raw, table)]
        return cache[table]

    def find_row(self, table: str, match: Mapping[str, Any]) -> dict[str, Any] | None:
        sql, params = find_row_query(table, match, self._columns(table), mark="?")
        with self._db.guarded(f"find {table} row") as raw:
            return fetch_dict(raw.execute(sql, list(params)))

    def put_row(self, table: str, row: Mapping[str, Any]) -> Any:
        generated = table in GENERATED_ID_TABLES
        sql, params = insert_row_query(
            table, row, self._columns(table), mark="?", returning="id" if generated else ""
        )
        with self._db.transaction(), self._db.guarded(f"import {table} row") as raw:
            cursor = raw.execute(sql, list(params))
            found = cursor.fetchone() if generated else None
            stored = dict(row)
            if generated and found is not None:
                stored["id"] = found[0]
            keys = ROW_KEYS[table]
            where = " AND ".join(f"{k} = ?" for k in keys)
            self._db.added(table, where, [stored[k] for k in keys])
            side = bulk.SIDE_TABLES.get(table)
            if side is not None:
                name, side_keys, text_column = side
                text = str(stored.get(text_column) or "")
                values = [stored[k] for k in side_keys]
                raw.execute(
                    f"INSERT INTO {name} ({', '.join(side_keys)}, folded, grams) "
                    f"VALUES ({', '.join('?' * len(side_keys))}, ?, ?)",
                    [*values, fold(text), trigram_count(text)],
                )
                self._db.added(name, " AND ".join(f"{k} = ?" for k in side_keys), values)
        return stored["id"] if generated else None

    def end_import(self, table: str) -> None:
        if table in bulk.SEQUENCE_TABLES:
            with self._db.guarded(f"import {table}") as raw:
                bulk.advance_sequence(raw, table)

    def read_export_rows(self, export: Path, table: str) -> Iterator[dict[str, Any]]:
        """One table of a DuckDB export file or a Parquet/JSONL folder, every column kept."""
        with self._db.guarded(f"read {export}") as raw, self._relations(raw, export) as relations:  # type: ignore[attr-defined]
            cursor = raw.execute(f"SELECT * FROM {relations[table]} ORDER BY {EXPORT_ORDER[table]}")
            names = [str(d[0]) for d in cursor.description or ()]
            while batch := cursor.fetchmany(_BATCH):
                for values in batch:
                    yield dict(zip(names, values, strict=True))
