"""`lcm status | explain | inspect | search | assemble`: reading what memory holds and injects."""

from __future__ import annotations

import json
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
from lcm_adapter.cli.first_run import first_run_data, render_first_run
from lcm_adapter.paths import missing_database
from lcm_adapter.views import (
    assemble_dry_run,
    explain_data,
    inspect_data,
    search_data,
    status_data,
)
from lcm_core import usecases
from lcm_core.reports.diagnostics import EVENT_LABEL
from lcm_core.text.dates import readable_time

SEARCH_LIMIT: Final = 10
# A long query (a pasted paragraph) is shown clipped in the heading; --json keeps it whole.
QUERY_SHOWN: Final = 60


@click.command()
@session_option
@json_option
@click.pass_context
def status(ctx: click.Context, session: str | None, as_json: bool) -> None:
    """Counts, cursors, budget, latest assembly and compaction state of a session."""
    cli_state = state(ctx)
    missing = missing_database(cli_state.db)
    if missing is not None and not cli_state.db_given:
        # A fresh install: say where memory will live and how to start; create nothing.
        emit(as_json, first_run_data(missing), render_first_run)
        return
    with opened_store(ctx) as store:
        if session is None and not store.list_sessions():
            # Empty (new, or after `purge --all`): the same screen as a fresh install.
            emit(as_json, first_run_data(store.url, exists=True), render_first_run)
            return
        session_id = resolve_session(store, session)
        data = status_data(store, session_id, state(ctx).config())
    emit(as_json, data, _render_status)


def _render_status(data: dict[str, Any]) -> str:
    cp = data["checkpoint"]
    counts = data["counts"]
    items = data["items_by_status"]
    latest = data["latest_assembly"]
    comp = data["compatibility"]
    skills = data["skills"]
    check = data["validation"]
    rows: list[tuple[str, Any]] = [
        ("session", data["session_id"]),
        ("database", data["database"]),
        ("schema", f"v{data['schema_version']}"),
        ("events", counts.get("events", 0)),
        ("memory items", ", ".join(f"{n} {status}" for status, n in items.items())),
        (
            "cursors",
            f"event {cp['last_event_seq']}, extract {cp['last_extract_seq']}, "
            f"assembly {cp['last_assembly_seq']}",
        ),
        ("pending", f"{data['pending_extraction']} events waiting for an extraction retry"),
        ("budget", f"{data['budget_tokens']} tokens"),
        (
            "latest assembly",
            "none"
            if latest is None
            else f"turn {latest['turn']} step {latest['step']}, "
            f"{'injected' if latest['injected'] else 'not injected'}, "
            f"{latest['used_tokens']}/{latest['budget_tokens']} tokens ({latest['trigger']})"
            + (f", error: {latest['errors'][0]}" if latest["errors"] else ""),
        ),
        (
            "compaction",
            f"configured {comp['configured_policy']}, detected {comp['detected_policy']}, "
            f"in effect {comp['effective_policy']}",
        ),
        (
            "skills",
            f"{skills['enabled']}/{skills['skills']} enabled, {skills['rules_active']} active "
            f"rules, {skills['overrides']} overrides",
        ),
        (
            "validation",
            f"{check['checks_configured']} checks, {check['preconditions_configured']} "
            f"preconditions, repairs {check['repair_attempts']}/{check['max_repair_attempts']}",
        ),
    ]
    project = data.get("project") or {}
    rows.append(("project", project.get("project") or "none recorded"))
    rows.append(
        (
            "memory scope",
            f"{project.get('scope', 'session')}, {len(project.get('sessions', []))} "
            "session(s) in this project",
        )
    )
    rows.extend(("note", note) for note in comp["notes"])
    rows.extend(("cannot observe", what) for what in comp["unobservable"])
    rows.extend(("malformed skill", f"{m['path']}: {m['reason']}") for m in skills["malformed"])
    rows.extend(("config warning", w) for w in data["config_warnings"])
    return render.to_text(render.pairs(rows, title="long-conversation-memory status"))


@click.command()
@session_option
@json_option
@click.pass_context
def explain(ctx: click.Context, session: str | None, as_json: bool) -> None:
    """The latest logged assembly: a budget bar per section, and what was left out and why."""
    with opened_store(ctx) as store:
        session_id = resolve_session(store, session)
        data = explain_data(store, session_id, state(ctx).config())
    if data is None:
        fail(
            f"no assembly logged for session {session_id} yet "
            f"(`lcm assemble --session {session_id}` shows a dry run)"
        )
    emit(as_json, data, _render_explain)


