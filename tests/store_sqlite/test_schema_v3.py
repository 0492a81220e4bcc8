"""Schema v3: a v2 file migrates keeping rows and search, and sqlite-utils finds the FTS tables."""

from __future__ import annotations

import json
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from lcm_core.store.models import SCHEMA_VERSION, Event
from lcm_store_sqlite import SQLiteMemoryStore
from lcm_store_sqlite.schema import V1, V2

EVENTS = [
    ("s1", 1, "the sidecar port is 8765 on loopback"),
    ("s1", 2, "预算不超过3000元（含税）"),
    ("s1", 3, "deploy the port change on Friday, 周五上线"),
    ("s2", 1, "unrelated chatter about lunch"),
]
ITEMS = [
    ("mem_1", "s1", "constraint", "预算 3000 元（含税）", "active", None),
    ("mem_2", "s1", "fact", "sidecar port is 8765", "superseded", "mem_3"),
    ("mem_3", "s1", "fact", "sidecar port is 9000 now", "active", None),
]


def _build_v2(path: Path) -> None:
    """A schema-v2 file as lcm before v3 left it, with events, items and their FTS rows."""
    raw = sqlite3.connect(path)
    raw.executescript(V1)
    raw.executescript(V2)
    raw.execute("INSERT INTO meta (key, value) VALUES ('schema', '2')")
    raw.executemany(
        "INSERT INTO events (session_id, seq, type, text, content_hash, ingested_at) "
        "VALUES (?, ?, 'user/message', ?, 'h', 't')",
        EVENTS,
    )
    raw.executemany(
        "INSERT INTO memory_items (id, session_id, kind, content, status, superseded_by, "
        "evidence_type, content_hash, created_at, updated_at) "
        "VALUES (?, ?, ?, ?, ?, ?, 'user_explicit', ?, 't', 't')",
        [(*item, f"h_{item[0]}") for item in ITEMS],
    )
    raw.execute(
        "INSERT INTO validation_logs (session_id, target, ok, created_at) "
        "VALUES ('s1', 'answer', 1, 't')"
    )
    raw.commit()
    raw.close()


def _dump(path: Path) -> dict[str, list[tuple[object, ...]]]:
    raw = sqlite3.connect(path)
    try:
        tables = [
            r[0]
            for r in raw.execute(
                "SELECT name FROM sqlite_master WHERE type = 'table' AND sql NOT LIKE "
                "'%VIRTUAL TABLE%' AND name NOT LIKE '%fts%' AND name NOT IN "
                "('meta', 'sqlite_sequence', 'rewrites') ORDER BY name"
            )
        ]
        return {t: raw.execute(f"SELECT * FROM {t} ORDER BY rowid").fetchall() for t in tables}
    finally:
        raw.close()


QUERIES = ("port", "3000元", "周五上线", "8765", "含税")


def _fts_matches(path: Path) -> list[list[tuple[object, ...]]]:
    """Every query's matches in both FTS indexes, straight from SQL (old or new schema)."""
    raw = sqlite3.connect(path)
    try:
        return [
            raw.execute(
                f"SELECT rowid FROM {fts} WHERE {fts} MATCH ? ORDER BY rowid", (f'"{q}"',)
            ).fetchall()
            for fts in ("events_fts", "memory_fts")
            for q in QUERIES
        ]
    finally:
        raw.close()


def test_v2_file_migrates_to_v3_keeping_every_row_and_search(tmp_path: Path) -> None:
    path = tmp_path / "memory.sqlite"
    _build_v2(path)
    rows_before, matches_before = _dump(path), _fts_matches(path)
    assert any(matches_before)  # the v2 index did find things
    store = SQLiteMemoryStore(path)
    try:
        assert store.schema_version() == SCHEMA_VERSION
        assert store.get_meta("migration.v3") is not None
        assert sorted(h.event.seq for h in store.search_events("s1", ["port"])) == [1, 3]
        assert [h.event.seq for h in store.search_events("s1", ["周五上线"])] == [3]
        assert [h.item.id for h in store.search_items("s1", ["3000"])] == ["mem_1"]
        assert store.integrity_check() == []
    finally:
        store.close()
    assert _dump(path) == rows_before
    assert _fts_matches(path) == matches_before
    raw = sqlite3.connect(path)
    try:
        sql = dict(raw.execute("SELECT name, sql FROM sqlite_master WHERE name LIKE '%_fts'"))
        assert 'content="events"' in sql["events_fts"]
        assert 'content="memory_items"' in sql["memory_fts"]
    finally:
        raw.close()


