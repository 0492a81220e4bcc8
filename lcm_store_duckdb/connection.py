"""Opening a DuckDB file safely: checks, migrations, nestable transactions, error translation."""

from __future__ import annotations

import contextlib
import os
import re
import threading
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, Final

import duckdb

from lcm_core.clock import utc_now_iso
from lcm_core.store import errors as port
from lcm_core.store.migrations import (
    database_file,
    migration_plan,
    needs_migration,
    opening,
    parse_version,
)
from lcm_core.store.queries import Dialect
from lcm_store_duckdb.schema import MIGRATIONS
from lcm_store_duckdb.undo import UndoLog

# Never reach for the network: a known extension that is not in the wheel must fail at
# once instead of trying a download (air-gapped machines, CI). The same config on every
# handle also lets DuckDB share one database instance between handles of a process.
CONFIG: Final = {"autoinstall_known_extensions": False, "autoload_known_extensions": False}
_PID_RE: Final = re.compile(r"\(PID (\d+)\)")


# One list parameter per membership test.
DIALECT = Dialect(member="list_contains({mark}, {column})")


def translate(exc: duckdb.Error, where: str) -> port.StoreError:
    """Map a driver error onto the port's error types, with a one-line message."""
    message = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
    lowered = message.lower()
    if "could not set lock" in lowered or "conflicting lock" in lowered:
        pid = _PID_RE.search(message)
        holder = f" (PID {pid.group(1)})" if pid else ""
        return port.StoreBusyError(
            f"{where}: the database file is in use by another process{holder}; "
            "DuckDB allows one process at a time"
        )
    if isinstance(exc, duckdb.ConstraintException):
        return port.StoreConflictError(f"{where}: {message}")
    if "conflict" in lowered and isinstance(exc, duckdb.TransactionException):
        return port.StoreBusyError(f"{where}: another handle changed the same rows ({message})")
    if "read-only" in lowered or "read only" in lowered or "permission denied" in lowered:
        return port.ReadOnlyStoreError(f"{where}: database is read-only ({message})")
    if "no space left" in lowered or "disk is full" in lowered:
        return port.StorageFullError(f"{where}: no space left for the database")
    if "not a valid duckdb database" in lowered or "corrupt" in lowered:
        return port.StoreOpenError(f"{where}: file is not a valid lcm DuckDB database ({message})")
    return port.StoreError(f"{where}: {message}")


