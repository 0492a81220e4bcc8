"""Incremental capture of a hook's `transcript_path`: a Claude Code transcript or a DSH log.

A hook runs once per prompt or tool call, so each run reads only what was appended since
the last one: the byte offset of the last complete line is remembered in the store's
`meta` table, in the same transaction as the captured events. A half-written last line
waits for the next run. A file that shrank was replaced, and is read again from the start
(capture is idempotent, so nothing doubles). A file that does not exist yet (Claude Code
names it before its first line is written) is nothing to read, not an error.

Claude Code lines become the core's own events (`NewEvent`) with seqs counted from the
start of the file, one per event (`lcm_adapter.claude.lines` says which lines and with
which source kind), captured by `MemoryRuntime.on_records`.
Claude Code runs `SessionStart` with source `compact` before it writes the compaction's
boundary line, so that hook records the compaction's start itself (`mark_compaction`, at
the next seq) and the boundary read later is the compaction's end. DSH logs are captured
as they are; a compressed DSH log is handed to `lcm ingest`'s reader whole.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, replace
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from lcm_adapter.claude.lines import claude_events, is_boundary
from lcm_adapter.dsh.logread import decode_line
from lcm_core import usecases
from lcm_core.assembly.compaction import COMPACTION_EVENT_TYPES
from lcm_core.capture.events import CaptureReport
from lcm_core.capture.record import NewEvent

if TYPE_CHECKING:
    from lcm_adapter.runtime import MemoryRuntime

META_PREFIX: Final = "hook.transcript:"
MAX_READ_BYTES: Final = 64 << 20  # one run reads at most this much; the rest waits
CLAUDE: Final = "claude-code"
DSH: Final = "dsh"


@dataclass(frozen=True, slots=True)
class Cursor:
    """Where the last run stopped in a transcript file."""

    path: str = ""
    offset: int = 0
    next_seq: int = 0
    format: str = ""
    # A hook recorded a compaction's start; its boundary line is still to be read.
    awaiting: bool = False

    def to_json(self) -> str:
        data: dict[str, Any] = {
            "path": self.path,
            "offset": self.offset,
            "nextSeq": self.next_seq,
            "format": self.format,
        }
        if self.awaiting:
            data["awaitingBoundary"] = True
        return json.dumps(data, sort_keys=True)

    @classmethod
    def from_json(cls, text: str | None) -> Cursor:
        try:
            data = json.loads(text or "{}")
            return cls(
                str(data.get("path", "")),
                int(data.get("offset", 0)),
                int(data.get("nextSeq", 0)),
                str(data.get("format", "")),
                bool(data.get("awaitingBoundary", False)),
            )
        except (ValueError, TypeError, AttributeError):
            return cls()


@dataclass(frozen=True, slots=True)
class SyncReport:
    """What one sync read and stored."""

    lines: int = 0
    events: int = 0
    inserted: int = 0
    errors: tuple[str, ...] = ()


def _millis(stamp: Any) -> str | None:
    """A line's ISO timestamp as epoch milliseconds (the text capture stores), or None."""
    if not isinstance(stamp, str):
        return None
    try:
        return str(int(datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp() * 1000))
    except ValueError:
        return None


def _complete_lines(path: Path, offset: int) -> tuple[list[bytes], int]:
    """The complete lines after `offset` and the offset just past the last of them."""
    with path.open("rb") as handle:
        handle.seek(offset)
        chunk = handle.read(MAX_READ_BYTES)
    end = chunk.rfind(b"\n")
    if end < 0:
        return [], offset
    return chunk[: end + 1].splitlines(), offset + end + 1


def detect_format(first_line: bytes) -> str:
    """`dsh` when the line is a DSH session header or envelope, else `claude-code`."""
    try:
        value = json.loads(first_line)
    except ValueError:
        return CLAUDE
    if isinstance(value, Mapping) and (value.get("type") == "session" or "seq" in value):
        return DSH
    return CLAUDE


def _read(lines: list[bytes], cursor: Cursor) -> tuple[list[Any], Cursor]:
    """The events of complete lines (`NewEvent`s, or a DSH log's envelopes as they are),
    and the cursor's seq and compaction state after them."""
    out: list[Any] = []
    seq, awaiting = cursor.next_seq, cursor.awaiting
    for raw in lines:
        if not raw.strip():
            continue
        try:
            # A byte that is not UTF-8 becomes U+FFFD: the line (a user's turn) is kept.
            value = json.loads(decode_line(raw)[0])
        except ValueError:
            continue  # a damaged line: skipped, as a reader of a live file must
        if cursor.format == DSH:
            if not (isinstance(value, Mapping) and value.get("type") == "session"):
                out.append(value)
            continue
        if not isinstance(value, Mapping):
            continue
        events = claude_events(
            value, seq=seq, time=_millis(value.get("timestamp")), awaiting=awaiting
        )
        seq += len(events)
        out.extend(events)
        awaiting = awaiting and not is_boundary(value)
    return out, replace(cursor, next_seq=seq, awaiting=awaiting)


