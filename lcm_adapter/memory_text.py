"""Plain-text answers of the host's `memory` command, laid out from the core's reports.

The data comes from `lcm_core.reports.diagnostics`, `retrieval` and `query`; this module only
decides the layout, which stays plain (no colour, no tables) because a host shows it
in a chat pane.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from lcm_core import usecases
from lcm_core.assembly.log import explain_text as render_assembly
from lcm_core.reports import diagnostics
from lcm_core.retrieval.inspection import ItemInspection
from lcm_core.store.models import AssemblyLog, ValidationLog
from lcm_core.text.dates import readable_time

if TYPE_CHECKING:
    from lcm_adapter.runtime_state import RuntimeView

CLIP = 200


def render_pairs(pairs: Sequence[tuple[str, Any]]) -> str:
    """Aligned `key  value` lines."""
    width = max((len(k) for k, _ in pairs), default=0)
    return "\n".join(f"{k.ljust(width)}  {v}" for k, v in pairs)


def _clip(text: str, limit: int = CLIP) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def _assembly_line(log: AssemblyLog | None) -> str:
    if log is None:
        return "none"
    state = "injected" if log.injected else "not injected"
    line = f"turn {log.turn} step {log.step}, {state}, {log.used_tokens}/{log.budget_tokens} tokens"
    return line + (f", error: {log.errors[0]}" if log.errors else "")


def _validation_line(log: ValidationLog | None) -> str:
    if log is None:
        return "none"
    state = "ok" if log.ok else f"{len(log.violations)} violations"
    return f"{log.target}: {state}" + (", blocked" if log.blocked else "")


def status_text(runtime: RuntimeView, session_id: str) -> str:
    """The session's counts, cursors, budget, latest runs, compatibility and our counters."""
    report = diagnostics.status(runtime.store, session_id, runtime.config)
    stats = runtime.stats
    counts, cp, compat = report.counts, report.checkpoint, report.compatibility
    items = ", ".join(f"{k} {v}" for k, v in report.items_by_status.items() if v) or "none"
    pairs: list[tuple[str, Any]] = [
        ("session", session_id),
        ("database", f"{report.database} (schema v{report.schema_version})"),
        ("events", counts.get("events", 0)),
        ("memory items", f"{counts.get('memory_items', 0)} ({items})"),
        ("rules", f"{report.skills.rules_active} active of {report.skills.rules_total}"),
        (
            "cursors",
            f"event {cp.last_event_seq}, extract {cp.last_extract_seq}, "
            f"assembly {cp.last_assembly_seq}",
        ),
        ("pending extraction", report.pending_extraction),
        ("budget", f"{report.budget_tokens} tokens"),
        ("latest assembly", _assembly_line(report.latest_assembly)),
        ("latest validation", _validation_line(report.validation.latest)),
        (
            "compaction",
            f"policy {compat.effective_policy} (configured {compat.configured_policy}, "
            f"seen {compat.detected_policy})",
        ),
        (
            "this process",
            f"{stats.events} events, {stats.injected}/{stats.pre_steps} steps injected, "
            f"{stats.denials} denials, {stats.host_skips} skips",
        ),
        (
            "errors",
            f"capture {stats.capture_errors}, extraction {stats.extraction_errors}, "
            f"validation {stats.validation_errors}, pre-step {stats.pre_step_errors}, "
            f"pre-tool {stats.pre_tool_errors}, command {stats.command_errors}",
        ),
    ]
    if stats.last_error:
        pairs.append(("last error", stats.last_error))
    if stats.last_skip:
        pairs.append(("last skip", stats.last_skip))
    pairs.extend(("note", note) for note in compat.notes)
    pairs.extend(("config warning", warning) for warning in report.config_warnings)
    return "long-conversation-memory status\n" + render_pairs(pairs)


def explain_text(runtime: RuntimeView, session_id: str) -> str:
    """The latest logged assembly and validation run, as stored, and any pending reminder."""
    report = diagnostics.explain(runtime.store, session_id, runtime.config)
    parts: list[str] = []
    if report.assembly is None:
        parts.append(f"no assembly has been logged for session {session_id} yet")
    else:
        parts.append(render_assembly(report.assembly))
    if report.validation is not None:
        lines = [f"validation: {_validation_line(report.validation)}"]
        lines.extend(
            f"  {v.get('check')}: {_clip(str(v.get('message', '')))}"
            for v in report.validation.violations
        )
        parts.append("\n".join(lines))
    if report.pending_repair:
        parts.append(report.pending_repair)
    return "\n".join(parts)


def _item_lines(found: ItemInspection) -> list[str]:
    item = found.item
    lines = [f"{item.id}  [{item.kind}, {item.evidence_type}, {item.status}]", f"  {item.content}"]
    if item.conditions:
        lines.append("  conditions: " + "; ".join(item.conditions))
    lines.extend(f"  source {s.ref}: {_clip(s.text)}" for s in found.sources)
    if found.superseded_by is not None:
        lines.append(f"  superseded by {found.superseded_by.id}: {found.superseded_by.content}")
    lines.extend(f"  supersedes {old.id}: {old.content}" for old in found.supersedes)
    lines.extend(f"  {row.at} {row.event} by {row.actor}" for row in found.lifecycle)
    return lines


def inspect_text(runtime: RuntimeView, ref: str, session_id: str | None = None) -> str | None:
    """An item, an event label `seq:N` of the session, a rule or a skill; None if unknown."""
    report = diagnostics.inspect(runtime.store, ref, session_id)
    if report.kind == "item" and report.item is not None:
        return "\n".join(_item_lines(report.item))
    if report.kind == "event" and report.event is not None:
        event = report.event
        text = "(forgotten)" if event.store == "forgotten" else _clip(report.event_text)
        when = readable_time(event.time)
        lines = [f"seq:{event.seq}  [{event.type}, {event.source_kind or '-'}, {when}] {text}"]
        lines.extend(
            f"  cited by {i.id} [{i.status}] {_clip(i.content, 120)}" for i in report.derived
        )
        return "\n".join(lines)
    if report.kind == "rule" and report.effective is not None:
        rule = report.effective
        where = f"{rule.source_path}:{rule.source_line}" if rule.source_line else rule.source_path
        state = "active" if rule.active else "inactive"
        return f"{rule.id}  [{rule.category}, {state}] {where}\n  {rule.text}"
    if report.kind == "skill" and report.skill is not None:
        skill = report.skill
        state = "enabled" if skill.enabled else "disabled"
        return (
            f"skill {skill.name}  [{state}, version {skill.version} of {len(report.versions)}]\n"
            f"  {skill.path}\n  {_clip(skill.description)}"
        )
    return None


def search_text(runtime: RuntimeView, session_id: str, query: str, limit: int) -> str:
    """Ranked memory items for the words, then matching raw events."""
    found = usecases.search(runtime.store, session_id, query, runtime.config, limit)
    lines = [f"memory items for {query!r}:"]
    lines.extend(
        f"  {r.score:.3f}  {r.item.id}  [{r.item.kind}] {_clip(r.item.content, 160)}"
        for r in found.items
    )
    if not found.items:
        lines.append("  (none)")
    hits = found.events
    lines.append("events:")
    lines.extend(f"  seq:{h.event.seq}  {h.event.type}  {_clip(h.event.text, 160)}" for h in hits)
    if not hits:
        lines.append("  (none)")
    return "\n".join(lines)
