"""Conversions between stored rows (column -> value) and the core's dataclasses.

Every backend keeps schema v2 column for column, so one set of conversions serves all:
a backend hands over anything indexable by column name (a `sqlite3.Row`, a dict).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Sequence
from typing import Any, Generic, Protocol, TypeVar

from lcm_core.store.models import (
    AssemblyLog,
    Checkpoint,
    Event,
    MemoryEvent,
    MemoryItem,
    PendingExtraction,
    Rule,
    RuleOverride,
    Session,
    SkillFile,
    SkillVersion,
    TaskState,
    ValidationLog,
)


class Row(Protocol):
    """A stored row, read by column name."""

    def __getitem__(self, key: str, /) -> Any: ...


T = TypeVar("T")


class RowMemo(Generic[T]):
    """Conversions of rows already seen, keyed by the row's values in column order.

    A pre-step reads the same turns and items step after step; building a dataclass
    from a row (by-name lookups, JSON columns) costs more than reading it. The key is
    every value of the row, so a changed row (a new status, an edited text) is a new
    key and is converted afresh: nothing stale can come back. One memo serves one
    query shape (the same columns in the same order), so equal keys mean equal rows.
    The returned objects are shared: treat them as read-only (they are frozen).
    """

    def __init__(
        self, convert: Callable[[Row], T], size: int = 100_000, chars: int = 16_000_000
    ) -> None:
        self._convert, self._size, self._chars = convert, size, chars
        self._seen: dict[tuple[Any, ...], T] = {}
        self._held = 0  # characters of text the memo keeps alive

    def __call__(self, row: Row, values: Iterable[Any]) -> T:
        """The converted `row`; `values` are its values in column order (the memo's key)."""
        key = tuple(values)
        try:
            found = self._seen.get(key)
        except TypeError:  # a value that cannot be hashed: convert without the memo
            return self._convert(row)
        if found is None:
            found = self._convert(row)
            size = sum(len(value) for value in key if isinstance(value, str))
            if len(self._seen) >= self._size or self._held + size > self._chars:
                # A simple bound on rows and on text (tool output can be large): the
                # working set refills in one step.
                self._seen.clear()
                self._held = 0
            self._seen[key] = found
            self._held += size
        return found


def dumps(value: Any) -> str:
    """Canonical JSON: sorted keys, no ASCII escaping, so equal values store equal bytes."""
    return json.dumps(value, ensure_ascii=False, sort_keys=True, separators=(",", ":"))


# The string encoder `dumps` applies to every string (ensure_ascii off), so a text written
# with it is the same bytes `dumps` writes.
_string = json.encoder.encode_basestring


def dumps_omitted(records: Sequence[Any]) -> str:
    """`dumps(list(records))`, written directly when each record is an omission: a dict of
    exactly `section`, `ref` and `reason`, all strings.

    A log row holds hundreds of them, and the generic encoder's work per key (sorting,
    one piece per key and value) was most of the log write; any other record falls
    back to `dumps`, so the bytes are the same whatever comes in.
    """
    try:
        # The keys in sorted order, as `dumps` (sort_keys) writes them.
        parts = [
            f'{{"reason":{_string(r["reason"])},"ref":{_string(r["ref"])},'
            f'"section":{_string(r["section"])}}}'
            for r in records
            if type(r) is dict and len(r) == 3
        ]
    except (KeyError, TypeError):  # a missing key, or a value that is not a string
        return dumps(list(records))
    if len(parts) != len(records):
        return dumps(list(records))
    return "[" + ",".join(parts) + "]"


def loads(text: str | None, default: Any) -> Any:
    if text is None or text == "":
        return default
    return json.loads(text)


def nulls_first(value: Any) -> tuple[bool, Any]:
    """A sort key that puts None first, as SQLite sorts NULL (whatever the database)."""
    return (value is not None, value if value is not None else 0)


def _opt_bool(value: Any) -> bool | None:
    return None if value is None else bool(value)


def event_from_row(row: Row) -> Event:
    return Event(
        session_id=row["session_id"],
        seq=row["seq"],
        type=row["type"],
        text=row["text"],
        time=row["time"],
        turn=row["turn"],
        step=row["step"],
        role=row["role"],
        source_kind=row["source_kind"],
        source_form=row["source_form"],
        tool_name=row["tool_name"],
        call_id=row["call_id"],
        store=row["store"],
        content_hash=row["content_hash"],
        truncated=bool(row["truncated"]),
        ingested_at=row["ingested_at"],
    )


def event_params(event: Event) -> tuple[Any, ...]:
    return (
        event.session_id,
        event.seq,
        event.type,
        event.time,
        event.turn,
        event.step,
        event.role,
        event.text,
        event.source_kind,
        event.source_form,
        event.tool_name,
        event.call_id,
        event.store,
        event.content_hash,
        int(event.truncated),
        event.ingested_at,
    )


EVENT_COLUMNS = (
    "session_id, seq, type, time, turn, step, role, text, source_kind, source_form, "
    "tool_name, call_id, store, content_hash, truncated, ingested_at"
)


def item_from_row(row: Row) -> MemoryItem:
    return MemoryItem(
        id=row["id"],
        session_id=row["session_id"],
        kind=row["kind"],
        content=row["content"],
        content_hash=row["content_hash"],
        evidence_type=row["evidence_type"],
        status=row["status"],
        conditions=tuple(loads(row["conditions_json"], [])),
        scope=loads(row["scope_json"], {}),
        numbers=tuple(loads(row["numbers_json"], [])),
        source_refs=tuple(loads(row["source_refs_json"], [])),
        supersedes=tuple(loads(row["supersedes_json"], [])),
        superseded_by=row["superseded_by"],
        extractor=row["extractor"],
        derived_from_seq=row["derived_from_seq"],
        created_at=row["created_at"],
        updated_at=row["updated_at"],
    )


def item_params(item: MemoryItem) -> tuple[Any, ...]:
    return (
        item.id,
        item.session_id,
        item.kind,
        item.content,
        dumps(list(item.conditions)),
        dumps(item.scope),
        dumps(list(item.numbers)),
        dumps(list(item.source_refs)),
        item.evidence_type,
        item.status,
        dumps(list(item.supersedes)),
        item.superseded_by,
        item.content_hash,
        item.extractor,
        item.derived_from_seq,
        item.created_at,
        item.updated_at,
    )


ITEM_COLUMNS = (
    "id, session_id, kind, content, conditions_json, scope_json, numbers_json, "
    "source_refs_json, evidence_type, status, supersedes_json, superseded_by, "
    "content_hash, extractor, derived_from_seq, created_at, updated_at"
)


def memory_event_from_row(row: Row) -> MemoryEvent:
    return MemoryEvent(
        id=row["id"],
        memory_id=row["memory_id"],
        session_id=row["session_id"],
        event=row["event"],
        at=row["at"],
        actor=row["actor"],
        detail=loads(row["detail_json"], {}),
    )


def session_from_row(row: Row) -> Session:
    return Session(
        session_id=row["session_id"],
        cwd=row["cwd"],
        project=row["project"],
        origin=row["origin"],
        dsh_version=row["dsh_version"],
        memory_enabled=bool(row["memory_enabled"]),
        created_at=row["created_at"],
        updated_at=row["updated_at"],
    )


def task_state_from_row(row: Row) -> TaskState:
    return TaskState(
        session_id=row["session_id"],
        goal=row["goal"],
        progress=tuple(loads(row["progress_json"], [])),
        blockers=tuple(loads(row["blockers_json"], [])),
        open_items=tuple(loads(row["open_items_json"], [])),
        superseded=tuple(loads(row["superseded_json"], [])),
        updated_by_seq=row["updated_by_seq"],
        updated_at=row["updated_at"],
    )


def checkpoint_from_row(row: Row) -> Checkpoint:
    return Checkpoint(
        session_id=row["session_id"],
        last_event_seq=row["last_event_seq"],
        last_extract_seq=row["last_extract_seq"],
        last_assembly_seq=row["last_assembly_seq"],
        updated_at=row["updated_at"],
    )


def skill_version_from_row(row: Row) -> SkillVersion:
    return SkillVersion(
        id=row["id"],
        name=row["name"],
        source=row["source"],
        path=row["path"],
        content=row["content"],
        content_hash=row["content_hash"],
        version=row["version"],
        supersedes=row["supersedes"],
        created_at=row["created_at"],
    )


def skill_file_from_row(row: Row) -> SkillFile:
    return SkillFile(
        name=row["name"],
        path=row["path"],
        version_id=row["version_id"],
        version=row["version"],
        enabled=bool(row["enabled"]),
        description=row["description"],
        when_to_use=row["when_to_use"],
        invocation=row["invocation"],
        updated_at=row["updated_at"],
    )


def rule_from_row(row: Row) -> Rule:
    return Rule(
        id=row["id"],
        skill_name=row["skill_name"],
        rule_key=row["rule_key"],
        text=row["text"],
        category=row["category"],
        scope=loads(row["scope_json"], {}),
        source_path=row["source_path"],
        source_line=row["source_line"],
        active=bool(row["active"]),
        content_hash=row["content_hash"],
        updated_at=row["updated_at"],
    )


def rule_override_from_row(row: Row) -> RuleOverride:
    return RuleOverride(
        rule_id=row["rule_id"],
        category=row["category"],
        active=_opt_bool(row["active"]),
        scope=loads(row["scope_json"], None),
        updated_at=row["updated_at"],
    )


def assembly_log_from_row(row: Row) -> AssemblyLog:
    return AssemblyLog(
        id=row["id"],
        session_id=row["session_id"],
        created_at=row["created_at"],
        trigger=row["trigger"],
        turn=row["turn"],
        step=row["step"],
        budget_tokens=row["budget_tokens"],
        used_tokens=row["used_tokens"],
        token_source=row["token_source"],
        content_hash=row["content_hash"],
        injected=bool(row["injected"]),
        message_seq=row["message_seq"],
        sections=tuple(loads(row["sections_json"], [])),
        item_ids=tuple(loads(row["items_json"], [])),
        omitted=tuple(loads(row["omitted_json"], [])),
        reasons=tuple(loads(row["reasons_json"], [])),
        errors=tuple(loads(row["errors_json"], [])),
    )


def validation_log_from_row(row: Row) -> ValidationLog:
    return ValidationLog(
        id=row["id"],
        session_id=row["session_id"],
        event_seq=row["event_seq"],
        target=row["target"],
        ok=bool(row["ok"]),
        checked=row["checked"],
        skipped=row["skipped"],
        deterministic=bool(row["deterministic"]),
        blocked=bool(row["blocked"]),
        violations=tuple(loads(row["violations_json"], [])),
        errors=tuple(loads(row["errors_json"], [])),
        created_at=row["created_at"],
    )


def pending_from_row(row: Row) -> PendingExtraction:
    return PendingExtraction(
        session_id=row["session_id"],
        seq=row["seq"],
        attempts=row["attempts"],
        last_error=row["last_error"],
        updated_at=row["updated_at"],
    )
