"""Incremental extraction: derive memory from the messages captured since the last run.

`run_extraction` first retries events queued in `pending_extraction` (up to
`extraction.maxAttempts`), then walks user and assistant messages after
`checkpoints.last_extract_seq`. Each event is applied in its own nested transaction: if
it fails, only its writes roll back, the event is queued with the error, and the run goes
on; raw events are never touched. Batches commit with the checkpoint, so a crash repeats
at most one batch, which the idempotent writes absorb. Running again changes nothing.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, replace
from typing import Any, Final

from lcm_core.config import Config
from lcm_core.extraction_apply import EXTRACTOR, MESSAGE_TYPES, Outcome, apply_event
from lcm_core.extraction_candidates import Candidate, Extraction, extract_message, extract_text
from lcm_core.models import Event
from lcm_core.ports import MemoryStore

__all__ = [
    "EXTRACTOR",
    "Candidate",
    "Extraction",
    "ExtractionReport",
    "extract_message",
    "extract_text",
    "run_extraction",
]

BATCH_SIZE: Final = 500
MAX_ERROR_CHARS: Final = 500


@dataclass(slots=True)
class ExtractionReport:
    """What one run did; `errors` holds one line per failed event or failed run."""

    session_id: str
    events_seen: int = 0
    items_created: int = 0
    items_superseded: int = 0
    items_reactivated: int = 0
    items_promoted: int = 0
    task_updates: int = 0
    failed: int = 0
    retried: int = 0
    recovered: int = 0
    gave_up: int = 0
    last_extract_seq: int = -1
    skipped: bool = False
    errors: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready view for `--json` output and logs."""
        return asdict(self)

    def add(self, outcome: Outcome) -> None:
        self.items_created += outcome.created
        self.items_superseded += outcome.superseded
        self.items_reactivated += outcome.reactivated
        self.items_promoted += outcome.promoted
        self.task_updates += outcome.task_updates


def run_extraction(
    store: MemoryStore, session_id: str, config: Config, *, batch_size: int = BATCH_SIZE
) -> ExtractionReport:
    """Extract memory from a session's new messages; never raises, problems go in the report."""
    report = ExtractionReport(session_id)
    if not config.get("extraction.enabled"):
        report.skipped = True
        return report
    try:
        _retry_pending(store, session_id, int(config.get("extraction.maxAttempts")), report)
        _extract_new(store, session_id, max(1, batch_size), report)
    except Exception as exc:  # the host must never see an exception from here
        report.errors.append(_describe(exc))
    return report


def _retry_pending(
    store: MemoryStore, session_id: str, max_attempts: int, report: ExtractionReport
) -> None:
    for pending in store.list_pending(session_id):
        if pending.attempts >= max_attempts:
            report.gave_up += 1
            continue
        event = store.get_event(session_id, pending.seq)
        report.retried += 1
        if event is None:
            store.clear_pending(session_id, pending.seq)
            continue
        if _process(store, event, report):
            store.clear_pending(session_id, pending.seq)
            report.recovered += 1


def _extract_new(
    store: MemoryStore, session_id: str, batch_size: int, report: ExtractionReport
) -> None:
    checkpoint = store.get_checkpoint(session_id)
    report.last_extract_seq = checkpoint.last_extract_seq
    end = store.max_event_seq(session_id)
    if end is None or end <= checkpoint.last_extract_seq:
        return
    start = checkpoint.last_extract_seq + 1
    while start <= end:
        batch = store.list_events(
            session_id, start_seq=start, end_seq=end, types=MESSAGE_TYPES, limit=batch_size
        )
        # A short batch reaches the end; otherwise the cursor stops at the last event read.
        batch_end = batch[-1].seq if len(batch) == batch_size else end
        with store.transaction():
            for event in batch:
                _process(store, event, report)
            _advance(store, session_id, batch_end)
        report.events_seen += len(batch)
        report.last_extract_seq = batch_end
        start = batch_end + 1


def _process(store: MemoryStore, event: Event, report: ExtractionReport) -> bool:
    """Apply one event in its own savepoint; on failure queue it and report, don't raise."""
    try:
        extraction = extract_message(event)
        if extraction.empty:
            return True
        with store.transaction():
            outcome = apply_event(store, event, extraction)
    except Exception as exc:
        message = _describe(exc)
        store.record_pending(event.session_id, event.seq, message)
        report.failed += 1
        report.errors.append(f"seq {event.seq}: {message}")
        return False
    report.add(outcome)
    return True


def _advance(store: MemoryStore, session_id: str, seq: int) -> None:
    current = store.get_checkpoint(session_id)
    if seq > current.last_extract_seq:
        store.put_checkpoint(replace(current, last_extract_seq=seq, updated_at=""))


def _describe(exc: BaseException) -> str:
    text = f"{type(exc).__name__}: {exc}"
    return text if len(text) <= MAX_ERROR_CHARS else text[: MAX_ERROR_CHARS - 1] + "…"
