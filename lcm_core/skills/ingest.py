"""Skill ingestion: find SKILL.md files, version their content, keep their rules in step.

Decisions worth knowing:

- A rule is named by `rule_key`, a hash of its normalized text, so re-ingesting finds the
  same rule, a duplicate line in one skill collapses into one rule (the first line
  wins), and an override (keyed by the rule id derived from skill name and key) keeps
  applying after the file changes around it.
- Unchanged content at an unchanged path writes nothing. A skill whose file turns
  malformed keeps its last good version and rules; a skill whose file vanished from the
  include set has its rules deactivated, never deleted.
- Paths are stored relative to the ingest base folder when the file is under it, so the
  same tree ingested from two checkouts gives the same rows.
"""

from __future__ import annotations

import glob
import json
import os
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Final

from lcm_core.config import Config
from lcm_core.skills.parse import SkillParseError, clean_rule_text, parse_skill, rule_candidates
from lcm_core.skills.rules import classify, rule_scope
from lcm_core.store.models import Rule, SkillFile, SkillVersion
from lcm_core.store.ports import AdminStore, MemoryStore, SkillStore
from lcm_core.text.tokens import fingerprint, glob_match, normalize_text, sha256_hex

MALFORMED_META_KEY: Final = "skills.malformed"
# Bumped by every write to skills, rules or overrides made through this package, so a
# reader can cache the rule set (also across processes sharing one database file).
REVISION_META_KEY: Final = "skills.revision"
MAX_SKILL_CHARS: Final = 2_000_000
MAX_RULES_PER_SKILL: Final = 400


@dataclass(frozen=True, slots=True)
class MalformedSkill:
    """A skill file that was skipped, and why."""

    path: str
    reason: str
    line: int = 0


@dataclass(slots=True)
class IngestReport:
    """What one ingest run did, each list in a deterministic order."""

    added: list[str] = field(default_factory=list)
    updated: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    malformed: list[MalformedSkill] = field(default_factory=list)
    rules_written: int = 0
    rules_deactivated: int = 0
    warnings: list[str] = field(default_factory=list)


# --- ids -------------------------------------------------------------------------------


def rule_key(text: str) -> str:
    """Stable key of a rule within its skill: its text ignoring case, spacing and emphasis."""
    plain = clean_rule_text(text).replace("`", "")
    return fingerprint(plain)[:16]


def rule_id(skill_name: str, key: str) -> str:
    """Stable id of a rule across versions: `rule_<hash16>` of skill name and key."""
    return "rule_" + sha256_hex(skill_name + "\n" + key)[:16]


def bump_revision(store: AdminStore) -> None:
    """Mark the stored skills and rules as changed."""
    raw = store.get_meta(REVISION_META_KEY) or "0"
    store.set_meta(REVISION_META_KEY, str(int(raw) + 1 if raw.isdigit() else 1))


# --- discovery -------------------------------------------------------------------------


def _display_path(path: Path, base: Path) -> str:
    try:
        return path.relative_to(base).as_posix()
    except ValueError:
        return path.as_posix()


def discover_skill_files(
    include: Sequence[str], exclude: Sequence[str], base_dir: str | Path
) -> list[tuple[str, Path]]:
    """SKILL.md files matched by the include globs minus the exclude globs, sorted by path."""
    base = Path(base_dir).resolve()
    found: dict[str, Path] = {}
    for pattern in include:
        if not isinstance(pattern, str) or not pattern.strip():
            continue
        # `~` is the user's home; hidden folders match only when the pattern names them.
        for match in glob.glob(os.path.expanduser(pattern), root_dir=base, recursive=True):
            path = Path(match) if os.path.isabs(match) else base / match
            if path.is_dir():
                path = path / "SKILL.md"
            if path.name.upper() != "SKILL.MD" or not path.is_file():
                continue
            shown = _display_path(path.resolve(), base)
            if any(isinstance(p, str) and glob_match(p, shown) for p in exclude):
                continue
            found.setdefault(shown, path)
    return sorted(found.items())


# --- ingest ----------------------------------------------------------------------------


def _read(path: Path) -> str:
    raw = path.read_bytes()
    if len(raw) > MAX_SKILL_CHARS * 4:
        raise SkillParseError(f"file is larger than {MAX_SKILL_CHARS} characters")
    text = raw.decode("utf-8-sig")
    if len(text) > MAX_SKILL_CHARS:
        raise SkillParseError(f"file is larger than {MAX_SKILL_CHARS} characters")
    return normalize_text(text)


def _parse_rules(
    name: str, shown: str, body: str, body_line: int, report: IngestReport
) -> list[Rule]:
    rules: dict[str, Rule] = {}
    for candidate in rule_candidates(body, body_line):
        key = rule_key(candidate.text)
        if key in rules:
            continue
        if len(rules) >= MAX_RULES_PER_SKILL:
            report.warnings.append(
                f"{shown}: more than {MAX_RULES_PER_SKILL} rules; the rest from line {candidate.line} on are ignored"
            )
            break
        category = classify(
            candidate.text, candidate.heading, candidate.ordered, candidate.imperative
        )
        rules[key] = Rule(
            id=rule_id(name, key),
            skill_name=name,
            rule_key=key,
            text=candidate.text,
            category=category,
            content_hash=sha256_hex(candidate.text),
            scope=rule_scope(candidate.text),
            source_path=shown,
            source_line=candidate.line,
            active=True,
        )
    return list(rules.values())


