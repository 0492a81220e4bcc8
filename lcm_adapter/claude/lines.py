"""What one Claude Code transcript line stands for, as DSH envelopes `(type, data)`.

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

from collections.abc import Mapping
from typing import Any, Final

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

Envelope = tuple[str, dict[str, Any]]


def _text_block(text: str) -> list[dict[str, str]]:
    return [{"type": "text", "text": text}]


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


def _message(role: str, text: str, kind: str) -> dict[str, Any]:
    return {"role": role, "content": _text_block(text), "source": {"kind": kind}}


def _user(entry: Mapping[str, Any], content: Any) -> list[Envelope]:
    blocks = _text_block(content) if isinstance(content, str) else content
    if not isinstance(blocks, list):
        return []
    out: list[Envelope] = []
    texts = [b["text"] for b in blocks if isinstance(b, Mapping) and isinstance(b.get("text"), str)]
    if texts and entry.get("isCompactSummary"):
        out.append(("compaction/summary", {"summary": _text_block("\n".join(texts))}))
    elif texts:
        text = "\n".join(texts)
        out.append(("user/message", _message("user", text, user_kind(entry, text))))
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
    return out


def _assistant(message: Mapping[str, Any], content: list[Any]) -> list[Envelope]:
    out: list[Envelope] = []
    texts = [
        b["text"]
        for b in content
        if isinstance(b, Mapping) and b.get("type") == "text" and isinstance(b.get("text"), str)
    ]
    if texts:
        synthetic = message.get("model") == SYNTHETIC_MODEL
        reply = _message("assistant", "\n".join(texts), "synthetic" if synthetic else "model")
        out.append(("assistant/message", {"message": reply}))
    for block in content:
        if isinstance(block, Mapping) and block.get("type") == "tool_use":
            call = {
                "callId": block.get("id"),
                "name": block.get("name"),
                "arguments": block.get("input"),
            }
            out.append(("tool/call", call))
    return out


def _hook_context(attachment: Mapping[str, Any]) -> list[Envelope]:
    """The context a hook added: one user message, ours with our own source kind."""
    content = attachment.get("content")
    parts = [content] if isinstance(content, str) else content
    if not isinstance(parts, list):
        return []
    out: list[Envelope] = []
    for part in parts:
        if isinstance(part, str) and part.strip():
            kind = OWN_SOURCE_KIND if part.startswith(OWN_HEADERS) else HOOK_CONTEXT_KIND
            out.append(("user/message", _message("user", part, kind)))
    return out


def claude_envelopes(entry: Mapping[str, Any], *, awaiting: bool = False) -> list[Envelope]:
    """The DSH `(type, data)` pairs one Claude Code transcript line stands for.

    `awaiting`: a hook already recorded the start of a compaction whose boundary line
    has not been read yet, so the next boundary is that compaction's end.
    """
    kind = entry.get("type")
    message = entry.get("message")
    content = message.get("content") if isinstance(message, Mapping) else None
    if kind == "system" and entry.get("subtype") == "compact_boundary":
        marker = "compaction/end" if awaiting else "compaction/start"
        return [(marker, {"compactionId": str(entry.get("uuid", ""))})]
    if kind == "user":
        return _user(entry, content)
    if kind == "assistant" and isinstance(message, Mapping) and isinstance(content, list):
        return _assistant(message, content)
    attachment = entry.get("attachment")
    if kind != "attachment" or not isinstance(attachment, Mapping):
        return []
    return _hook_context(attachment) if attachment.get("type") == HOOK_CONTEXT else []


def is_boundary(entry: Any) -> bool:
    """Whether a parsed transcript line is a compaction boundary."""
    return (
        isinstance(entry, Mapping)
        and entry.get("type") == "system"
        and entry.get("subtype") == "compact_boundary"
    )
