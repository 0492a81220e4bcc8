"""Plain data passed across the storage port: one dataclass per stored row shape."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Final, Literal

# The vocabulary of the schema. Kept here so the core and every backend agree on it.
MEMORY_KINDS: Final = (
    "fact",
    "decision",
    "constraint",
    "preference",
    "proposal",
    "open_question",
)
EVIDENCE_TYPES: Final = (
    "user_explicit",
    "skill",
    "artifact_verified",
    "assistant_proposal",
    "inferred",
)
# "forgotten" is a tombstone: the user erased the item (`lcm forget`); its row keeps no text.
ITEM_STATUSES: Final = ("active", "superseded", "disputed", "retracted", "forgotten")
LIFECYCLE_EVENTS: Final = (
    "created",
    "revised",
    "superseded",
    "retracted",
    "disputed",
    "reactivated",
    "promoted",
    "forgotten",
    "pinned",
    "unpinned",
)
# "forgotten": the event is a tombstone, its text erased by `lcm forget`.
EVENT_STORES: Final = ("host", "archive", "none", "forgotten")
RULE_CATEGORIES: Final = (
    "workflow",
    "constraint",
    "style",
    "safety",
    "current_state",
    "reference",
)

# Every table of schema v2, in the order an export walks them.
TABLES: Final = (
    "meta",
    "sessions",
    "events",
    "archive",
    "memory_items",
    "memory_events",
    "task_state",
    "checkpoints",
    "skill_versions",
    "skill_files",
    "rules",
    "rule_overrides",
    "assembly_logs",
    "validation_logs",
    "pending_extraction",
)
# The tables whose row counts diagnostics report.
REPORT_TABLES: Final = (
    "sessions",
    "events",
    "memory_items",
    "memory_events",
    "task_state",
    "checkpoints",
    "skill_versions",
    "rules",
    "assembly_logs",
    "validation_logs",
)

# Tables that belong to one session (they have a `session_id` column); per-session
# stats, export and purge touch these, and purge deletes them in this order.
SESSION_TABLES: Final = (
    "events",
    "archive",
    "memory_items",
    "memory_events",
    "task_state",
    "checkpoints",
    "assembly_logs",
    "validation_logs",
    "pending_extraction",
    "sessions",
)
# The stable row order of every table in an export, the same on every backend.
EXPORT_ORDER: Final = {
    "meta": "key",
    "sessions": "session_id",
    "events": "session_id, seq",
    "archive": "session_id, ref",
    "memory_items": "session_id, created_at, id",
    "memory_events": "id",
    "task_state": "session_id",
    "checkpoints": "session_id",
    "skill_versions": "id",
    "skill_files": "name",
    "rules": "skill_name, rule_key",
    "rule_overrides": "rule_id",
    "assembly_logs": "id",
    "validation_logs": "id",
    "pending_extraction": "session_id, seq",
}

# The columns that name one row of each table (its primary key), for `lcm import`.
ROW_KEYS: Final = {
    "meta": ("key",),
    "sessions": ("session_id",),
    "events": ("session_id", "seq"),
    "archive": ("session_id", "ref"),
    "memory_items": ("id",),
    "memory_events": ("id",),
    "task_state": ("session_id",),
    "checkpoints": ("session_id",),
    "skill_versions": ("id",),
    "skill_files": ("name",),
    "rules": ("id",),
    "rule_overrides": ("rule_id",),
    "assembly_logs": ("id",),
    "validation_logs": ("id",),
    "pending_extraction": ("session_id", "seq"),
}
# Tables whose integer `id` the store generates (a sequence or AUTOINCREMENT).
GENERATED_ID_TABLES: Final = ("memory_events", "skill_versions", "assembly_logs", "validation_logs")

# v3 changed only how the SQLite file declares its FTS tables, v4 added the SQLite file's
# index of each text's last two characters and v5 its count of item rewrites (see
# lcm_store_sqlite.schema); the tables and columns every backend holds are those of v2.
SCHEMA_VERSION: Final = 5
MAX_EVENT_TEXT: Final = 20_000

ItemStatus = Literal["active", "superseded", "disputed", "retracted", "forgotten"]


@dataclass(frozen=True, slots=True)
class Event:
    """One committed host event, normalised; `(session_id, seq)` is its identity."""

    session_id: str
    seq: int
    type: str
    text: str = ""
    time: str | None = None
    turn: int | None = None
    step: int | None = None
    role: str | None = None
    source_kind: str | None = None
    source_form: str | None = None
    tool_name: str | None = None
    call_id: str | None = None
    store: str = "host"
    content_hash: str = ""
    truncated: bool = False
    ingested_at: str = ""


@dataclass(frozen=True, slots=True)
class ArchiveEntry:
    """Raw text kept for an event the host log may not replay; `ref` is `seq:<n>`."""

    session_id: str
    ref: str
    text: str
    created_at: str = ""


@dataclass(frozen=True, slots=True)
class MemoryItem:
    """A typed memory derived from evidence; replaced values are linked, never deleted."""

    id: str
    session_id: str
    kind: str
    content: str
    content_hash: str
    evidence_type: str = "user_explicit"
    status: str = "active"
    conditions: tuple[str, ...] = ()
    scope: dict[str, Any] = field(default_factory=dict)
    numbers: tuple[dict[str, Any], ...] = ()
    source_refs: tuple[str, ...] = ()
    supersedes: tuple[str, ...] = ()
    superseded_by: str | None = None
    extractor: str = ""
    derived_from_seq: int | None = None
    created_at: str = ""
    updated_at: str = ""


@dataclass(frozen=True, slots=True)
class ItemChange:
    """The fields a lifecycle transition may change on an item; None leaves a field alone."""

    status: str | None = None
    superseded_by: str | None = None
    clear_superseded_by: bool = False
    evidence_type: str | None = None
    kind: str | None = None
    supersedes: tuple[str, ...] | None = None


@dataclass(frozen=True, slots=True)
class MemoryEvent:
    """One lifecycle row: how an item reached its current state."""

    memory_id: str
    session_id: str
    event: str
    actor: str = "system"
    detail: dict[str, Any] = field(default_factory=dict)
    at: str = ""
    id: int | None = None


@dataclass(frozen=True, slots=True)
class Session:
    """Metadata of one host session."""

    session_id: str
    cwd: str | None = None
    project: str | None = None
    origin: str | None = None
    dsh_version: str | None = None
    memory_enabled: bool = True
    created_at: str = ""
    updated_at: str = ""


@dataclass(frozen=True, slots=True)
class TaskState:
    """The current goal, progress, blockers and open items of one session."""

    session_id: str
    goal: str | None = None
    progress: tuple[str, ...] = ()
    blockers: tuple[str, ...] = ()
    open_items: tuple[str, ...] = ()
    superseded: tuple[str, ...] = ()
    updated_by_seq: int | None = None
    updated_at: str = ""


@dataclass(frozen=True, slots=True)
class Checkpoint:
    """Per-session cursors; -1 means nothing processed yet."""

    session_id: str
    last_event_seq: int = -1
    last_extract_seq: int = -1
    last_assembly_seq: int = -1
    updated_at: str = ""


@dataclass(frozen=True, slots=True)
class SkillVersion:
    """One distinct content of a skill file; `supersedes` is the previous version's id."""

    name: str
    content: str
    content_hash: str
    version: int
    source: str = ""
    path: str = ""
    supersedes: int | None = None
    id: int | None = None
    created_at: str = ""