def _render_explain(data: dict[str, Any]) -> str:
    parts: list[Any] = []
    if data["assembly"] is not None:
        parts.extend(render.explain_view(data["assembly"], data.get("ref_text")))
    if data["validation"] is not None:
        parts.extend(render.validation_view(data["validation"]))
    if data["pending_repair"]:
        parts.append(f"pending repair reminder:\n{data['pending_repair']}")
    return render.to_text(*parts)


@click.command()
@click.argument("item_id", metavar="ID")
@click.option(
    "--session",
    "session",
    metavar="ID",
    help="The session of an event label `seq:N` (default: the most recent session).",
)
@json_option
@click.pass_context
def inspect(ctx: click.Context, item_id: str, session: str | None, as_json: bool) -> None:
    """One memory item, event (`seq:N`), rule or skill: sources, links, lifecycle, versions."""
    is_event = EVENT_LABEL.match(item_id.strip().strip("[]")) is not None
    with opened_store(ctx) as store:
        session_id = resolve_session(store, session) if is_event else None
        data = inspect_data(store, item_id, session_id)
    if data is None and is_event:
        fail(f"no event {item_id!r} in session {session_id!r}")
    if data is None:
        fail(f"no memory item, rule or skill {item_id!r} (find ids with `lcm search`)")
    emit(as_json, data, _render_inspect)


def _render_event(data: dict[str, Any]) -> str:
    event = data["event"]
    rows = [
        ("event", f"seq:{event['seq']} of session {event['session_id']}"),
        ("type", f"{event['type']} ({event['role'] or '-'}, {event['source_kind'] or '-'})"),
        ("time", readable_time(event["time"])),
        ("store", event["store"]),
        ("text", "(forgotten)" if event["store"] == "forgotten" else data["event_text"]),
    ]
    items = render.table(
        ("item", "kind", "status", "content"),
        ((i["id"], i["kind"], i["status"], _clip(i["content"], 120)) for i in data["derived"]),
        title="items citing it",
    )
    return render.to_text(render.pairs(rows), items)


def _render_inspect(data: dict[str, Any]) -> str:
    if data["kind"] == "event":
        return _render_event(data)
    if data["kind"] == "rule":
        rule = data["effective"]
        rows = [
            ("rule", rule["id"]),
            ("skill", rule["skill_name"]),
            ("text", rule["text"]),
            ("category", rule["category"]),
            ("active", "yes" if rule["active"] else "no"),
            ("source", f"{rule['source_path']}:{rule['source_line']}"),
            ("scope", json.dumps(rule["scope"], ensure_ascii=False, sort_keys=True)),
            ("override", _override_text(data["override"])),
        ]
        return render.to_text(render.pairs(rows))
    if data["kind"] == "skill":
        skill = data["skill"]
        rows = [
            ("skill", skill["name"]),
            ("path", skill["path"]),
            ("version", skill["version"]),
            ("enabled", "yes" if skill["enabled"] else "no"),
            ("description", skill["description"]),
        ]
        versions = render.table(
            ("version", "hash", "created"),
            ((v["version"], v["content_hash"][:12], v["created_at"]) for v in data["versions"]),
            title="versions",
        )
        return render.to_text(render.pairs(rows), versions)
    found = data["item"]
    item = found["item"]
    rows = [
        ("item", item["id"]),
        ("kind", f"{item['kind']} ({item['evidence_type']}), {item['status']}"),
        ("content", item["content"]),
    ]
    if item["conditions"]:
        rows.append(("conditions", "; ".join(item["conditions"])))
    if item["numbers"]:
        rows.append(("numbers", ", ".join(_number(n) for n in item["numbers"])))
    if found["superseded_by"]:
        new = found["superseded_by"]
        rows.append(("superseded by", f"{new['id']}: {new['content']}"))
    rows.extend(("supersedes", f"{old['id']}: {old['content']}") for old in found["supersedes"])
    sources = render.table(
        ("source", "type", "text"),
        (
            (s["ref"], (s["event"] or {}).get("type", "-"), _clip(s["text"], 300))
            for s in found["sources"]
        ),
        title="sources",
    )
    lifecycle = render.table(
        ("at", "event", "actor", "detail"),
        (
            (
                r["at"],
                r["event"],
                r["actor"],
                json.dumps(r["detail"], ensure_ascii=False) if r["detail"] else "",
            )
            for r in found["lifecycle"]
        ),
        title="lifecycle",
    )
    return render.to_text(render.pairs(rows), sources, lifecycle)


