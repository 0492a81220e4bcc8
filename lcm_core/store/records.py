"""Rows out: what every backend does to a model before it stores it, and the stored row.

`prepare_event`, `prepare_item` and `apply_change` are the store's guarantees (text
cut at the limit, hashes and timestamps filled, an item change applied), written once
for every backend. The `*_record` functions give the column -> value dict schema v2
stores, in column order; `rows.*_from_row` reads them back. JSON columns hold canonical
JSON (`rows.dumps`), flags are 0/1, and a model's empty timestamp is stored as given.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any, Final

from lcm_core.clock import utc_now_iso
from lcm_core.store import rows
from lcm_core.store.models import (
    MAX_EVENT_TEXT,
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
from lcm_core.text.tokens import clamp_text, scrub_surrogates, sha256_hex

Record = dict[str, Any]
EVENT_NAMES = tuple(name.strip() for name in rows.EVENT_COLUMNS.split(","))
ITEM_NAMES = tuple(name.strip() for name in rows.ITEM_COLUMNS.split(","))


def prepare_event(event: Event, clean: Callable[[str], str] = scrub_surrogates) -> Event:
    """The event as stored: text cut at the limit, a hash and a time of ingest filled in.

    `clean` makes text storable; a backend whose text type refuses more (PostgreSQL and
    NUL) passes its own.
    """
    text, cut = clamp_text(clean(event.text or ""), MAX_EVENT_TEXT)
    return replace(
        event,
        text=text,
        truncated=event.truncated or cut,
        # A tombstone (an import of a forgotten event) keeps its empty hash.
        content_hash=event.content_hash or ("" if event.store == "forgotten" else sha256_hex(text)),
        ingested_at=event.ingested_at or utc_now_iso(),
    )


def prepare_item(item: MemoryItem, clean: Callable[[str], str] = scrub_surrogates) -> MemoryItem:
    """The item as stored: content made storable by `clean`, empty timestamps set to now."""
    now = utc_now_iso()
    return replace(
        item,
        content=clean(item.content),
        created_at=item.created_at or now,
        updated_at=item.updated_at or item.created_at or now,
    )


def apply_change(current: MemoryItem, change: ItemChange, at: str) -> MemoryItem:
    """The item after `change`: only the fields the change names move, stamped `at`."""
    superseded_by = current.superseded_by
    if change.clear_superseded_by:
        superseded_by = None
    if change.superseded_by is not None:
        superseded_by = change.superseded_by
    return replace(
        current,
        status=change.status or current.status,
        superseded_by=superseded_by,
        evidence_type=change.evidence_type or current.evidence_type,
        kind=change.kind or current.kind,
        supersedes=current.supersedes if change.supersedes is None else change.supersedes,
        updated_at=at,
    )


def erase_item(current: MemoryItem, at: str) -> MemoryItem:
    """The tombstone of a forgotten item: ids, links and sources kept, every text field empty."""
    return replace(
        current,
        content="",
        content_hash="",
        conditions=(),
        scope={},
        numbers=(),
        status="forgotten",
        updated_at=at,
    )


def erase_event(event: Event) -> Event:
    """The tombstone of a forgotten event: seq, type, time and ids kept, no text and no hash."""
    return replace(event, text="", content_hash="", truncated=False, store="forgotten")


# The columns a forget rewrites: every text-bearing field and the status it leaves behind.
_ERASED_ITEM: Final = (
    "content",
    "content_hash",
    "conditions_json",
    "scope_json",
    "numbers_json",
    "status",
    "updated_at",
)
_ERASED_EVENT: Final = ("text", "content_hash", "truncated", "store")


def erased_item_record(tombstone: MemoryItem) -> Record:
    """The columns `forget_item` writes, from `erase_item`'s tombstone (one definition of it)."""
    record = item_record(tombstone)
    return {name: record[name] for name in _ERASED_ITEM}


def erased_event_record(tombstone: Event) -> Record:
    """The columns `forget_event` writes, from `erase_event`'s tombstone."""
    record = event_record(tombstone)
    return {name: record[name] for name in _ERASED_EVENT}


def set_clause(record: Record, mark: str) -> str:
    """`a = ?, b = ?` for an UPDATE of a record's columns, in the backend's parameter mark."""
    return ", ".join(f"{name} = {mark}" for name in record)


def event_record(event: Event) -> Record:
    return dict(zip(EVENT_NAMES, rows.event_params(event), strict=True))


def item_record(item: MemoryItem) -> Record:
    return dict(zip(ITEM_NAMES, rows.item_params(item), strict=True))


