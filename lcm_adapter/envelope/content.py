"""Read the text and provenance out of DSH event payloads: sources and per-type fields.

Pure helpers used by `parse`: a handler per event type fills a `RowFields` and
appends text to a `TextSink` (the core's content flattening reads the blocks).
Nothing here raises on malformed input; oddities become notes on the sink, which the
caller reports as repairs.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Final

from lcm_core.capture.content import MAX_SAFE_INT, TextSink, arguments_text, flatten, label


@dataclass(slots=True)
class RowFields:
    """The columns a type handler fills besides the text."""

    role: str | None = None
    source_kind: str | None = None
    source_form: str | None = None
    tool_name: str | None = None
    call_id: str | None = None
    archive: bool = False


Handler = Callable[[dict[str, Any], TextSink, RowFields], None]


def int_field(data: Any, key: str) -> int | None:
    if not isinstance(data, dict):
        return None
    value = data.get(key)
    if isinstance(value, bool) or not isinstance(value, int):
        return None
    # SQLite stores 64-bit integers; an absurd turn number is dropped, not stored.
    return value if -MAX_SAFE_INT <= value <= MAX_SAFE_INT else None


def read_source(source: Any, fields: RowFields) -> None:
    """Copy `source.kind`/`form` into the fields; a plugin's name goes into the form."""
    if not isinstance(source, dict):
        return
    kind = label(source.get("kind"))
    form = label(source.get("form"))
    if kind == "plugin":
        plugin = label(source.get("plugin"))
        form = "/".join(part for part in (plugin, form) if part) or None
    fields.source_kind = kind
    fields.source_form = form


def _message_of(data: dict[str, Any]) -> dict[str, Any]:
    """The message object of an event: nested under `message`, or the data itself."""
    message = data.get("message")
    if isinstance(message, dict) and "content" not in data:
        return message
    return data


# --- per-type handlers: fill the fields and the text; return nothing -----------------


def _user_message(data: dict[str, Any], out: TextSink, fields: RowFields) -> None:
    message = _message_of(data)
    fields.role = label(message.get("role")) or "user"
    read_source(message.get("source"), fields)
    flatten(message.get("content"), out)


def _system_message(data: dict[str, Any], out: TextSink, fields: RowFields) -> None:
    message = _message_of(data)
    fields.role = "system"
    read_source(message.get("source"), fields)
    flatten(message.get("content", message.get("text")), out)


def _assistant_message(data: dict[str, Any], out: TextSink, fields: RowFields) -> None:
    message = _message_of(data)
    fields.role = "assistant"
    read_source(message.get("source"), fields)
    flatten(message.get("content"), out)


def _assistant_chunk(data: dict[str, Any], out: TextSink, fields: RowFields) -> None:
    fields.role, fields.source_kind = "assistant", "model"
    chunk = data.get("chunk")
    if not isinstance(chunk, dict):
        flatten(chunk, out)
        return
    fields.source_form = label(chunk.get("type"))
    if chunk.get("type") == "tool-call-delta":
        fields.tool_name = label(chunk.get("name"))
        fields.call_id = label(chunk.get("id"))
        flatten(chunk.get("argumentsDelta"), out)
    elif "text" in chunk:
        flatten(chunk["text"], out)
    elif chunk.get("type") == "block-end":
        flatten(chunk.get("block"), out)


def _tool_call(data: dict[str, Any], out: TextSink, fields: RowFields) -> None:
    fields.role, fields.source_kind = "assistant", "model"
    fields.tool_name = label(data.get("name"))
    fields.call_id = label(data.get("callId"))
    out.add(arguments_text(data.get("arguments")))


def _tool_result(data: dict[str, Any], out: TextSink, fields: RowFields) -> None:
    message = _message_of(data)
    fields.role = "tool"
    read_source(message.get("source"), fields)
    content = message.get("content")
    if isinstance(content, list):
        for block in content:
            if isinstance(block, dict) and fields.call_id is None:
                fields.call_id = label(block.get("toolCallId"))
    source = message.get("source")
    if fields.call_id is None and isinstance(source, dict):
        fields.call_id = label(source.get("callId"))
    fields.tool_name = label(data.get("name")) or label(data.get("toolName"))
    flatten(content, out)


