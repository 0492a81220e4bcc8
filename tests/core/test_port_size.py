"""A backend writes the primitives (`StoreBackend`); `BaseStore` derives the rest of the port."""

from __future__ import annotations

import inspect

import pytest

from lcm_core.store.base import BaseStore
from lcm_core.store.memory import InMemoryStore
from lcm_core.store.ports import MemoryStore
from lcm_core.store.primitives import StoreBackend

# StoreBackend's one method with a default: only a backend whose ids come from a
# sequence needs to move it after an import.
DEFAULTED = {"end_import"}


def _methods(cls: type) -> set[str]:
    return {
        name
        for name, member in inspect.getmembers(cls, inspect.isfunction)
        if not name.startswith("_")
    }


def _required() -> set[str]:
    """The primitives whose stub raises: what a backend must write."""
    bare = StoreBackend()
    required = set()
    for name in _methods(StoreBackend):
        parameters = inspect.signature(getattr(bare, name)).parameters.values()
        args = [
            "t" for p in parameters if p.kind is p.POSITIONAL_OR_KEYWORD and p.default is p.empty
        ]
        try:
            getattr(bare, name)(*args)
        except NotImplementedError:
            required.add(name)
        except TypeError as exc:
            pytest.fail(f"{name}: the probe called it wrongly ({exc})")
    return required


def test_a_backend_writes_fourteen_methods() -> None:
    """The required surface: keyed rows, events, item search, transactions and close."""
    required = _required()
    assert len(required) == 14 <= 25
    assert {"find_row", "put_row", "search_items", "transaction", "close"} <= required
    assert "integrity_check" not in required  # the shared checks are the base store's
    assert _methods(StoreBackend) == required | DEFAULTED
    assert required | DEFAULTED <= _methods(MemoryStore)


def test_the_base_store_derives_every_other_method_of_the_port() -> None:
    """Each MemoryStore method that is not a primitive is written once, on BaseStore."""
    derived = _methods(MemoryStore) - _methods(StoreBackend)
    assert len(derived) == 58 - 15
    missing = {name for name in derived if getattr(BaseStore, name, None) is None}
    assert missing == set()


def test_the_reference_store_writes_only_primitives() -> None:
    """The in-memory store overrides nothing BaseStore derives but its schema version
    (which lives in its meta from the start)."""
    own = set(vars(InMemoryStore)) | set(vars(InMemoryStore.__mro__[1]))
    derived = _methods(MemoryStore) - _methods(StoreBackend)
    assert own & derived == {"schema_version"}
    assert isinstance(InMemoryStore(), MemoryStore)
