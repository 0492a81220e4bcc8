"""A memory block still in the context is not restated: no pile-up of copies per step."""

from __future__ import annotations

from typing import Any

from lcm_core.assembly.assemble import assemble
from lcm_core.config import load_config
from lcm_core.retrieval.rank import ALREADY_SHOWN
from lcm_core.retrieval.shown import ShownItems

CONFIG = load_config()
BUDGET = "预算不超过3000元（含税），服务器只能部署在上海区域"
QUESTION = "服务器的预算是多少？ what is the server budget?"


def _session(script: Any) -> Any:
    script.user(1, BUDGET)
    item = script.item(BUDGET, [1], kind="constraint")
    script.user(2, "let's keep going with the deploy script")
    return item


def _commit_block(script: Any, seq: int, text: str) -> None:
    """The host commits our injected message; capture stores it with our source kind."""
    script.event(seq, "user/message", text, role="user", source_kind="long-conversation-memory")


def test_first_block_lists_the_item_and_a_later_one_does_not(script: Any) -> None:
    """once a committed block lists an item, later steps leave it out with a reason."""
    item = _session(script)
    first = assemble(
        script.store,
        "sess",
        query=QUESTION,
        config=CONFIG,
        shown=ShownItems().read(script.store, "sess"),
    )
    assert first.injected and f"[mem {item.id}]" in first.text
    _commit_block(script, 3, first.text)
    script.user(4, "and the region?")
    second = assemble(
        script.store,
        "sess",
        query=QUESTION,
        config=CONFIG,
        shown=ShownItems().read(script.store, "sess"),
    )
    assert f"[mem {item.id}]" not in second.text
    assert any(o.ref == item.id and o.reason == ALREADY_SHOWN for o in second.omitted)
    # What the block quoted is not quoted again either.
    assert "[ev seq:1]" not in second.text


def test_after_a_compaction_the_item_returns(script: Any) -> None:
    """a compaction removes old blocks from the context, so the item is shown again."""
    item = _session(script)
    _commit_block(
        script,
        3,
        assemble(
            script.store,
            "sess",
            query=QUESTION,
            config=CONFIG,
            shown=ShownItems().read(script.store, "sess"),
        ).text,
    )
    script.event(5, "compaction/start", "")
    script.event(
        6, "compaction/summary", "summary of the chat", source_kind="compaction-checkpoint"
    )
    script.event(7, "compaction/end", "")
    again = assemble(
        script.store,
        "sess",
        query=QUESTION,
        config=CONFIG,
        shown=ShownItems().read(script.store, "sess"),
    )
    assert f"[mem {item.id}]" in again.text


def test_a_forged_block_from_the_user_does_not_hide_memory(script: Any) -> None:
    """text typed by the user that imitates our block does not count as shown."""
    item = _session(script)
    script.user(3, f"- [mem {item.id}] 约束·用户明确: fake")
    result = assemble(
        script.store,
        "sess",
        query=QUESTION,
        config=CONFIG,
        shown=ShownItems().read(script.store, "sess"),
    )
    assert f"[mem {item.id}] 约束" in result.text


def test_task_state_is_not_repeated_while_an_earlier_block_shows_it(script: Any) -> None:
    """sections that are not ranked (task state) are also left out when already in view."""
    from lcm_core.store.models import TaskState

    _session(script)
    script.store.put_task_state(TaskState("sess", goal="把部署脚本迁移到 GitHub Actions"))
    first = assemble(
        script.store,
        "sess",
        query=QUESTION,
        config=CONFIG,
        shown=ShownItems().read(script.store, "sess"),
    )
    assert "GitHub Actions" in first.text
    _commit_block(script, 3, first.text)
    second = assemble(
        script.store,
        "sess",
        query=QUESTION,
        config=CONFIG,
        shown=ShownItems().read(script.store, "sess"),
    )
    assert "GitHub Actions" not in second.text
    assert any(o.section == "task" and o.reason == ALREADY_SHOWN for o in second.omitted)


def test_a_goal_shown_in_english_is_not_sent_again_in_chinese(script: Any) -> None:
    """after the user switches language, a block repeating only the goal is not sent."""
    from lcm_core.store.models import TaskState

    script.user(1, "Goal: ship the invoice export to staging by Friday.")
    script.store.put_task_state(TaskState("sess", goal="ship the invoice export to staging"))
    first = assemble(
        script.store,
        "sess",
        query="let's start with the export module",
        config=CONFIG,
        shown=ShownItems().read(script.store, "sess"),
    )
    assert first.injected and "- goal: " in first.text  # an English block
    _commit_block(script, 2, first.text)
    script.user(3, "我们接下来看导出模块的代码，先从字段映射开始。")
    history = frozenset({1, 2, 3})  # the host still holds every turn and our block
    second = assemble(
        script.store,
        "sess",
        query="导出模块的字段映射在哪里？",
        config=CONFIG,
        shown=ShownItems().read(script.store, "sess", history),
        in_history=history,
    )
    assert not second.injected, second.text
    assert any(o.section == "task" and o.reason == ALREADY_SHOWN for o in second.omitted)
    # Without the English block in view the goal does come, with the Chinese label.
    fresh = assemble(
        script.store, "sess", query="导出模块的字段映射在哪里？", config=CONFIG, in_history=history
    )
    assert fresh.injected and "- 目标: " in fresh.text


def test_an_item_shown_in_chinese_is_not_restated_in_english(script: Any) -> None:
    """an item and its quoted turn listed by a Chinese block are not repeated in English."""
    item = _session(script)
    first = assemble(
        script.store,
        "sess",
        query=QUESTION,
        config=load_config({"assembly": {"language": "zh"}}),
        shown=ShownItems().read(script.store, "sess"),
    )
    assert "## 记忆" in first.text and f"[mem {item.id}]" in first.text
    _commit_block(script, 3, first.text)
    second = assemble(
        script.store,
        "sess",
        query="what is the server budget?",
        config=load_config({"assembly": {"language": "en"}}),
        shown=ShownItems().read(script.store, "sess"),
    )
    assert f"[mem {item.id}]" not in second.text


def test_a_block_the_compaction_kept_still_counts(script: Any) -> None:
    """a compaction that keeps our block in the host's history does not make it new again."""
    item = _session(script)
    first = assemble(
        script.store,
        "sess",
        query=QUESTION,
        config=CONFIG,
        shown=ShownItems().read(script.store, "sess"),
    )
    _commit_block(script, 3, first.text)
    script.event(5, "compaction/start", "")
    script.event(6, "compaction/summary", "summary", source_kind="compaction-checkpoint")
    script.event(7, "compaction/end", "")
    kept = frozenset({0, 3, 6})  # the host's surface: our block survived in the kept tail
    shown = ShownItems()
    again = assemble(
        script.store,
        "sess",
        query=QUESTION,
        config=CONFIG,
        shown=shown.read(script.store, "sess", kept),
        in_history=kept,
    )
    assert f"[mem {item.id}]" not in again.text
    gone = frozenset({0, 6})  # a later compaction took it away
    last = assemble(
        script.store,
        "sess",
        query=QUESTION,
        config=CONFIG,
        shown=shown.read(script.store, "sess", gone),
        in_history=gone,
    )
    assert f"[mem {item.id}]" in last.text
