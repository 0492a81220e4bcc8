"""Recording assembly attempts and explaining the latest one without re-running anything.

Every attempt, injected or not, becomes one `assembly_logs` row; the store keeps only
the newest `diagnostics.assemblyLogRetention` rows of a session. `explain` reads that
row back as it was written, so what it shows is what the model was given.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from lcm_core.assembly.assemble import AssemblyResult
from lcm_core.config import Config
from lcm_core.store.models import AssemblyLog
from lcm_core.store.ports import MemoryStore


def to_log(result: AssemblyResult, *, message_seq: int | None = None) -> AssemblyLog:
    """The log row of one assembly result."""
    return AssemblyLog(
        session_id=result.session_id,
        trigger=result.trigger,
        budget_tokens=result.budget_tokens,
        used_tokens=result.used_tokens,
        token_source=result.token_source,
        content_hash=result.content_hash,
        injected=result.injected,
        turn=result.turn,
        step=result.step,
        message_seq=message_seq,
        sections=result.sections,
        item_ids=result.item_ids,
        omitted=tuple(o.to_dict() for o in result.omitted),
        reasons=result.reasons,
        errors=result.errors,
    )


def log_assembly(
    store: MemoryStore,
    result: AssemblyResult,
    config: Config,
    *,
    message_seq: int | None = None,
) -> int:
    """Write the log row; an injected block also moves the session's assembly cursor."""
    retention = config.diagnostics.assembly_log_retention
    with store.transaction():
        row_id = store.add_assembly_log(
            to_log(result, message_seq=message_seq), retention=retention
        )
        if result.injected and result.state_seq is not None:
            checkpoint = store.get_checkpoint(result.session_id)
            if result.state_seq > checkpoint.last_assembly_seq:
                store.put_checkpoint(
                    dataclasses.replace(
                        checkpoint, last_assembly_seq=result.state_seq, updated_at=""
                    )
                )
    return row_id


def explain(store: MemoryStore, session_id: str) -> AssemblyLog | None:
    """The latest logged assembly of the session, exactly as stored."""
    logs = store.list_assembly_logs(session_id, limit=1)
    return logs[0] if logs else None


def explain_dict(log: AssemblyLog) -> dict[str, Any]:
    """A JSON-ready view of one log row, for `--json` output and MCP tools."""
    return {
        "id": log.id,
        "sessionId": log.session_id,
        "createdAt": log.created_at,
        "trigger": log.trigger,
        "turn": log.turn,
        "step": log.step,
        "injected": log.injected,
        "budgetTokens": log.budget_tokens,
        "usedTokens": log.used_tokens,
        "tokenSource": log.token_source,
        "contentHash": log.content_hash,
        "messageSeq": log.message_seq,
        "sections": list(log.sections),
        "itemIds": list(log.item_ids),
        "omitted": list(log.omitted),
        "reasons": list(log.reasons),
        "errors": list(log.errors),
    }


def explain_text(log: AssemblyLog) -> str:
    """A short readable account of one log row: what went in, what stayed out, and why."""
    state = "injected" if log.injected else "not injected"
    lines = [
        f"assembly #{log.id} ({log.trigger}, turn {log.turn}, step {log.step}): {state}",
        f"tokens: {log.used_tokens} of {log.budget_tokens} ({log.token_source})",
    ]
    budget = next((r for r in log.reasons if r.get("kind") == "budget"), None)
    if budget is not None:
        lines.append(f"budget: {budget.get('why')}")
    for section in log.sections:
        refs = ", ".join(str(ref) for ref in section.get("refs", []))
        lines.append(f"  {section.get('name')}: {section.get('entries')} entries, {refs}")
    for omission in log.omitted:
        lines.append(
            f"  left out {omission.get('section')}/{omission.get('ref')}: {omission.get('reason')}"
        )
    for reason in log.reasons:
        if reason.get("kind") == "skipped":
            lines.append(f"  skipped: {reason.get('why')}")
    lines.extend(f"  error: {error}" for error in log.errors)
    return "\n".join(lines)
