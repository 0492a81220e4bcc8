"""Capture: turn committed host events into normalized `events` rows, idempotently.

Two entry points share one path: `capture_batch` for replays and backfills (one store
transaction per batch, bulk insert) and `capture_event` for the live `session/event`
stream. Both are host-facing, so neither raises: every problem is counted in the
returned `CaptureReport`. The host's envelope format is the caller's: it passes a
`Parser` (the DSH one is `lcm_adapter.envelope.parse.parse_envelope`; a face that builds
the core's own `record.NewEvent`s passes `record.parse_new_event`).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from typing import Any, Final

from lcm_core.capture.private import Scrubber, scrub_row
from lcm_core.capture.rows import ParsedRow, Parser, ParseResult
from lcm_core.clock import utc_now_iso
from lcm_core.config import Config
from lcm_core.store.models import ArchiveEntry, Event, Session
from lcm_core.store.ports import MemoryStore
from lcm_core.text.tokens import normalize_text

# Source kinds of text that a plugin or the runtime generated rather than the user typed.
# Such events are stored (the audit log stays complete) but no consumer treats them as
# user evidence. DSH labels every plugin-injected message with the plain kind `plugin`.
GENERATED_SOURCE_KINDS: Final[frozenset[str]] = frozenset(
    {
        "long-conversation-memory",
        "runtime-context",
        "agent-instructions",
        "skill-invocation",
        "time-context",
        "compaction-checkpoint",
        "compact-checkpoint",
        "plan-mode",
        "plugin",
    }
)
# Source kinds a human typed: a prompt, an input box, or a steer message mid-run.
USER_SOURCE_KINDS: Final[frozenset[str]] = frozenset({"user", "input", "prompt", "steer"})
# Kinds whose text is the conversation itself: the model's replies and tool output
# (untrusted, but not injected context). Every other kind is some plugin's own label.
CONVERSATION_SOURCE_KINDS: Final[frozenset[str]] = USER_SOURCE_KINDS | {"model", "tool"}
MAX_SESSION_ID_CHARS: Final = 512
MAX_REASON_CHARS: Final = 200

Clock = Callable[[], str]


def is_generated_kind(source_kind: str | None) -> bool:
    """True for text a plugin or the runtime injected: the known kinds and any unknown one.

    DSH plugins label their messages with their own kinds (`skill-catalog`,
    `subagent-report`, ...), and new ones appear with new plugins, so anything that is
    not plainly the user, the model or a tool counts as generated.
    """
    if source_kind is None:
        return False
    return source_kind in GENERATED_SOURCE_KINDS or source_kind not in CONVERSATION_SOURCE_KINDS


def is_generated(event: Event) -> bool:
    """True when the event's text came from a plugin or the runtime, not from a person."""
    return is_generated_kind(event.source_kind)


def is_user_input(event: Event) -> bool:
    """True for a user message a person wrote: source kind absent or a user kind."""
    if event.type != "user/message":
        return False
    return event.source_kind is None or event.source_kind in USER_SOURCE_KINDS


@dataclass(frozen=True, slots=True)
class CaptureIssue:
    """One problem with one input event: its position in the batch, its seq, a short reason."""

    index: int
    seq: int | None
    reason: str


