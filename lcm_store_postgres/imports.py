"""`SupportsImport` on PostgreSQL: exported rows back in, under the connected tenant.

Row-level security files every row under the tenant, and the hidden columns (`tenant`,
`folded`) never travel: `folded` is computed here as every insert does. One identity
sequence per table serves every tenant and a tenant may not move it, so rows of
`GENERATED_ID_TABLES` always take a new id from it (their references follow, see
`lcm_core.reports.importer`); every other key, item ids among them, is kept.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Final

from lcm_core.store.import_sql import find_row_query, insert_row_query
from lcm_core.store.models import GENERATED_ID_TABLES, TABLES
from lcm_store_postgres.schema import HIDDEN_COLUMNS
from lcm_store_postgres.search import fold

if TYPE_CHECKING:
    from lcm_store_postgres.connection import Connection

# The text each searchable table folds into its hidden `folded` column.
_FOLDED: Final = {"events": "text", "memory_items": "content"}


class ImportMixin:
    """`find_row`, `put_row`, `end_import`; needs `self._db`."""

    _db: Connection

    def _columns(self, table: str) -> list[str]:
        cache: dict[str, list[str]] = self.__dict__.setdefault("_import_columns", {})
        if table not in TABLES:
            return []
        if table not in cache:
            with self._db.guarded(f"columns of {table}") as raw:
                found = raw.execute(
                    "SELECT column_name FROM information_schema.columns WHERE table_schema = "
                    "current_schema() AND table_name = %s ORDER BY ordinal_position",
                    (table,),
                ).fetchall()
            cache[table] = [
                str(r["column_name"]) for r in found if r["column_name"] not in HIDDEN_COLUMNS
            ]
        return cache[table]

    def find_row(self, table: str, match: Mapping[str, Any]) -> dict[str, Any] | None:
        sql, params = find_row_query(table, match, self._columns(table), mark="%s")
        with self._db.guarded(f"find {table} row") as raw:
            row = raw.execute(sql, params).fetchone()
        if row is None:
            return None
        return {k: v for k, v in row.items() if k not in HIDDEN_COLUMNS}

    def put_row(self, table: str, row: Mapping[str, Any]) -> Any:
        generated = table in GENERATED_ID_TABLES
        if generated:
            row = {k: v for k, v in row.items() if k != "id"}
        text_column = _FOLDED.get(table)
        extra = {"folded": fold(str(row.get(text_column) or ""))} if text_column else None
        sql, params = insert_row_query(
            table,
            row,
            self._columns(table),
            mark="%s",
            extra=extra,
            returning="id" if generated else "",
        )
        with self._db.transaction(), self._db.guarded(f"import {table} row") as raw:
            cursor = raw.execute(sql, params)
            found = cursor.fetchone() if generated else None
        return None if found is None else found["id"]

    def end_import(self, table: str) -> None:
        """Nothing to do: every generated id came from the sequence itself."""