def archive_record(entry: ArchiveEntry) -> Record:
    return {
        "session_id": entry.session_id,
        "ref": entry.ref,
        "text": entry.text,
        "created_at": entry.created_at,
    }


def memory_event_record(event: MemoryEvent, event_id: int) -> Record:
    return {
        "id": event_id,
        "memory_id": event.memory_id,
        "session_id": event.session_id,
        "event": event.event,
        "at": event.at,
        "actor": event.actor,
        "detail_json": rows.dumps(event.detail),
    }


def session_record(session: Session) -> Record:
    return {
        "session_id": session.session_id,
        "cwd": session.cwd,
        "project": session.project,
        "origin": session.origin,
        "dsh_version": session.dsh_version,
        "memory_enabled": int(session.memory_enabled),
        "created_at": session.created_at,
        "updated_at": session.updated_at,
    }


def task_state_record(state: TaskState) -> Record:
    return {
        "session_id": state.session_id,
        "goal": state.goal,
        "progress_json": rows.dumps(list(state.progress)),
        "blockers_json": rows.dumps(list(state.blockers)),
        "open_items_json": rows.dumps(list(state.open_items)),
        "superseded_json": rows.dumps(list(state.superseded)),
        "updated_by_seq": state.updated_by_seq,
        "updated_at": state.updated_at,
    }


def checkpoint_record(checkpoint: Checkpoint) -> Record:
    return {
        "session_id": checkpoint.session_id,
        "last_event_seq": checkpoint.last_event_seq,
        "last_extract_seq": checkpoint.last_extract_seq,
        "last_assembly_seq": checkpoint.last_assembly_seq,
        "updated_at": checkpoint.updated_at,
    }


def skill_version_record(version: SkillVersion) -> Record:
    return {
        "id": version.id,
        "name": version.name,
        "source": version.source,
        "path": version.path,
        "content": version.content,
        "content_hash": version.content_hash,
        "version": version.version,
        "supersedes": version.supersedes,
        "created_at": version.created_at,
    }


def skill_file_record(skill: SkillFile) -> Record:
    return {
        "name": skill.name,
        "path": skill.path,
        "version_id": skill.version_id,
        "version": skill.version,
        "enabled": int(skill.enabled),
        "description": skill.description,
        "when_to_use": skill.when_to_use,
        "invocation": skill.invocation,
        "updated_at": skill.updated_at,
    }


def rule_record(rule: Rule) -> Record:
    return {
        "id": rule.id,
        "skill_name": rule.skill_name,
        "rule_key": rule.rule_key,
        "text": rule.text,
        "category": rule.category,
        "scope_json": rows.dumps(rule.scope),
        "source_path": rule.source_path,
        "source_line": rule.source_line,
        "active": int(rule.active),
        "content_hash": rule.content_hash,
        "updated_at": rule.updated_at,
    }


def rule_override_record(override: RuleOverride) -> Record:
    return {
        "rule_id": override.rule_id,
        "category": override.category,
        "active": None if override.active is None else int(override.active),
        "scope_json": None if override.scope is None else rows.dumps(override.scope),
        "updated_at": override.updated_at,
    }


def assembly_log_record(log: AssemblyLog, log_id: int) -> Record:
    return {
        "id": log_id,
        "session_id": log.session_id,
        "created_at": log.created_at,
        "trigger": log.trigger,
        "turn": log.turn,
        "step": log.step,
        "budget_tokens": log.budget_tokens,
        "used_tokens": log.used_tokens,
        "token_source": log.token_source,
        "content_hash": log.content_hash,
        "injected": int(log.injected),
        "message_seq": log.message_seq,
        "sections_json": rows.dumps(list(log.sections)),
        "items_json": rows.dumps(list(log.item_ids)),
        "omitted_json": rows.dumps_omitted(log.omitted),
        "reasons_json": rows.dumps(list(log.reasons)),
        "errors_json": rows.dumps(list(log.errors)),
    }


def validation_log_record(log: ValidationLog, log_id: int) -> Record:
    return {
        "id": log_id,
        "session_id": log.session_id,
        "event_seq": log.event_seq,
        "target": log.target,
        "ok": int(log.ok),
        "checked": log.checked,
        "skipped": log.skipped,
        "deterministic": int(log.deterministic),
        "blocked": int(log.blocked),
        "violations_json": rows.dumps(list(log.violations)),
        "errors_json": rows.dumps(list(log.errors)),
        "created_at": log.created_at,
    }


def pending_record(
    session_id: str, seq: int, attempts: int, last_error: str, updated_at: str
) -> Record:
    return {
        "session_id": session_id,
        "seq": seq,
        "attempts": attempts,
        "last_error": last_error,
        "updated_at": updated_at,
    }
