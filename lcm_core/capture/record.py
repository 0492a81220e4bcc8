"""A captured event in the core's own terms (`NewEvent`), and the row it is stored as.

A face reads its host's format (DSH envelopes, Claude Code transcript lines) and
describes each event as a `NewEvent`: its seq, type, text in pieces and provenance.
`event_row` is the one place an event's text is normalized, cut at the event limit,
archived when asked or cut, and hashed; `parse_new_event` is the `Parser` capture
takes for a face that hands over `NewEvent`s. Pure: the same input gives the same row.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from lcm_core.capture.content import MAX_SAFE_INT, TextSink
from lcm_core.capture.rows import ParsedRow, ParseResult
from lcm_core.store.models import MAX_EVENT_TEXT, Event
from lcm_core.text.tokens import clamp_text, normalize_text, sha256_hex


@dataclass(frozen=True, slots=True)
class NewEvent:
    """One host event to capture: what it is, its text (pieces joined by newlines), whose."""

    seq: int
    type: str
    parts: tuple[str, ...] = ()
    time: str | None = None
    turn: int | None = None
    step: int | None = None
    role: str | None = None
    source_kind: str | None = None
    source_form: str | None = None
    tool_name: str | None = None
    call_id: str | None = None
    # Keep the whole text in the archive (a compaction summary), not only when cut.
    archive: bool = False
    # Repairs made while reading the host's content (reported, not stored).
    notes: tuple[str, ...] = ()


def text_budget(archive_limit: int) -> int:
    """How many raw characters to collect: enough for the longest stored form and margin.

    Normalization can only shrink text by dropping control characters and CR, so twice
    the longest limit plus slack keeps both the event text and the archive text exact
    while a 5 MB payload costs no more than that to process.
    """
    return 2 * max(MAX_EVENT_TEXT, archive_limit) + 1024


def event_row(
    session_id: str,
    event: NewEvent,
    raw_text: str,
    cut: bool,
    *,
    ingested_at: str,
    archive_limit: int,
) -> ParsedRow:
    """The row for `event` whose collected text is `raw_text` (`cut`: cut at its budget)."""
    full = normalize_text(raw_text)
    text, clamped = clamp_text(full, MAX_EVENT_TEXT)
    truncated = clamped or cut
    archive_text: str | None = None
    if text and (event.archive or truncated):
        archive_text = clamp_text(full, archive_limit)[0]
    store = "archive" if archive_text else ("host" if text else "none")
    row = Event(
        session_id=session_id,
        seq=event.seq,
        type=event.type,
        text=text,
        time=event.time,
        turn=event.turn,
        step=event.step,
        role=event.role,
        source_kind=event.source_kind,
        source_form=event.source_form,
        tool_name=event.tool_name,
        call_id=event.call_id,
        store=store,
        content_hash=sha256_hex(text),
        truncated=truncated,
        ingested_at=ingested_at,
    )
    return ParsedRow(row, archive_text)


def parse_new_event(
    session_id: str, raw: Any, *, ingested_at: str, archive_limit: int
) -> ParseResult:
    """The `Parser` for `NewEvent`s: one row each, or why it cannot be stored."""
    if not isinstance(raw, NewEvent):
        return ParseResult(error=f"event is not a NewEvent ({type(raw).__name__})")
    seq = raw.seq
    if isinstance(seq, bool) or not isinstance(seq, int) or not 0 <= seq <= MAX_SAFE_INT:
        return ParseResult(error=f"seq is not a usable integer ({seq!r})")
    out = TextSink(budget=text_budget(archive_limit))
    for part in raw.parts:
        out.add(part)
    row = event_row(
        session_id, raw, out.joined(), out.cut, ingested_at=ingested_at, archive_limit=archive_limit
    )
    return ParseResult(rows=(row,), seq=seq, notes=raw.notes)
