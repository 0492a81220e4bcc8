"""JSON-ready views of memory, shared by the CLI's `--json` output and the MCP tools.

Each function reads through the core and returns plain dicts with stable keys; nothing
here ranks, extracts or assembles on its own.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Final

from lcm_core.assembly import assemble
from lcm_core.assembly_log import explain, explain_dict, to_log
from lcm_core.compaction import compaction_status
from lcm_core.config import Config, budget_tokens, load_config
from lcm_core.models import ITEM_STATUSES, MemoryItem
from lcm_core.ports import MemoryStore
from lcm_core.query import query_signals, search_terms
from lcm_core.retrieval import inspect_item, rank_items
from lcm_core.skills import apply_override, malformed_skills, rule_provider

DRY_RUN_TRIGGER: Final = "dry-run"


class NoSessionError(LookupError):
    """The store has no such session, or no session at all."""


def pick_session(store: MemoryStore, session: str | None) -> str:
    """The session given (it must exist), else the most recently updated one."""
    if session:
        if store.get_session(session) is None and store.max_event_seq(session) is None:
            raise NoSessionError(f"no session {session!r} in {store.url}")
        return session
    sessions = store.list_sessions()
    if not sessions:
        raise NoSessionError(
            f"no sessions in {store.url} yet: run `lcm demo` or `lcm ingest PATH` first"
        )
    return sessions[0].session_id


def item_dict(item: MemoryItem) -> dict[str, Any]:
    """Every field of an item, tuples as lists."""
    return dataclasses.asdict(item)


def status_data(store: MemoryStore, session_id: str, config: Config) -> dict[str, Any]:
    """Counts, cursors, budget, latest assembly, compaction and problems of one session."""
    counts = store.stats(session_id)
    checkpoint = store.get_checkpoint(session_id)
    latest = explain(store, session_id)
    items = {status: 0 for status in ITEM_STATUSES}
    for item in store.list_items(session_id):
        items[item.status] = items.get(item.status, 0) + 1
    return {
        "session": session_id,
        "database": store.url,
        "schema_version": store.schema_version(),
        "counts": counts,
        "items": items,
        "checkpoint": {
            "last_event_seq": checkpoint.last_event_seq,
            "last_extract_seq": checkpoint.last_extract_seq,
            "last_assembly_seq": checkpoint.last_assembly_seq,
        },
        "pending_extraction": len(store.list_pending(session_id)),
        "budget_tokens": budget_tokens(config),
        "latest_assembly": None
        if latest is None
        else {
            "id": latest.id,
            "created_at": latest.created_at,
            "trigger": latest.trigger,
            "turn": latest.turn,
            "step": latest.step,
            "injected": latest.injected,
            "used_tokens": latest.used_tokens,
            "budget_tokens": latest.budget_tokens,
            "errors": list(latest.errors),
        },
        "compaction": compaction_status(
            store, session_id, checkpoint.last_assembly_seq, config
        ).to_dict(),
        "malformed_skills": _malformed(store),
        "config_warnings": list(config.warnings),
    }


def _malformed(store: MemoryStore) -> list[dict[str, Any]]:
    return [{"path": m.path, "reason": m.reason, "line": m.line} for m in malformed_skills(store)]


def explain_data(store: MemoryStore, session_id: str) -> dict[str, Any] | None:
    """The latest logged assembly as the core's explain view, or None."""
    log = explain(store, session_id)
    return None if log is None else explain_dict(log)


def inspect_data(store: MemoryStore, ref: str) -> dict[str, Any] | None:
    """An item with sources, links and lifecycle; else a rule with its override; else None."""
    found = inspect_item(store, ref)
    if found is not None:
        return {
            "type": "item",
            "item": item_dict(found.item),
            "sources": [
                {
                    "ref": source.ref,
                    "seq": source.event.seq if source.event else None,
                    "type": source.event.type if source.event else None,
                    "text": source.text,
                }
                for source in found.sources
            ],
            "supersedes": [item_dict(old) for old in found.supersedes],
            "superseded_by": item_dict(found.superseded_by) if found.superseded_by else None,
            "lifecycle": [
                {"at": row.at, "event": row.event, "actor": row.actor, "detail": row.detail}
                for row in found.lifecycle
            ],
        }
    return _rule_data(store, ref)


def _rule_data(store: MemoryStore, ref: str) -> dict[str, Any] | None:
    rule = next((r for r in store.list_rules() if r.id == ref), None)
    if rule is None:
        return None
    override = next((o for o in store.list_rule_overrides() if o.rule_id == ref), None)
    return {
        "type": "rule",
        "rule": dataclasses.asdict(apply_override(rule, override)),
        "parsed": dataclasses.asdict(rule),
        "override": dataclasses.asdict(override) if override else None,
    }


def search_data(
    store: MemoryStore, session_id: str, query: str, config: Config, limit: int
) -> dict[str, Any]:
    """Ranked active items, then raw events containing the query's terms."""
    signals = query_signals(query)
    ranking = rank_items(store, session_id, signals, config)
    terms = search_terms(signals)
    hits = store.search_events(session_id, terms, limit=limit) if terms else []
    return {
        "session": session_id,
        "query": query,
        "terms": list(terms),
        "items": [
            {
                "id": r.item.id,
                "kind": r.item.kind,
                "evidence_type": r.item.evidence_type,
                "status": r.item.status,
                "score": round(r.score, 4),
                "content": r.item.content,
                "source_refs": list(r.item.source_refs),
            }
            for r in ranking.selected[:limit]
        ],
        "events": [
            {
                "seq": h.event.seq,
                "type": h.event.type,
                "role": h.event.role,
                "source_kind": h.event.source_kind,
                "score": round(h.score, 4),
                "text": h.event.text,
            }
            for h in hits
        ],
    }


def with_budget(config: Config, budget: int | None) -> Config:
    """The config with both budget settings set to `budget` (unchanged when None)."""
    if budget is None:
        return config
    values = dict(config.values)
    values["assembly"] = {
        **dict(values["assembly"]),
        "softBudgetTokens": budget,
        "minBudgetTokens": budget,
    }
    return load_config(values)


def assemble_dry_run(
    store: MemoryStore,
    session_id: str,
    config: Config,
    *,
    query: str | None = None,
    budget: int | None = None,
) -> dict[str, Any]:
    """The block a pre-step would inject now, and its explanation; nothing is written."""
    checked = with_budget(config, budget)
    result = assemble(
        store, session_id, (), checked, query=query, rules=rule_provider, trigger=DRY_RUN_TRIGGER
    )
    explained = explain_dict(to_log(result))
    return {
        "session": session_id,
        "injected": result.injected,
        "text": result.text,
        "item_ids": list(result.item_ids),
        "evidence_refs": list(result.evidence_refs),
        "explain": explained,
    }
