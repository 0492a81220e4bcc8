"""What one Claude Code transcript line stands for, as the core's own events (`NewEvent`).

A Claude Code transcript (`~/.claude/projects/<folder>/<session>.jsonl`) holds far more
than the conversation: queue operations, request shapes, cost counters, attachments.
Only these lines become events:

- a user line: its text, then each tool result. The user's own words keep the kind
  `user`; everything Claude Code writes in a user line itself keeps a generated kind, so
  it never turns into memory or evidence: `isMeta` lines (`runtime-context`), the lines
  of a local command such as `/compact` (`<command-name>`, `<local-command-stdout>`,
  the caveat: `local-command`) and its own replies (`synthetic`);
- an assistant line: its text and each tool call; a reply Claude Code made up itself
  (model `<synthetic>`, e.g. "No response requested.") keeps the kind `synthetic`;
- a `compact_boundary`: the start of a compaction, or its end when a hook already
  recorded the start (Claude Code runs `SessionStart` before it writes the boundary);
- the summary after it (`isCompactSummary`): the compaction summary;
- a `hook_additional_context` attachment: the context a hook added to the history; our
  own memory block keeps our source kind, so a later block knows what the history shows.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping
from dataclasses import replace
from typing import Any, Final

from lcm_core.capture.content import TextSink, arguments_text, flatten, label
from lcm_core.capture.record import NewEvent
from lcm_core.retrieval.shown import OWN_SOURCE_KIND
from lcm_core.text.block_words import EN, ZH

# The tags Claude Code wraps a local command's lines in (a slash command or `!` shell).
LOCAL_COMMAND_TAGS: Final = (
    "<command-name>",
    "<command-message>",
    "<command-args>",
    "<local-command-stdout>",
    "<local-command-stderr>",
    "<local-command-caveat>",
    "<bash-input>",
    "<bash-stdout>",
    "<bash-stderr>",
)
# The model name and the text Claude Code gives the replies it writes itself.
SYNTHETIC_MODEL: Final = "<synthetic>"
SYNTHETIC_TEXTS: Final = frozenset({"No response requested."})
# The first line of our block, in either language: how our own context is recognised.
OWN_HEADERS: Final = tuple(words.header.split("\n", 1)[0] for words in (ZH, EN))
HOOK_CONTEXT: Final = "hook_additional_context"  # the attachment a hook's context is kept in
HOOK_CONTEXT_KIND: Final = "hook-context"

# Compaction summaries are model-written stand-ins for shadowed history: generated text.
SUMMARY_KIND: Final = "compaction-checkpoint"
# A tool result's content sits two levels down (in the line's content, in the result),
# which counts toward the depth at which flattening stops.
RESULT_DEPTH: Final = 2
UNBOUNDED: Final = sys.maxsize  # capture cuts the text at its budget, not the reader


def user_kind(entry: Mapping[str, Any], text: str) -> str:
    """The source kind of a user line's text: `user` only for what a person typed."""
    stripped = text.lstrip()
    if entry.get("isMeta"):
        return "runtime-context"
    if stripped.startswith(LOCAL_COMMAND_TAGS):
        return "local-command"
    message = entry.get("message")
    model = message.get("model") if isinstance(message, Mapping) else None
    if model == SYNTHETIC_MODEL or stripped in SYNTHETIC_TEXTS:
        return "synthetic"
    return "user"


def _said(event_type: str, role: str, text: str, kind: str) -> NewEvent:
    """A message's text as an event (its seq and time are set by `claude_events`)."""
    return NewEvent(0, event_type, (text,), role=role, source_kind=kind)


def _tool_result(block: Mapping[str, Any]) -> NewEvent:
    out = TextSink(budget=UNBOUNDED)
    flatten(block.get("content"), out, RESULT_DEPTH)
    return NewEvent(
        0,
        "tool/result",
        tuple(out.parts),
        role="tool",
        source_kind="tool",
        call_id=label(block.get("tool_use_id")),
        notes=tuple(out.notes),
    )


def _user(entry: Mapping[str, Any], content: Any) -> list[NewEvent]:
    blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content
    if not isinstance(blocks, list):
        return []
    out: list[NewEvent] = []
    texts = [b["text"] for b in blocks if isinstance(b, Mapping) and isinstance(b.get("text"), str)]
    text = "\n".join(texts)
    if texts and entry.get("isCompactSummary"):
        out.append(
            NewEvent(0, "compaction/summary", (text,), source_kind=SUMMARY_KIND, archive=True)
        )
    elif texts:
        out.append(_said("user/message", "user", text, user_kind(entry, text)))
    out.extend(
        _tool_result(block)
        for block in blocks
        if isinstance(block, Mapping) and block.get("type") == "tool_result"
    )
    return out


def _assistant(message: Mapping[str, Any], content: list[Any]) -> list[NewEvent]:
    out: list[NewEvent] = []
    texts = [
        b["text"]
        for b in content
        if isinstance(b, Mapping) and b.get("type") == "text" and isinstance(b.get("text"), str)
    ]
    if texts:
        synthetic = message.get("model") == SYNTHETIC_MODEL
        kind = "synthetic" if synthetic else "model"
        out.append(_said("assistant/message", "assistant", "\n".join(texts), kind))
    for block in content:
        if isinstance(block, Mapping) and block.get("type") == "tool_use":
            call = NewEvent(
                0,
                "tool/call",
                (arguments_text(block.get("input")),),
                role="assistant",
                source_kind="model",
                tool_name=label(block.get("name")),
                call_id=label(block.get("id")),
            )
            out.append(call)
    return out


def _hook_context(attachment: Mapping[str, Any]) -> list[NewEvent]:
    """The context a hook added: one user message, ours with our own source kind."""
    content = attachment.get("content")
    parts = [content] if isinstance(content, str) else content
    if not isinstance(parts, list):
        return []
    out: list[NewEvent] = []
    for part in parts:
        if isinstance(part, str) and part.strip():
            kind = OWN_SOURCE_KIND if part.startswith(OWN_HEADERS) else HOOK_CONTEXT_KIND
            out.append(_said("user/message", "user", part, kind))
    return out


def _line_events(entry: Mapping[str, Any], awaiting: bool) -> list[NewEvent]:
    kind = entry.get("type")
    message = entry.get("message")
    content = message.get("content") if isinstance(message, Mapping) else None
    if kind == "system" and entry.get("subtype") == "compact_boundary":
        return [NewEvent(0, "compaction/end" if awaiting else "compaction/start")]
    if kind == "user":
        return _user(entry, content)
    if kind == "assistant" and isinstance(message, Mapping) and isinstance(content, list):
        return _assistant(message, content)
    attachment = entry.get("attachment")
    if kind != "attachment" or not isinstance(attachment, Mapping):
        return []
    return _hook_context(attachment) if attachment.get("type") == HOOK_CONTEXT else []


def claude_events(
    entry: Mapping[str, Any], *, seq: int, time: str | None, awaiting: bool = False
) -> list[NewEvent]:
    """The events one Claude Code transcript line stands for, numbered from `seq`.

    `time` is the line's (epoch ms as text); `awaiting`: a hook already recorded the
    start of a compaction whose boundary line has not been read yet, so the next
    boundary is that compaction's end.
    """
    events = _line_events(entry, awaiting)
    return [replace(e, seq=seq + i, time=time) for i, e in enumerate(events)]


def is_boundary(entry: Any) -> bool:
    """Whether a parsed transcript line is a compaction boundary."""
    return (
        isinstance(entry, Mapping)
        and entry.get("type") == "system"
        and entry.get("subtype") == "compact_boundary"
    )
