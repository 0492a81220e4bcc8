"""`DuckDBMemoryStore`: the analytical backend, schema v2 in one DuckDB file, same contract."""

from __future__ import annotations

from pathlib import Path

from lcm_core.store.base import BaseStore
from lcm_core.store.base_records import BookkeepingMixin
from lcm_core.store.primitives import OnConnection
from lcm_core.store.registry import store_url
from lcm_core.store.sql_reads import SqlReads
from lcm_store_duckdb.admin import AdminMixin
from lcm_store_duckdb.analytics import AnalyticsMixin
from lcm_store_duckdb.connection import DIALECT, Connection
from lcm_store_duckdb.events import EventsMixin
from lcm_store_duckdb.imports import ExportReadingMixin
from lcm_store_duckdb.search import SearchMixin
from lcm_store_duckdb.writes import WritesMixin


class DuckDBMemoryStore(
    EventsMixin,
    WritesMixin,
    AdminMixin,
    AnalyticsMixin,
    ExportReadingMixin,
    SearchMixin,
    SqlReads,
    OnConnection,
    BaseStore,
):
    """A `MemoryStore` on one DuckDB file (or `:memory:`), schema v2, one process at a time.

    DuckDB has no partial unique index: the one-active-item-per-hash rule is the base
    store's check before every write, and `integrity_check` looks for a breach.
    """

    dialect = DIALECT
    # The base store's read, then delete, for the log retention: DuckDB's deletes inside
    # an inner transaction go through the undo log (`writes.WritesMixin.delete_rows`).
    _keep_newest_logs = BookkeepingMixin._keep_newest_logs

    def __init__(self, location: str | Path) -> None:
        self._db = Connection(str(location))
        self.url = store_url("duckdb", ":memory:" if self._db.in_memory else location)
        self.path: Path | None = None if self._db.in_memory else Path(location)

    def __repr__(self) -> str:
        return f"DuckDBMemoryStore({self._db.label!r})"

    def scratch(self) -> DuckDBMemoryStore:
        """A new, empty, private in-memory store of this kind (re-extraction derives in one)."""
        return DuckDBMemoryStore(":memory:")
