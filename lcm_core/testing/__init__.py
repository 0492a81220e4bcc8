"""The MemoryStore conformance suite, shipped with the port so both move together.

A backend proves itself with one test class and one fixture::

    from lcm_core.testing import StoreContractSuite

    class TestMyStore(StoreContractSuite):
        @pytest.fixture
        def store_factory(self, tmp_path):
            return lambda: MyStore(tmp_path / "m.db")

The factory must open a new handle on the same fresh database each time it is called.
Mix single `*Contract` classes instead of the whole suite to run a part of it; set
`requirements = StoreRequirements(persistent=False)` for an in-memory store; mark a
known gap by overriding that test with `pytest.mark.xfail(strict=True)`.
"""

from __future__ import annotations

import pytest

# Rewrite the contract modules' asserts so failures show values, as in test modules.
pytest.register_assert_rewrite(
    "lcm_core.testing.admin",
    "lcm_core.testing.archive",
    "lcm_core.testing.base",
    "lcm_core.testing.builders",
    "lcm_core.testing.events",
    "lcm_core.testing.imports",
    "lcm_core.testing.forget",
    "lcm_core.testing.items",
    "lcm_core.testing.lifecycle",
    "lcm_core.testing.logs",
    "lcm_core.testing.parity",
    "lcm_core.testing.search",
    "lcm_core.testing.search_fold",
    "lcm_core.testing.search_scores",
    "lcm_core.testing.search_syntax",
    "lcm_core.testing.skills",
    "lcm_core.testing.state",
    "lcm_core.testing.transactions",
)

from lcm_core.testing.admin import AdminContract  # noqa: E402
from lcm_core.testing.archive import ArchiveContract  # noqa: E402
from lcm_core.testing.base import (  # noqa: E402
    StoreContractBase,
    StoreFactory,
    StoreRequirements,
    require,
)
from lcm_core.testing.events import EventContract  # noqa: E402
from lcm_core.testing.forget import ForgetContract  # noqa: E402
from lcm_core.testing.imports import ImportContract  # noqa: E402
from lcm_core.testing.items import ItemContract  # noqa: E402
from lcm_core.testing.lifecycle import LifecycleContract  # noqa: E402
from lcm_core.testing.logs import LogContract  # noqa: E402
from lcm_core.testing.search import SearchContract  # noqa: E402
from lcm_core.testing.search_fold import SearchFoldContract  # noqa: E402
from lcm_core.testing.search_scores import SearchScoreContract  # noqa: E402
from lcm_core.testing.search_syntax import SearchSyntaxContract  # noqa: E402
from lcm_core.testing.skills import SkillContract  # noqa: E402
from lcm_core.testing.state import StateContract  # noqa: E402
from lcm_core.testing.transactions import PersistenceContract, TransactionContract  # noqa: E402


class StoreContractSuite(
    EventContract,
    ArchiveContract,
    ItemContract,
    LifecycleContract,
    ForgetContract,
    SearchContract,
    SearchFoldContract,
    SearchScoreContract,
    SearchSyntaxContract,
    StateContract,
    SkillContract,
    LogContract,
    AdminContract,
    ImportContract,
    TransactionContract,
    PersistenceContract,
):
    """Every contract at once; subclass it as `Test<Backend>` and override store_factory."""


__all__ = [
    "AdminContract",
    "ArchiveContract",
    "EventContract",
    "ForgetContract",
    "ImportContract",
    "ItemContract",
    "LifecycleContract",
    "LogContract",
    "PersistenceContract",
    "SearchContract",
    "SearchFoldContract",
    "SearchScoreContract",
    "SearchSyntaxContract",
    "SkillContract",
    "StateContract",
    "StoreContractBase",
    "StoreContractSuite",
    "StoreFactory",
    "StoreRequirements",
    "TransactionContract",
    "require",
]
