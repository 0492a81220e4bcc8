"""`PostgresMemoryStore`: schema v2 on a PostgreSQL server, one tenant per database role."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from lcm_core.store.base import BaseStore
from lcm_core.store.models import AssemblyLog
from lcm_core.store.primitives import OnConnection
from lcm_core.store.sql_reads import SqlReads
from lcm_store_postgres.admin import AdminMixin
from lcm_store_postgres.connection import DIALECT, Connection, redact_url
from lcm_store_postgres.events import EventsMixin, storable
from lcm_store_postgres.search import SearchMixin
from lcm_store_postgres.tenants import create_tenant, server_report
from lcm_store_postgres.writes import WritesMixin


class PostgresMemoryStore(
    EventsMixin, WritesMixin, AdminMixin, SearchMixin, SqlReads, OnConnection, BaseStore
):
    """A `MemoryStore` on a PostgreSQL database; the connected role is the tenant."""

    dialect = DIALECT
    # `text` holds no NUL and refuses lone surrogates.
    _clean_text: Callable[[str], str] = staticmethod(storable)

    def __init__(self, url: str, *, migrate: bool = True) -> None:
        self._db = Connection(url, migrate=migrate)
        self.url = redact_url(url)

    def __repr__(self) -> str:
        return f"PostgresMemoryStore({self.url!r})"

    def schema_version(self) -> int:
        """The owner's record of the schema (`lcm_schema`), which every tenant reads."""
        with self._db.guarded("schema version"):
            return self._db.current_version()

    def add_assembly_log(self, log: AssemblyLog, *, retention: int) -> int:
        """The base store's, committed without waiting for the disk.

        The log is on the pre-step's path and only explains what was shown: a server
        crash may lose the newest few rows, never make the database inconsistent.
        Capture keeps full durability.
        """
        with self._db.transaction(), self._db.guarded("add assembly log") as raw:
            raw.execute("SET LOCAL synchronous_commit = off")
            return super().add_assembly_log(log, retention=retention)

    # --- server extras -----------------------------------------------------------
    def create_tenant(self, name: str) -> str:
        """Create the tenant role `name`; needs a role with CREATEROLE (the owner)."""
        return create_tenant(self._db, name)

    def server_report(self) -> dict[str, Any]:
        """Reachability, schema, extensions, privileges and row counts for `lcm doctor`."""
        return server_report(self._db)