class NotATranscriptError(ValueError):
    """The file a hook named is neither a Claude Code transcript nor a DSH session log."""


def transcript_problem(first_line: bytes) -> str | None:
    """Why a file whose first line this is cannot be a transcript; None when it can be.

    Every line of both formats is a JSON object with a `type` (a DSH envelope has `seq`).
    """
    try:
        value = json.loads(first_line)
    except ValueError:
        return "its first line is not JSON"
    if not isinstance(value, Mapping) or not ("type" in value or "seq" in value):
        return "its first line is not a transcript entry"
    return None


def sync_transcript(runtime: MemoryRuntime, session_id: str, transcript_path: str) -> SyncReport:
    """Capture what was appended to the transcript since the last run; raises on I/O errors."""
    path = Path(transcript_path).expanduser()
    store = runtime.store
    key = META_PREFIX + session_id
    try:
        size = path.stat().st_size
    except FileNotFoundError:
        return SyncReport()  # not written yet: the first hooks of a session come before it
    cursor = Cursor.from_json(store.get_meta(key))
    if cursor.path != str(path) or size < cursor.offset:
        cursor = Cursor(path=str(path))  # a new or replaced file: from the start
    if path.name.endswith((".zstd", ".zst")):
        from lcm_adapter.dsh.ingest import not_a_session_log

        reason = not_a_session_log(path)
        if reason is not None:
            raise NotATranscriptError(f"{path} is not a transcript ({reason}); not read")
        return _sync_compressed(runtime, path)
    lines, offset = _complete_lines(path, cursor.offset)
    if not lines:
        return SyncReport()
    if not cursor.format:
        # A first read: a file that is no transcript gets no cursor, so nothing says it was read.
        reason = transcript_problem(lines[0])
        if reason is not None:
            raise NotATranscriptError(f"{path} is not a transcript ({reason}); not read")
        cursor = replace(cursor, format=detect_format(lines[0]))
    events, moved = _read(lines, cursor)
    on = runtime.on_events if cursor.format == DSH else runtime.on_records

    def capture() -> CaptureReport | None:
        report = on(session_id, events) if events else None
        fatal = [e.reason for e in (report.errors if report else ()) if e.index < 0]
        if fatal:
            raise RuntimeError(f"transcript capture failed: {fatal[0]}")
        return report

    report = usecases.capture_and_advance(
        store, key, replace(moved, offset=offset).to_json(), capture
    )
    return SyncReport(
        lines=len(lines),
        events=len(events),
        inserted=report.inserted if report else 0,
        errors=tuple(e.reason for e in (report.errors if report else ())),
    )


def mark_compaction(runtime: MemoryRuntime, session_id: str, transcript_path: str) -> bool:
    """Record that Claude Code is compacting now, unless the transcript already says so.

    Called after a sync by `SessionStart` with source `compact`: when the newest captured
    event is not a compaction event, a `compaction/start` goes in at the next seq (and
    the boundary line written afterwards becomes its end), so the block this hook
    returns is the post-compaction one. True when the start was recorded.
    """
    store = runtime.store
    key = META_PREFIX + session_id
    cursor = Cursor.from_json(store.get_meta(key))
    path = str(Path(transcript_path).expanduser())
    if cursor.format != CLAUDE or cursor.path != path or cursor.awaiting:
        return False
    newest = store.max_event_seq(session_id)
    if newest is None:
        return False  # nothing was captured, so nothing was compacted away
    last = store.get_events(session_id, [newest])
    if last and last[-1].type in COMPACTION_EVENT_TYPES:
        return False  # this version wrote the boundary first: already recorded
    # At the newest line's time: the same transcript, the same row.
    start = NewEvent(cursor.next_seq, "compaction/start", time=last[-1].time if last else None)
    moved = replace(cursor, next_seq=cursor.next_seq + 1, awaiting=True).to_json()
    report = usecases.capture_and_advance(
        store, key, moved, lambda: runtime.on_records(session_id, [start])
    )
    return report.inserted == 1


def _sync_compressed(runtime: MemoryRuntime, path: Path) -> SyncReport:
    from lcm_adapter.dsh.ingest import IngestReport, ingest_file

    report = IngestReport()
    ingest_file(runtime, path, report)
    return SyncReport(report.lines, report.events, report.inserted, tuple(map(str, report.issues)))
