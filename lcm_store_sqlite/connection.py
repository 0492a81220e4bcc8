"""Opening a SQLite file safely: checks, pragmas, migrations, savepoints, error translation."""

from __future__ import annotations

import contextlib
import os
import sqlite3
import threading
from collections.abc import Iterator
from pathlib import Path

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
from lcm_store_sqlite.damage import damaged, has_sqlite_header
from lcm_store_sqlite.schema import MIGRATIONS

BUSY_TIMEOUT_MS = 5000


# How this backend spells parameters and list tests in the shared queries.
DIALECT = Dialect(sort_apart="+{column}")


def translate(exc: sqlite3.Error, where: str, file: Path | None = None) -> port.StoreError:
    """Map a driver error onto the port's error types, with a one-line message.

    Corruption met in a file (`file`) is a `DamagedStoreError`: it says the file is
    damaged, that nothing was changed in it, and where to look next.
    """
    message = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
    lowered = message.lower()
    if file is not None and ("malformed" in lowered or "corrupt" in lowered):
        return damaged(file, message)
    if isinstance(exc, sqlite3.IntegrityError):
        return port.StoreConflictError(f"{where}: {message}")
    if "locked" in lowered or "busy" in lowered:
        return port.StoreBusyError(f"{where}: database is busy (another writer held it over 5 s)")
    if "readonly" in lowered or "read-only" in lowered:
        return port.ReadOnlyStoreError(f"{where}: database is read-only")
    if "disk is full" in lowered or ("full" in lowered and "database" in lowered):
        return port.StorageFullError(f"{where}: no space left for the database")
    if "not a database" in lowered or "malformed" in lowered or "corrupt" in lowered:
        return port.StoreOpenError(f"{where}: file is not a valid lcm database ({message})")
    return port.StoreError(f"{where}: {message}")


