"""`lcm skills ingest|list|enable|disable` and `lcm rules list|override`."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any, Final

import click

from lcm_adapter import render
from lcm_adapter.cli.base import (
    emit,
    fail,
    json_option,
    opened_store,
    resolve_session,
    session_option,
    state,
)
from lcm_core import usecases
from lcm_core.config import load_config
from lcm_core.skills.select import (
    effective_rules,
    ingest_skills,
    set_rule_override,
    set_skill_enabled,
)
from lcm_core.store.models import RULE_CATEGORIES

DEFAULT_INCLUDE: Final = ("**/SKILL.md",)


@click.group()
def skills() -> None:
    """Skill files (SKILL.md): ingest them as versioned rules, list them, switch them."""


@skills.command("ingest")
@click.argument(
    "folder", required=False, type=click.Path(file_okay=False, exists=True, path_type=Path)
)
@click.option("--include", multiple=True, metavar="GLOB", help="Skill files to read (repeatable).")
@click.option("--exclude", multiple=True, metavar="GLOB", help="Paths to skip (repeatable).")
@click.option("--no-prune", is_flag=True, help="Keep rules of skills no longer found active.")
@json_option
@click.pass_context
def skills_ingest(
    ctx: click.Context,
    folder: Path | None,
    include: tuple[str, ...],
    exclude: tuple[str, ...],
    no_prune: bool,
    as_json: bool,
) -> None:
    """Read SKILL.md files under FOLDER (default: here); each changed file is a new version.

    Globs come from --include/--exclude, else from the skills.include/exclude settings,
    else every **/SKILL.md.
    """
    config = state(ctx).config()
    wanted = list(include) or list(config.skills.include) or list(DEFAULT_INCLUDE)
    skipped = list(exclude) or list(config.skills.exclude)
    values = dict(config.values)
    values["skills"] = {**dict(values["skills"]), "include": wanted, "exclude": skipped}
    base = (folder or Path.cwd()).resolve()
    with opened_store(ctx, create=True) as store:
        report = ingest_skills(store, load_config(values), base, prune=not no_prune)
    data = {
        "base": str(base),
        "added": report.added,
        "updated": report.updated,
        "unchanged": report.unchanged,
        "removed": report.removed,
        "malformed": [dataclasses.asdict(m) for m in report.malformed],
        "rules_written": report.rules_written,
        "rules_deactivated": report.rules_deactivated,
        "warnings": report.warnings,
    }
    emit(as_json, data, _render_ingest)


def _render_ingest(d: dict[str, Any]) -> str:
    rows: list[tuple[str, Any]] = [
        (key, ", ".join(d[key]) or "-") for key in ("added", "updated", "unchanged", "removed")
    ]
    rows.append(("rules", f"{d['rules_written']} written, {d['rules_deactivated']} deactivated"))
    rows.extend(("malformed", f"{m['path']}:{m['line']}: {m['reason']}") for m in d["malformed"])
    rows.extend(("warning", w) for w in d["warnings"])
    return render.to_text(render.pairs(rows, title=f"skills under {d['base']}"))


@skills.command("list")
@json_option
@click.pass_context
def skills_list(ctx: click.Context, as_json: bool) -> None:
    """The current skills: version, enabled flag, active rules, description."""
    with opened_store(ctx) as store:
        counts: dict[str, int] = {}
        for rule in effective_rules(store, include_inactive=True):
            counts[rule.skill_name] = counts.get(rule.skill_name, 0) + int(rule.active)
        data = {
            "skills": [
                {
                    "name": s.name,
                    "path": s.path,
                    "version": s.version,
                    "enabled": s.enabled,
                    "active_rules": counts.get(s.name, 0),
                    "description": s.description,
                }
                for s in store.list_skill_files()
            ]
        }
    emit(as_json, data, _render_skills)


def _render_skills(d: dict[str, Any]) -> str:
    return render.to_text(
        render.table(
            ("name", "version", "enabled", "rules", "path", "description"),
            (
                (
                    s["name"],
                    s["version"],
                    "yes" if s["enabled"] else "no",
                    s["active_rules"],
                    s["path"],
                    s["description"][:80],
                )
                for s in d["skills"]
            ),
            title=f"skills ({len(d['skills'])})",
            right=("version", "rules"),
        )
    )


def _switch(ctx: click.Context, name: str, enabled: bool, as_json: bool) -> None:
    with opened_store(ctx) as store:
        if not set_skill_enabled(store, name, enabled):
            fail(f"no skill {name!r} (see `lcm skills list`)")
    data = {"name": name, "enabled": enabled}
    emit(as_json, data, lambda d: f"skill {d['name']}: {'enabled' if d['enabled'] else 'disabled'}")


@skills.command("enable")
@click.argument("name")
@json_option
@click.pass_context
def skills_enable(ctx: click.Context, name: str, as_json: bool) -> None:
    """Use a skill's rules in memory blocks again."""
    _switch(ctx, name, True, as_json)


