"""Diagnostics: the data behind `memory status`, `memory explain` and `memory inspect`.

Everything here only reads: logs are shown as they were written, nothing is assembled
or validated again. Each report is a plain dataclass with a `to_dict()` for JSON
output; ordering is fixed (tables in schema order, categories in vocabulary order,
event types sorted) so two calls on the same state give the same bytes.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Final

from lcm_core.assembly.compaction import COMPACTION_EVENT_TYPES, CompactionStatus, compaction_status
from lcm_core.assembly.log import explain as latest_assembly
from lcm_core.config import Config, budget_tokens
from lcm_core.retrieval.citations import source_seqs
from lcm_core.retrieval.inspection import ItemInspection, inspect_item, verbatim_text
from lcm_core.skills.select import MalformedSkill, apply_override, effective_rules, malformed_skills
from lcm_core.store.models import (
    ITEM_STATUSES,
    REPORT_TABLES,
    RULE_CATEGORIES,
    AssemblyLog,
    Checkpoint,
    Event,
    MemoryItem,
    Rule,
    RuleOverride,
    SkillFile,
    SkillVersion,
    ValidationLog,
)
from lcm_core.store.ports import EventStore, MemoryStore
from lcm_core.validation.validate import cursor_key, repair_reminder_text, repair_state

# Plugin names on the message that replaces compacted history, per compactor.
BASIC_COMPACTORS: Final = ("compact",)
# How many events after a compaction summary may hold its replacing message.
_REPLACEMENT_WINDOW: Final = 3
ALWAYS_UNOBSERVABLE: Final = (
    "extra compaction summary fields: capture stores only the summary text, so compactors "
    "are told apart by the plugin name on the replacing message alone",
    "pre-step calls a gating compressor skipped: a skipped call leaves no event",
    "the host's compaction thresholds and settings: they are not in the event stream",
)


def _plain(value: Any) -> Any:
    """Dataclasses, tuples and mappings as JSON-ready dicts and lists."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: _plain(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    return value


@dataclass(frozen=True, slots=True)
class CompatibilityReport:
    """What the event stream says about the host's compaction, beside what config expects."""

    configured_policy: str
    detected_policy: str
    effective_policy: str
    reinject_after_compaction: bool
    compaction_events: dict[str, int] = field(default_factory=dict)
    last_compaction_seq: int | None = None
    compactors: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()
    unobservable: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class SkillSummary:
    """Skills and rules across the store (they are not per session)."""

    skills: int
    enabled: int
    versions: int
    rules_total: int
    rules_active: int
    overrides: int
    by_category: dict[str, int]
    malformed: tuple[MalformedSkill, ...] = ()


@dataclass(frozen=True, slots=True)
class ValidationSummary:
    """The session's validation cursor, repair bookkeeping and latest run."""

    checks_configured: int
    preconditions_configured: int
    cursor: int | None
    repair_attempts: int
    max_repair_attempts: int
    pending_repair: bool
    latest: ValidationLog | None = None


@dataclass(frozen=True, slots=True)
class StatusReport:
    """Everything `memory status` shows for one session."""

    session_id: str
    database: str
    schema_version: int
    counts: dict[str, int]
    items_by_status: dict[str, int]
    checkpoint: Checkpoint
    pending_extraction: int
    budget_tokens: int
    latest_assembly: AssemblyLog | None
    compaction: CompactionStatus
    compatibility: CompatibilityReport
    skills: SkillSummary
    validation: ValidationSummary
    config_warnings: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = _plain(self)
        data["compaction"] = self.compaction.to_dict()
        return data


@dataclass(frozen=True, slots=True)
class ExplainReport:
    """The latest logged assembly and validation run of a session, as stored."""

    session_id: str
    assembly: AssemblyLog | None
    validation: ValidationLog | None
    pending_repair: str | None = None

    def to_dict(self) -> dict[str, Any]:
        result: dict[str, Any] = _plain(self)
        return result


