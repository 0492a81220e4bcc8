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
from lcm_core.extraction.apply import EXTRACTOR, MESSAGE_TYPES, ActiveItems, Outcome, apply_event
from lcm_core.extraction.candidates import Candidate, Extraction, extract_message, extract_text
from lcm_core.store.models import Event
from lcm_core.store.ports import MemoryStore

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
    if not config.extraction.enabled:
        report.skipped = True
        return report
    run = _Run(store, session_id, report, ActiveItems(store, session_id))
    try:
        run.retry_pending(config.extraction.max_attempts)
        run.extract_new(max(1, batch_size))
        with store.transaction():
            run.active.rules.write_indexes()
    except Exception as exc:  # the host must never see an exception from here
        report.errors.append(_describe(exc))
    return report


@dataclass(slots=True)
class _Run:
    """One extraction run over one session."""

    store: MemoryStore
    session_id: str
    report: ExtractionReport
    active: ActiveItems

    def retry_pending(self, max_attempts: int) -> None:
        for pending in self.store.list_pending(self.session_id):
            if pending.attempts >= max_attempts:
                self.report.gave_up += 1
                continue
            event = self.store.get_event(self.session_id, pending.seq)
            self.report.retried += 1
            if event is None:
                self.store.clear_pending(self.session_id, pending.seq)
                continue
            if self.process(event):
                self.store.clear_pending(self.session_id, pending.seq)
                self.report.recovered += 1

    def extract_new(self, batch_size: int) -> None:
        checkpoint = self.store.get_checkpoint(self.session_id)
        self.report.last_extract_seq = checkpoint.last_extract_seq
        end = self.store.max_event_seq(self.session_id)
        if end is None or end <= checkpoint.last_extract_seq:
            return
        start = checkpoint.last_extract_seq + 1
        while start <= end:
            batch = self.store.list_events(
                self.session_id, start_seq=start, end_seq=end, types=MESSAGE_TYPES, limit=batch_size
            )
            # A short batch reaches the end; otherwise the cursor stops at the last event read.
            batch_end = batch[-1].seq if len(batch) == batch_size else end
            with self.store.transaction():
                for event in batch:
                    self.process(event)
                _advance(self.store, self.session_id, batch_end)
            self.report.events_seen += len(batch)
            self.report.last_extract_seq = batch_end
            start = batch_end + 1

    def process(self, event: Event) -> bool:
        """Apply one event in its own savepoint; on failure queue it and report, don't raise."""
        try:
            extraction = extract_message(event)
            if extraction.empty:
                return True
            with self.store.transaction():
                outcome = apply_event(self.store, event, extraction, self.active)
        except Exception as exc:
            self.active.reset()  # its writes were rolled back; the cache may hold some of them
            message = _describe(exc)
            self.store.record_pending(event.session_id, event.seq, message)
            self.report.failed += 1
            self.report.errors.append(f"seq {event.seq}: {message}")
            return False
        self.report.add(outcome)
        return True


def _advance(store: MemoryStore, session_id: str, seq: int) -> None:
    current = store.get_checkpoint(session_id)
    if seq > current.last_extract_seq:
        store.put_checkpoint(replace(current, last_extract_seq=seq, updated_at=""))


def _describe(exc: BaseException) -> str:
    text = f"{type(exc).__name__}: {exc}"
    return text if len(text) <= MAX_ERROR_CHARS else text[: MAX_ERROR_CHARS - 1] + "…"
