"""Parse one DSH session-event envelope into normalized `Event` rows, without touching storage.

Every function here is pure: the same envelope, session id, ingest stamp and archive
limit always give the same rows. Nothing here raises on bad input; problems become a
rejection reason or a repair note that the caller counts.

Decisions worth knowing:

- A packed chunk row (`text-chunks`, `reasoning-chunks`, `tool-call-chunks`) covers the
  seqs `seq0 .. seq0 + n - 1`, one per delta, exactly as the host numbers them. It is
  expanded into one `assistant/chunk` row per delta, so a log backfill and the live
  event stream (which delivers each chunk as its own `assistant/chunk`) write the same
  rows under the same keys. The delta kind goes to `source_form`.
- Each envelope becomes the core's `NewEvent`, stored by `capture.record.event_row`:
  `store` is `archive` for compaction summaries and for any text cut at the event
  limit (the full text goes to the archive, so nothing past 20 000 characters is lost);
  `none` for events that carry no text (markers such as `turn/start`); `host` otherwise.
- A row depends on the envelope alone. A `tool/result` therefore carries the call id but
  no tool name (the name lives on the matching `tool/call` row): a lookup would make the
  row depend on which batch delivered the call first.
"""

from __future__ import annotations

import math
from typing import Any, Final

from lcm_adapter.envelope.content import TYPE_HANDLERS, RowFields, int_field
from lcm_core.capture.content import MAX_SAFE_INT, TextSink, compact_json, flatten, label
from lcm_core.capture.record import NewEvent, event_row, text_budget
from lcm_core.capture.rows import ParsedRow, ParseResult

# The event types of the DSH session format (0.2.x) plus plugin types we have seen.
# Anything else is still stored, but counted as unknown.
KNOWN_EVENT_TYPES: Final[frozenset[str]] = frozenset(
    {
        "turn/start",
        "turn/end",
        "step/start",
        "step/end",
        "system/message",
        "user/message",
        "assistant/chunk",
        "assistant/message",
        "tool/call",
        "tool/result",
        "compaction/start",
        "compaction/summary",
        "compaction/end",
        "compaction/prune",
        "request/header",
        "request/context",
        "session/end-seed",
        "session/title",
        "session/title-llm-request",
        "command/run",
        "command/done",
        "todo/write",
        "plan/mode",
        "hook/invoked",
        "hook/result",
        "agent/inbox/spliced",
        "agent-preset/selected",
        "approval/asked",
        "approval/decided",
        "approval/policy",
        "feedback/record",
        "goal/change",
        "llm/retry",
        "llm/retry-started",
        "model/selection",
        "permission/preset",
        "sandbox/mode",
        "schedule/change",
        "subagent/descriptor",
        "subagent/model-selection-policy",
        "team/member",
        "team/message/delivered",
        "team/message/queued",
        "team/task",
        "tool-workflow/agent-end",
        "tool-workflow/agent-start",
        "tool-workflow/run-end",
        "tool-workflow/run-start",
        "tool/code-dispatch",
        "tool/code-dispatch-start",
        "web/deepseek-search-llm-request",
        "session-log-deepseek/delivery-accepted",
    }
)
# Packed rows of streamed deltas in session logs: row type -> (payload key, delta kind).
PACKED_CHUNK_TYPES: Final[dict[str, tuple[str, str]]] = {
    "text-chunks": ("texts", "text-delta"),
    "reasoning-chunks": ("texts", "reasoning-delta"),
    "tool-call-chunks": ("args", "tool-call-delta"),
}
# The host numbers events with JS safe integers; anything above cannot be a real seq.
MAX_SEQ: Final = MAX_SAFE_INT
MAX_TYPE_CHARS: Final = 200


def check_seq(value: Any) -> int | None:
    """The seq when it is a usable non-negative integer (bool is not), else None."""
    if isinstance(value, bool) or not isinstance(value, int):
        return None
    return value if 0 <= value <= MAX_SEQ else None


def _seq_problem(value: Any) -> str:
    if value is None:
        return "seq is missing"
    if isinstance(value, bool) or not isinstance(value, int):
        return f"seq is not an integer ({type(value).__name__})"
    return "seq is negative" if value < 0 else "seq is too large"


