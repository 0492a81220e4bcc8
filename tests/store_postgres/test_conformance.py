"""The storage conformance suite against PostgreSQL, connected as a non-owner tenant role."""

from __future__ import annotations

import pytest

from lcm_core.testing import StoreContractSuite, StoreFactory
from lcm_store_postgres import PostgresMemoryStore


class TestPostgresStore(StoreContractSuite):
    """Every contract, each test as a tenant role of its own on one shared database."""

    @pytest.fixture
    def store_factory(self, tenant_url: str) -> StoreFactory:
        """Open handles as the test's tenant role."""
        return lambda: PostgresMemoryStore(tenant_url)
