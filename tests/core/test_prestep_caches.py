"""What the pre-step keeps between steps never hides a change made between two steps.

The SQLite store converts each row once per query shape (`rows.RowMemo`, keyed by every
value of the row), the relevance and screen checks cache per text, the rule set is read
once per step. A new event, a new item and a correction written between two steps,
through this store or through another connection to the same file (another process:
the CLI beside the sidecar), must show in the very next block.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from lcm_core.assembly.assemble import AssemblyResult, assemble
from lcm_core.assembly.step import StepMessage
from lcm_core.store.models import ItemChange, MemoryItem
from lcm_core.store.rows import RowMemo
from lcm_core.testing.builders import lifecycle
from lcm_core.text.tokens import CACHED_TEXT_CHARS, per_text_cache
from lcm_store_sqlite import SQLiteMemoryStore

S = "sess"
QUESTION = "我们的预算是多少？"


@pytest.fixture
def db(tmp_path: Path) -> Path:
    return tmp_path / "memory.sqlite"


@pytest.fixture
def sqlite_script(new_script: Callable[..., Any], db: Path) -> Any:
    """A scripted session over a SQLite file, with a few Chinese and English turns."""
    script = new_script(S, SQLiteMemoryStore(db))
    script.user(0, "今天先看一下部署脚本", turn=1, time="2026-11-02T09:00:00Z")
    script.assistant(1, "好的，部署脚本在 deploy/run.sh", turn=1, time="2026-11-02T09:00:05Z")
    script.user(2, "旅行的预算不超过3000元（含税）", turn=2, time="2026-11-02T09:01:00Z")
    script.user(3, "the staging database listens on port 6432", turn=3)
    return script


def ask(store: Any, text: str = QUESTION) -> AssemblyResult:
    result = assemble(store, S, [StepMessage("user", text, "user")])
    assert not result.errors
    return result


def listed(result: AssemblyResult) -> set[str]:
    """The item ids the block lists as current memory (not in the notice)."""
    return {
        ref
        for section in result.sections
        if section.get("name") in ("memory", "resident")
        for ref in section.get("refs", ())
    }


@pytest.fixture
def other(db: Path) -> Iterator[SQLiteMemoryStore]:
    """A second connection to the same file: another process writing between two steps."""
    store = SQLiteMemoryStore(db)
    yield store
    store.close()


def test_a_new_event_between_two_steps_is_quoted_in_the_next_block(sqlite_script: Any) -> None:
    first = ask(sqlite_script.store)
    assert "3000元" in first.text and "4500元" not in first.text
    sqlite_script.user(4, "预算改一下：酒店的预算是4500元", turn=4)
    second = ask(sqlite_script.store)
    assert "4500元" in second.text
    assert "seq:4" in second.evidence_refs


def test_a_new_item_between_two_steps_is_listed_in_the_next_block(sqlite_script: Any) -> None:
    ask(sqlite_script.store)
    item = sqlite_script.item("旅行的预算不超过3000元（含税）", [2], kind="constraint")
    second = ask(sqlite_script.store)
    assert item.id in listed(second)
    assert "含税" in second.text


@pytest.mark.parametrize("writer", ["same store", "another connection"])
def test_a_correction_between_two_steps_replaces_the_old_value_in_the_next_block(
    sqlite_script: Any, other: SQLiteMemoryStore, writer: str
) -> None:
    old = sqlite_script.item("旅行的预算不超过3000元（含税）", [2], kind="constraint")
    first = ask(sqlite_script.store)
    assert old.id in listed(first)
    sqlite_script.user(5, "不对，预算不超过5000元（含税）", turn=5)
    target = sqlite_script.store if writer == "same store" else other
    new = _supersede(sqlite_script, target, old, "旅行的预算不超过5000元（含税）", 5)
    second = ask(sqlite_script.store)
    assert new.id in listed(second) and old.id not in listed(second)
    # The old value is only in the notice, marked, next to its replacement.
    notice = [s for s in second.sections if s.get("name") == "notice"]
    assert notice and old.id in notice[0]["refs"]
    assert "seq:2" not in second.evidence_refs


def test_an_edit_of_an_item_from_another_connection_shows_in_the_next_block(
    sqlite_script: Any, other: SQLiteMemoryStore
) -> None:
    """Same id, same text, a new status: the memo's key is the whole row, not the id."""
    item = sqlite_script.item("旅行的预算不超过3000元（含税）", [2], kind="constraint")
    assert item.id in listed(ask(sqlite_script.store))
    other.update_item(item.id, ItemChange(status="retracted"), lifecycle(item, "retracted"))
    assert item.id not in listed(ask(sqlite_script.store))