def _same_rule(a: Rule, b: Rule) -> bool:
    return replace(a, updated_at="") == replace(b, updated_at="")


def _sync_rules(store: SkillStore, name: str, rules: list[Rule], report: IngestReport) -> None:
    existing = {rule.rule_key: rule for rule in store.list_rules(skill_name=name)}
    for rule in rules:
        old = existing.pop(rule.rule_key, None)
        if old is None or not _same_rule(old, rule):
            store.upsert_rule(rule)
            report.rules_written += 1
    for old in existing.values():
        if old.active:
            store.upsert_rule(replace(old, active=False, updated_at=""))
            report.rules_deactivated += 1


def _ingest_one(
    store: MemoryStore, shown: str, path: Path, report: IngestReport, seen: dict[str, str]
) -> None:
    text = _read(path)
    doc = parse_skill(text, fallback_name=path.parent.name)
    if doc.name in seen:
        raise SkillParseError(f"skill name {doc.name!r} is already defined by {seen[doc.name]}")
    seen[doc.name] = shown
    content_hash = sha256_hex(text)
    current = store.get_skill_file(doc.name)
    versions = store.list_skill_versions(doc.name)
    current_version = (
        next((v for v in versions if v.id == current.version_id), None) if current else None
    )
    if (
        current is not None
        and current_version is not None
        and current_version.content_hash == content_hash
        and current.path == shown
    ):
        report.unchanged.append(doc.name)
        return
    with store.transaction():
        stored = store.add_skill_version(
            SkillVersion(
                name=doc.name,
                content=text,
                content_hash=content_hash,
                version=max((v.version for v in versions), default=0) + 1,
                source="file",
                path=shown,
                supersedes=current_version.id if current_version else None,
            )
        )
        store.put_skill_file(
            SkillFile(
                name=doc.name,
                path=shown,
                version_id=stored.id,
                version=stored.version,
                enabled=current.enabled if current else True,
                description=clean_rule_text(doc.description),
                when_to_use=clean_rule_text(doc.when_to_use),
                invocation=doc.invocation.strip(),
            )
        )
        _sync_rules(
            store, doc.name, _parse_rules(doc.name, shown, doc.body, doc.body_line, report), report
        )
    (report.updated if current else report.added).append(doc.name)


def ingest_skills(
    store: MemoryStore, config: Config, base_dir: str | Path, *, prune: bool = True
) -> IngestReport:
    """Ingest every SKILL.md that `skills.include` / `skills.exclude` select under `base_dir`.

    A malformed or unreadable file is reported and skipped; the others still ingest.
    With `prune`, skills whose file is no longer selected have their rules deactivated.
    """
    report = IngestReport()
    include = config.skills.include
    exclude = config.skills.exclude
    try:
        files = discover_skill_files(include, exclude, base_dir)
    except OSError as exc:
        report.warnings.append(f"cannot list skill files: {exc}")
        files = []
    seen: dict[str, str] = {}
    for shown, path in files:
        try:
            _ingest_one(store, shown, path, report, seen)
        except SkillParseError as exc:
            report.malformed.append(MalformedSkill(shown, exc.message, exc.line))
        except UnicodeDecodeError:
            report.malformed.append(MalformedSkill(shown, "file is not valid UTF-8"))
        except OSError as exc:
            report.malformed.append(MalformedSkill(shown, f"cannot read: {exc.strerror or exc}"))
        except Exception as exc:  # a store failure on one file is reported, not raised
            report.warnings.append(f"{shown}: ingest failed: {type(exc).__name__}: {exc}")
    try:
        if prune:
            broken = {item.path for item in report.malformed}
            for skill in store.list_skill_files():
                if skill.name not in seen and skill.path not in broken:
                    deactivated = [r for r in store.list_rules(skill_name=skill.name) if r.active]
                    with store.transaction():
                        for rule in deactivated:
                            store.upsert_rule(replace(rule, active=False, updated_at=""))
                    report.rules_deactivated += len(deactivated)
                    if deactivated:
                        report.removed.append(skill.name)
        if report.added or report.updated or report.rules_written or report.rules_deactivated:
            bump_revision(store)
        store.set_meta(
            MALFORMED_META_KEY,
            json.dumps([_malformed_json(m) for m in report.malformed], ensure_ascii=False),
        )
    except Exception as exc:  # the store failed after the files were read
        report.warnings.append(f"finishing the ingest failed: {type(exc).__name__}: {exc}")
    return report


def _malformed_json(item: MalformedSkill) -> dict[str, Any]:
    return {"path": item.path, "reason": item.reason, "line": item.line}


def malformed_skills(store: AdminStore) -> list[MalformedSkill]:
    """The malformed files the latest ingest reported (for status)."""
    try:
        rows = json.loads(store.get_meta(MALFORMED_META_KEY) or "[]")
        return [
            MalformedSkill(str(r["path"]), str(r["reason"]), int(r.get("line") or 0)) for r in rows
        ]
    except (ValueError, TypeError, KeyError):
        return [MalformedSkill(MALFORMED_META_KEY, "stored report is unreadable")]
