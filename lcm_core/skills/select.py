"""Skills as assembly and users see them: overrides, enabled flags, the resident core, rule selection.

Ingestion (files -> versions and rules) lives in `skill_ingest`; its entry points are
re-exported here so callers need one import. Every reader applies `rule_overrides`
on the way out, so an override changes what assembly shows without editing a file.
"""

from __future__ import annotations

import contextlib
import functools
import weakref
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any, Final

from lcm_core.config import Config
from lcm_core.skills.ingest import (
    MALFORMED_META_KEY,
    REVISION_META_KEY,
    IngestReport,
    MalformedSkill,
    bump_revision,
    discover_skill_files,
    ingest_skills,
    malformed_skills,
    rule_id,
    rule_key,
)
from lcm_core.skills.rules import SCOPE_KINDS, scope_note
from lcm_core.store.models import RULE_CATEGORIES, Rule, RuleOverride, SkillFile
from lcm_core.store.ports import MemoryStore
from lcm_core.text.query import QuerySignals, can_narrow, search_terms
from lcm_core.text.tokens import glob_match, tokenize

__all__ = [
    "CURRENT_STATE_WARNING",
    "MALFORMED_META_KEY",
    "REVISION_META_KEY",
    "CoreLine",
    "IngestReport",
    "MalformedSkill",
    "SelectedRule",
    "apply_override",
    "bump_revision",
    "compact_scope",
    "core_text",
    "discover_skill_files",
    "effective_rules",
    "ingest_skills",
    "malformed_skills",
    "resident_core",
    "rule_id",
    "rule_key",
    "rule_provider",
    "select_rules",
    "set_rule_override",
    "set_skill_enabled",
]

CORE_LINE_CHARS: Final = 240
CURRENT_STATE_WARNING: Final = (
    "changing state: confirm against current data first; not a fixed check"
)


@dataclass(frozen=True, slots=True)
class CoreLine:
    """One line of the resident skill core: a skill's description or one workflow rule."""

    skill_name: str
    kind: str  # "description" or "workflow"
    text: str
    rule_id: str | None = None
    source_path: str = ""
    source_line: int | None = None


@dataclass(frozen=True, slots=True)
class SelectedRule:
    """A rule chosen for the task, with why it matched and the notes assembly shows."""

    rule: Rule
    score: float
    matched: tuple[str, ...] = ()
    warning: str | None = None
    scope_note: str = ""


# --- enabling and overrides ------------------------------------------------------------


def set_skill_enabled(store: MemoryStore, name: str, enabled: bool) -> bool:
    """Enable or disable a skill; False when no such skill exists."""
    skill = store.get_skill_file(name)
    if skill is None:
        return False
    if skill.enabled != enabled:
        with store.transaction():
            store.put_skill_file(replace(skill, enabled=enabled, updated_at=""))
            bump_revision(store)
    return True


def set_rule_override(
    store: MemoryStore,
    rule_id_: str,
    *,
    category: str | None = None,
    active: bool | None = None,
    scope: dict[str, Any] | None = None,
) -> RuleOverride:
    """Merge a change into a rule's override; raises ValueError for an unknown category."""
    if category is not None and category not in RULE_CATEGORIES:
        raise ValueError(
            f"unknown rule category {category!r}; use one of {', '.join(RULE_CATEGORIES)}"
        )
    old = next((o for o in store.list_rule_overrides() if o.rule_id == rule_id_), None)
    merged = RuleOverride(
        rule_id=rule_id_,
        category=category if category is not None else (old.category if old else None),
        active=active if active is not None else (old.active if old else None),
        scope=scope if scope is not None else (old.scope if old else None),
    )
    with store.transaction():
        store.put_rule_override(merged)
        bump_revision(store)
    return merged


def apply_override(rule: Rule, override: RuleOverride | None) -> Rule:
    """The rule as the user wants it: overridden fields replace the parsed ones."""
    if override is None:
        return rule
    category = override.category if override.category in RULE_CATEGORIES else rule.category
    return replace(
        rule,
        category=category,
        active=rule.active if override.active is None else override.active,
        scope=rule.scope if override.scope is None else override.scope,
    )


