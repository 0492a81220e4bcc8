"""DuckDB-specific opening rules: one process at a time, foreign files refused, private file."""

from __future__ import annotations

import os
import sqlite3
import stat
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("duckdb")

import duckdb

from lcm_core.store.errors import SchemaVersionError, StoreBusyError, StoreOpenError
from lcm_core.store.models import SCHEMA_VERSION
from lcm_core.store.registry import available_backends, open_store
from lcm_core.testing.builders import make_event, make_item, populate
from lcm_store_duckdb import DuckDBMemoryStore, open_duckdb_store

_SECOND_OPENER = """
import sys
from lcm_core.store.errors import StoreError
from lcm_store_duckdb import DuckDBMemoryStore
try:
    DuckDBMemoryStore(sys.argv[1])
except StoreError as exc:
    print(type(exc).__name__, exc, sep="|")
    sys.exit(3)
print("opened")
"""


def test_second_process_gets_a_clear_error(tmp_path: Path) -> None:
    """a second process opening a file in use gets one StoreBusyError line, not a hang."""
    path = tmp_path / "m.duckdb"
    with DuckDBMemoryStore(path) as store:
        store.insert_event(make_event("s1", 0, "held"))
        result = subprocess.run(
            [sys.executable, "-c", _SECOND_OPENER, str(path)],
            capture_output=True,
            text=True,
            timeout=60,
        )
    assert result.returncode == 3, result.stderr
    name, message = result.stdout.strip().split("|", 1)
    assert name == StoreBusyError.__name__
    assert "in use by another process" in message and "\n" not in message
    assert "Traceback" not in result.stderr


def test_file_is_free_again_after_close(tmp_path: Path) -> None:
    """once the holder closes the store, another process can open the file."""
    path = tmp_path / "m.duckdb"
    DuckDBMemoryStore(path).close()
    result = subprocess.run(
        [sys.executable, "-c", _SECOND_OPENER, str(path)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.stdout.strip() == "opened", result.stdout + result.stderr


def test_two_handles_in_one_process_share_commits(tmp_path: Path) -> None:
    """handles in one process share the database and read each other's commits."""
    path = tmp_path / "m.duckdb"
    with DuckDBMemoryStore(path) as left, DuckDBMemoryStore(path) as right:
        left.insert_event(make_event("s1", 0, "from left"))
        stored = right.get_event("s1", 0)
        assert stored is not None and stored.text == "from left"
        right.insert_item(make_item("s1", "from right", item_id="mem_r"))
        assert left.get_item("mem_r") is not None
        assert [h.event.seq for h in right.search_events("s1", ["left"])] == [0]


def test_new_file_is_private(tmp_path: Path) -> None:
    """a database file the store creates is readable by its owner only."""
    path = tmp_path / "sub" / "m.duckdb"
    DuckDBMemoryStore(path).close()
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600


def test_empty_file_becomes_a_database(tmp_path: Path) -> None:
    """an empty file (for example made by touch) is taken as a new database."""
    path = tmp_path / "m.duckdb"
    path.touch()
    with DuckDBMemoryStore(path) as store:
        assert store.schema_version() == SCHEMA_VERSION and store.integrity_check() == []


@pytest.mark.parametrize("content", [b"not a database at all" * 50, b"\x00" * 4096])
def test_foreign_file_is_refused(tmp_path: Path, content: bytes) -> None:
    """a file that is not a DuckDB database raises StoreOpenError and is left unchanged."""
    path = tmp_path / "m.duckdb"
    path.write_bytes(content)
    with pytest.raises(StoreOpenError):
        DuckDBMemoryStore(path)
    assert path.read_bytes() == content


def test_sqlite_file_is_refused_without_network(tmp_path: Path) -> None:
    """a SQLite file raises StoreOpenError at once; no extension is downloaded for it."""
    path = tmp_path / "m.sqlite"
    raw = sqlite3.connect(path)
    raw.execute("CREATE TABLE t (a)")
    raw.commit()
    raw.close()
    with pytest.raises(StoreOpenError):
        DuckDBMemoryStore(path)


def test_folder_is_refused(tmp_path: Path) -> None:
    """a folder path raises StoreOpenError."""
    with pytest.raises(StoreOpenError):
        DuckDBMemoryStore(tmp_path)


def test_other_duckdb_database_is_refused(tmp_path: Path) -> None:
    """a DuckDB file of some other program (no meta table) is not touched."""
    path = tmp_path / "other.duckdb"
    raw = duckdb.connect(str(path))
    raw.execute("CREATE TABLE payroll (name VARCHAR)")
    raw.close()
    with pytest.raises(StoreOpenError, match="something else"):
        DuckDBMemoryStore(path)


def test_newer_schema_is_refused(tmp_path: Path) -> None:
    """a file written by a newer schema raises SchemaVersionError and is not changed."""
    path = tmp_path / "m.duckdb"
    with DuckDBMemoryStore(path) as store:
        store.set_meta("schema", "99")
    with pytest.raises(SchemaVersionError):
        DuckDBMemoryStore(path)


def test_extensions_never_autoload(tmp_path: Path) -> None:
    """the connection refuses to install or load extensions on its own (air-gapped use)."""
    with DuckDBMemoryStore(tmp_path / "m.duckdb") as store, store._db.guarded("settings") as raw:
        settings = raw.execute(
            "SELECT current_setting('autoinstall_known_extensions'), "
            "current_setting('autoload_known_extensions')"
        ).fetchone()
    assert settings == (False, False)


def test_reopen_keeps_data_and_search(tmp_path: Path) -> None:
    """a populated file reopens with the same counts, a clean integrity check and search."""
    path = tmp_path / "m.duckdb"
    with open_duckdb_store(path) as store:
        populate(store, "s1")
        counts = store.stats()
    with open_duckdb_store(path) as store:
        assert store.stats() == counts and store.integrity_check() == []
        assert {h.event.seq for h in store.search_events("s1", ["zebra"])} == {0}


def test_backup_opens_as_a_store(tmp_path: Path) -> None:
    """backup writes a DuckDB file that opens as a store holding the same rows."""
    with DuckDBMemoryStore(tmp_path / "m.duckdb") as store:
        populate(store, "s1")
        store.backup(tmp_path / "copy.duckdb")
        counts = store.stats()
    with DuckDBMemoryStore(tmp_path / "copy.duckdb") as copy:
        assert copy.stats() == counts and copy.integrity_check() == []
        assert [h.event.seq for h in copy.search_events("s1", ["zebra"])] == [0]


def test_open_store_by_url(tmp_path: Path) -> None:
    """open_store("duckdb:///PATH") opens this backend once its entry point is installed."""
    if "duckdb" not in available_backends():
        pytest.skip("the duckdb entry point is not installed in this environment")
    store = open_store(f"duckdb:///{tmp_path / 'm.duckdb'}")
    try:
        assert isinstance(store, DuckDBMemoryStore) and store.schema_version() == SCHEMA_VERSION
    finally:
        store.close()