@skills.command("disable")
@click.argument("name")
@json_option
@click.pass_context
def skills_disable(ctx: click.Context, name: str, as_json: bool) -> None:
    """Leave a skill's rules out of memory blocks (nothing is deleted)."""
    _switch(ctx, name, False, as_json)


@click.group()
def rules() -> None:
    """Rules parsed from skills, with your overrides applied."""


@rules.command("list")
@click.option("--skill", metavar="NAME", help="Only this skill's rules.")
@click.option("--all", "show_all", is_flag=True, help="Include inactive rules and disabled skills.")
@json_option
@click.pass_context
def rules_list(ctx: click.Context, skill: str | None, show_all: bool, as_json: bool) -> None:
    """Rules with category, scope and source line, overrides applied."""
    with opened_store(ctx) as store:
        overridden = {o.rule_id for o in store.list_rule_overrides()}
        found = effective_rules(store, skill_name=skill, include_inactive=show_all)
        data = {
            "rules": [
                {
                    "id": r.id,
                    "skill": r.skill_name,
                    "category": r.category,
                    "active": r.active,
                    "overridden": r.id in overridden,
                    "source": f"{r.source_path}:{r.source_line}",
                    "scope": r.scope,
                    "text": r.text,
                }
                for r in found
            ]
        }
    emit(as_json, data, _render_rules)


def _render_rules(d: dict[str, Any]) -> str:
    return render.to_text(
        render.table(
            ("id", "category", "active", "source", "text"),
            (
                (
                    r["id"] + (" *" if r["overridden"] else ""),
                    r["category"],
                    "yes" if r["active"] else "no",
                    r["source"],
                    r["text"][:120],
                )
                for r in d["rules"]
            ),
            title=f"rules ({len(d['rules'])}; * = overridden)",
        )
    )


@rules.command("standing")
@session_option
@click.option(
    "--scope",
    type=click.Choice(["session", "project"]),
    help="This session's rules, or its project's (default: memory.scope).",
)
@json_option
@click.pass_context
def rules_standing(
    ctx: click.Context, session: str | None, scope: str | None, as_json: bool
) -> None:
    """The user's standing rules in force: what each governs, its words, when it was said."""
    with opened_store(ctx) as store:
        session_id = resolve_session(store, session)
        config = state(ctx).config()
        if scope is not None:
            config = usecases.with_scope(config, scope)
        found = usecases.standing_rules(store, session_id, project=config.memory.scope == "project")
    data = {
        "session": session_id,
        "scope": config.memory.scope,
        "rules": [dataclasses.asdict(rule) for rule in found],
    }
    emit(as_json, data, _render_standing)


def _render_standing(d: dict[str, Any]) -> str:
    others = any(r["session_id"] != d["session"] for r in d["rules"])
    return render.to_text(
        render.table(
            ("id", "governs", "said", *(("session",) if others else ()), "text"),
            (
                (
                    r["id"],
                    r["key"],
                    r["said"] or "-",
                    *((r["session_id"][:8],) if others else ()),
                    r["content"][:120],
                )
                for r in d["rules"]
            ),
            title=f"standing rules in force for session {d['session']} ({d['scope']} scope, "
            f"{len(d['rules'])})",
        )
    )


@rules.command("override")
@click.argument("rule_id", metavar="RULE_ID")
@click.option("--category", type=click.Choice(RULE_CATEGORIES), help="Set the category.")
@click.option("--active/--inactive", "active", default=None, help="Switch the rule on or off.")
@click.option("--scope", metavar="JSON", help='Set the scope, e.g. \'{"paths": ["src/**"]}\'.')
@json_option
@click.pass_context
def rules_override(
    ctx: click.Context,
    rule_id: str,
    category: str | None,
    active: bool | None,
    scope: str | None,
    as_json: bool,
) -> None:
    """Change one rule's category, active flag or scope without editing its file."""
    if category is None and active is None and scope is None:
        raise click.UsageError("give at least one of --category, --active/--inactive, --scope")
    parsed: dict[str, Any] | None = None
    if scope is not None:
        try:
            parsed = json.loads(scope)
        except ValueError as exc:
            raise click.BadParameter(f"not JSON: {exc}", param_hint="--scope") from exc
        if not isinstance(parsed, dict):
            raise click.BadParameter("must be a JSON object", param_hint="--scope")
    with opened_store(ctx) as store:
        if not any(r.id == rule_id for r in store.list_rules()):
            fail(f"no rule {rule_id!r} (see `lcm rules list --all`)")
        override = set_rule_override(store, rule_id, category=category, active=active, scope=parsed)
    data = dataclasses.asdict(override)
    emit(
        as_json,
        data,
        lambda d: (
            f"override of {d['rule_id']}: "
            + json.dumps(
                {
                    k: v
                    for k, v in d.items()
                    if k not in ("rule_id", "updated_at") and v is not None
                },
                ensure_ascii=False,
                sort_keys=True,
            )
        ),
    )


def register(group: click.Group) -> None:
    """Add `skills` and `rules` to the `lcm` group."""
    group.add_command(skills)
    group.add_command(rules)
