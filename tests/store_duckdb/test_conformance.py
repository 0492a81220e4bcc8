"""The storage conformance suite run against the DuckDB backend, on a file and in memory."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("duckdb")

from lcm_core.testing import StoreContractSuite, StoreFactory, StoreRequirements
from lcm_store_duckdb import DuckDBMemoryStore


class TestDuckDBFileStore(StoreContractSuite):
    """Every contract on a database file, reopened by each factory call."""

    @pytest.fixture
    def store_factory(self, tmp_path: Path) -> StoreFactory:
        """Open handles on one file in the test's temporary folder."""
        return lambda: DuckDBMemoryStore(tmp_path / "m.duckdb")


class TestDuckDBMemoryStore(StoreContractSuite):
    """Every contract on a private in-memory database; reopening cannot be tested."""

    requirements = StoreRequirements(persistent=False)

    @pytest.fixture
    def store_factory(self) -> StoreFactory:
        """Open a new in-memory database (each call is a different one)."""
        return lambda: DuckDBMemoryStore(":memory:")
