"""One psycopg connection: URL checks, migrations, nested transactions, error translation."""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator
from typing import Any, Final

import psycopg
from psycopg import errors as pg_errors
from psycopg.abc import Buffer
from psycopg.rows import dict_row
from psycopg.types.string import StrDumperUnknown

from lcm_core.clock import utc_now_iso
from lcm_core.store import errors as port
from lcm_core.store.migrations import opening
from lcm_core.store.models import SCHEMA_VERSION
from lcm_core.store.queries import Dialect
from lcm_core.text.tokens import scrub_surrogates
from lcm_store_postgres.schema import MIGRATIONS, VERSION_TABLE, tenancy_statements

# Serialises migrations of one database across processes (any constant works; this one
# spells "lcm" in ASCII).
_MIGRATION_LOCK: Final = 0x6C636D
CONNECT_TIMEOUT_S: Final = 10
# psycopg's parameter mark, and one array parameter per membership test.
DIALECT: Final = Dialect(mark="%s", member="{column} = ANY({mark})")


def redact_url(url: str) -> str:
    """The URL with any password replaced, fit for messages and `store.url`."""
    try:
        info = psycopg.conninfo.conninfo_to_dict(url)
    except psycopg.ProgrammingError:
        return "postgresql://(unparsable URL)"
    if "password" not in info:
        return url
    scheme, sep, rest = url.partition("://")
    if sep and "@" in rest:
        creds, _, host = rest.rpartition("@")
        user = creds.split(":", 1)[0]
        return f"{scheme}://{user}:***@{host}"
    return url.replace(str(info["password"]), "***")


class StorableText(StrDumperUnknown):
    """Every string parameter as PostgreSQL `text` can hold it.

    `text` never holds NUL and the server rejects a lone surrogate, while the port accepts
    any Python string (hostile capture, search terms): NUL becomes U+FFFD and surrogates
    are scrubbed, for every parameter alike, so a key written with either is found again
    by the same key.
    """

    def dump(self, obj: str) -> Buffer | None:
        return super().dump(scrub_surrogates(obj).replace("\x00", "\ufffd"))


def translate(exc: psycopg.Error, where: str) -> port.StoreError:
    """Map a driver error onto the port's error types, with a one-line message."""
    message = (str(exc).splitlines() or [type(exc).__name__])[0]
    if isinstance(exc, pg_errors.UniqueViolation | pg_errors.IntegrityError):
        return port.StoreConflictError(f"{where}: {message}")
    if isinstance(exc, pg_errors.SerializationFailure | pg_errors.DeadlockDetected):
        return port.StoreBusyError(f"{where}: a concurrent transaction changed the same rows")
    if isinstance(exc, pg_errors.LockNotAvailable | pg_errors.QueryCanceled):
        return port.StoreBusyError(f"{where}: {message}")
    if isinstance(exc, pg_errors.InsufficientPrivilege):
        return port.ReadOnlyStoreError(f"{where}: permission denied ({message})")
    if isinstance(exc, pg_errors.ReadOnlySqlTransaction):
        return port.ReadOnlyStoreError(f"{where}: the server is read-only ({message})")
    if isinstance(exc, pg_errors.DiskFull):
        return port.StorageFullError(f"{where}: no space left on the server")
    if isinstance(exc, psycopg.OperationalError):
        return port.StoreOpenError(f"{where}: {message}")
    return port.StoreError(f"{where}: {message}")


