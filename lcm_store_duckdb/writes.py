"""The keyed-row writes of the DuckDB store: insert, update and delete, with their side rows.

Statements are the core's (`lcm_core.store.row_sql`). Each event and item has a row in
its search side table (`schema.SEARCH_TABLES`: the text casefolded, its trigram count),
written, rewritten and deleted with it. DuckDB has no savepoints: inside an inner
transaction each write first names the rows it may change (`Connection.remember`, or
`added` for rows under new keys), so a failed inner level can put them back. Ids of
the generated-id tables come from sequences, which an import moves past (`end_import`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from lcm_core.store.matching import fold
from lcm_core.store.models import GENERATED_ID_TABLES, ROW_KEYS
from lcm_core.store.row_sql import insert_row_query, match_clause
from lcm_store_duckdb import bulk
from lcm_store_duckdb.connection import DIALECT
from lcm_store_duckdb.search import trigram_count

if TYPE_CHECKING:
    from lcm_store_duckdb.connection import Connection


class WritesMixin:
    """`put_row`, `update_rows`, `delete_rows`, `end_import`; needs `self._db`."""

    _db: Connection
    _columns: Callable[[str], tuple[str, ...]]  # `SqlReads._columns`

    def _table_columns(self, table: str) -> list[str]:
        with self._db.guarded(f"columns of {table}") as raw:
            return [c.name for c in bulk.table_columns(raw, table)]

    def put_row(self, table: str, row: Mapping[str, Any]) -> Any:
        generated = table in GENERATED_ID_TABLES
        sql, params = insert_row_query(
            table, row, self._columns(table), mark="?", returning="id" if generated else ""
        )
        with self._db.transaction(), self._db.guarded(f"put {table} row") as raw:
            cursor = raw.execute(sql, list(params))
            found = cursor.fetchone() if generated else None
            stored = dict(row)
            if generated and found is not None:
                stored["id"] = found[0]
            keys = ROW_KEYS[table]
            self._db.added(table, " AND ".join(f"{k} = ?" for k in keys), [stored[k] for k in keys])
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

    def update_rows(self, table: str, match: Mapping[str, Any], values: Mapping[str, Any]) -> int:
        clause = match_clause(DIALECT, table, match, self._columns(table))
        if clause is None or not values:
            return 0
        condition, params = clause
        sets = ", ".join(f'"{name}" = ?' for name in values)
        with self._db.transaction(), self._db.guarded(f"update {table}") as raw:
            side = bulk.SIDE_TABLES.get(table)
            if side is not None and side[2] in values:
                # The side rows of the matched rows take the new text (before the match
                # may stop holding).
                name, keys, text_column = side
                text = str(values[text_column] or "")
                of = self._side_condition(table, keys, condition)
                self._db.remember(name, of, params)
                raw.execute(
                    f"UPDATE {name} SET folded = ?, grams = ? WHERE {of}",
                    [fold(text), trigram_count(text), *params],
                )
            self._db.remember(table, condition, params)
            row = raw.execute(
                f"UPDATE {table} SET {sets} WHERE {condition}", [*values.values(), *params]
            ).fetchone()
        return int(row[0]) if row else 0

    def delete_rows(self, table: str, match: Mapping[str, Any]) -> int:
        clause = match_clause(DIALECT, table, match, self._columns(table))
        if clause is None:
            return 0
        condition, params = clause
        with self._db.transaction(), self._db.guarded(f"delete {table}") as raw:
            side = bulk.SIDE_TABLES.get(table)
            if side is not None:
                name, keys = side[0], side[1]
                of = self._side_condition(table, keys, condition)
                self._db.remember(name, of, params)
                raw.execute(f"DELETE FROM {name} WHERE {of}", list(params))
            self._db.remember(table, condition, params)
            row = raw.execute(f"DELETE FROM {table} WHERE {condition}", list(params)).fetchone()
        return int(row[0]) if row else 0

    @staticmethod
    def _side_condition(table: str, keys: tuple[str, ...], condition: str) -> str:
        """The side rows of the content rows meeting `condition` (same parameters)."""
        if condition == "TRUE":
            return "TRUE"
        columns = ", ".join(keys)
        return f"({columns}) IN (SELECT {columns} FROM {table} WHERE {condition})"

    def end_import(self, table: str) -> None:
        if table in bulk.SEQUENCE_TABLES:
            with self._db.guarded(f"import {table}") as raw:
                bulk.advance_sequence(raw, table)
