"""The Retriever seam: ranking, evidence and assembly take their candidates from a retriever."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import pytest

from lcm_core.assembly.assemble import assemble
from lcm_core.config import load_config
from lcm_core.retrieval.evidence import retrieve
from lcm_core.retrieval.retriever import LexicalRetriever, Pool, ScoredTurn
from lcm_core.store.models import Event, MemoryItem
from lcm_core.store.ports import MemoryStore
from lcm_core.text.query import query_signals

S = "sess"
# The question shares no word with the stored statements: only a retriever that knows
# what they mean (a semantic one, say) can find them.
QUESTION = "它蹲在几号门口？"


@dataclass
class FakeRetriever:
    """A retriever that answers every query with fixed candidates and records its calls."""

    item_hits: list[tuple[MemoryItem, float]] = field(default_factory=list)
    turn_hits: list[tuple[Event, float]] = field(default_factory=list)
    queries: list[str] = field(default_factory=list)

    def pool(
        self,
        store: MemoryStore,
        session_id: str,
        text: str,
        turn_types: Sequence[str] | None,
    ) -> Pool:
        self.queries.append(text)
        turns = {
            e.seq: ScoredTurn(e, score)
            for e, score in self.turn_hits
            if turn_types is None or e.type in turn_types
        }
        return Pool(items=tuple(self.item_hits), turns=turns, asked=True)


@pytest.fixture
def store(script: Any) -> MemoryStore:
    return script.store


@pytest.fixture
def port_item(script: Any) -> MemoryItem:
    script.user(1, "PostgreSQL listens on 5433 in the staging cluster")
    return script.item("PostgreSQL listens on 5433 in the staging cluster", [1])  # type: ignore[no-any-return]


def test_ranking_uses_the_candidates_a_retriever_gives(
    store: MemoryStore, port_item: MemoryItem
) -> None:
    """An item the lexical search cannot reach is ranked when the retriever offers it."""
    config = load_config()
    signals = query_signals(QUESTION)
    assert retrieve(store, S, signals, config).ranking.selected == ()
    fake = FakeRetriever(item_hits=[(port_item, 3.0)])
    ranking = retrieve(store, S, signals, config, retriever=fake).ranking
    assert [r.item.id for r in ranking.selected] == [port_item.id]
    assert fake.queries == [QUESTION]


def test_the_lexical_retriever_is_the_default(store: MemoryStore, script: Any) -> None:
    """Passing the lexical retriever explicitly ranks exactly as the default does."""
    script.user(1, "Use port 8080 for the API gateway, 端口 8080")
    script.item("Use port 8080 for the API gateway", [1])
    script.item("the gateway 端口 is 8080", [1])
    config = load_config()
    signals = query_signals("which port does the gateway use? 端口")
    default = retrieve(store, S, signals, config)
    explicit = retrieve(store, S, signals, config, retriever=LexicalRetriever(config.retrieval))
    assert default.ranking.selected and default == explicit


def test_assembly_quotes_what_the_retriever_finds(
    store: MemoryStore, script: Any, port_item: MemoryItem
) -> None:
    """Items and raw turns from the retriever reach the block, with their labels."""
    turn = script.user(2, "staging 的数据库也开了只读副本，在 5434")
    fake = FakeRetriever(item_hits=[(port_item, 3.0)], turn_hits=[(turn, 2.0)])
    plain = assemble(store, S, query=QUESTION)
    assert port_item.id not in plain.text
    result = assemble(store, S, query=QUESTION, retriever=fake)
    assert f"[mem {port_item.id}]" in result.text
    assert "5434" in result.text
    assert result.item_ids == (port_item.id,)