class Connection:
    """One DuckDB connection with a lock and nestable transactions (see `UndoLog`)."""

    def __init__(self, location: str) -> None:
        self.location = location
        self.in_memory = location == ":memory:" or location.startswith(":memory:")
        self.label = "in-memory database" if self.in_memory else str(Path(location))
        self.lock = threading.RLock()
        self._depth = 0
        self._aborted = False
        self.raw = self._connect()
        self.undo = UndoLog(self.raw)
        opening(self.raw.close, self._check_is_ours, self._migrate)

    # --- opening -----------------------------------------------------------------
    def _connect(self) -> duckdb.DuckDBPyConnection:
        created = False
        if not self.in_memory:
            path = Path(self.location)
            database_file(path)
            if path.exists() and path.stat().st_size == 0:
                # DuckDB refuses an empty file; an empty file holds nothing, so start afresh.
                path.unlink()
            created = not path.exists()
            if not created and _is_sqlite(path):
                # DuckDB would try to load its sqlite extension for this file, which
                # needs a download; say what the file is instead.
                raise port.StoreOpenError(
                    f"{path}: is a SQLite database, not DuckDB; open it as sqlite:///{path}"
                )
        try:
            raw = duckdb.connect(self.location, config=dict(CONFIG))
        except duckdb.Error as exc:
            error = translate(exc, f"{self.label}: cannot open")
            if type(error) is port.StoreError:
                error = port.StoreOpenError(str(error))
            raise error from exc
        if created:
            # DuckDB creates the file with the umask's mode; memory is private.
            with contextlib.suppress(OSError):
                os.chmod(self.location, 0o600)
        return raw

    def _check_is_ours(self) -> None:
        """Fail before any write if the file is a DuckDB database of something else."""
        names = self._table_names()
        if names and "meta" not in names:
            raise port.StoreOpenError(
                f"{self.label}: is a DuckDB database of something else (no lcm meta table)"
            )

    def _table_names(self) -> set[str]:
        try:
            rows = self.raw.execute(
                "SELECT table_name FROM duckdb_tables() WHERE database_name = current_database() "
                "AND schema_name = 'main'"
            ).fetchall()
        except duckdb.Error as exc:
            raise translate(exc, self.label) from exc
        return {str(row[0]) for row in rows}

    def current_version(self) -> int:
        if "meta" not in self._table_names():
            return 0
        row = self.raw.execute("SELECT value FROM meta WHERE key = 'schema'").fetchone()
        return parse_version(self.label, None if row is None else row[0])

    def _migrate(self) -> None:
        """Bring the file to `SCHEMA_VERSION` in one transaction, keeping every row."""
        try:
            version = self.current_version()
            if not needs_migration(self.label, version):
                return
            with self.transaction():
                for sql, params in migration_plan(version, MIGRATIONS, utc_now_iso()):
                    self.raw.execute(sql, params)
        except duckdb.Error as exc:
            raise translate(exc, self.label) from exc

    # --- transactions ------------------------------------------------------------
    @property
    def nested(self) -> bool:
        """True inside an inner transaction, where writes must record how to undo them."""
        return self._depth > 1

    @contextlib.contextmanager
    def transaction(self) -> Iterator[None]:
        """The outermost level is a DuckDB transaction; inner levels are undo-log frames.

        DuckDB has no savepoints, so an inner level records the rows each write replaces
        and puts them back if the level fails (`UndoLog`). A driver error, unlike an
        exception of the caller, aborts DuckDB's whole transaction: from then on every
        statement fails and the outermost level rolls back, which is reported as such.
        """
        with self.lock:
            depth = self._depth
            if depth == 0:
                with port.translated(duckdb.Error, translate, self.label):
                    self.raw.execute("BEGIN TRANSACTION")
                self._aborted = False
            else:
                self.undo.push()
            self._depth += 1
            try:
                yield
            except BaseException:
                self._depth -= 1
                if depth == 0:
                    self._quiet_rollback()
                    self.undo.clear()
                elif not self._aborted:
                    try:
                        self.undo.rollback()
                    except duckdb.Error:
                        self._aborted = True
                else:
                    self.undo.discard()
                raise
            self._depth -= 1
            if depth > 0:
                self.undo.release()
                return
            self.undo.clear()
            if self._aborted:
                self._quiet_rollback()
                raise port.StoreError(
                    f"{self.label}: a database error inside this transaction aborted it; "
                    "none of its writes were kept"
                )
            with port.translated(duckdb.Error, translate, self.label, then=self._quiet_rollback):
                self.raw.execute("COMMIT")

    def _quiet_rollback(self) -> None:
        with contextlib.suppress(duckdb.Error):
            self.raw.execute("ROLLBACK")

    def _note_abort(self) -> None:
        """A driver error inside a transaction: DuckDB has aborted all of it."""
        if self._depth > 0:
            self._aborted = True

    @contextlib.contextmanager
    def guarded(self, where: str) -> Iterator[duckdb.DuckDBPyConnection]:
        """Hold the lock and turn driver errors into `StoreError`s."""
        note = self._note_abort
        with self.lock, port.translated(duckdb.Error, translate, self.label, where, then=note):
            yield self.raw

    def remember(self, table: str, where: str, params: Sequence[Any]) -> None:
        """Before a write inside an inner transaction, keep the rows it may replace."""
        if self.nested:
            self.undo.remember(table, where, params)

    def added(self, table: str, where: str, params: Sequence[Any]) -> None:
        """After an insert under keys that were free, inside an inner transaction, note
        them; cheaper than `remember`, which reads the rows first."""
        if self.nested:
            self.undo.added(table, where, params)

    def close(self) -> None:
        with self.lock, contextlib.suppress(duckdb.Error):
            self.raw.close()


def _is_sqlite(path: Path) -> bool:
    """True if the file starts with SQLite's header."""
    try:
        with path.open("rb") as handle:
            return handle.read(16) == b"SQLite format 3\x00"
    except OSError:
        return False
