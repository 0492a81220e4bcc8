"""Re-extraction of a store: each session against a scratch store of the store's own kind.

Serves `lcm reextract` and the sidecar's upgrade on first open of a database whose items
came from older extraction rules (`upgrade_on_open`).
"""

from __future__ import annotations

from lcm_core.config import Config
from lcm_core.extraction.reextract import (
    ReextractReport,
    mark_current,
    needs_reextract,
    reextract_session,
)
from lcm_core.store.ports import MemoryStore
from lcm_core.store.registry import scratch_store


def reextract(
    store: MemoryStore, config: Config, session_id: str | None = None
) -> list[ReextractReport]:
    """Re-derive the items of one session, or of every session (then mark the store current)."""
    sessions = [session_id] if session_id else sorted(s.session_id for s in store.list_sessions())
    reports: list[ReextractReport] = []
    for sid in sessions:
        scratch = scratch_store(store)
        try:
            reports.append(reextract_session(store, scratch, sid, config))
        finally:
            scratch.close()
    if session_id is None:
        mark_current(store)
    return reports


def upgrade_on_open(store: MemoryStore, config: Config) -> list[ReextractReport]:
    """Re-derive every session once when the store's extraction version is older; never raises."""
    try:
        if not needs_reextract(store):
            mark_current(store)
            return []
        return reextract(store, config)
    except Exception as exc:  # the host must never break because of memory
        return [ReextractReport(session_id="*", errors=[f"{type(exc).__name__}: {exc}"])]
