"""Two-character terms (a Chinese word, `py`, `CI`, `42`) in a search the trigram index
serves (the whole file, or a session past the scan threshold) go through the index's
vocabulary and the texts' last two characters, and find exactly the rows a LIKE over the
table finds: in the middle or at the very end of a text, in any ASCII case, under the
session, status and type filters, whoever wrote the row."""

from __future__ import annotations

import random
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest

from lcm_core.store.models import ItemChange
from lcm_core.testing.builders import lifecycle, make_event, make_item
from lcm_store_sqlite import SQLiteMemoryStore, pairs
from lcm_store_sqlite import search as search_module

PIECES = [
    "预算", "端口", "部署", "上海", "Py", "py", "CI", "ci", "42", "420", "é", "Éa", "ß", "元",
    "\ufffea", "\ufffda", "🚀x",
]  # fmt: skip
TERMS = [
    "预算", "端口", "算端", "py", "PY", "ci", "42", "20", "元)", "ya", "é4", "éa", "Éa", "海p",
    "\ufffea", "\ufffda", "🚀x", "%_", "a\\",
]  # fmt: skip
LIMITS = (3, 20, 400)


def _text(rng: random.Random) -> str:
    pieces = [
        rng.choice(PIECES) + rng.choice(["", " ", "，", ")", ".", "%_", "\\"])
        for _ in range(rng.randint(1, 5))
    ]
    return "".join(pieces).strip() or "元"


@pytest.fixture
def path(tmp_path: Path) -> Path:
    where = tmp_path / "m.sqlite"
    store = SQLiteMemoryStore(where)
    rng = random.Random(7)
    for n in range(240):
        item, _ = store.insert_item(make_item(f"s{n % 3}", _text(rng), item_id=f"mem_{n:03d}"))
        if n % 5 == 0:  # the status filter must matter
            store.update_item(item.id, ItemChange(status="retracted"), lifecycle(item, "retracted"))
    types = ("user/message", "assistant/message", "tool/result")
    store.insert_events(
        [make_event(f"s{n % 3}", n, _text(rng), type=types[n % 3]) for n in range(240)]
    )
    # Texts that are nothing but the pair, or end with it: no trigram starts there.
    store.insert_item(make_item("s1", "py", item_id="mem_only"))
    store.insert_item(make_item("s1", "deploy via CI", item_id="mem_end"))
    store.insert_item(make_item("s2", "上调预算", item_id="mem_zh_end"))
    store.close()
    # A NUL, written by another tool: LIKE reads a text up to it, and so must the pairs.
    raw = sqlite3.connect(where)
    for text, item_id in (("ab预算\x00端口", "mem_001"), ("端口py\x00xyz", "mem_002")):
        raw.execute("UPDATE memory_items SET content = ? WHERE id = ?", (text, item_id))
    raw.commit()
    raw.close()
    return where


@pytest.fixture
def store(path: Path) -> Iterator[SQLiteMemoryStore]:
    # scan_rows_max=0: a session's search goes to the index too, with its filters.
    opened = SQLiteMemoryStore(path, scan_rows_max=0)
    yield opened
    opened.close()


def _searches(store: SQLiteMemoryStore, terms: list[str]) -> list[list[tuple[object, float]]]:
    found: list[list[tuple[object, float]]] = []
    for limit in LIMITS:
        for session in (None, "s1"):
            for statuses in (("active",), ("active", "retracted")):
                hits = store.search_items(session, terms, statuses=statuses, limit=limit)
                found.append([(h.item.id, h.score) for h in hits])
            for types in (None, ["user/message"]):
                events = store.search_events(session, terms, types=types, limit=limit)
                found.append([((h.event.session_id, h.event.seq), h.score) for h in events])
    return found


def _by_like(
    store: SQLiteMemoryStore, terms: list[str], monkeypatch: pytest.MonkeyPatch
) -> list[list[tuple[object, float]]]:
    """The same searches with the pair path off: LIKE over the whole table."""
    with monkeypatch.context() as patch:
        patch.setattr(search_module, "is_pair_term", lambda term: False)
        return _searches(store, terms)


@pytest.mark.parametrize("window", [pairs.WINDOW, 40, 0])
def test_a_pair_finds_what_a_like_over_the_table_finds(
    store: SQLiteMemoryStore, monkeypatch: pytest.MonkeyPatch, window: int
) -> None:
    # The default window answers most pairs by LIKE among the newest rows; 40 rows send
    # the rarer ones, and 0 every one, through the vocabulary and the tail index.
    monkeypatch.setattr(pairs, "WINDOW", window)
    queries = [[term] for term in TERMS] + [["预算", "py", "ci"], ["端口", "ß", "deploy"]]
    for terms in queries:
        assert _searches(store, terms) == _by_like(store, terms, monkeypatch), terms
    assert all(any(_searches(store, [term])) for term in ("预算", "py", "ci"))


def test_terms_the_index_cannot_match_as_like_does_are_left_to_like() -> None:
    assert pairs.is_pair_term("预算") and pairs.is_pair_term("PY") and pairs.is_pair_term("4%")
    # A cased non-ASCII letter (the index folds its case), U+FFFD-U+FFFF (read as U+FFFD
    # by LIKE, kept by substr), one or three characters.
    for term in ("éa", "Σx", "\ufffea", "\ufffda", "元", "预算表"):
        assert not pairs.is_pair_term(term), term


def test_a_pair_at_the_very_end_of_a_text_is_found(
    store: SQLiteMemoryStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(pairs, "WINDOW", 0)
    assert "mem_only" in [h.item.id for h in store.search_items(None, ["PY"], limit=400)]
    assert "mem_end" in [h.item.id for h in store.search_items(None, ["ci"], limit=400)]
    assert "mem_zh_end" in [h.item.id for h in store.search_items(None, ["预算"], limit=400)]
    # Before a NUL, as LIKE reads it; after it, not at all.
    assert "mem_002" in [h.item.id for h in store.search_items(None, ["py"], limit=400)]
    assert "mem_001" not in [h.item.id for h in store.search_items(None, ["端口"], limit=400)]


def test_many_pair_terms_in_one_query(store: SQLiteMemoryStore) -> None:
    """More pairs than one OR of LIKEs may hold (SQLite caps an expression's depth)."""
    terms = [chr(0x4E00 + n) + chr(0x4E00 + n + 1) for n in range(0, 2400, 2)] + ["预算"]
    hits = store.search_items(None, terms, limit=400)
    assert "mem_zh_end" in [h.item.id for h in hits]


def test_rows_written_or_rewritten_by_another_connection_are_found(
    store: SQLiteMemoryStore, path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(pairs, "WINDOW", 0)
    raw = sqlite3.connect(path)
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


def test_the_last_two_characters_are_read_from_the_index(path: Path) -> None:
    """`tail_expression` is the expression schema v4 indexes: were they to drift apart,
    every two-character search would read the whole table again."""
    raw = sqlite3.connect(path)
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