@dataclass(frozen=True, slots=True)
class SkillFile:
    """The current state of one skill: its latest version and whether it is enabled."""

    name: str
    path: str
    version_id: int | None
    version: int
    enabled: bool = True
    description: str = ""
    when_to_use: str = ""
    invocation: str = ""
    updated_at: str = ""


@dataclass(frozen=True, slots=True)
class Rule:
    """A rule parsed from a skill body; unique per (skill_name, rule_key)."""

    id: str
    skill_name: str
    rule_key: str
    text: str
    category: str
    content_hash: str
    scope: dict[str, Any] = field(default_factory=dict)
    source_path: str = ""
    source_line: int | None = None
    active: bool = True
    updated_at: str = ""


@dataclass(frozen=True, slots=True)
class RuleOverride:
    """A user's change to one rule's category, active flag or scope."""

    rule_id: str
    category: str | None = None
    active: bool | None = None
    scope: dict[str, Any] | None = None
    updated_at: str = ""


@dataclass(frozen=True, slots=True)
class AssemblyLog:
    """One assembly attempt, kept so `explain` can show it without re-running anything."""

    session_id: str
    trigger: str
    budget_tokens: int
    used_tokens: int
    token_source: str = "estimate"
    content_hash: str | None = None
    injected: bool = False
    turn: int | None = None
    step: int | None = None
    message_seq: int | None = None
    sections: tuple[dict[str, Any], ...] = ()
    item_ids: tuple[str, ...] = ()
    omitted: tuple[dict[str, Any], ...] = ()
    reasons: tuple[dict[str, Any], ...] = ()
    errors: tuple[str, ...] = ()
    id: int | None = None
    created_at: str = ""


@dataclass(frozen=True, slots=True)
class ValidationLog:
    """One deterministic validation run over committed assistant output."""

    session_id: str
    target: str
    ok: bool
    event_seq: int | None = None
    checked: int = 0
    skipped: int = 0
    deterministic: bool = True
    blocked: bool = False
    violations: tuple[dict[str, Any], ...] = ()
    errors: tuple[str, ...] = ()
    id: int | None = None
    created_at: str = ""


@dataclass(frozen=True, slots=True)
class PendingExtraction:
    """An event whose extraction failed, waiting for a retry."""

    session_id: str
    seq: int
    attempts: int
    last_error: str = ""
    updated_at: str = ""


@dataclass(frozen=True, slots=True)
class ItemHit:
    """A search candidate: the item and its backend relevance (0 or more, higher is better)."""

    item: MemoryItem
    score: float


@dataclass(frozen=True, slots=True)
class EventHit:
    """A search candidate among raw events, scored like `ItemHit`."""

    event: Event
    score: float
