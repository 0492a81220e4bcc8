"""`backup_store` refuses what it cannot copy, in one line, before touching the disk."""

from __future__ import annotations

from pathlib import Path

import pytest

from lcm_core.reports.backup import BackupError, backup_store
from lcm_core.store.memory import InMemoryStore


def test_postgres_points_to_pg_dump(tmp_path: Path) -> None:
    """A PostgreSQL store is the server's to back up: the error names pg_dump."""
    store = InMemoryStore()
    store.url = "postgresql://ann@db.example/lcm"
    with pytest.raises(BackupError, match="pg_dump"):
        backup_store(store, tmp_path / "copy")
    assert list(tmp_path.iterdir()) == []


def test_a_store_without_a_file_is_refused(tmp_path: Path) -> None:
    """An in-memory store has no file to copy."""
    with pytest.raises(BackupError, match="SQLite and DuckDB"):
        backup_store(InMemoryStore(), tmp_path / "copy")
    assert list(tmp_path.iterdir()) == []