def test_lcm_triggers_keep_the_v3_index_in_step(tmp_path: Path) -> None:
    path = tmp_path / "memory.sqlite"
    _build_v2(path)
    SQLiteMemoryStore(path).close()
    raw = sqlite3.connect(path)
    try:
        raw.execute("UPDATE events SET text = '端口改为 7000' WHERE seq = 1 AND session_id = 's1'")
        raw.execute("UPDATE memory_items SET status = 'retracted' WHERE id = 'mem_1'")
        raw.execute("DELETE FROM events WHERE session_id = 's2'")
        raw.commit()
        raw.execute("INSERT INTO events_fts (events_fts) VALUES ('integrity-check')")
        raw.execute("INSERT INTO memory_fts (memory_fts) VALUES ('integrity-check')")
        hits = raw.execute("SELECT rowid FROM events_fts WHERE events_fts MATCH '\"7000\"'")
        assert hits.fetchall() == [(1,)]
        triggers = [
            r[0] for r in raw.execute("SELECT name FROM sqlite_master WHERE type='trigger'")
        ]
    finally:
        raw.close()
    # lcm's own content-only triggers, no sqlite-utils ones that fire on every column;
    # and (v5) the two that count item rewrites for a handle's copy of a session.
    assert sorted(triggers) == sorted(
        [
            *(
                f"{t}_fts_{op}"
                for t in ("events", "memory")
                for op in ("insert", "delete", "update")
            ),
            "memory_items_rewritten",
            "memory_items_removed",
        ]
    )


def test_a_failed_v3_migration_leaves_the_v2_file_as_it_was(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from lcm_store_sqlite import connection as connection_module

    path = tmp_path / "memory.sqlite"
    _build_v2(path)
    before = _dump(path)
    broken = ((1, V1), (2, V2), (3, "DROP TABLE events_fts;\nTHIS IS NOT SQL;"))
    monkeypatch.setattr(connection_module, "MIGRATIONS", broken)
    with pytest.raises(Exception, match="syntax"):
        SQLiteMemoryStore(path)
    assert _dump(path) == before
    raw = sqlite3.connect(path)
    try:
        assert raw.execute("SELECT value FROM meta WHERE key = 'schema'").fetchone() == ("2",)
        assert raw.execute(
            "SELECT rowid FROM events_fts WHERE events_fts MATCH '\"3000元\"'"
        ).fetchall() == [(2,)]
    finally:
        raw.close()


def _sqlite_utils(*args: str) -> str:
    """Run the sqlite-utils command line as a user would, from this environment."""
    exe = shutil.which("sqlite-utils", path=str(Path(sys.executable).parent))
    command = [exe] if exe else [sys.executable, "-m", "sqlite_utils"]
    done = subprocess.run(
        [*command, *args], capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


@pytest.fixture
def lcm_file(tmp_path: Path) -> Path:
    path = tmp_path / "memory.sqlite"
    store = SQLiteMemoryStore(path)
    try:
        store.insert_events(
            Event(session, seq, "user/message", text) for session, seq, text in EVENTS
        )
    finally:
        store.close()
    _items_through_sql(path)
    return path


def _items_through_sql(path: Path) -> None:
    raw = sqlite3.connect(path)
    raw.executemany(
        "INSERT INTO memory_items (id, session_id, kind, content, status, superseded_by, "
        "evidence_type, content_hash, created_at, updated_at) "
        "VALUES (?, ?, ?, ?, ?, ?, 'user_explicit', ?, 't', 't')",
        [(*item, f"h_{item[0]}") for item in ITEMS],
    )
    raw.commit()
    raw.close()


def test_sqlite_utils_counts_the_tables_of_an_lcm_file(lcm_file: Path) -> None:
    counts = {
        row["table"]: row["count"]
        for row in json.loads(_sqlite_utils("tables", str(lcm_file), "--counts"))
    }
    assert counts["events"] == len(EVENTS) and counts["memory_items"] == len(ITEMS)
    assert counts["events_fts"] == len(EVENTS)


def test_sqlite_utils_searches_events_and_items_of_an_lcm_file(lcm_file: Path) -> None:
    events = json.loads(_sqlite_utils("search", str(lcm_file), "events", "port"))
    assert sorted((e["session_id"], e["seq"]) for e in events) == [("s1", 1), ("s1", 3)]
    chinese = json.loads(_sqlite_utils("search", str(lcm_file), "events", "周五上线"))
    assert [e["seq"] for e in chinese] == [3]
    items = json.loads(_sqlite_utils("search", str(lcm_file), "memory_items", "3000"))
    assert [i["id"] for i in items] == ["mem_1"]
    # The result is the row from the content table, not just the indexed column.
    assert items[0]["kind"] == "constraint" and items[0]["status"] == "active"


def test_doctor_sees_the_fts_tables_as_sqlite_utils_does(tmp_path: Path) -> None:
    from lcm_core import usecases

    path = tmp_path / "memory.sqlite"
    _build_v2(path)
    store = SQLiteMemoryStore(path)
    try:
        layout = store.introspect()
        assert layout["fts"]["events"] == "events_fts"
        assert layout["fts"]["memory_items"] == "memory_fts"
        assert layout["tables"]["events"] == len(EVENTS)
        assert len(layout["triggers"]) == 8  # six FTS triggers, two rewrite counters (v5)
        assert usecases.health(store).problems == ()
    finally:
        store.close()
    # The v2 spelling (single quotes) is invisible to the tools: doctor says so.
    raw = sqlite3.connect(path)
    raw.executescript(
        "DROP TABLE events_fts; CREATE VIRTUAL TABLE events_fts USING fts5("
        "text, content='events', content_rowid='rowid', tokenize='trigram');"
        "INSERT INTO events_fts (events_fts) VALUES ('rebuild');"
    )
    raw.close()
    store = SQLiteMemoryStore(path)
    try:
        problems = usecases.health(store).problems
        assert problems == ("events: sqlite-utils and Datasette find no full-text index",)
    finally:
        store.close()
