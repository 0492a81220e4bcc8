"""Small constructors of valid model rows, so each contract test reads as its intent."""

from __future__ import annotations

from typing import Any, Final

from lcm_core.store.models import (
    ArchiveEntry,
    AssemblyLog,
    Checkpoint,
    Event,
    ItemChange,
    MemoryEvent,
    MemoryItem,
    Rule,
    RuleOverride,
    Session,
    SkillFile,
    SkillVersion,
    TaskState,
    ValidationLog,
)
from lcm_core.store.ports import MemoryStore
from lcm_core.text.tokens import fingerprint, sha256_hex, stable_item_id

# Text in several scripts that every round trip must return unchanged.
CHINESE: Final = "预算不超过3000元（含税）"
MIXED: Final = "周五前把 PostgreSQL 迁移到 staging 环境 🎉, budget ≤ 3000€"

# Rows one call of `populate` writes to the session-scoped tables.
POPULATED_COUNTS: Final = {
    "sessions": 1,
    "events": 3,
    "archive": 1,
    "memory_items": 2,
    "memory_events": 3,
    "task_state": 1,
    "checkpoints": 1,
    "assembly_logs": 1,
    "validation_logs": 1,
    "pending_extraction": 1,
}


def make_event(
    session_id: str, seq: int, text: str = "", *, type: str = "user/message", **fields: Any
) -> Event:
    """An event with a default type and text derived from its position."""
    body = text if text else f"event {seq} of {session_id}"
    return Event(session_id=session_id, seq=seq, type=type, text=body, **fields)


def make_item(
    session_id: str,
    content: str,
    *,
    kind: str = "fact",
    item_id: str | None = None,
    **fields: Any,
) -> MemoryItem:
    """An item whose id and content hash derive from its content, as the core makes them."""
    return MemoryItem(
        id=item_id if item_id is not None else stable_item_id(session_id, kind, content),
        session_id=session_id,
        kind=kind,
        content=content,
        content_hash=fields.pop("content_hash", fingerprint(content)),
        **fields,
    )


def lifecycle(item: MemoryItem, event: str, **detail: Any) -> MemoryEvent:
    """The lifecycle row a transition of `item` appends."""
    return MemoryEvent(
        memory_id=item.id, session_id=item.session_id, event=event, actor="tester", detail=detail
    )


def supersede(store: MemoryStore, old: MemoryItem, new: MemoryItem) -> MemoryItem:
    """Mark `old` superseded by `new` through the port; returns the old item's new state."""
    return store.update_item(
        old.id,
        ItemChange(status="superseded", superseded_by=new.id),
        lifecycle(old, "superseded", by=new.id),
    )


def populate(store: MemoryStore, session_id: str) -> None:
    """Write at least one row to every table in `TABLES` for one session."""
    store.set_meta(f"test.populated.{session_id}", "yes")
    store.upsert_session(Session(session_id=session_id, cwd="/work", project="lcm"))
    store.insert_events(
        [
            make_event(session_id, 0, f"the user of {session_id} asks about zebra budgets"),
            make_event(session_id, 1, f"{session_id}: {CHINESE}", role="user"),
            make_event(session_id, 2, "tool output", type="tool/result", tool_name="grep"),
        ]
    )
    store.put_archive(ArchiveEntry(session_id=session_id, ref="seq:2", text="tool output"))
    first, _ = store.insert_item(make_item(session_id, f"{session_id} budget is 3000 yuan"))
    store.insert_item(make_item(session_id, f"{session_id} prefers tea", kind="preference"))
    store.update_item(first.id, ItemChange(status="disputed"), lifecycle(first, "disputed"))
    store.put_task_state(TaskState(session_id=session_id, goal="ship", progress=("one",)))
    store.put_checkpoint(Checkpoint(session_id=session_id, last_event_seq=2))
    skill = f"skill-{session_id}"
    version = store.add_skill_version(
        SkillVersion(name=skill, content="# rules", content_hash=sha256_hex("# rules"), version=1)
    )
    store.put_skill_file(
        SkillFile(name=skill, path=f"/{skill}.md", version_id=version.id, version=1)
    )
    rule_id = f"rule-{session_id}"
    store.upsert_rule(
        Rule(
            id=rule_id,
            skill_name=skill,
            rule_key="r1",
            text="always test",
            category="workflow",
            content_hash=sha256_hex("always test"),
            source_line=1,
        )
    )
    store.put_rule_override(RuleOverride(rule_id=rule_id, active=False))
    store.add_assembly_log(
        AssemblyLog(session_id=session_id, trigger="pre-step", budget_tokens=100, used_tokens=10),
        retention=50,
    )
    store.add_validation_log(ValidationLog(session_id=session_id, target="reply", ok=True))
    store.record_pending(session_id, 1, "extractor crashed")
