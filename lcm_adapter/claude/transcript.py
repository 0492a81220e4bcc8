"""Incremental capture of a hook's `transcript_path`: a Claude Code transcript or a DSH log.

A hook runs once per prompt or tool call, so each run reads only what was appended since
the last one: the byte offset of the last complete line is remembered in the store's
`meta` table, in the same transaction as the captured events. A half-written last line
waits for the next run. A file that shrank was replaced, and is read again from the start
(capture is idempotent, so nothing doubles).

Claude Code lines (`{type: user|assistant|system, message, timestamp, ...}`) become DSH
envelopes with seqs counted from the start of the file, one per envelope: user text,
tool results, assistant text and tool calls; a compaction boundary and its summary
message become compaction events. Meta and compaction-summary messages keep a generated
source kind, so they never turn into memory. DSH logs are captured as they are; a
compressed DSH log is handed to `lcm ingest`'s reader whole.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from lcm_adapter.dsh.logread import decode_line
from lcm_core import usecases
from lcm_core.capture.events import CaptureReport

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

    def to_json(self) -> str:
        return json.dumps(
            {
                "path": self.path,
                "offset": self.offset,
                "nextSeq": self.next_seq,
                "format": self.format,
            },
            sort_keys=True,
        )

    @classmethod
    def from_json(cls, text: str | None) -> Cursor:
        try:
            data = json.loads(text or "{}")
            return cls(
                str(data.get("path", "")),
                int(data.get("offset", 0)),
                int(data.get("nextSeq", 0)),
                str(data.get("format", "")),
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


def _millis(stamp: Any) -> int | None:
    if not isinstance(stamp, str):
        return None
    try:
        return int(datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp() * 1000)
    except ValueError:
        return None


def _text_block(text: str) -> list[dict[str, str]]:
    return [{"type": "text", "text": text}]


def claude_envelopes(entry: Mapping[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """The DSH `(type, data)` pairs one Claude Code transcript line stands for."""
    kind = entry.get("type")
    message = entry.get("message")
    content = message.get("content") if isinstance(message, Mapping) else None
    out: list[tuple[str, dict[str, Any]]] = []
    if kind == "system" and entry.get("subtype") == "compact_boundary":
        out.append(("compaction/start", {"compactionId": str(entry.get("uuid", ""))}))
    elif kind == "user":
        blocks = _text_block(content) if isinstance(content, str) else content
        if not isinstance(blocks, list):
            return out
        texts = [
            b["text"] for b in blocks if isinstance(b, Mapping) and isinstance(b.get("text"), str)
        ]
        if texts and entry.get("isCompactSummary"):
            summary = _text_block("\n".join(texts))
            out.append(("compaction/summary", {"summary": summary}))
        elif texts:
            source = {"kind": "runtime-context"} if entry.get("isMeta") else {"kind": "user"}
            out.append(
                (
                    "user/message",
                    {"role": "user", "content": _text_block("\n".join(texts)), "source": source},
                )
            )
        for block in blocks:
            if isinstance(block, Mapping) and block.get("type") == "tool_result":
                result = {
                    "type": "tool-result",
                    "toolCallId": block.get("tool_use_id"),
                    "content": block.get("content"),
                    "isError": bool(block.get("is_error")),
                }
                message_data = {"role": "user", "content": [result], "source": {"kind": "tool"}}
                out.append(("tool/result", {"message": message_data}))
    elif kind == "assistant" and isinstance(content, list):
        texts = [
            b["text"]
            for b in content
            if isinstance(b, Mapping) and b.get("type") == "text" and isinstance(b.get("text"), str)
        ]
        if texts:
            reply = {
                "role": "assistant",
                "content": _text_block("\n".join(texts)),
                "source": {"kind": "model"},
            }
            out.append(("assistant/message", {"message": reply}))
        for block in content:
            if isinstance(block, Mapping) and block.get("type") == "tool_use":
                out.append(
                    (
                        "tool/call",
                        {
                            "callId": block.get("id"),
                            "name": block.get("name"),
                            "arguments": block.get("input"),
                        },
                    )
                )
    return out


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


def _envelopes(lines: list[bytes], cursor: Cursor) -> Iterator[Any]:
    seq = cursor.next_seq
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
                yield value
            continue
        if not isinstance(value, Mapping):
            continue
        for event_type, data in claude_envelopes(value):
            envelope: dict[str, Any] = {"type": event_type, "seq": seq, "data": data}
            millis = _millis(value.get("timestamp"))
            if millis is not None:
                envelope["time"] = millis
            seq += 1
            yield envelope
    # The caller reads the advanced counter back from the envelopes it received.


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
    cursor = Cursor.from_json(usecases.read_cursor(store, key))
    if cursor.path != str(path) or path.stat().st_size < cursor.offset:
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
        cursor = Cursor(cursor.path, cursor.offset, cursor.next_seq, detect_format(lines[0]))
    events = list(_envelopes(lines, cursor))
    next_seq = cursor.next_seq + (len(events) if cursor.format == CLAUDE else 0)

    def capture() -> CaptureReport | None:
        report = runtime.on_events(session_id, events) if events else None
        fatal = [e.reason for e in (report.errors if report else ()) if e.index < 0]
        if fatal:
            raise RuntimeError(f"transcript capture failed: {fatal[0]}")
        return report

    moved = Cursor(cursor.path, offset, next_seq, cursor.format).to_json()
    report = usecases.capture_and_advance(store, key, moved, capture)
    return SyncReport(
        lines=len(lines),
        events=len(events),
        inserted=report.inserted if report else 0,
        errors=tuple(e.reason for e in (report.errors if report else ())),
    )


def _sync_compressed(runtime: MemoryRuntime, path: Path) -> SyncReport:
    from lcm_adapter.dsh.ingest import IngestReport, ingest_file

    report = IngestReport()
    ingest_file(runtime, path, report)
    return SyncReport(report.lines, report.events, report.inserted, tuple(map(str, report.issues)))
