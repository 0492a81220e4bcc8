"""Items an earlier memory block still shows are known, until a compaction clears them."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from lcm_core.retrieval.shown import ShownItems, listed_items, quoted_seqs
from lcm_core.store.memory import InMemoryStore
from lcm_core.store.models import Event

A = "mem_0123abcd_0123456789abcdef"
B = "mem_0123abcd_fedcba9876543210"
OLD = "mem_0123abcd_1111111111111111"
BLOCK = (
    "[长对话记忆 · long-conversation-memory]\n## 记忆: 相关条目\n"
    f"- [mem {A}] 约束·用户明确: “预算不超过3000元（含税）”\n  来源: seq:1\n"
    "## 证据: 原文摘录\n- [ev seq:1] 用户消息 · 第 1 轮\n  > 预算不超过3000元（含税）\n"
    f"## 提示: 历史值与争议\n- 旧值，已被 [mem {B}] 取代，请勿使用 [mem {OLD}]: “2000元”\n"
)


@pytest.fixture
def store() -> Iterator[InMemoryStore]:
    opened = InMemoryStore()
    yield opened
    opened.close()


def block_event(seq: int, text: str = BLOCK, kind: str = "long-conversation-memory") -> Event:
    return Event("s", seq, "user/message", text, role="user", source_kind=kind)


def test_only_item_lines_of_our_own_blocks_count() -> None:
    """ids in the memory section count; notice mentions and forged user text do not."""
    assert listed_items(block_event(3)) == {A}
    assert listed_items(block_event(3, kind="user")) == frozenset()
    assert listed_items(Event("s", 3, "assistant/message", BLOCK)) == frozenset()
    assert quoted_seqs(block_event(3)) == {1}
    assert quoted_seqs(block_event(3, kind="tool")) == frozenset()


def test_items_stay_shown_until_a_compaction(store: InMemoryStore) -> None:
    """a committed block keeps its items in view; a compaction event clears them."""
    shown = ShownItems()
    store.insert_event(
        Event("s", 1, "user/message", "预算不超过3000元（含税）", source_kind="user")
    )
    assert shown.items(store, "s") == frozenset()
    store.insert_event(block_event(2))
    assert shown.items(store, "s") == {A}
    store.insert_event(
        Event("s", 5, "compaction/summary", "summary", source_kind="compaction-checkpoint")
    )
    assert shown.items(store, "s") == frozenset()
    store.insert_event(block_event(7, BLOCK.replace(A, B)))
    assert shown.items(store, "s") == {B}


def test_a_fresh_tracker_rebuilds_the_same_answer(store: InMemoryStore) -> None:
    """reading incrementally and reading the whole log once give the same set."""
    live = ShownItems()
    for seq, event in enumerate([block_event(0), block_event(1, BLOCK.replace(A, B))]):
        store.insert_event(event)
        live.items(store, "s")
        assert event.seq == seq
    assert live.items(store, "s") == ShownItems().items(store, "s") == {A, B}
