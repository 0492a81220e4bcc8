"""Which old item a turn is named the source of does not depend on when items were written."""

from __future__ import annotations

import dataclasses

import pytest

from lcm_core.retrieval.quoting import historical_sources
from lcm_core.testing.builders import make_item
from lcm_core.testing.memory_store import InMemoryStore


@pytest.mark.parametrize("earlier", [0, 1])
def test_a_turn_behind_two_old_items_names_the_same_one_whatever_the_write_order(
    earlier: int,
) -> None:
    """The demo's turn set the batch size and the port, and both were superseded later:
    the reason `explain` gives for not quoting the turn names the same old item every run,
    though which of the two was written first (their created_at) changes with the clock."""
    old = [
        make_item("s", text, kind="decision", source_refs=("seq:22",), status="superseded")
        for text in ("Use a batch size of 1000 rows", "管理后台跑在 3000 端口")
    ]
    times = ["2026-12-01T00:00:00.002Z", "2026-12-01T00:00:00.002Z"]
    times[earlier] = "2026-12-01T00:00:00.001Z"
    store = InMemoryStore()
    for item, at in zip(old, times, strict=True):
        store.insert_item(dataclasses.replace(item, created_at=at))
    assert historical_sources(store, "s")[22] == ("superseded", min(i.id for i in old))
