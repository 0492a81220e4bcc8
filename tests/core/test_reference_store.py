"""The conformance suite run against the in-memory reference store (pure Python, no SQL)."""

from __future__ import annotations

import pytest

from lcm_core.store.memory import InMemoryStore, MemoryDatabase
from lcm_core.testing import StoreContractSuite, StoreFactory


class TestInMemoryStore(StoreContractSuite):
    """Every contract; handles from one factory share one database, so reopening works."""

    @pytest.fixture
    def store_factory(self) -> StoreFactory:
        """Open handles on one fresh in-memory database."""
        database = MemoryDatabase()
        return lambda: InMemoryStore(database)
