"""The Retriever seam: where ranking gets its scored candidates, items and raw turns.

Ranking, evidence and assembly ask a `Retriever` for candidates and score them in the
core, so another way of finding candidates (a semantic index, say) plugs in here
without touching the ranking. `LexicalRetriever`, the default, asks the store's own
term search (`search_items`, `search_events`), which every backend answers alike.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from lcm_core.store.models import EventHit, ItemHit
from lcm_core.store.ports import EventStore, ItemStore
from lcm_core.text.query import QuerySignals


@runtime_checkable
class Retriever(Protocol):
    """Scored candidates for one query: memory items and raw turns, best first."""

    def items(
        self,
        session_id: str,
        signals: QuerySignals,
        terms: Sequence[str],
        *,
        statuses: Sequence[str] = ("active",),
        limit: int = 100,
    ) -> list[ItemHit]:
        """Items of these statuses that match the query; `terms` are its derived search terms."""
        ...

    def turns(
        self,
        session_id: str,
        signals: QuerySignals,
        terms: Sequence[str],
        *,
        types: Sequence[str] | None = None,
        limit: int = 50,
    ) -> list[EventHit]:
        """Stored events (of these types, when given) that match the query."""
        ...


class SearchableStore(EventStore, ItemStore, Protocol):
    """The two roles whose term search the lexical retriever asks."""


@dataclass(frozen=True, slots=True)
class LexicalRetriever:
    """Today's retrieval: the store's literal term search over items and events."""

    store: SearchableStore

    def items(
        self,
        session_id: str,
        signals: QuerySignals,
        terms: Sequence[str],
        *,
        statuses: Sequence[str] = ("active",),
        limit: int = 100,
    ) -> list[ItemHit]:
        """The store's item hits for the terms (the signals are not needed here)."""
        return self.store.search_items(session_id, terms, statuses=statuses, limit=limit)

    def turns(
        self,
        session_id: str,
        signals: QuerySignals,
        terms: Sequence[str],
        *,
        types: Sequence[str] | None = None,
        limit: int = 50,
    ) -> list[EventHit]:
        """The store's event hits for the terms."""
        return self.store.search_events(session_id, terms, types=types, limit=limit)
