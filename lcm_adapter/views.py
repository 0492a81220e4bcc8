"""JSON-ready views of memory, shared by the CLI's `--json` output and the MCP tools.

Each function reads through the core and returns plain dicts with stable keys; nothing
here ranks, extracts or assembles on its own.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Final

from lcm_core import diagnostics
from lcm_core.assembly import assemble
from lcm_core.assembly_log import to_log
from lcm_core.config import Config, load_config
from lcm_core.ports import MemoryStore
from lcm_core.query import query_signals, search_terms
from lcm_core.retrieval import rank_items
from lcm_core.shown import ShownItems
from lcm_core.skills import rule_provider

DRY_RUN_TRIGGER: Final = "dry-run"
REF_TEXT_CHARS: Final = 80


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


def status_data(store: MemoryStore, session_id: str, config: Config) -> dict[str, Any]:
    """The core's status report of one session (`lcm_core.diagnostics.status`)."""
    return diagnostics.status(store, session_id, config).to_dict()


def explain_data(store: MemoryStore, session_id: str, config: Config) -> dict[str, Any] | None:
    """The latest logged assembly and validation run, or None when nothing was logged."""
    report = diagnostics.explain(store, session_id, config)
    if report.assembly is None and report.validation is None:
        return None
    data = report.to_dict()
    omitted = report.assembly.omitted if report.assembly is not None else ()
    data["ref_text"] = ref_texts(store, session_id, [str(o.get("ref", "")) for o in omitted])
    return data


def ref_texts(store: MemoryStore, session_id: str, refs: list[str]) -> dict[str, str]:
    """A short text for each item id or `seq:N` ref, so a person sees what a ref stands for."""
    out: dict[str, str] = {}
    for ref in dict.fromkeys(refs):
        text: str | None = None
        if ref.startswith("mem_"):
            item = store.get_item(ref)
            text = item.content if item is not None else None
        elif ref.startswith("seq:") and ref[4:].isdigit():
            event = store.get_event(session_id, int(ref[4:]))
            text = f"{event.type}: {event.text}" if event is not None else None
        if text:
            flat = " ".join(text.split())
            out[ref] = flat if len(flat) <= REF_TEXT_CHARS else flat[: REF_TEXT_CHARS - 1] + "…"
    return out


def inspect_data(store: MemoryStore, ref: str) -> dict[str, Any] | None:
    """An item, rule or skill with everything known about it; None for an unknown id."""
    report = diagnostics.inspect(store, ref)
    return None if report.kind == "missing" else report.to_dict()


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
    log: bool = False,
) -> dict[str, Any]:
    """The block a pre-step would inject now, and its explanation.

    Nothing is written unless `log`: then the attempt becomes an assembly log row whose
    trigger says `dry-run`, so `explain` shows it; no cursor moves and nothing is shown
    to a model.
    """
    checked = with_budget(config, budget)
    result = assemble(
        store,
        session_id,
        (),
        checked,
        query=query,
        rules=rule_provider,
        trigger=DRY_RUN_TRIGGER,
        shown=ShownItems().read(store, session_id),
    )
    row = to_log(result)
    if row.trigger != DRY_RUN_TRIGGER:
        # The core names the situation (e.g. post-compaction); keep it, marked as a dry run.
        row = dataclasses.replace(row, trigger=f"{DRY_RUN_TRIGGER}:{row.trigger}")
    logged: int | None = None
    if log:
        retention = int(checked.get("diagnostics.assemblyLogRetention"))
        logged = store.add_assembly_log(row, retention=retention)
        row = dataclasses.replace(row, id=logged)
    explained = dataclasses.asdict(row)
    refs = [str(o.get("ref", "")) for o in explained["omitted"]]
    return {
        "session": session_id,
        "injected": result.injected,
        "text": result.text,
        "item_ids": list(result.item_ids),
        "evidence_refs": list(result.evidence_refs),
        "explain": explained,
        "ref_text": ref_texts(store, session_id, refs),
        "logged": logged,
    }