@dataclass(frozen=True, slots=True)
class RuleSnapshot:
    """The stored rule set as a step reads it: rules with overrides, enabled skills, files."""

    rules: list[Rule]
    enabled: frozenset[str]
    skill_files: list[SkillFile]


# Per store object: (revision, snapshot). Only a known revision is cached, so rows
# written behind this package's back are re-read rather than served stale.
_SNAPSHOTS: weakref.WeakKeyDictionary[Any, tuple[str, RuleSnapshot]] = weakref.WeakKeyDictionary()


def rule_snapshot(store: MemoryStore) -> RuleSnapshot:
    """The rule set, read once per revision (every read when no revision is recorded)."""
    revision = store.get_meta(REVISION_META_KEY) or ""
    try:
        cached = _SNAPSHOTS.get(store)
    except TypeError:  # a store that cannot be weakly referenced is simply not cached
        cached = None
    if cached is not None and revision and cached[0] == revision:
        return cached[1]
    overrides = {o.rule_id: o for o in store.list_rule_overrides()}
    files = store.list_skill_files()
    enabled = frozenset(s.name for s in files if s.enabled)
    rules = [apply_override(r, overrides.get(r.id)) for r in store.list_rules()]
    snapshot = RuleSnapshot(rules, enabled, files)
    if revision:
        with contextlib.suppress(TypeError):
            _SNAPSHOTS[store] = (revision, snapshot)
    return snapshot


def effective_rules(
    store: MemoryStore,
    *,
    skill_name: str | None = None,
    include_inactive: bool = False,
    snapshot: RuleSnapshot | None = None,
) -> list[Rule]:
    """Rules with overrides applied, from enabled skills only unless inactive ones are asked for.

    The rows may come from a cache shared by callers: treat them as read-only. A caller
    that already holds this step's `snapshot` passes it, so the store is read once.
    """
    snap = snapshot if snapshot is not None else rule_snapshot(store)
    rules = snap.rules
    if skill_name is not None:
        rules = [r for r in rules if r.skill_name == skill_name]
    if include_inactive:
        return list(rules)
    return [r for r in rules if r.active and r.skill_name in snap.enabled]


# --- what assembly reads ---------------------------------------------------------------


def _clip(text: str, limit: int = CORE_LINE_CHARS) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def resident_core(
    store: MemoryStore, config: Config, *, snapshot: RuleSnapshot | None = None
) -> list[CoreLine]:
    """Description plus the first workflow rules of each enabled skill, skills by name."""
    snap = snapshot if snapshot is not None else rule_snapshot(store)
    per_skill = config.skills.core_lines_per_skill
    by_skill: dict[str, list[Rule]] = {}
    for rule in effective_rules(store, snapshot=snap):
        if rule.category == "workflow":
            by_skill.setdefault(rule.skill_name, []).append(rule)
    lines: list[CoreLine] = []
    for skill in snap.skill_files:
        if not skill.enabled:
            continue
        summary = skill.description or skill.when_to_use
        if summary:
            lines.append(
                CoreLine(skill.name, "description", _clip(summary), None, skill.path, None)
            )
        for rule in by_skill.get(skill.name, [])[:per_skill]:
            lines.append(
                CoreLine(
                    skill.name,
                    "workflow",
                    _clip(rule.text),
                    rule.id,
                    rule.source_path,
                    rule.source_line,
                )
            )
    return lines


@functools.lru_cache(maxsize=4096)
def _rule_terms(text: str) -> frozenset[str]:
    return frozenset(tokenize(text.casefold()))


def _matched_terms(wanted: frozenset[str], words: frozenset[str]) -> frozenset[str]:
    """Query terms found among a rule's words; a stemmed term ("percentag") matches as a prefix."""
    exact = wanted & words
    rest = [term for term in wanted - exact if term.isascii() and len(term) >= 4]
    return exact | frozenset(t for t in rest if any(word.startswith(t) for word in words))


