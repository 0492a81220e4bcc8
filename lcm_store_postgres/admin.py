"""Whole-store operations of the PostgreSQL store: the read hooks, integrity, vacuum, backup.

Row-level security scopes every statement to the connected tenant: a purge empties this
tenant's tables, `stats` and `export_rows` count and stream only its rows.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import psycopg
from psycopg import IsolationLevel
from psycopg.pq import TransactionStatus

from lcm_core.store import rows
from lcm_core.store.errors import StoreError
from lcm_core.store.models import TABLES
from lcm_core.store.queries import Query
from lcm_core.store.sql_reads import STREAM_BATCH
from lcm_store_postgres.schema import HIDDEN_COLUMNS

if TYPE_CHECKING:
    from lcm_store_postgres.connection import Connection


class AdminMixin:
    """`SqlReads`' hooks, integrity, vacuum and backup; needs `self._db`."""

    _db: Connection
    export_rows: Callable[..., Iterator[dict[str, Any]]]  # `SqlReads.export_rows`

    def _fetch(self, where: str, query: Query) -> list[dict[str, Any]]:
        """Rows of one query, without the tenant columns."""
        with self._db.guarded(where) as raw:
            return _public(raw.execute(*query).fetchall())

    def _cursor(self, where: str, query: Query) -> Any:
        with self._db.guarded(where) as raw:
            return raw.execute(*query)

    def _next_batch(self, where: str, cursor: Any) -> list[dict[str, Any]]:
        """The cursor's next rows, without the tenant columns."""
        with self._db.guarded(where):
            return _public(cursor.fetchmany(STREAM_BATCH))

    def _store_problems(self) -> list[str]:
        """Every table present, with row-level security forced."""
        problems: list[str] = []
        with self._db.guarded("integrity check") as raw:
            for table in TABLES:
                row = raw.execute(
                    "SELECT relrowsecurity AND relforcerowsecurity AS forced FROM pg_class "
                    "WHERE oid = to_regclass(%s)",
                    (table,),
                ).fetchone()
                if row is None:
                    problems.append(f"table {table} is missing")
                elif not row["forced"]:
                    problems.append(f"table {table}: row-level security is not forced")
        return problems

    def vacuum(self) -> None:
        """Let the server reclaim dead rows and refresh planner statistics (VACUUM ANALYZE)."""
        with self._db.guarded("vacuum") as raw:
            for table in TABLES:
                try:
                    raw.execute(f"VACUUM ANALYZE {table}")
                except psycopg.errors.InsufficientPrivilege:
                    continue  # only the owner may vacuum; a tenant's call is a no-op

    def backup(self, path: Path) -> None:
        """Write this tenant's rows, every table, to one JSON-lines file (mode 0600).

        One REPEATABLE READ transaction makes the copy consistent. A server-wide copy is
        the DBA's pg_dump; this is what one tenant may take with it.
        """
        raw = self._db.raw
        with self._db.lock:
            idle = raw.info.transaction_status == TransactionStatus.IDLE
            previous = raw.isolation_level
            if idle:
                raw.isolation_level = IsolationLevel.REPEATABLE_READ
            try:
                fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
                with self._db.transaction(), open(fd, "w", encoding="utf-8") as out:
                    for table in TABLES:
                        for row in self.export_rows(table):
                            out.write(rows.dumps({"table": table, "row": row}) + "\n")
            except OSError as exc:
                raise StoreError(f"backup to {path}: {exc.strerror or exc}") from exc
            finally:
                if idle:
                    raw.isolation_level = previous

    def shares_file(self) -> bool:
        """True: any number of handles and processes may use the database at once."""
        return True


def _public(found: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Rows as the port shows them: without this backend's hidden columns."""
    return [{k: v for k, v in row.items() if k not in HIDDEN_COLUMNS} for row in found]
