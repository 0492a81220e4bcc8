"""Opening files that are not (yet) current lcm databases: refuse clearly, or migrate keeping rows."""

from __future__ import annotations

import os
import sqlite3
import stat
from pathlib import Path

import pytest

from lcm_core.store.errors import SchemaVersionError, StoreOpenError
from lcm_core.store.models import SCHEMA_VERSION, Event
from lcm_store_sqlite import SQLiteMemoryStore
from lcm_store_sqlite import connection as connection_module
from lcm_store_sqlite.schema import V1


def _build_v1(path: Path) -> None:
    """A schema-v1 file as an older lcm would have left it, with a few rows."""
    raw = sqlite3.connect(path)
    raw.executescript(V1)
    raw.execute("INSERT INTO meta (key, value) VALUES ('schema', '1')")
    raw.executemany(
        "INSERT INTO events (session_id, seq, type, text, content_hash, ingested_at) "
        "VALUES (?, ?, 'user/message', ?, 'h', 't')",
        [("s1", 1, "keep p95 under 200 ms"), ("s1", 2, "预算不超过3000元（含税）")],
    )
    raw.execute(
        "INSERT INTO memory_items (id, session_id, kind, content, evidence_type, content_hash, "
        "created_at, updated_at) VALUES ('mem_1', 's1', 'constraint', '预算 3000 元', "
        "'user_explicit', 'h1', 't', 't')"
    )
    raw.commit()
    raw.close()


def test_non_sqlite_file_is_refused_and_left_untouched(tmp_path: Path) -> None:
    path = tmp_path / "notes.txt"
    path.write_bytes(b"these are my notes, not a database\n" * 50)
    before = path.read_bytes()
    with pytest.raises(StoreOpenError) as info:
        SQLiteMemoryStore(path)
    message = str(info.value)
    assert str(path) in message and "\n" not in message
    assert path.read_bytes() == before
    assert not Path(f"{path}-wal").exists()


def test_random_bytes_are_refused_and_left_untouched(tmp_path: Path) -> None:
    path = tmp_path / "memory.sqlite"
    path.write_bytes(bytes(range(256)) * 64)
    before = path.read_bytes()
    with pytest.raises(StoreOpenError):
        SQLiteMemoryStore(path)
    assert path.read_bytes() == before


def test_truncated_database_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "memory.sqlite"
    store = SQLiteMemoryStore(path)
    store.insert_events(Event("s", seq, "user/message", "x" * 2000) for seq in range(200))
    store.close()
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 3])
    before = path.read_bytes()
    with pytest.raises(StoreOpenError, match="malformed"):
        SQLiteMemoryStore(path)
    assert path.read_bytes() == before


def test_foreign_sqlite_database_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "app.db"
    raw = sqlite3.connect(path)
    raw.execute("CREATE TABLE customers (id INTEGER PRIMARY KEY, name TEXT)")
    raw.execute("INSERT INTO customers (name) VALUES ('Ada')")
    raw.commit()
    raw.close()
    before = path.read_bytes()
    with pytest.raises(StoreOpenError, match="something else"):
        SQLiteMemoryStore(path)
    assert path.read_bytes() == before


def test_folder_as_database_path_is_refused(tmp_path: Path) -> None:
    with pytest.raises(StoreOpenError, match="folder"):
        SQLiteMemoryStore(tmp_path)


def test_newer_schema_is_refused_without_changes(tmp_path: Path) -> None:
    path = tmp_path / "memory.sqlite"
    SQLiteMemoryStore(path).close()
    raw = sqlite3.connect(path)
    raw.execute("UPDATE meta SET value = ? WHERE key = 'schema'", (str(SCHEMA_VERSION + 1),))
    raw.commit()
    raw.close()
    with pytest.raises(SchemaVersionError, match="newer"):
        SQLiteMemoryStore(path)


def test_v1_file_migrates_to_current_keeping_every_row(tmp_path: Path) -> None:
    path = tmp_path / "memory.sqlite"
    _build_v1(path)
    store = SQLiteMemoryStore(path)
    try:
        assert store.schema_version() == SCHEMA_VERSION == 5
        assert store.get_meta("migration.v2") is not None
        assert store.get_meta("migration.v3") is not None
        assert store.get_meta("migration.v4") is not None
        assert [e.text for e in store.list_events("s1")] == [
            "keep p95 under 200 ms",
            "预算不超过3000元（含税）",
        ]
        item = store.get_item("mem_1")
        assert item is not None and item.content == "预算 3000 元"
        # The v2 table is there and usable, and search still finds v1 rows.
        assert list(store.export_rows("validation_logs")) == []
        assert [h.event.seq for h in store.search_events("s1", ["3000元"])] == [2]
        # v4 indexed the v1 item's two-character pairs: a store-wide search finds it.
        assert [h.item.id for h in store.search_items(None, ["预算"])] == ["mem_1"]
        assert store.integrity_check() == []
    finally:
        store.close()


def test_failed_migration_leaves_the_v1_file_as_it_was(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "memory.sqlite"
    _build_v1(path)
    broken = ((1, V1), (2, "CREATE TABLE validation_logs (id INTEGER);\nTHIS IS NOT SQL;"))
    monkeypatch.setattr(connection_module, "MIGRATIONS", broken)
    with pytest.raises(Exception, match="syntax"):
        SQLiteMemoryStore(path)
    raw = sqlite3.connect(path)
    try:
        assert raw.execute("SELECT value FROM meta WHERE key = 'schema'").fetchone() == ("1",)
        tables = {r[0] for r in raw.execute("SELECT name FROM sqlite_master WHERE type='table'")}
        assert "validation_logs" not in tables
        assert raw.execute("SELECT COUNT(*) FROM events").fetchone() == (2,)
    finally:
        raw.close()


def test_pragmas_and_private_file_modes(tmp_path: Path) -> None:
    path = tmp_path / "data" / "memory.sqlite"
    store = SQLiteMemoryStore(path)
    try:
        store.insert_event(Event("s", 1, "user/message", "hi"))
        raw = store._db.raw
        assert raw.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        assert raw.execute("PRAGMA synchronous").fetchone()[0] == 1  # NORMAL
        assert raw.execute("PRAGMA busy_timeout").fetchone()[0] == 5000
        assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
        assert stat.S_IMODE(os.stat(path.parent).st_mode) == 0o700
        for suffix in ("-wal", "-shm"):
            sidecar = Path(f"{path}{suffix}")
            if sidecar.exists():
                assert stat.S_IMODE(os.stat(sidecar).st_mode) & 0o077 == 0
    finally:
        store.close()
