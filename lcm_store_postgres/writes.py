"""The keyed-row writes of the PostgreSQL store: insert, update and delete under the tenant.

Statements are the core's (`lcm_core.store.row_sql`). Row-level security files every
row under the connected tenant, and the hidden columns (`tenant`, `folded`) never
travel: `folded`, the casefold search reads, is computed here whenever a text is
written. Each write is its own savepoint, so a unique violation never aborts the
caller's transaction. One identity sequence per table serves every tenant and a tenant
may not move it, so rows of `GENERATED_ID_TABLES` always take a new id from it (an
import's references follow, see `lcm_core.reports.importer`); every other key is kept.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, Final

from lcm_core.store.models import GENERATED_ID_TABLES
from lcm_core.store.queries import Query
from lcm_core.store.row_sql import delete_rows_query, insert_row_query, update_rows_query
from lcm_store_postgres.connection import DIALECT
from lcm_store_postgres.schema import HIDDEN_COLUMNS
from lcm_store_postgres.search import fold

if TYPE_CHECKING:
    from lcm_store_postgres.connection import Connection

# The text each searchable table folds into its hidden `folded` column.
_FOLDED: Final = {"events": "text", "memory_items": "content"}


class WritesMixin:
    """`put_row`, `update_rows`, `delete_rows` and the catalogue read; needs `self._db`."""

    _db: Connection
    _columns: Callable[[str], tuple[str, ...]]  # `SqlReads._columns`

    def _table_columns(self, table: str) -> list[str]:
        with self._db.guarded(f"columns of {table}") as raw:
            found = raw.execute(
                "SELECT column_name FROM information_schema.columns WHERE table_schema = "
                "current_schema() AND table_name = %s ORDER BY ordinal_position",
                (table,),
            ).fetchall()
        return [str(r["column_name"]) for r in found if r["column_name"] not in HIDDEN_COLUMNS]

    def put_row(self, table: str, row: Mapping[str, Any]) -> Any:
        generated = table in GENERATED_ID_TABLES
        if generated:
            row = {k: v for k, v in row.items() if k != "id"}
        sql, params = insert_row_query(
            table,
            row,
            self._columns(table),
            mark="%s",
            extra=_folded(table, row),
            returning="id" if generated else "",
        )
        with self._db.transaction(), self._db.guarded(f"put {table} row") as raw:
            cursor = raw.execute(sql, params)
            found = cursor.fetchone() if generated else None
        return None if found is None else found["id"]

    def update_rows(self, table: str, match: Mapping[str, Any], values: Mapping[str, Any]) -> int:
        query = update_rows_query(
            DIALECT, table, match, values, self._columns(table), extra=_folded(table, values)
        )
        return self._changed(f"update {table}", query)

    def delete_rows(self, table: str, match: Mapping[str, Any]) -> int:
        return self._changed(
            f"delete {table}", delete_rows_query(DIALECT, table, match, self._columns(table))
        )

    def _execute(self, where: str, query: Query) -> None:
        self._changed(where, query)

    def _changed(self, where: str, query: Query | None) -> int:
        if query is None:
            return 0
        with self._db.transaction(), self._db.guarded(where) as raw:
            return max(0, raw.execute(*query).rowcount)


def _folded(table: str, row: Mapping[str, Any]) -> dict[str, Any] | None:
    """The hidden `folded` column of a write that sets the table's text, else None."""
    column = _FOLDED.get(table)
    if column is None or column not in row:
        return None
    return {"folded": fold(str(row[column] or ""))}
