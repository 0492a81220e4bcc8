"""The shared base of every contract mixin: requirements, the factory and store fixtures."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import ClassVar

import pytest

from lcm_core.store.ports import MemoryStore

StoreFactory = Callable[[], MemoryStore]


@dataclass(frozen=True, slots=True)
class StoreRequirements:
    """What a backend under test can do beyond the port; override per test class.

    `persistent` means each call of `store_factory` opens the same database again, so
    data survives `close()` and two handles can exist at once. An in-memory database
    sets it to False and the contracts needing it are skipped.
    """

    persistent: bool = True


def require(store: object, capability: type) -> None:
    """Skip the running test unless `store` implements the optional `capability` Protocol."""
    if not isinstance(store, capability):
        pytest.skip(f"{type(store).__name__} does not implement {capability.__name__}")


class StoreContractBase:
    """Fixtures every contract needs; a backend's test class overrides `store_factory`."""

    requirements: ClassVar[StoreRequirements] = StoreRequirements()

    @pytest.fixture
    def store_factory(self) -> StoreFactory:
        """A zero-argument callable returning a new handle on one fresh database."""
        raise NotImplementedError(
            "override store_factory in your test class: return a zero-argument callable "
            "that opens a new handle on the same fresh database each time it is called"
        )

    @pytest.fixture
    def store(self, store_factory: StoreFactory) -> Iterator[MemoryStore]:
        """One open handle on the test's database, closed when the test ends."""
        handle = store_factory()
        try:
            yield handle
        finally:
            handle.close()

    def need_persistent(self) -> None:
        """Skip the running test unless the factory reopens the same database."""
        if not self.requirements.persistent:
            pytest.skip("the backend under test is not persistent (requirements.persistent)")