def _override_text(override: dict[str, Any] | None) -> str:
    if not override:
        return "none"
    changed = {
        k: v for k, v in override.items() if k not in ("rule_id", "updated_at") and v is not None
    }
    return json.dumps(changed, ensure_ascii=False, sort_keys=True)


def _number(number: dict[str, Any]) -> str:
    raw = number.get("raw") or f"{number.get('value')} {number.get('unit') or ''}".strip()
    conds = number.get("conditions")
    return f"{raw} ({'; '.join(conds)})" if conds else str(raw)


def _clip(text: str, limit: int) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


@click.command()
@click.argument("query", nargs=-1, required=True)
@session_option
@click.option("--limit", default=SEARCH_LIMIT, show_default=True, help="Most results per list.")
@click.option(
    "--scope",
    type=click.Choice(["session", "project", "all"]),
    help="This session, also its project's other sessions, or every session "
    "(default: memory.scope).",
)
@json_option
@click.pass_context
def search(
    ctx: click.Context,
    query: tuple[str, ...],
    session: str | None,
    limit: int,
    scope: str | None,
    as_json: bool,
) -> None:
    """Ranked memory items and matching raw events for some words (any language)."""
    text = " ".join(query).strip()
    if not text:
        raise click.UsageError("search needs some words")
    with opened_store(ctx) as store:
        session_id = resolve_session(store, session)
        config = state(ctx).config()
        data = search_data(store, session_id, text, config, max(1, limit), scope)
    emit(as_json, data, _render_search)


def _render_search(data: dict[str, Any]) -> str:
    # One session's results name it once, in the titles: its id is as long as an item's,
    # and the two side by side leave the content no room at 100 columns.
    rows = [*data["items"], *data["events"]]
    one = all(row["session"] == data["session"] for row in rows)
    where = f" in session {data['session']}" if one and rows else ""
    first = ("score", "id") if one else ("score", "id", "session")
    items = render.table(
        (*first, "kind", "content"),
        (
            (
                f"{i['score']:.3f}",
                i["id"],
                *(() if one else (i["session"],)),
                i["kind"],
                _clip(i["content"], 160),
            )
            for i in data["items"]
        ),
        title=f"memory items for {_clip(data['query'], QUERY_SHOWN)!r}{where} ({len(data['items'])})",
        right=("score",),
    )
    events = render.table(
        (*(() if one else ("session",)), "seq", "type", "source", "text"),
        (
            (
                *(() if one else (e["session"],)),
                e["seq"],
                e["type"],
                e["source_kind"] or "-",
                _clip(e["text"], 160),
            )
            for e in data["events"]
        ),
        title=f"events{where} ({len(data['events'])})",
        right=("seq",),
    )
    return render.to_text(items, events)


@click.command()
@session_option
@click.option("--query", "query", metavar="TEXT", help="Task text (default: newest user message).")
@click.option("--budget", type=click.IntRange(50, 200_000), metavar="N", help="Token budget.")
@click.option(
    "--log", "log", is_flag=True, help="Record it (marked dry-run) so `lcm explain` shows it."
)
@click.option(
    "--scope",
    type=click.Choice(["session", "project"]),
    help="Draw on this session only, or also on its project's other sessions "
    "(default: memory.scope).",
)
@json_option
@click.pass_context
def assemble(
    ctx: click.Context,
    session: str | None,
    query: str | None,
    budget: int | None,
    log: bool,
    scope: str | None,
    as_json: bool,
) -> None:
    """Dry-run a pre-step: print the memory block the next step would get; --log records it."""
    config = state(ctx).config()
    if scope is not None:
        config = usecases.with_scope(config, scope)
    with opened_store(ctx) as store:
        session_id = resolve_session(store, session)
        data = assemble_dry_run(store, session_id, config, query=query, budget=budget, log=log)
    emit(as_json, data, _render_assemble)


def _render_assemble(data: dict[str, Any]) -> str:
    block = data["text"] or "(no memory block: nothing would be injected)"
    lines = [block, "", render.to_text(*render.explain_view(data["explain"], data["ref_text"]))]
    if data.get("logged") is not None:
        lines.append(f"logged as assembly #{data['logged']} (dry-run): `lcm explain` shows it")
    return "\n".join(lines).rstrip("\n")


def register(group: click.Group) -> None:
    """Add the read commands to the `lcm` group."""
    for command in (status, explain, inspect, search, assemble):
        group.add_command(command)
