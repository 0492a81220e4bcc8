"""The Retriever seam: ranking, evidence and assembly take their candidates from a retriever."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import pytest

from lcm_core.assembly.assemble import assemble
from lcm_core.config import load_config
from lcm_core.retrieval.rank import rank_items
from lcm_core.retrieval.retriever import LexicalRetriever, Retriever
from lcm_core.store.models import EventHit, ItemHit, MemoryItem
from lcm_core.store.ports import MemoryStore
from lcm_core.text.query import QuerySignals, query_signals

S = "sess"
# The question shares no word with the stored statements: only a retriever that knows
# what they mean (a semantic one, say) can find them.
QUESTION = "数据库在哪个端口上监听？"


@dataclass
class FakeRetriever:
    """A retriever that answers every query with fixed candidates and records its calls."""

    item_hits: list[ItemHit] = field(default_factory=list)
    turn_hits: list[EventHit] = field(default_factory=list)
    queries: list[str] = field(default_factory=list)

    def items(
        self,
        session_id: str,
        signals: QuerySignals,
        terms: Sequence[str],
        *,
        statuses: Sequence[str] = ("active",),
        limit: int = 100,
    ) -> list[ItemHit]:
        self.queries.append(signals.text)
        return [h for h in self.item_hits if h.item.status in statuses][:limit]

    def turns(
        self,
        session_id: str,
        signals: QuerySignals,
        terms: Sequence[str],
        *,
        types: Sequence[str] | None = None,
        limit: int = 50,
    ) -> list[EventHit]:
        self.queries.append(signals.text)
        return [h for h in self.turn_hits if types is None or h.event.type in types][:limit]


@pytest.fixture
def store(script: Any) -> MemoryStore:
    return script.store


@pytest.fixture
def port_item(script: Any) -> MemoryItem:
    script.user(1, "PostgreSQL listens on 5433 in the staging cluster")
    return script.item("PostgreSQL listens on 5433 in the staging cluster", [1])  # type: ignore[no-any-return]


def test_the_fake_is_a_retriever_and_so_is_the_lexical_one(store: MemoryStore) -> None:
    """Both satisfy the protocol the ranking asks for."""
    assert isinstance(FakeRetriever(), Retriever)
    assert isinstance(LexicalRetriever(store), Retriever)


def test_ranking_uses_the_candidates_a_retriever_gives(
    store: MemoryStore, port_item: MemoryItem
) -> None:
    """An item the lexical search cannot reach is ranked when the retriever offers it."""
    config = load_config()
    signals = query_signals(QUESTION)
    assert rank_items(store, S, signals, config).selected == ()
    fake = FakeRetriever(item_hits=[ItemHit(port_item, 3.0)])
    ranking = rank_items(store, S, signals, config, retriever=fake)
    assert [r.item.id for r in ranking.selected] == [port_item.id]
    assert fake.queries == [QUESTION]


def test_the_lexical_retriever_is_the_default(store: MemoryStore, script: Any) -> None:
    """Passing the lexical retriever explicitly ranks exactly as the default does."""
    script.user(1, "Use port 8080 for the API gateway, 端口 8080")
    script.item("Use port 8080 for the API gateway", [1])
    script.item("the gateway 端口 is 8080", [1])
    config = load_config()
    signals = query_signals("which port does the gateway use? 端口")
    default = rank_items(store, S, signals, config)
    explicit = rank_items(store, S, signals, config, retriever=LexicalRetriever(store))
    assert default.selected and default == explicit


def test_assembly_quotes_what_the_retriever_finds(
    store: MemoryStore, script: Any, port_item: MemoryItem
) -> None:
    """Items and raw turns from the retriever reach the block, with their labels."""
    turn = script.user(2, "staging 的数据库也开了只读副本，在 5434")
    fake = FakeRetriever(item_hits=[ItemHit(port_item, 3.0)], turn_hits=[EventHit(turn, 2.0)])
    plain = assemble(store, S, query=QUESTION)
    assert port_item.id not in plain.text
    result = assemble(store, S, query=QUESTION, retriever=fake)
    assert f"[mem {port_item.id}]" in result.text
    assert "5434" in result.text
    assert result.item_ids == (port_item.id,)


def test_disputed_notices_come_from_the_retriever(store: MemoryStore, script: Any) -> None:
    """The disputed-item notice asks the same retriever, not the store's search."""
    script.user(1, "the replica lag limit is 2 seconds")
    script.user(2, "the replica lag limit is 5 seconds")
    one = script.item("the replica lag limit is 2 seconds", [1])
    two = script.item("the replica lag limit is 5 seconds", [2])
    script.dispute(one, two)
    disputed = [store.get_item(one.id), store.get_item(two.id)]
    hits = [ItemHit(item, 1.0) for item in disputed if item is not None]
    question = "延迟上限是多少？"
    assert one.id not in assemble(store, S, query=question).text
    result = assemble(store, S, query=question, retriever=FakeRetriever(item_hits=hits))
    assert one.id in result.text and two.id in result.text
