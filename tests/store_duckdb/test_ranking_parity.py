"""The same conversation in the SQLite and the DuckDB store ranks the same items first."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

pytest.importorskip("duckdb")

from lcm_core.store.models import ItemChange
from lcm_core.store.ports import MemoryStore
from lcm_core.testing.builders import lifecycle, make_event, make_item
from lcm_core.text.tokens import tokenize
from lcm_store_duckdb import DuckDBMemoryStore
from lcm_store_sqlite import SQLiteMemoryStore

SESSION = "trip-and-deploy"

# One conversation: travel planning and a database migration, in English, Chinese and
# both, with ids, numbers and short words, and repeated words so bm25 has work to do.
TURNS = (
    "The hotel budget is 3000 yuan per night, breakfast included.",
    "Actually the hotel budget is 2500 yuan, not 3000.",
    "预算不超过3000元（含税），酒店要靠近车站。",
    "酒店预订改到周五，预算不变。",
    "We will migrate PostgreSQL to the staging cluster before Friday.",
    "周五前把 PostgreSQL 迁移到 staging 环境。",
    "The migration plan: dump, restore, verify row counts, switch DNS.",
    "数据库迁移之后要验证行数。",
    "Move the db to v2 of the schema; v2 adds validation logs.",
    "The ui team wants the db dashboard in v2 too.",
    "Redis cache latency is 40 ms at p95; the cache should stay warm.",
    "Cache invalidation runs every 5 minutes.",
    "Train ticket w123 is booked for Monday 08:15.",
    "Flight LH 4711 lands at 18:40; taxi to the hotel.",
    "火车票已经订好，周一早上八点出发。",
    "Use the nginx proxy config from the staging branch.",
    "nginx proxy error 502 after the restart; check the upstream config.",
    "Decision: keep PostgreSQL 16, do not upgrade during the trip.",
    "Preference: window seat on the train, aisle on the flight.",
    "Open question: does the hotel have parking for the rental car?",
)

QUERIES = (
    "what is the hotel budget",
    "酒店预算多少",
    "PostgreSQL 迁移 staging",
    "数据库迁移",
    "db v2",
    "ui",
    "redis cache latency",
    "train ticket w123",
    "火车票 周一",
    "nginx proxy error",
    "3000",
    "flight 4711 hotel",
)


def _load(store: MemoryStore) -> None:
    """Write the conversation as events and one item per turn, then supersede one item."""
    store.insert_events([make_event(SESSION, seq, text) for seq, text in enumerate(TURNS)])
    items = [
        store.insert_item(make_item(SESSION, text, derived_from_seq=seq))[0]
        for seq, text in enumerate(TURNS)
    ]
    old, new = items[0], items[1]
    store.update_item(
        old.id,
        ItemChange(status="superseded", superseded_by=new.id),
        lifecycle(old, "superseded", by=new.id),
    )


@pytest.fixture(scope="module")
def stores(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[MemoryStore, MemoryStore]]:
    """The conversation loaded into a SQLite and a DuckDB store in one folder."""
    folder: Path = tmp_path_factory.mktemp("parity")
    sqlite, duck = SQLiteMemoryStore(folder / "m.sqlite"), DuckDBMemoryStore(folder / "m.duckdb")
    _load(sqlite)
    _load(duck)
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