class Connection:
    """One sqlite3 connection with a lock and nestable savepoint transactions."""

    def __init__(self, location: str) -> None:
        self.location = location
        self.in_memory = location == ":memory:"
        self.label = "in-memory database" if self.in_memory else str(Path(location))
        self.file = None if self.in_memory else Path(location)
        self.lock = threading.RLock()
        self._depth = 0
        self.raw = self._connect()
        opening(self.raw.close, self._check_is_database, self._configure, self._migrate)

    # --- opening -----------------------------------------------------------------
    def _connect(self) -> sqlite3.Connection:
        if not self.in_memory:
            path = Path(self.location)
            database_file(path)
            if not path.exists():
                # Create the file ourselves so it is private from its first byte.
                try:
                    os.close(os.open(path, os.O_CREAT | os.O_WRONLY, 0o600))
                except OSError as exc:
                    raise port.StoreOpenError(f"{path}: cannot create ({exc.strerror})") from exc
        try:
            raw = sqlite3.connect(
                self.location,
                timeout=BUSY_TIMEOUT_MS / 1000,
                isolation_level=None,
                check_same_thread=False,
            )
        except sqlite3.Error as exc:
            raise port.StoreOpenError(f"{self.label}: cannot open ({exc})") from exc
        raw.row_factory = sqlite3.Row
        return raw

    def _check_is_database(self) -> None:
        """Fail before any write if the file is not SQLite, or is SQLite but not ours."""
        try:
            names = {
                row[0]
                for row in self.raw.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
            }
        except sqlite3.DatabaseError as exc:
            error = translate(exc, self.label)
            if isinstance(error, port.ReadOnlyStoreError) or "unable to open" in str(exc):
                # WAL readers write the -shm file beside the database, so a folder
                # (or mount) we cannot write fails even a read.
                raise port.ReadOnlyStoreError(
                    f"{self.label}: the database or its folder is read-only "
                    "(SQLite in WAL mode must write beside the file)"
                ) from exc
            reason = str(exc).splitlines()[0]
            if self.file is not None and has_sqlite_header(self.file):
                raise damaged(self.file, reason) from exc
            raise port.StoreOpenError(
                f"{self.label}: not an lcm memory database ({reason})"
            ) from exc
        if names and "meta" not in names:
            raise port.StoreOpenError(
                f"{self.label}: is a SQLite database of something else (no lcm meta table)"
            )

    def _configure(self) -> None:
        try:
            self.raw.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
            if not self.in_memory:
                mode = self.raw.execute("PRAGMA journal_mode = WAL").fetchone()[0]
                if str(mode).lower() != "wal":
                    # A read-only folder cannot hold the WAL file; say so plainly.
                    raise port.ReadOnlyStoreError(f"{self.label}: cannot switch to WAL ({mode})")
            self.raw.execute("PRAGMA synchronous = NORMAL")
        except sqlite3.Error as exc:
            raise translate(exc, self.label, self.file) from exc

    def current_version(self) -> int:
        has_meta = self.raw.execute(
            "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'meta'"
        ).fetchone()
        if not has_meta:
            return 0
        row = self.raw.execute("SELECT value FROM meta WHERE key = 'schema'").fetchone()
        return parse_version(self.label, row[0] if row else None)

    def _migrate(self) -> None:
        """Bring the file to `SCHEMA_VERSION` in one transaction, keeping every row."""
        try:
            version = self.current_version()
            if not needs_migration(self.label, version):
                return
            steps = [(target, _statements(script)) for target, script in MIGRATIONS]
            with self.transaction():
                for sql, params in migration_plan(version, steps, utc_now_iso()):
                    self.raw.execute(sql, params)
        except sqlite3.Error as exc:
            raise translate(exc, self.label, self.file) from exc

    # --- transactions ------------------------------------------------------------
    @contextlib.contextmanager
    def transaction(self) -> Iterator[None]:
        """Outermost level is BEGIN IMMEDIATE; inner levels are savepoints."""
        with self.lock:
            depth = self._depth
            with port.translated(sqlite3.Error, self._translate, self.label):
                if depth == 0:
                    self.raw.execute("BEGIN IMMEDIATE")
                else:
                    self.raw.execute(f"SAVEPOINT lcm_sp{depth}")
            self._depth += 1
            try:
                yield
            except BaseException:
                self._depth -= 1
                with contextlib.suppress(sqlite3.Error):
                    if depth == 0:
                        self.raw.execute("ROLLBACK")
                    else:
                        self.raw.execute(f"ROLLBACK TO lcm_sp{depth}")
                        self.raw.execute(f"RELEASE lcm_sp{depth}")
                raise
            self._depth -= 1
            undo = self._quiet_rollback if depth == 0 else None
            with port.translated(sqlite3.Error, self._translate, self.label, then=undo):
                if depth == 0:
                    self.raw.execute("COMMIT")
                else:
                    self.raw.execute(f"RELEASE lcm_sp{depth}")

    def _translate(self, exc: sqlite3.Error, where: str) -> port.StoreError:
        return translate(exc, where, self.file)

    def _quiet_rollback(self) -> None:
        with contextlib.suppress(sqlite3.Error):
            self.raw.execute("ROLLBACK")

    @contextlib.contextmanager
    def guarded(self, where: str) -> Iterator[sqlite3.Connection]:
        """Hold the lock and turn driver errors into `StoreError`s (a plain `except`: this
        wraps every statement of a pre-step, and costs nothing until an error)."""
        with self.lock:
            try:
                yield self.raw
            except sqlite3.Error as exc:
                raise translate(exc, f"{self.label}: {where}", self.file) from exc

    def close(self) -> None:
        with self.lock, contextlib.suppress(sqlite3.Error):
            self.raw.close()


def _statements(script: str) -> list[str]:
    """Split a migration script into statements, keeping trigger bodies whole."""
    statements: list[str] = []
    buffer = ""
    for line in script.splitlines(keepends=True):
        buffer += line
        if sqlite3.complete_statement(buffer):
            if buffer.strip():
                statements.append(buffer.strip())
            buffer = ""
    if buffer.strip():
        statements.append(buffer.strip())
    return statements