def _compaction_summary(data: dict[str, Any], out: TextSink, fields: RowFields) -> None:
    # The summary is model-written text standing in for shadowed history: label it as a
    # generated compaction checkpoint so no consumer mistakes it for user evidence.
    fields.source_kind, fields.archive = "compaction-checkpoint", True
    flatten(data.get("summary"), out)


def _error_text(data: dict[str, Any], out: TextSink, fields: RowFields) -> None:
    # Markers (compaction/end, turn/end) carry text only when they report a failure.
    error = data.get("error")
    reason = data.get("reason")
    if isinstance(reason, dict) and isinstance(reason.get("error"), dict | str):
        error = reason["error"]
    if isinstance(error, dict):
        error = error.get("message")
    if isinstance(error, str):
        out.add(error)


def _command_run(data: dict[str, Any], out: TextSink, fields: RowFields) -> None:
    fields.role = "command"
    read_source(data.get("source"), fields)
    name = label(data.get("name")) or ""
    args = data.get("args")
    out.add(f"/{name}{args if isinstance(args, str) else ''}" if name else "")


def _command_done(data: dict[str, Any], out: TextSink, fields: RowFields) -> None:
    fields.role = "command"
    text = data.get("text")
    out.add(text if isinstance(text, str) else (label(data.get("kind")) or ""))


def _session_title(data: dict[str, Any], out: TextSink, fields: RowFields) -> None:
    read_source(data.get("source"), fields)
    flatten(data.get("title"), out)


def _todo_write(data: dict[str, Any], out: TextSink, fields: RowFields) -> None:
    todos = data.get("todos")
    for todo in todos if isinstance(todos, list) else []:
        if isinstance(todo, dict) and isinstance(todo.get("content"), str):
            status = label(todo.get("status")) or "pending"
            out.add(f"[{status}] {todo['content']}")


def _plan_mode(data: dict[str, Any], out: TextSink, fields: RowFields) -> None:
    active = data.get("active", data.get("enabled"))
    if isinstance(active, bool):
        out.add("plan mode on" if active else "plan mode off")


def _hook_result(data: dict[str, Any], out: TextSink, fields: RowFields) -> None:
    pieces = [data.get(key) for key in ("point", "decision", "reason", "stderrSummary")]
    out.add(" ".join(piece for piece in pieces if isinstance(piece, str)))


def _inbox_spliced(data: dict[str, Any], out: TextSink, fields: RowFields) -> None:
    # Messages queued for a later turn; the claimed copy arrives again as user/message.
    fields.role = "user"
    inserted = data.get("inserted")
    for message in inserted if isinstance(inserted, list) else []:
        if isinstance(message, dict):
            if fields.source_kind is None:
                read_source(message.get("source"), fields)
            flatten(message.get("content"), out)


def _queued_team_message(data: dict[str, Any], out: TextSink, fields: RowFields) -> None:
    message = data.get("message")
    if isinstance(message, dict):
        flatten(message.get("content"), out)


def _text_field(key: str) -> Handler:
    def handler(data: dict[str, Any], out: TextSink, fields: RowFields) -> None:
        flatten(data.get(key), out)

    return handler


# Types not listed here are either markers without text (turn/start, request/header, ...)
# or unknown, whose data is kept as compact JSON.
TYPE_HANDLERS: Final[dict[str, Handler]] = {
    "user/message": _user_message,
    "system/message": _system_message,
    "assistant/message": _assistant_message,
    "assistant/chunk": _assistant_chunk,
    "tool/call": _tool_call,
    "tool/result": _tool_result,
    "compaction/summary": _compaction_summary,
    "compaction/end": _error_text,
    "turn/end": _error_text,
    "command/run": _command_run,
    "command/done": _command_done,
    "session/title": _session_title,
    "todo/write": _todo_write,
    "plan/mode": _plan_mode,
    "hook/result": _hook_result,
    "agent/inbox/spliced": _inbox_spliced,
    "feedback/record": _text_field("text"),
    "team/message/queued": _queued_team_message,
    "tool/code-dispatch": _text_field("content"),
}
