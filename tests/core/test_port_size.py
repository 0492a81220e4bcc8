"""A backend writes the primitives (`StoreBackend`); `BaseStore` derives the rest of the port."""

from __future__ import annotations

import inspect

from lcm_core.store.base import BaseStore
from lcm_core.store.memory import InMemoryStore
from lcm_core.store.ports import MemoryStore, StoreBackend
from lcm_core.store.primitives import StorePrimitives


def _methods(cls: type) -> set[str]:
    return {
        name
        for name, member in inspect.getmembers(cls, inspect.isfunction)
        if not name.startswith("_")
    }


def test_a_backend_writes_fifteen_methods() -> None:
    """The required surface: keyed rows, events, item search, integrity, transactions."""
    required = _methods(StoreBackend)
    assert len(required) == 15 <= 25
    assert {"find_row", "put_row", "search_items", "transaction", "integrity_check"} <= required
    # The base store declares exactly these as what it builds on (plus end_import, which
    # has a default), so the two lists cannot drift apart.
    assert _methods(StorePrimitives) == required | {"end_import"}


def test_the_base_store_derives_every_other_method_of_the_port() -> None:
    """Each MemoryStore method that is not a primitive is written once, on BaseStore."""
    derived = _methods(MemoryStore) - _methods(StoreBackend)
    missing = {
        name
        for name in derived
        if getattr(BaseStore, name, None) is getattr(StorePrimitives, name, None)
    }
    assert missing == {"end_import"}  # a default no-op: only a backend with sequences moves them
    assert len(derived) == 58 - 15


def test_the_reference_store_writes_only_primitives() -> None:
    """The in-memory store overrides nothing BaseStore derives, but what it states better
    (its schema version lives in meta from the start) and its own scratch handle."""
    own = {name for name in vars(InMemoryStore) if not name.startswith("_")}
    own |= {name for name in vars(InMemoryStore.__mro__[1]) if not name.startswith("_")}
    derived = _methods(MemoryStore) - _methods(StoreBackend) - {"end_import"}
    assert own & derived == {"schema_version"}
    assert isinstance(InMemoryStore(), MemoryStore)
