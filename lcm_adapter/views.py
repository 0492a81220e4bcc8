"""JSON-ready views of memory, shared by the CLI's `--json` output and the MCP tools.

Each function reads through the core and returns plain dicts with stable keys; nothing
here ranks, extracts or assembles on its own.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from lcm_core import usecases
from lcm_core.config import Config, load_config
from lcm_core.reports import diagnostics
from lcm_core.retrieval.shown import ShownItems
from lcm_core.skills.select import rule_provider
from lcm_core.steps.prestep import StepRequest, dry_run
from lcm_core.store.ports import MemoryStore
from lcm_core.usecases import describe_refs


def status_data(store: MemoryStore, session_id: str, config: Config) -> dict[str, Any]:
    """The core's status report of one session (`lcm_core.reports.diagnostics.status`)."""
    data = diagnostics.status(store, session_id, config).to_dict()
    data["project"] = usecases.project_summary(store, session_id, config).to_dict()
    return data


def explain_data(store: MemoryStore, session_id: str, config: Config) -> dict[str, Any] | None:
    """The latest logged assembly and validation run, or None when nothing was logged."""
    report = diagnostics.explain(store, session_id, config)
    if report.assembly is None and report.validation is None:
        return None
    data = report.to_dict()
    omitted = report.assembly.omitted if report.assembly is not None else ()
    data["ref_text"] = describe_refs(store, session_id, [str(o.get("ref", "")) for o in omitted])
    return data


def inspect_data(
    store: MemoryStore, ref: str, session_id: str | None = None
) -> dict[str, Any] | None:
    """An item, event label (`seq:N` of `session_id`), rule or skill; None when unknown."""
    report = diagnostics.inspect(store, ref, session_id)
    return None if report.kind == "missing" else report.to_dict()


def search_data(
    store: MemoryStore,
    session_id: str,
    query: str,
    config: Config,
    limit: int,
    scope: str | None = None,
) -> dict[str, Any]:
    """Ranked active items, then raw events containing the query's terms.

    `scope` is session, project or all (None: `memory.scope`); each row names its session.
    """
    found = usecases.search(store, session_id, query, config, limit, scope)
    return {
        "session": session_id,
        "scope": scope or config.memory.scope,
        "query": query,
        "terms": list(found.terms),
        "items": [
            {
                "id": r.item.id,
                "session": r.item.session_id,
                "kind": r.item.kind,
                "evidence_type": r.item.evidence_type,
                "status": r.item.status,
                "score": round(r.score, 4),
                "content": r.item.content,
                "source_refs": list(r.item.source_refs),
            }
            for r in found.items
        ],
        "events": [
            {
                "session": h.event.session_id,
                "seq": h.event.seq,
                "type": h.event.type,
                "role": h.event.role,
                "source_kind": h.event.source_kind,
                "score": round(h.score, 4),
                "text": h.event.text,
            }
            for h in found.events
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
    log: bool = False,
) -> dict[str, Any]:
    """The block a pre-step would inject now, and its explanation.

    Nothing is written unless `log`: then the attempt becomes an assembly log row whose
    trigger says `dry-run`, so `explain` shows it; no cursor moves and nothing is shown
    to a model.
    """
    checked = with_budget(config, budget)
    request = StepRequest(
        session_id, query=query, rules=rule_provider, shown=ShownItems().read(store, session_id)
    )
    outcome = dry_run(store, request, checked, log=log)
    result, row = outcome.result, outcome.log
    explained = dataclasses.asdict(row)
    refs = [str(o.get("ref", "")) for o in explained["omitted"]]
    return {
        "session": session_id,
        "injected": result.injected,
        "text": result.text,
        "item_ids": list(result.item_ids),
        "evidence_refs": list(result.evidence_refs),
        "explain": explained,
        "ref_text": describe_refs(store, session_id, refs),
        "logged": row.id,
    }
