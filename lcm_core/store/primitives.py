"""The primitives a backend writes (`StoreBackend` in the port), declared for the base store.

`BaseStore` and its mixins call only these; a backend class lists its implementations
before `BaseStore` (or `SqlReads` does for an SQL backend), so these stubs are never
reached in a complete backend.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager
from typing import Any

from lcm_core.store import rows
from lcm_core.store.models import Event, EventHit, ItemHit, MemoryItem
from lcm_core.store.row_sql import Order
from lcm_core.text.tokens import scrub_surrogates

Row = dict[str, Any]


class StorePrimitives:
    """The primitives `BaseStore` builds on; each backend implements them (see the port)."""

    url: str

    def transaction(self) -> AbstractContextManager[None]:
        raise NotImplementedError

    def close(self) -> None:
        raise NotImplementedError

    def find_row(self, table: str, match: Mapping[str, Any]) -> Row | None:
        raise NotImplementedError

    def list_rows(
        self,
        table: str,
        match: Mapping[str, Any] | None = None,
        *,
        order: Order | None = None,
        limit: int | None = None,
        offset: int = 0,
        columns: Sequence[str] | None = None,
    ) -> list[Row]:
        raise NotImplementedError

    def count_rows(self, table: str, match: Mapping[str, Any] | None = None) -> int:
        raise NotImplementedError

    def put_row(self, table: str, row: Mapping[str, Any]) -> Any:
        raise NotImplementedError

    def update_rows(self, table: str, match: Mapping[str, Any], values: Mapping[str, Any]) -> int:
        raise NotImplementedError

    def delete_rows(self, table: str, match: Mapping[str, Any]) -> int:
        raise NotImplementedError

    def export_rows(self, table: str, *, session_id: str | None = None) -> Iterator[Row]:
        raise NotImplementedError

    def insert_events(self, events: Iterable[Event]) -> int:
        raise NotImplementedError

    def list_events(
        self,
        session_id: str,
        *,
        start_seq: int | None = None,
        end_seq: int | None = None,
        types: Sequence[str] | None = None,
        limit: int | None = None,
    ) -> list[Event]:
        raise NotImplementedError

    def get_events(self, session_id: str, seqs: Sequence[int]) -> list[Event]:
        raise NotImplementedError

    def search_events(
        self,
        session_id: str | None,
        terms: Sequence[str],
        *,
        types: Sequence[str] | None = None,
        limit: int = 50,
    ) -> list[EventHit]:
        raise NotImplementedError

    def search_items(
        self,
        session_id: str | None,
        terms: Sequence[str],
        *,
        statuses: Sequence[str] = ("active",),
        kinds: Sequence[str] | None = None,
        limit: int = 100,
    ) -> list[ItemHit]:
        raise NotImplementedError

    def integrity_check(self) -> list[str]:
        raise NotImplementedError

    def end_import(self, table: str) -> None:
        """Nothing by default: a backend whose ids come from a sequence moves it on."""

    # --- hooks --------------------------------------------------------------------
    # Text made storable (a backend whose text type refuses more, PostgreSQL and NUL,
    # passes its own).
    _clean_text: Callable[[str], str] = staticmethod(scrub_surrogates)

    def _event(self, row: Any, shape: str) -> Event:
        """One event row as an `Event`; `shape` names the query (a backend may memoise)."""
        return rows.event_from_row(row)

    def _item(self, row: Any, shape: str) -> MemoryItem:
        """One item row as a `MemoryItem`; `shape` names the query (a backend may memoise)."""
        return rows.item_from_row(row)
