"""Whole-store operations of the DuckDB store: the read hooks, integrity, and its file."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

import duckdb

from lcm_core.store.queries import Query
from lcm_core.store.sql_reads import STREAM_BATCH
from lcm_store_duckdb.connection import translate
from lcm_store_duckdb.fetch import fetch_dicts

if TYPE_CHECKING:
    from lcm_store_duckdb.connection import Connection


# Content table, side table, and the key columns joining them.
_SIDES: Final = (
    ("events", "events_search", ("session_id", "seq")),
    ("memory_items", "memory_search", ("id",)),
)


class AdminMixin:
    """`SqlReads`' hooks, integrity, vacuum, scrub and backup; needs `self._db`."""

    _db: Connection

    def _fetch(self, where: str, query: Query) -> list[dict[str, Any]]:
        with self._db.guarded(where) as raw:
            return fetch_dicts(raw.execute(query[0], list(query[1])))

    # --- stats and export ----------------------------------------------------------
    def _stream(self, sql: str, params: tuple[Any, ...], table: str) -> Iterator[dict[str, Any]]:
        # A cursor is DuckDB's second connection to the same database, so the caller may
        # use the store between batches without cancelling this result. It reads what is
        # committed, and holds one batch in memory at a time.
        with self._db.guarded(f"export {table}") as raw:
            cursor = raw.cursor()
        try:
            try:
                cursor.execute(sql, params)
                names = [str(d[0]) for d in cursor.description or ()]
            except duckdb.Error as exc:
                raise translate(exc, f"{self._db.label}: export {table}") from exc
            while True:
                try:
                    batch = cursor.fetchmany(STREAM_BATCH)
                except duckdb.Error as exc:
                    raise translate(exc, f"{self._db.label}: export {table}") from exc
                if not batch:
                    return
                for row in batch:
                    yield dict(zip(names, row, strict=True))
        finally:
            with contextlib.suppress(duckdb.Error):
                cursor.close()

    # --- integrity ----------------------------------------------------------------
    def _store_problems(self) -> list[str]:
        """The side tables against their content tables, and the one-active-item rule."""
        problems: list[str] = []
        with self._db.guarded("integrity check") as raw:
            # The side tables play the part of SQLite's FTS index: each content row has
            # exactly one side row and no side row is left without its content row.
            for table, side, keys in _SIDES:
                on = " AND ".join(f"c.{key} = s.{key}" for key in keys)
                for left, right, what in (
                    (table, side, "no search row"),
                    (side, table, "no content row"),
                ):
                    row = raw.execute(
                        f"SELECT count(*) FROM {left} AS c WHERE NOT EXISTS "
                        f"(SELECT 1 FROM {right} AS s WHERE {on})"
                        if left == table
                        else f"SELECT count(*) FROM {left} AS s WHERE NOT EXISTS "
                        f"(SELECT 1 FROM {right} AS c WHERE {on})"
                    ).fetchone()
                    if row and row[0]:
                        problems.append(f"{row[0]} rows of {left} have {what} in {right}")
            # No partial unique index guards this in DuckDB, so check it here.
            row = raw.execute(
                "SELECT count(*) FROM (SELECT session_id, content_hash FROM memory_items "
                "WHERE status = 'active' GROUP BY ALL HAVING count(*) > 1)"
            ).fetchone()
            if row and row[0]:
                problems.append(f"{row[0]} content hashes have more than one active item")
        return problems

    # --- extras ------------------------------------------------------------------
    def vacuum(self) -> None:
        """Write pending changes into the file and let DuckDB drop row groups freed by deletes."""
        with self._db.guarded("vacuum") as raw:
            raw.execute("CHECKPOINT")

    def scrub(self) -> dict[str, Any]:
        """Write the WAL into the file (CHECKPOINT); see docs/privacy.md on what DuckDB keeps."""
        self.vacuum()
        return {"checkpoint": "complete"}

    def backup(self, path: Path) -> None:
        """Write a consistent copy of the database to `path`, itself a DuckDB file."""
        target = Path(path)
        with self._db.guarded("backup") as raw:
            name = raw.execute("SELECT current_database()").fetchone()
            try:
                raw.execute("ATTACH ? AS lcm_backup", (str(target),))
                raw.execute(f'COPY FROM DATABASE "{name[0] if name else "memory"}" TO lcm_backup')
            finally:
                with contextlib.suppress(duckdb.Error):
                    raw.execute("DETACH lcm_backup")

    def shares_file(self) -> bool:
        """False: DuckDB lets one process at a time open the file (handles in it may share)."""
        return False