def time_text(value: Any) -> str | None:
    """Host time (epoch ms) as text; a string is kept, anything unusable gives None."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float) and math.isfinite(value):
        return str(int(value)) if value.is_integer() else repr(value)
    if isinstance(value, str):
        return label(value)
    return None


# --- envelope -> rows ---------------------------------------------------------------


def _build_row(
    session_id: str,
    seq: int,
    event_type: str,
    time: str | None,
    turn: int | None,
    step: int | None,
    fields: RowFields,
    out: TextSink,
    ingested_at: str,
    archive_limit: int,
) -> ParsedRow:
    event = NewEvent(
        seq,
        event_type,
        time=time,
        turn=turn,
        step=step,
        role=fields.role,
        source_kind=fields.source_kind,
        source_form=fields.source_form,
        tool_name=fields.tool_name,
        call_id=fields.call_id,
        archive=fields.archive,
    )
    return event_row(
        session_id,
        event,
        out.joined(),
        out.cut,
        ingested_at=ingested_at,
        archive_limit=archive_limit,
    )


def parse_envelope(
    session_id: str, raw: Any, *, ingested_at: str, archive_limit: int
) -> ParseResult:
    """Turn one host event (any JSON value) into rows, or a reason it cannot be stored."""
    if not isinstance(raw, dict):
        return ParseResult(error=f"event is not an object ({type(raw).__name__})")
    raw_type = raw.get("type")
    event_type = label(raw_type, MAX_TYPE_CHARS)
    if event_type in PACKED_CHUNK_TYPES:
        return _parse_packed(session_id, raw, event_type, ingested_at, archive_limit)
    seq = check_seq(raw.get("seq"))
    if seq is None:
        return ParseResult(error=_seq_problem(raw.get("seq")))
    if event_type is None:
        problem = "type is missing" if raw_type is None else "type is not a usable string"
        return ParseResult(seq=seq, error=problem)

    out = TextSink(budget=text_budget(archive_limit))
    fields = RowFields()
    if "data" not in raw:
        out.note("data is missing")
    data = raw.get("data")
    known = event_type in KNOWN_EVENT_TYPES
    if isinstance(data, dict):
        handler = TYPE_HANDLERS.get(event_type)
        if handler is not None:
            handler(data, out, fields)
        elif not known and data:
            # Keep an unknown event's payload searchable and auditable, in a stable form.
            out.add(compact_json(data, sort_keys=True))
    elif data is not None:
        out.note(f"data is not an object ({type(data).__name__})")
        flatten(data, out)
    row = _build_row(
        session_id,
        seq,
        event_type,
        time_text(raw.get("time")),
        int_field(data, "turn"),
        int_field(data, "step"),
        fields,
        out,
        ingested_at,
        archive_limit,
    )
    return ParseResult(
        rows=(row,),
        seq=seq,
        notes=tuple(out.notes),
        unknown_type=None if known else event_type,
    )


def _chunk_times(time0: Any, gaps: Any, count: int) -> tuple[list[str | None], bool]:
    """Each delta's time: `time0` plus the running sum of `dt`; flag if `dt` was unusable."""
    first = time_text(time0)
    usable = (
        isinstance(time0, int)
        and not isinstance(time0, bool)
        and isinstance(gaps, list)
        and len(gaps) == count - 1
        and all(isinstance(gap, int) and not isinstance(gap, bool) for gap in gaps)
    )
    if not usable:
        return [first] + [None] * (count - 1), count > 1
    times: list[str | None] = [first]
    current = int(time0)
    for gap in gaps:
        current += gap
        times.append(str(current))
    return times, False


def _parse_packed(
    session_id: str, raw: dict[str, Any], row_type: str, ingested_at: str, archive_limit: int
) -> ParseResult:
    """Expand a packed chunk row into one `assistant/chunk` row per seq it covers."""
    payload_key, delta_kind = PACKED_CHUNK_TYPES[row_type]
    raw_seq = raw.get("seq0", raw.get("seq"))
    seq0 = check_seq(raw_seq)
    if seq0 is None:
        return ParseResult(error=f"{row_type}: {_seq_problem(raw_seq).replace('seq', 'seq0', 1)}")
    data = raw.get("data")
    members = data.get(payload_key) if isinstance(data, dict) else None
    if not isinstance(data, dict) or not isinstance(members, list) or not members:
        return ParseResult(
            seq=seq0, error=f"{row_type}: data.{payload_key} is not a non-empty list"
        )
    if seq0 + len(members) - 1 > MAX_SEQ:
        return ParseResult(seq=seq0, error=f"{row_type}: seq range is too large")
    notes: list[str] = []
    times, bad_gaps = _chunk_times(raw.get("time0", raw.get("time")), data.get("dt"), len(members))
    if bad_gaps:
        notes.append(f"{row_type}: dt unusable; later chunk times left empty")
    turn, step = int_field(data, "turn"), int_field(data, "step")
    tool_name = label(data.get("name")) if row_type == "tool-call-chunks" else None
    call_id = label(data.get("id")) if row_type == "tool-call-chunks" else None
    rows: list[ParsedRow] = []
    for offset, member in enumerate(members):
        out = TextSink(budget=text_budget(archive_limit))
        flatten(member, out)
        notes.extend(note for note in out.notes if note not in notes)
        fields = RowFields(
            role="assistant",
            source_kind="model",
            source_form=delta_kind,
            tool_name=tool_name,
            call_id=call_id,
        )
        rows.append(
            _build_row(
                session_id,
                seq0 + offset,
                "assistant/chunk",
                times[offset],
                turn,
                step,
                fields,
                out,
                ingested_at,
                archive_limit,
            )
        )
    return ParseResult(rows=tuple(rows), seq=seq0, notes=tuple(notes))