@dataclass(frozen=True, slots=True)
class CaptureReport:
    """What a capture call did; `errors` were not stored, `repaired` were stored fixed up."""

    received: int = 0
    rows: int = 0
    inserted: int = 0
    duplicates: int = 0
    archived: int = 0
    unknown_types: int = 0
    unknown_by_type: tuple[tuple[str, int], ...] = ()
    errors: tuple[CaptureIssue, ...] = ()
    repaired: tuple[CaptureIssue, ...] = ()
    last_event_seq: int = -1
    skipped: bool = False

    @property
    def error_count(self) -> int:
        return len(self.errors)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready view, for `--json` output and logs."""
        return {
            "received": self.received,
            "rows": self.rows,
            "inserted": self.inserted,
            "duplicates": self.duplicates,
            "archived": self.archived,
            "unknown_types": self.unknown_types,
            "unknown_by_type": dict(self.unknown_by_type),
            "errors": [_issue_dict(issue) for issue in self.errors],
            "repaired": [_issue_dict(issue) for issue in self.repaired],
            "last_event_seq": self.last_event_seq,
            "skipped": self.skipped,
        }


def _issue_dict(issue: CaptureIssue) -> dict[str, Any]:
    return {"index": issue.index, "seq": issue.seq, "reason": issue.reason}


def _short(reason: str) -> str:
    return reason if len(reason) <= MAX_REASON_CHARS else reason[: MAX_REASON_CHARS - 1] + "…"


def _session_problem(session_id: Any) -> str | None:
    if not isinstance(session_id, str):
        return f"session id is not a string ({type(session_id).__name__})"
    if not session_id or normalize_text(session_id) != session_id:
        return "session id is empty or has control characters or surrounding spaces"
    if len(session_id) > MAX_SESSION_ID_CHARS:
        return "session id is too long"
    return None


@dataclass(slots=True)
class _Parsed:
    """Rows and counts gathered from a batch before anything is written."""

    rows: list[ParsedRow]
    errors: list[CaptureIssue]
    repaired: list[CaptureIssue]
    unknown: Counter[str]
    received: int


def _parse_all(
    parse: Parser,
    session_id: str,
    events: Iterable[Any],
    ingested_at: str,
    archive_limit: int,
    scrubber: Scrubber,
) -> _Parsed:
    parsed = _Parsed([], [], [], Counter(), 0)
    for index, raw in enumerate(events):
        parsed.received += 1
        try:
            result = parse(session_id, raw, ingested_at=ingested_at, archive_limit=archive_limit)
        except Exception as exc:  # one odd event must not sink the batch
            result = ParseResult(error=f"unreadable event: {type(exc).__name__}")
        if result.error is not None:
            parsed.errors.append(CaptureIssue(index, result.seq, _short(result.error)))
            continue
        # The one place every face's text passes before it is stored (see capture/private.py).
        parsed.rows.extend(scrub_row(row, scrubber) for row in result.rows)
        if result.notes:
            parsed.repaired.append(CaptureIssue(index, result.seq, _short("; ".join(result.notes))))
        if result.unknown_type is not None:
            parsed.unknown[result.unknown_type] += 1
    return parsed


def _write(
    store: MemoryStore, session_id: str, rows: list[ParsedRow], now: str
) -> tuple[int, int, int]:
    """Insert rows, archive what needs it, advance the cursor; one transaction.

    Returns (inserted, archived, last_event_seq). The live path inserts one row with
    `insert_event`; a batch uses the bulk `insert_events`.
    """
    with store.transaction():
        if store.get_session(session_id) is None:
            store.upsert_session(Session(session_id=session_id, created_at=now, updated_at=now))
        events = [row.event for row in rows]
        if len(events) == 1:
            inserted = int(store.insert_event(events[0]))
        else:
            inserted = store.insert_events(events)
        archived = 0
        for row in rows:
            if row.archive_text is not None:
                # The archive keeps its first text per ref, so a replay changes nothing.
                ref = f"seq:{row.event.seq}"
                store.put_archive(ArchiveEntry(session_id, ref, row.archive_text, now))
                archived += 1
        checkpoint = store.get_checkpoint(session_id)
        highest = max((event.seq for event in events), default=-1)
        if highest > checkpoint.last_event_seq:
            store.put_checkpoint(replace(checkpoint, last_event_seq=highest, updated_at=now))
        last = max(highest, checkpoint.last_event_seq)
    return inserted, archived, last


def capture_batch(
    store: MemoryStore,
    session_id: str,
    events: Iterable[Any],
    config: Config,
    *,
    parse: Parser,
    clock: Clock | None = None,
) -> CaptureReport:
    """Capture many host events (a replay or backfill) in one transaction; never raises."""
    try:
        return _capture(store, session_id, events, config, parse, clock)
    except Exception as exc:  # host-facing: report, never raise
        return CaptureReport(errors=(CaptureIssue(-1, None, _short(f"capture failed: {exc!r}")),))


def capture_event(
    store: MemoryStore,
    session_id: str,
    event: Any,
    config: Config,
    *,
    parse: Parser,
    clock: Clock | None = None,
) -> CaptureReport:
    """Capture one event from the live stream; never raises, same report as a batch."""
    return capture_batch(store, session_id, (event,), config, parse=parse, clock=clock)


def _capture(
    store: MemoryStore,
    session_id: str,
    events: Iterable[Any],
    config: Config,
    parse: Parser,
    clock: Clock | None,
) -> CaptureReport:
    if not config.capture.enabled:
        return CaptureReport(skipped=True)
    problem = _session_problem(session_id)
    if problem is not None:
        return CaptureReport(errors=(CaptureIssue(-1, None, problem),))
    now = (clock or utc_now_iso)()
    scrubber = Scrubber.of(config)
    parsed = _parse_all(
        parse, session_id, events, now, config.archive.max_chars_per_event, scrubber
    )
    inserted = archived = 0
    last = -1
    errors = list(parsed.errors)
    if parsed.rows:
        try:
            inserted, archived, last = _write(store, session_id, parsed.rows, now)
        except Exception as exc:  # the transaction rolled back; report it
            errors.append(CaptureIssue(-1, None, _short(f"store write failed: {exc}")))
            return CaptureReport(
                received=parsed.received,
                rows=len(parsed.rows),
                errors=tuple(errors),
                repaired=tuple(parsed.repaired),
            )
    return CaptureReport(
        received=parsed.received,
        rows=len(parsed.rows),
        inserted=inserted,
        duplicates=len(parsed.rows) - inserted,
        archived=archived,
        unknown_types=sum(parsed.unknown.values()),
        unknown_by_type=tuple(sorted(parsed.unknown.items())),
        errors=tuple(errors),
        repaired=tuple(parsed.repaired),
        last_event_seq=last,
    )
