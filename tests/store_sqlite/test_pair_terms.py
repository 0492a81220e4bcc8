"""Two-character terms (a Chinese word, `py`, `CI`, `42`) in a search over the whole file
go through the trigram index's vocabulary and the texts' last two characters, and find
exactly the rows a LIKE over the whole table finds: in the middle or at the very end of a
text, in any ASCII case, whoever wrote the row."""

from __future__ import annotations

import random
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest

from lcm_core.testing.builders import make_event, make_item
from lcm_store_sqlite import SQLiteMemoryStore, pairs
from lcm_store_sqlite import search as search_module

PIECES = ["预算", "端口", "部署", "上海", "Py", "py", "CI", "ci", "42", "420", "é", "Éa", "ß", "元"]
TERMS = ["预算", "端口", "算端", "py", "PY", "ci", "42", "20", "元)", "ya", "é4", "éa", "Éa", "海p"]


def _text(rng: random.Random) -> str:
    pieces = [
        rng.choice(PIECES) + rng.choice(["", " ", "，", ")", "."]) for _ in range(rng.randint(1, 5))
    ]
    return "".join(pieces).strip() or "元"


@pytest.fixture
def store(tmp_path: Path) -> Iterator[SQLiteMemoryStore]:
    opened = SQLiteMemoryStore(tmp_path / "m.sqlite")
    rng = random.Random(7)
    for n in range(240):
        opened.insert_item(make_item(f"s{n % 3}", _text(rng), item_id=f"mem_{n:03d}"))
    opened.insert_events([make_event(f"s{n % 3}", n, _text(rng)) for n in range(240)])
    # Texts that are nothing but the pair, or end with it: no trigram starts there.
    opened.insert_item(make_item("s1", "py", item_id="mem_only"))
    opened.insert_item(make_item("s1", "deploy via CI", item_id="mem_end"))
    opened.insert_item(make_item("s2", "上调预算", item_id="mem_zh_end"))
    yield opened
    opened.close()


def _searches(
    store: SQLiteMemoryStore, term: str
) -> tuple[list[tuple[str, float]], list[tuple[int, float]]]:
    items = [(h.item.id, h.score) for h in store.search_items(None, [term], limit=400)]
    events = [(h.event.seq, h.score) for h in store.search_events(None, [term], limit=400)]
    return items, events


def _by_like(
    store: SQLiteMemoryStore, term: str, monkeypatch: pytest.MonkeyPatch
) -> tuple[list[tuple[str, float]], list[tuple[int, float]]]:
    """The same searches with the pair path off: LIKE over the whole table."""
    with monkeypatch.context() as patch:
        patch.setattr(search_module, "is_pair_term", lambda term: False)
        return _searches(store, term)


@pytest.mark.parametrize("window", [pairs.WINDOW, 2])
def test_a_pair_finds_what_a_like_over_the_table_finds(
    store: SQLiteMemoryStore, monkeypatch: pytest.MonkeyPatch, window: int
) -> None:
    # The default window answers common pairs by LIKE; a window of 2 rows sends every
    # pair through the vocabulary and the last-two-characters index.
    monkeypatch.setattr(pairs, "WINDOW", window)
    for term in TERMS:
        assert _searches(store, term) == _by_like(store, term, monkeypatch), term
    assert all(any(_searches(store, term)) for term in ("预算", "py", "ci"))
    # A short limit is filled from the first rows, as the LIKE fills it.
    for term in ("py", "预算"):
        with monkeypatch.context() as patch:
            patch.setattr(search_module, "is_pair_term", lambda term: False)
            expected = store.search_items(None, [term, "deploy"], limit=3)
        assert store.search_items(None, [term, "deploy"], limit=3) == expected


def test_a_pair_at_the_very_end_of_a_text_is_found(
    store: SQLiteMemoryStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(pairs, "WINDOW", 0)
    assert "mem_only" in [h.item.id for h in store.search_items(None, ["PY"], limit=400)]
    assert "mem_end" in [h.item.id for h in store.search_items(None, ["ci"], limit=400)]
    assert "mem_zh_end" in [h.item.id for h in store.search_items(None, ["预算"], limit=400)]


def test_rows_written_or_rewritten_by_another_connection_are_found(
    store: SQLiteMemoryStore, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(pairs, "WINDOW", 0)
    raw = sqlite3.connect(tmp_path / "m.sqlite")
    item = make_item("s9", "新端口")
    raw.execute(
        "INSERT INTO memory_items (id, session_id, kind, content, evidence_type, content_hash,"
        " created_at, updated_at) VALUES (?, ?, 'fact', ?, 'user_explicit', ?, 'x', 'x')",
        (item.id, item.session_id, item.content, item.content_hash),
    )
    raw.execute("UPDATE memory_items SET content = '区域在上海' WHERE id = 'mem_zh_end'")
    raw.commit()
    raw.close()
    assert item.id in [h.item.id for h in store.search_items(None, ["端口"], limit=400)]
    assert "mem_zh_end" not in [h.item.id for h in store.search_items(None, ["预算"], limit=400)]
    assert "mem_zh_end" in [h.item.id for h in store.search_items(None, ["上海"], limit=400)]


def test_the_last_two_characters_are_read_from_the_index(tmp_path: Path) -> None:
    """`tail_expression` is the expression schema v4 indexes: were they to drift apart,
    every two-character search would read the whole table again."""
    SQLiteMemoryStore(tmp_path / "m.sqlite").close()
    raw = sqlite3.connect(tmp_path / "m.sqlite")
    try:
        for table, column, index in (
            ("events", "text", "idx_events_tail"),
            ("memory_items", "content", "idx_memory_items_tail"),
        ):
            sql = f"SELECT rowid FROM {table} WHERE {pairs.tail_expression(column)} IN (?, ?)"
            plan = " ".join(
                row[3] for row in raw.execute("EXPLAIN QUERY PLAN " + sql, ("py", "预算"))
            )
            assert f"USING INDEX {index}" in plan, plan
    finally:
        raw.close()
