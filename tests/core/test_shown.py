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


def test_an_entry_is_recognised_in_either_language() -> None:
    """the same item, quoted turn, goal or statement has one fingerprint in zh and en."""
    from lcm_core.assembly.render import evidence_entry, item_entry, task_entries
    from lcm_core.retrieval.quoting import EvidenceRow
    from lcm_core.retrieval.shown import entry_key
    from lcm_core.store.models import TaskState
    from lcm_core.testing.builders import make_item
    from lcm_core.text.block_words import EN, ZH

    item = make_item("s", "预算不超过3000元（含税）", kind="constraint", source_refs=("seq:1",))
    turn = EvidenceRow(
        Event("s", 1, "tool/result", "预算不超过3000元（含税）", source_kind="tool"),
        "预算不超过3000元（含税）",
    )
    state = TaskState("s", goal="ship the invoice export", progress=("parser done",))
    other = TaskState("s", goal="发布到 staging")
    for zh, en in [
        (item_entry(item, 600, words=ZH), item_entry(item, 600, words=EN, said="2026-12-04")),
        (evidence_entry(turn, 600, ZH), evidence_entry(turn, 600, EN)),
        *zip(
            (line for _, line in task_entries(state, 600, ZH)),
            (line for _, line in task_entries(state, 600, EN)),
            strict=True,
        ),
        (ZH.insufficient, EN.insufficient),
    ]:
        assert zh != en and entry_key(zh) == entry_key(en), (zh, en)
    goals = [line for _, line in task_entries(state, 600, EN)][:1]
    assert entry_key(goals[0]) != entry_key(task_entries(other, 600, EN)[0][1])
    # A task value that names a seq is still told apart by its words.
    one, two = (
        task_entries(TaskState("s", goal=g), 600, ZH)[0][1] for g in ("修 seq:3", "查 seq:3")
    )
    assert entry_key(one) != entry_key(two)