def _term_weight(term: str) -> float:
    # A CJK bigram or a short word narrows less than a longer Latin word.
    if term.isascii():
        return 1.0 if len(term) >= 4 else 0.5
    return 0.5


def select_rules(
    store: MemoryStore,
    query_terms: Sequence[str],
    limit: int = 12,
    *,
    paths: Sequence[str] = (),
    config: Config | None = None,
    min_score: float = 1.0,
    snapshot: RuleSnapshot | None = None,
    core: Sequence[CoreLine] | None = None,
) -> list[SelectedRule]:
    """Rules whose text shares terms with the task (or whose path globs match a task path).

    Workflow lines already shown in the resident core are left out when `config` is given,
    so one rule is never injected twice. Best first; ties by skill, line, then key.
    """
    terms = [t.casefold() for t in dict.fromkeys(query_terms) if can_narrow(t)]
    snap = snapshot if snapshot is not None else rule_snapshot(store)
    if core is None and config is not None:
        core = resident_core(store, config, snapshot=snap)
    core_ids = {line.rule_id for line in core} if core is not None else set()
    words_wanted = frozenset(t for t in terms if " " not in t)
    phrases = [t for t in terms if " " in t and len(t) >= 3]
    picked: list[SelectedRule] = []
    for rule in effective_rules(store, snapshot=snap):
        if rule.id in core_ids:
            continue
        hits = _matched_terms(words_wanted, _rule_terms(rule.text))
        globs = rule.scope.get("paths") or []
        if not hits and not phrases and not (paths and globs):
            continue  # the common case, kept cheap: most rules share nothing with the task
        folded = rule.text.casefold()
        matched = [t for t in terms if t in hits or (t in phrases and t in folded)]
        score = sum(_term_weight(t) for t in matched)
        path_hits = [
            p for p in paths if any(isinstance(g, str) and glob_match(g, p) for g in globs)
        ]
        score += 2.0 * len(path_hits)
        if score < min_score:
            continue
        picked.append(
            SelectedRule(
                rule=rule,
                score=round(score, 6),
                matched=tuple(matched + path_hits),
                warning=CURRENT_STATE_WARNING if rule.category == "current_state" else None,
                scope_note=scope_note(rule.scope),
            )
        )
    picked.sort(
        key=lambda s: (-s.score, s.rule.skill_name, s.rule.source_line or 0, s.rule.rule_key)
    )
    return picked[: max(0, limit)]


# --- the assembly's rule provider ------------------------------------------------------


def compact_scope(scope: dict[str, Any]) -> dict[str, Any]:
    """Only the parts of a scope that say something: narrowed targets, named paths and tools."""
    compact: dict[str, Any] = {}
    targets = scope.get("targets")
    if isinstance(targets, list) and targets and tuple(targets) != SCOPE_KINDS:
        compact["targets"] = list(targets)
    for key in ("paths", "tools"):
        if scope.get(key):
            compact[key] = list(scope[key])
    return compact


def core_text(line: CoreLine) -> str:
    """One resident-core line as plain text: a skill summary, or a workflow rule under it."""
    if line.kind == "description":
        return f"- {line.skill_name}: {line.text}"
    return f"  - [rule {line.rule_id}] {line.text}"


def rule_provider(
    store: MemoryStore, signals: QuerySignals, config: Config
) -> tuple[list[str], list[Rule]]:
    """Core lines and task-relevant rules for `assembly.assemble(rules=...)`; never raises."""
    try:
        snapshot = rule_snapshot(store)  # one read of the rule set for the whole step
        lines = resident_core(store, config, snapshot=snapshot)
        core = [core_text(line) for line in lines]
        if not snapshot.rules:  # no skill imported: nothing to match the task against
            return core, []
        picked = select_rules(
            store,
            search_terms(signals),
            config.skills.rule_limit,
            paths=signals.paths,
            config=config,
            snapshot=snapshot,
            core=lines,
        )
    except Exception:
        # Rules are an aid; a broken rule row must not cost the step its memory block.
        return [], []
    return core, [replace(s.rule, scope=compact_scope(s.rule.scope)) for s in picked]
