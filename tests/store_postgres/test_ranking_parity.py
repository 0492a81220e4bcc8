"""The same conversation in SQLite, DuckDB and PostgreSQL ranks identically, scores included."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from lcm_core.store.ports import MemoryStore
from lcm_core.testing.parity import QUERIES, SESSION, load_parity_conversation
from lcm_core.text.tokens import tokenize
from lcm_store_duckdb import DuckDBMemoryStore
from lcm_store_postgres import PostgresMemoryStore
from lcm_store_sqlite import SQLiteMemoryStore

Stores = dict[str, MemoryStore]


@pytest.fixture
def stores(tmp_path: Path, tenant_url: str) -> Iterator[Stores]:
    """The conversation in all three backends (PostgreSQL as a tenant role)."""
    opened: Stores = {
        "sqlite": SQLiteMemoryStore(tmp_path / "m.sqlite"),
        "duckdb": DuckDBMemoryStore(tmp_path / "m.duckdb"),
        "postgres": PostgresMemoryStore(tenant_url),
    }
    for store in opened.values():
        load_parity_conversation(store)
    yield opened
    for store in opened.values():
        store.close()


def _items(
    store: MemoryStore, query: str, statuses: tuple[str, ...] = ("active",)
) -> list[tuple[str, float]]:
    return [
        (h.item.id, h.score)
        for h in store.search_items(SESSION, tokenize(query), statuses=statuses)
    ]


def _events(
    store: MemoryStore, query: str, session: str | None = SESSION
) -> list[tuple[int, float]]:
    return [(h.event.seq, h.score) for h in store.search_events(session, tokenize(query))]


def _same(got: list[tuple[object, float]], expected: list[tuple[object, float]]) -> None:
    assert [key for key, _ in got] == [key for key, _ in expected]
    assert [s for _, s in got] == pytest.approx([s for _, s in expected], rel=1e-9, abs=1e-12)


def test_every_query_ranks_alike_on_three_backends(stores: Stores) -> None:
    """items (active, superseded, both) and events: same order and scores as SQLite."""
    reference = stores["sqlite"]
    for query in QUERIES:
        expected_items = _items(reference, query)
        expected_events = _events(reference, query)
        assert expected_items and expected_events, query
        for name in ("duckdb", "postgres"):
            _same(_items(stores[name], query), expected_items)
            _same(_events(stores[name], query), expected_events)
    for statuses in (("superseded",), ("active", "superseded")):
        expected = _items(reference, "hotel budget 3000", statuses)
        _same(_items(stores["postgres"], "hotel budget 3000", statuses), expected)


def test_search_across_sessions_finds_the_same_rows(stores: Stores) -> None:
    """with no session given, PostgreSQL finds the same events as SQLite for each query."""
    for query in QUERIES:
        expected = {seq for seq, _ in _events(stores["sqlite"], query, None)}
        assert {seq for seq, _ in _events(stores["postgres"], query, None)} == expected, query
