"""`StoreBackend`: the 14 primitives a backend writes, with the hooks it may override.

`BaseStore` and its mixins call only these, and derive every other method of the port
(`lcm_core.store.ports.MemoryStore`) from them. A backend class lists its
implementations before `BaseStore` (an SQL backend gets the reads from `SqlReads`), so
a stub here raises only in a backend that forgot one. Each primitive's contract is the
docstring of the role Protocol in `ports` that names it (`RowStore.list_rows`, ...).
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


class StoreBackend:
    """The primitives `BaseStore` builds on: what a backend must write."""

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

    def end_import(self, table: str) -> None:
        """Nothing by default: a backend whose ids come from a sequence moves it on."""

    # --- hooks --------------------------------------------------------------------
    # `find_row` and `list_rows` as the base store reads them: rows read by column name,
    # in whatever type the backend has them (an SQL backend skips the copy into a dict
    # that a caller of the public methods gets).
    def _find(self, table: str, match: Mapping[str, Any]) -> Any | None:
        return self.find_row(table, match)

    def _list(
        self,
        table: str,
        match: Mapping[str, Any] | None = None,
        *,
        order: Order | None = None,
        limit: int | None = None,
        offset: int = 0,
        columns: Sequence[str] | None = None,
    ) -> Sequence[Any]:
        return self.list_rows(
            table, match, order=order, limit=limit, offset=offset, columns=columns
        )

    # Text made storable (a backend whose text type refuses more, PostgreSQL and NUL,
    # passes its own).
    _clean_text: Callable[[str], str] = staticmethod(scrub_surrogates)

    def _event(self, row: Any, shape: str) -> Event:
        """One event row as an `Event`; `shape` names the query (a backend may memoise)."""
        return rows.event_from_row(row)

    def _item(self, row: Any, shape: str) -> MemoryItem:
        """One item row as a `MemoryItem`; `shape` names the query (a backend may memoise)."""
        return rows.item_from_row(row)

    def _store_problems(self) -> list[str]:
        """What the backend finds wrong in its own files (indexes, side tables, security);
        the base store adds the checks every store shares."""
        return []

    def _dangling_successors(self) -> int:
        """How many items name a successor (`superseded_by`) that no item is."""
        raise NotImplementedError


class OnConnection:
    """`transaction` and `close` of a backend that keeps one connection object in `self._db`
    (its own class, which nests transactions and knows how to end)."""

    _db: Any

    def transaction(self) -> AbstractContextManager[None]:
        opened: AbstractContextManager[None] = self._db.transaction()
        return opened

    def close(self) -> None:
        self._db.close()
