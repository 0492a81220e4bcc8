"""The same conversation in the SQLite and the DuckDB store ranks the same items first."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

pytest.importorskip("duckdb")

from lcm_core.store.ports import MemoryStore
from lcm_core.testing.parity import QUERIES, SESSION, load_parity_conversation
from lcm_core.text.tokens import tokenize
from lcm_store_duckdb import DuckDBMemoryStore
from lcm_store_sqlite import SQLiteMemoryStore


@pytest.fixture(scope="module")
def stores(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[MemoryStore, MemoryStore]]:
    """The conversation loaded into a SQLite and a DuckDB store in one folder."""
    folder: Path = tmp_path_factory.mktemp("parity")
    sqlite, duck = SQLiteMemoryStore(folder / "m.sqlite"), DuckDBMemoryStore(folder / "m.duckdb")
    load_parity_conversation(sqlite)
    load_parity_conversation(duck)
    yield sqlite, duck
    sqlite.close()
    duck.close()


@pytest.mark.parametrize("query", QUERIES)
def test_items_rank_the_same_top_item(stores: tuple[MemoryStore, MemoryStore], query: str) -> None:
    """both backends rank the same item first for the query's terms."""
    sqlite, duck = stores
    terms = tokenize(query)
    expected, got = sqlite.search_items(SESSION, terms), duck.search_items(SESSION, terms)
    assert expected, f"the query {query!r} should find something"
    assert got and got[0].item.id == expected[0].item.id


@pytest.mark.parametrize("query", QUERIES)
def test_items_rank_alike_with_equal_scores(
    stores: tuple[MemoryStore, MemoryStore], query: str
) -> None:
    """with one session in the file, the whole item ranking and every score agree."""
    sqlite, duck = stores
    terms = tokenize(query)
    expected = [(h.item.id, h.score) for h in sqlite.search_items(SESSION, terms)]
    got = [(h.item.id, h.score) for h in duck.search_items(SESSION, terms)]
    assert [i for i, _ in got] == [i for i, _ in expected]
    assert [s for _, s in got] == pytest.approx([s for _, s in expected], rel=1e-9, abs=1e-12)


@pytest.mark.parametrize("query", QUERIES)
def test_events_rank_alike(stores: tuple[MemoryStore, MemoryStore], query: str) -> None:
    """event search ranks the same events in the same order on both backends."""
    sqlite, duck = stores
    terms = tokenize(query)
    expected = [(h.event.seq, h.score) for h in sqlite.search_events(SESSION, terms)]
    got = [(h.event.seq, h.score) for h in duck.search_events(SESSION, terms)]
    assert expected and got[0][0] == expected[0][0]
    assert [s for s, _ in got] == [s for s, _ in expected]
    assert [v for _, v in got] == pytest.approx([v for _, v in expected], rel=1e-9, abs=1e-12)


def test_superseded_items_rank_alike(stores: tuple[MemoryStore, MemoryStore]) -> None:
    """searching other statuses ranks alike too (bm25 statistics include every status)."""
    sqlite, duck = stores
    terms = tokenize("hotel budget 3000")
    for statuses in (["superseded"], ["active", "superseded"]):
        expected = [h.item.id for h in sqlite.search_items(SESSION, terms, statuses=statuses)]
        assert [h.item.id for h in duck.search_items(SESSION, terms, statuses=statuses)] == expected
