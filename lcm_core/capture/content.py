"""The readable text inside nested message content, collected under a character budget.

Host-neutral: content blocks (`text`, `content`, `summary`, images, tool calls and
results), strings and nested lists, as hosts write them. A face flattens its host's
content with these; capture (`record`) cuts the text at its budget. Nothing here
raises on malformed input; oddities become notes on the sink, reported as repairs.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Final

from lcm_core.text.tokens import normalize_text

# A JS safe integer bound, which also keeps numbers inside SQLite's 64-bit INTEGER.
MAX_SAFE_INT: Final = 2**53 - 1
MAX_LABEL_CHARS: Final = 200
# Flattening stops descending past this depth: deeper structure is garbage, not text.
MAX_DEPTH: Final = 32


@dataclass(slots=True)
class TextSink:
    """Collects text parts from nested content under a character budget."""

    budget: int
    parts: list[str] = field(default_factory=list)
    size: int = 0
    cut: bool = False
    notes: list[str] = field(default_factory=list)

    def add(self, piece: str) -> None:
        if not piece:
            return
        room = self.budget - self.size
        if room <= 0:
            self.cut = True
            return
        if len(piece) > room:
            piece, self.cut = piece[:room], True
        self.parts.append(piece)
        self.size += len(piece) + 1

    def note(self, message: str) -> None:
        if message not in self.notes:
            self.notes.append(message)

    def joined(self) -> str:
        return "\n".join(self.parts)


def label(value: Any, limit: int = MAX_LABEL_CHARS) -> str | None:
    """A short identifier-like string (kind, name, id), normalized; None if not a string."""
    if not isinstance(value, str):
        return None
    # Fast path for the common case: printable ASCII is already NFC and free of control
    # characters and surrogates, so normalizing it would only strip the ends.
    if value.isascii() and value.isprintable() and len(value) <= limit:
        return value.strip() or None
    cleaned = normalize_text(value)[:limit]
    return cleaned or None


def compact_json(value: Any, *, sort_keys: bool = False) -> str:
    """Compact JSON for any value; objects JSON cannot hold become their type name."""
    try:
        return json.dumps(
            value,
            ensure_ascii=False,
            separators=(",", ":"),
            sort_keys=sort_keys,
            default=lambda obj: f"<{type(obj).__name__}>",
        )
    except (ValueError, TypeError, RecursionError):
        # Circular or absurdly deep structures; keys of mixed types under sort_keys.
        return f"<unserializable {type(value).__name__}>"


def arguments_text(value: Any) -> str:
    """Tool-call arguments as compact JSON; a string that is not JSON stays as written."""
    if isinstance(value, str):
        try:
            parsed = json.loads(value)
        except (ValueError, RecursionError):
            return value
        return compact_json(parsed)
    if value is None:
        return ""
    return compact_json(value)


def flatten(value: Any, out: TextSink, depth: int = 0) -> None:
    """Append the readable text inside message content (blocks, strings, nested lists)."""
    if out.cut:
        return
    if depth > MAX_DEPTH:
        out.note("content nested too deep; inner part dropped")
        return
    if isinstance(value, str):
        out.add(value)
    elif isinstance(value, list):
        for item in value:
            flatten(item, out, depth + 1)
    elif isinstance(value, dict):
        _flatten_block(value, out, depth)
    elif value is None:
        return
    elif isinstance(value, bool | int | float):
        out.note(f"non-string text ({type(value).__name__}) stored as JSON")
        out.add(compact_json(value))
    else:
        out.note(f"unsupported value ({type(value).__name__}) dropped")


def _flatten_block(block: dict[str, Any], out: TextSink, depth: int) -> None:
    kind = block.get("type")
    if kind == "tool-call":
        name = label(block.get("name")) or ""
        out.add(f"{name} {arguments_text(block.get('arguments'))}".strip())
    elif kind == "tool-result":
        flatten(block.get("content"), out, depth + 1)
    elif kind == "image":
        # Images carry no text; a marker keeps the position visible in the transcript.
        attachment = block.get("attachment")
        image_name = label(attachment.get("name")) if isinstance(attachment, dict) else None
        out.add(f"[image {image_name}]" if image_name else "[image]")
    elif "text" in block:
        flatten(block["text"], out, depth + 1)
    elif "content" in block:
        flatten(block["content"], out, depth + 1)
    elif "summary" in block:
        flatten(block["summary"], out, depth + 1)
