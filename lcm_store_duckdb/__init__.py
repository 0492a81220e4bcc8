"""The analytical storage backend: schema v2 on an embedded DuckDB file, same contract."""

from __future__ import annotations

from pathlib import Path

from lcm_store_duckdb.store import DuckDBMemoryStore

__all__ = ["DuckDBMemoryStore", "open_duckdb_store"]


def open_duckdb_store(location: str | Path) -> DuckDBMemoryStore:
    """Entry point for `lcm.stores`: a file path or `:memory:`."""
    return DuckDBMemoryStore(location)