class Connection:
    """A psycopg connection with a lock; transactions nest as savepoints."""

    def __init__(self, url: str, *, migrate: bool = True) -> None:
        self.url = url
        self.label = redact_url(url)
        self.lock = threading.RLock()
        self._depth = 0
        self.raw = self._connect()
        opening(self.raw.close, *([self._migrate] if migrate else []))

    def _connect(self) -> psycopg.Connection[dict[str, Any]]:
        try:
            conn = psycopg.connect(
                self.url, autocommit=True, row_factory=dict_row, connect_timeout=CONNECT_TIMEOUT_S
            )
        except psycopg.Error as exc:
            raise port.StoreOpenError(f"{self.label}: cannot connect ({_first_line(exc)})") from exc
        conn.adapters.register_dumper(str, StorableText)
        return conn

    def _revive(self) -> None:
        """Outside a transaction, replace a connection the server dropped (a restart, a
        failover, an idle timeout): the call that saw it break failed, the next one works."""
        if self._depth == 0 and self.raw.broken:
            with contextlib.suppress(psycopg.Error):
                self.raw.close()
            self.raw = self._connect()

    # --- schema ------------------------------------------------------------------
    def current_version(self) -> int:
        """The schema version recorded in the database (0 when it has no lcm schema)."""
        row = self.raw.execute("SELECT to_regclass('lcm_schema') IS NOT NULL AS present").fetchone()
        if not row or not row["present"]:
            return 0
        found = self.raw.execute("SELECT value FROM lcm_schema WHERE key = 'schema'").fetchone()
        value = None if found is None else found["value"]
        try:
            return 0 if value is None else int(value)
        except ValueError as exc:
            raise port.StoreOpenError(
                f"{self.label}: schema version {value!r} is not a number"
            ) from exc

    def _migrate(self) -> None:
        """Bring the database to `SCHEMA_VERSION` in one transaction, one process at a time."""
        try:
            version = self.current_version()
            if version > SCHEMA_VERSION:
                raise port.SchemaVersionError(
                    f"{self.label}: schema v{version} is newer than this lcm understands "
                    f"(v{SCHEMA_VERSION}); upgrade long-conversation-memory"
                )
            if version == SCHEMA_VERSION:
                return
            with self.raw.transaction():
                self.raw.execute("SELECT pg_advisory_xact_lock(%s)", (_MIGRATION_LOCK,))
                version = self.current_version()  # another process may have migrated
                if version == SCHEMA_VERSION:
                    return
                self.raw.execute(VERSION_TABLE)
                now = utc_now_iso()
                for target, statements in MIGRATIONS:
                    if target <= version:
                        continue
                    for statement in statements:
                        self.raw.execute(statement)
                    self._record(f"migration.v{target}", now)
                for statement in tenancy_statements():
                    self.raw.execute(statement)
                self._record("schema", str(SCHEMA_VERSION))
        except pg_errors.InsufficientPrivilege as exc:
            raise port.StoreOpenError(
                f"{self.label}: the schema is at v{version}, v{SCHEMA_VERSION} is needed, and "
                f"this role may not create it ({_first_line(exc)}); connect once as the "
                "database owner to migrate"
            ) from exc
        except psycopg.Error as exc:
            raise translate(exc, self.label) from exc

    def _record(self, key: str, value: str) -> None:
        self.raw.execute(
            "INSERT INTO lcm_schema (key, value) VALUES (%s, %s) "
            "ON CONFLICT (key) DO UPDATE SET value = excluded.value",
            (key, value),
        )

    # --- transactions --------------------------------------------------------------
    @contextlib.contextmanager
    def transaction(self) -> Iterator[None]:
        """The outermost level is a transaction; each inner level is a savepoint."""
        with self.lock:
            self._revive()
            self._depth += 1
            try:
                with port.translated(psycopg.Error, translate, self.label), self.raw.transaction():
                    yield
            finally:
                self._depth -= 1

    @contextlib.contextmanager
    def guarded(self, where: str) -> Iterator[psycopg.Connection[dict[str, Any]]]:
        """Hold the lock and turn driver errors into `StoreError`s."""
        with self.lock:
            self._revive()
            with port.translated(psycopg.Error, translate, self.label, where):
                yield self.raw

    def close(self) -> None:
        with self.lock, contextlib.suppress(psycopg.Error):
            self.raw.close()
            self._depth = -1  # never revive a handle its owner closed


def _first_line(exc: BaseException) -> str:
    return (str(exc).strip().splitlines() or [type(exc).__name__])[0]
