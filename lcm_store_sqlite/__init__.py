"""The reference storage backend: schema v2 on an embedded SQLite file."""

from __future__ import annotations

from pathlib import Path

from lcm_store_sqlite.store import SQLiteMemoryStore

__all__ = ["SQLiteMemoryStore", "open_sqlite_store"]


def open_sqlite_store(location: str | Path) -> SQLiteMemoryStore:
    """Entry point for `lcm.stores`: a file path or `:memory:`."""
    return SQLiteMemoryStore(location)