@dataclass(frozen=True, slots=True)
class InspectReport:
    """One id resolved: a memory item, a rule with its override, a skill, or nothing."""

    ref: str
    kind: str  # "item", "event", "rule", "skill" or "missing"
    item: ItemInspection | None = None
    # An event label (`seq:N` with a session): the event, its verbatim text, its items.
    event: Event | None = None
    event_text: str = ""
    derived: tuple[MemoryItem, ...] = ()
    rule: Rule | None = None
    override: RuleOverride | None = None
    effective: Rule | None = None
    skill: SkillFile | None = None
    versions: tuple[SkillVersion, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = _plain(self)
        # Version contents can be large; the listing keeps their metadata only.
        for version in data["versions"]:
            version.pop("content", None)
        return data


# --- compatibility ---------------------------------------------------------------------


def compatibility_report(store: EventStore, session_id: str, config: Config) -> CompatibilityReport:
    """Detect the compaction policy from the session's events and list what cannot be seen."""
    configured = config.compatibility.compaction_policy
    reinject = config.compatibility.reinject_after_compaction
    events = store.list_events(session_id, types=COMPACTION_EVENT_TYPES)
    counts = dict(
        sorted((t, sum(1 for e in events if e.type == t)) for t in {e.type for e in events})
    )
    compactors: set[str] = set()
    for summary in (e for e in events if e.type == "compaction/summary"):
        if summary.source_form:
            compactors.add(summary.source_form.split("/", 1)[0])
        following = range(summary.seq + 1, summary.seq + 1 + _REPLACEMENT_WINDOW)
        for event in store.get_events(session_id, list(following)):
            if event.type == "user/message" and event.source_kind == "plugin" and event.source_form:
                compactors.add(event.source_form.split("/", 1)[0])
    if not events:
        detected = "none-observed"
    elif any("billion" in name for name in compactors):
        detected = "billion-context"
    elif compactors & set(BASIC_COMPACTORS):
        detected = "compaction-basic"
    else:
        detected = "unknown-compactor"
    notes: list[str] = []
    effective = configured
    if configured == "auto":
        effective = (
            detected if detected in ("compaction-basic", "billion-context") else "compaction-basic"
        )
        if effective != detected:
            notes.append(
                "auto: no known compactor seen yet; assuming the serial pre-step model (compaction-basic)"
            )
    elif configured == "none":
        notes.append("compaction is not tracked; assembled blocks carry a notice saying so")
    elif detected in ("compaction-basic", "billion-context") and detected != configured:
        notes.append(f"configured {configured}, but the event stream looks like {detected}")
    if not reinject:
        notes.append("reinjectAfterCompaction is off: memory does not re-arm after a compaction")
    unobservable = list(ALWAYS_UNOBSERVABLE)
    if not events:
        unobservable.append(
            "which compactor the host runs: no compaction has happened in this session yet"
        )
    return CompatibilityReport(
        configured_policy=configured,
        detected_policy=detected,
        effective_policy=effective,
        reinject_after_compaction=reinject,
        compaction_events=counts,
        last_compaction_seq=events[-1].seq if events else None,
        compactors=tuple(sorted(compactors)),
        notes=tuple(notes),
        unobservable=tuple(unobservable),
    )


# --- status ----------------------------------------------------------------------------


def skill_summary(store: MemoryStore) -> SkillSummary:
    """Counts of skills, versions, rules (overrides applied) and the malformed files."""
    files = store.list_skill_files()
    rules = effective_rules(store, include_inactive=True)
    enabled = {f.name for f in files if f.enabled}
    active = [r for r in rules if r.active and r.skill_name in enabled]
    by_category = {c: sum(1 for r in active if r.category == c) for c in RULE_CATEGORIES}
    return SkillSummary(
        skills=len(files),
        enabled=len(enabled),
        versions=sum(len(store.list_skill_versions(f.name)) for f in files),
        rules_total=len(rules),
        rules_active=len(active),
        overrides=len(store.list_rule_overrides()),
        by_category=by_category,
        malformed=tuple(malformed_skills(store)),
    )


def validation_summary(store: MemoryStore, session_id: str, config: Config) -> ValidationSummary:
    """The session's validation state; the latest run is read from the log, not re-run."""
    state = repair_state(store, session_id, config)
    raw_cursor = store.get_meta(cursor_key(session_id))
    logs = store.list_validation_logs(session_id, limit=1)
    return ValidationSummary(
        checks_configured=len(config.validation.checks),
        preconditions_configured=len(config.validation.preconditions),
        cursor=int(raw_cursor) if raw_cursor and raw_cursor.lstrip("-").isdigit() else None,
        repair_attempts=state.attempts,
        max_repair_attempts=state.max_attempts,
        pending_repair=state.pending is not None,
        latest=logs[0] if logs else None,
    )


def status(store: MemoryStore, session_id: str, config: Config) -> StatusReport:
    """Counts, cursors, budget, latest assembly and validation, compatibility, skills."""
    stats = store.stats(session_id)
    counts = {table: int(stats.get(table, 0)) for table in REPORT_TABLES}
    items = dict.fromkeys(ITEM_STATUSES, 0)
    for item in store.list_items(session_id):
        items[item.status] = items.get(item.status, 0) + 1
    checkpoint = store.get_checkpoint(session_id)
    return StatusReport(
        session_id=session_id,
        database=store.url,
        schema_version=store.schema_version(),
        counts=counts,
        items_by_status=items,
        checkpoint=checkpoint,
        pending_extraction=len(store.list_pending(session_id)),
        budget_tokens=budget_tokens(config),
        latest_assembly=latest_assembly(store, session_id),
        compaction=compaction_status(store, session_id, checkpoint.last_assembly_seq, config),
        compatibility=compatibility_report(store, session_id, config),
        skills=skill_summary(store),
        validation=validation_summary(store, session_id, config),
        config_warnings=tuple(config.warnings),
    )


# --- explain and inspect -----------------------------------------------------------------


def explain(store: MemoryStore, session_id: str, config: Config | None = None) -> ExplainReport:
    """The latest assembly log and validation run as stored, plus any pending repair reminder."""
    logs = store.list_validation_logs(session_id, limit=1)
    pending = None
    if config is not None:
        state = repair_state(store, session_id, config)
        pending = repair_reminder_text(state.pending) if state.pending else None
    return ExplainReport(
        session_id=session_id,
        assembly=latest_assembly(store, session_id),
        validation=logs[0] if logs else None,
        pending_repair=pending,
    )


EVENT_LABEL: Final = re.compile(r"^(?:ev )?seq:(-?\d{1,18})$")


def inspect(store: MemoryStore, ref: str, session_id: str | None = None) -> InspectReport:
    """Resolve an id: a memory item (sources, links, lifecycle), an event label `seq:N` of
    `session_id` (its text and the items citing it), a rule id, or a skill name."""
    label = EVENT_LABEL.match(ref.strip().strip("[]"))
    if label is not None and session_id is not None:
        return _inspect_event(store, ref, session_id, int(label.group(1)))
    found = inspect_item(store, ref)
    if found is not None:
        return InspectReport(ref=ref, kind="item", item=found)
    rule = next((r for r in store.list_rules() if r.id == ref), None)
    if rule is not None:
        override = next((o for o in store.list_rule_overrides() if o.rule_id == ref), None)
        return InspectReport(
            ref=ref,
            kind="rule",
            rule=rule,
            override=override,
            effective=apply_override(rule, override),
            skill=store.get_skill_file(rule.skill_name),
        )
    skill = store.get_skill_file(ref)
    if skill is not None:
        return InspectReport(
            ref=ref,
            kind="skill",
            skill=skill,
            versions=tuple(store.list_skill_versions(skill.name)),
        )
    return InspectReport(ref=ref, kind="missing")


def _inspect_event(store: MemoryStore, ref: str, session_id: str, seq: int) -> InspectReport:
    event = store.get_event(session_id, seq)
    if event is None:
        return InspectReport(ref=ref, kind="missing")
    derived = tuple(
        item
        for item in store.list_items(session_id)
        if seq in source_seqs(item) or item.derived_from_seq == seq
    )
    return InspectReport(
        ref=ref, kind="event", event=event, event_text=verbatim_text(store, event), derived=derived
    )
