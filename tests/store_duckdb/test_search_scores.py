"""The DuckDB score is the core's `score_matches`, computed in SQL, and equals SQLite's."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("duckdb")

from lcm_core.store.models import ItemChange
from lcm_core.store.ports import MemoryStore
from lcm_core.testing.builders import lifecycle, make_event, make_item
from lcm_core.text.tokens import score_matches
from lcm_store_duckdb import DuckDBMemoryStore
from lcm_store_sqlite import SQLiteMemoryStore

# Texts where a count can go wrong: overlapping copies ("ana" in "banana"), case,
# repeated words, very short and empty texts, CJK, and one long text.
TEXTS = (
    "banana bandana ana",
    "Banana BANANA",
    "ananas are not bananas",
    "coffee coffee coffee and tea",
    "coffee and some other drink",
    "ab",
    "",
    "预算不超过3000元（含税）",
    "不超过 不超过 预算",
    "aaaa aaa",
    "a long note about coffee " + "and more words " * 40,
)
TERM_SETS = (
    ["ana"],
    ["banana", "ana"],
    ["coffee"],
    ["coffee", "tea", "ab"],
    ["不超过"],
    ["不超过", "预算"],
    ["aaa"],
    ["aa", "aaa"],
    ["and"],
)


def _fill(store: MemoryStore, session: str) -> None:
    store.insert_events([make_event(session, i, text or " ") for i, text in enumerate(TEXTS)])
    for i, text in enumerate(TEXTS):
        if text:
            store.insert_item(make_item(session, text, item_id=f"mem_{session}_{i:02d}"))


@pytest.mark.parametrize("terms", TERM_SETS)
def test_scores_equal_sqlite(tmp_path: Path, terms: list[str]) -> None:
    """every hit's score equals the SQLite store's for the same one-session data."""
    with (
        SQLiteMemoryStore(tmp_path / "m.sqlite") as sqlite,
        DuckDBMemoryStore(tmp_path / "m.duckdb") as duck,
    ):
        _fill(sqlite, "s1")
        _fill(duck, "s1")
        for session in ("s1", None):
            expected = [(h.item.id, h.score) for h in sqlite.search_items(session, terms)]
            got = [(h.item.id, h.score) for h in duck.search_items(session, terms)]
            assert [i for i, _ in got] == [i for i, _ in expected]
            assert [s for _, s in got] == pytest.approx([s for _, s in expected], rel=1e-9)
            expected_events = [(h.event.seq, h.score) for h in sqlite.search_events(session, terms)]
            got_events = [(h.event.seq, h.score) for h in duck.search_events(session, terms)]
            assert [s for s, _ in got_events] == [s for s, _ in expected_events]
            assert [v for _, v in got_events] == pytest.approx(
                [v for _, v in expected_events], rel=1e-9
            )


def test_session_search_ignores_other_sessions(tmp_path: Path) -> None:
    """bm25 statistics come from the searched session, so other sessions do not move scores."""
    with (
        DuckDBMemoryStore(tmp_path / "alone.duckdb") as alone,
        DuckDBMemoryStore(tmp_path / "shared.duckdb") as shared,
    ):
        _fill(alone, "s1")
        _fill(shared, "s1")
        shared.insert_events([make_event("s2", i, "coffee " * (i + 1)) for i in range(30)])
        for terms in TERM_SETS:
            expected = [(h.event.seq, h.score) for h in alone.search_events("s1", terms)]
            assert [(h.event.seq, h.score) for h in shared.search_events("s1", terms)] == expected


@pytest.mark.parametrize("terms", TERM_SETS)
def test_scores_equal_score_matches(tmp_path: Path, terms: list[str]) -> None:
    """each hit's score is what score_matches gives over the scope's matching rows."""
    with DuckDBMemoryStore(tmp_path / "m.duckdb") as duck:
        _fill(duck, "s1")
        _fill(duck, "s2")
        gone = duck.get_item("mem_s1_03")
        assert gone is not None
        duck.update_item(gone.id, ItemChange(status="retracted"), lifecycle(gone, "retracted"))
        hits = duck.search_items("s1", terms)
        active = [i for i in duck.list_items("s1", statuses=["active"])]
        matching = [i for i in active if any(t.casefold() in i.content.casefold() for t in terms)]
        expected = dict(
            zip(
                [i.id for i in matching],
                score_matches([i.content for i in matching], terms, len(duck.list_items("s1"))),
                strict=True,
            )
        )
        assert {h.item.id: h.score for h in hits} == pytest.approx(expected, rel=1e-12)