def _supersede(
    script: Any, store: SQLiteMemoryStore, old: MemoryItem, content: str, seq: int
) -> MemoryItem:
    """Write the correction through `store`: a new item linked both ways to the old one."""
    from lcm_core.testing.builders import make_item

    made = make_item(
        S,
        content,
        kind=old.kind,
        source_refs=(f"seq:{seq}",),
        supersedes=(old.id,),
        derived_from_seq=seq,
    )
    new, _ = store.insert_item(made)
    change = ItemChange(status="superseded", superseded_by=new.id)
    store.update_item(old.id, change, lifecycle(old, "superseded", by=new.id))
    return new


def test_row_memo_converts_a_changed_row_afresh() -> None:
    calls: list[dict[str, Any]] = []

    def convert(row: Any) -> tuple[Any, ...]:
        calls.append(row)
        return tuple(row.values())

    memo = RowMemo(convert, size=2)
    row = {"id": "a", "status": "active", "content": "预算3000元"}
    first = memo(row, row.values())
    assert memo(dict(row), row.values()) is first and len(calls) == 1
    changed = {**row, "status": "superseded"}
    assert memo(changed, changed.values()) == ("a", "superseded", "预算3000元")
    assert len(calls) == 2
    # Past its size the memo starts over rather than growing.
    third = {**row, "id": "c"}
    memo(third, third.values())
    assert memo(row, row.values()) == first and len(calls) == 4
    # A value that cannot be hashed is converted without the memo.
    odd = {"id": "d", "tags": ["x"]}
    assert memo(odd, odd.values()) == ("d", ["x"]) and len(calls) == 5


def test_a_stored_item_read_again_after_another_connection_changed_it_is_the_new_one(
    sqlite_script: Any, other: SQLiteMemoryStore
) -> None:
    item = sqlite_script.item("部署只在上海区域", [0], kind="constraint")
    store = sqlite_script.store
    assert store.get_item(item.id).status == "active"
    assert [i.id for i in store.list_items(S, statuses=("active",))] == [item.id]
    other.update_item(item.id, ItemChange(status="disputed"), lifecycle(item, "disputed"))
    assert store.get_item(item.id).status == "disputed"
    assert [i.status for i in store.list_items(S)] == ["disputed"]


def test_events_rewritten_under_the_same_seqs_are_read_as_written(
    sqlite_script: Any, other: SQLiteMemoryStore
) -> None:
    """A purged session captured again reuses its seqs: the new text is what comes back."""
    store = sqlite_script.store
    assert store.get_events(S, [2])[0].text == "旅行的预算不超过3000元（含税）"
    assert store.search_events(S, ["预算"])[0].event.seq == 2
    other.purge_session(S)
    from lcm_core.store.models import Event

    other.insert_event(Event(S, 2, "user/message", "搬家的预算是8000元", role="user"))
    assert store.get_events(S, [2])[0].text == "搬家的预算是8000元"
    assert [h.event.text for h in store.search_events(S, ["预算"])] == ["搬家的预算是8000元"]
    assert [e.text for e in store.list_events(S)] == ["搬家的预算是8000元"]


def test_row_memo_holds_a_bounded_amount_of_text() -> None:
    calls: list[Any] = []
    memo = RowMemo(lambda row: calls.append(row) or row["text"], chars=30)
    short, long = {"text": "预算3000元"}, {"text": "工具输出 " * 10}
    memo(short, short.values())
    memo(long, long.values())  # over the budget: what was held is let go first
    assert memo(long, long.values()) == long["text"] and len(calls) == 2
    memo(short, short.values())
    assert len(calls) == 3


def test_per_text_cache_keeps_short_texts_only() -> None:
    seen: list[str] = []

    @per_text_cache(maxsize=8)
    def fold(text: str) -> str:
        seen.append(text)
        return text.casefold()

    huge = "部署日志 LINE " * (CACHED_TEXT_CHARS // 8)
    assert fold("Hello 世界") == fold("Hello 世界") == "hello 世界"
    assert fold(huge) == fold(huge)
    assert seen == ["Hello 世界", huge, huge]
