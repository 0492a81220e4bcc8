"""Two-character item terms (Chinese words, mostly) are looked up in the pair index and
find exactly the items a LIKE over the whole table finds, whoever wrote them; a forgotten
or removed item leaves no pair behind."""

from __future__ import annotations

import random
import sqlite3
from pathlib import Path

import pytest

from lcm_core.store.models import MemoryEvent
from lcm_core.testing.builders import make_item
from lcm_store_sqlite import SQLiteMemoryStore
from lcm_store_sqlite import search as search_module

PIECES = ["预算", "端口", "部署", "上海", "区域", "Port", "DEPLOY", "A中", "元", "3000", "é", "ß"]
TERMS = ["预算", "端口", "上海", "算端", "a中", "A中", "中A", "署上", "海区", "é3", "元)"]


def _content(rng: random.Random) -> str:
    return "".join(rng.choice(PIECES) + rng.choice(["", " ", "，", ")"]) for _ in range(6))


def _fill(store: SQLiteMemoryStore, count: int, seed: int = 5) -> None:
    rng = random.Random(seed)
    for n in range(count):
        store.insert_item(make_item(f"s{n % 3}", f"{n}: {_content(rng)}"))


def _found(store: SQLiteMemoryStore, term: str) -> list[tuple[str, float]]:
    return [(h.item.id, h.score) for h in store.search_items(None, [term], limit=500)]


def _scanned(
    store: SQLiteMemoryStore, term: str, monkeypatch: pytest.MonkeyPatch
) -> list[tuple[str, float]]:
    """The same search with the pair index bypassed: LIKE over the whole table."""
    with monkeypatch.context() as patch:
        patch.setattr(search_module, "is_gram_term", lambda term: False)
        return _found(store, term)


def _pairs_of(path: Path, item_id: str) -> int:
    raw = sqlite3.connect(path)
    try:
        sql = (
            "SELECT COUNT(*) FROM item_grams WHERE item = "
            "(SELECT rowid FROM memory_items WHERE id = ?)"
        )
        return int(raw.execute(sql, (item_id,)).fetchone()[0])
    finally:
        raw.close()


def test_pair_lookup_finds_what_a_full_scan_finds(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = SQLiteMemoryStore(tmp_path / "m.sqlite")
    try:
        _fill(store, 300)
        for term in TERMS:
            expected = _scanned(store, term, monkeypatch)
            assert _found(store, term) == expected, term
        assert any(_found(store, term) for term in TERMS)
        # Mixed with a short ASCII term and a long one: the union of both paths.
        mixed = ["预算", "ß", "deploy"]
        with monkeypatch.context() as patch:
            patch.setattr(search_module, "is_gram_term", lambda term: False)
            expected_mixed = store.search_items(None, mixed, limit=500)
        assert store.search_items(None, mixed, limit=500) == expected_mixed
    finally:
        store.close()


def test_items_written_by_another_connection_are_found_before_and_after_indexing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "m.sqlite"
    store = SQLiteMemoryStore(path)
    try:
        _fill(store, 20)
        raw = sqlite3.connect(path)
        item = make_item("s9", "新的端口是8443")
        raw.execute(
            "INSERT INTO memory_items (id, session_id, kind, content, evidence_type, "
            "content_hash, created_at, updated_at) VALUES (?, ?, 'fact', ?, 'user_explicit', "
            "?, 'x', 'x')",
            (item.id, item.session_id, item.content, item.content_hash),
        )
        raw.commit()
        raw.close()
        # Queued, not yet indexed: still found (the queue is searched with LIKE).
        assert item.id in [i for i, _ in _found(store, "端口")]
        assert _found(store, "端口") == _scanned(store, "端口", monkeypatch)
        store.insert_item(make_item("s1", "任何一次写入都会先把队列编进索引"))  # a commit drains
        assert _pairs_of(path, item.id) > 0
        assert item.id in [i for i, _ in _found(store, "端口")]
        # Rewritten by another connection: the old pairs go, the new text is found.
        raw = sqlite3.connect(path)
        raw.execute("UPDATE memory_items SET content = '区域在上海' WHERE id = ?", (item.id,))
        raw.commit()
        raw.close()
        assert item.id not in [i for i, _ in _found(store, "端口")]
        assert item.id in [i for i, _ in _found(store, "上海")]
    finally:
        store.close()


def test_a_forgotten_or_purged_item_leaves_no_pairs(tmp_path: Path) -> None:
    path = tmp_path / "m.sqlite"
    store = SQLiteMemoryStore(path)
    try:
        kept, _ = store.insert_item(make_item("s1", "预算不超过3000元"))
        gone, _ = store.insert_item(make_item("s1", "端口改成8443，预算另算"))
        other, _ = store.insert_item(make_item("s2", "部署只在上海区域"))
        assert _pairs_of(path, gone.id) > 0 and _pairs_of(path, other.id) > 0
        store.forget_item(
            gone.id,
            MemoryEvent(memory_id=gone.id, session_id="s1", event="forgotten", actor="tester"),
        )
        assert _pairs_of(path, gone.id) == 0
        assert [h.item.id for h in store.search_items(None, ["端口"])] == []
        assert [h.item.id for h in store.search_items(None, ["预算"])] == [kept.id]
        store.purge_session("s2")
        raw = sqlite3.connect(path)
        left = raw.execute("SELECT COUNT(*) FROM item_grams WHERE gram = '上海'").fetchone()[0]
        raw.close()
        assert left == 0
    finally:
        store.close()
