"""Capping a hook's `additionalContext`: whole entries, most important first, within a size.

The block arrives rendered: a header, then `## ` sections in the order the assembler
ranks them (task state, resident set, rules, memory items, raw evidence), each holding
`- ` entries with their indented continuation lines. Cutting keeps the header, walks the
sections in that order and keeps every entry that still fits, so a cut never splits a
label or a quote; a section left without entries loses its heading too.
"""

from __future__ import annotations

from dataclasses import dataclass, field

SECTION_MARK = "## "
ENTRY_MARK = "- "


@dataclass(slots=True)
class _Section:
    head: list[str]
    entries: list[str] = field(default_factory=list)


def _parse(text: str) -> tuple[str, list[_Section]]:
    """The header text and the sections, each entry joined with its continuation lines."""
    header: list[str] = []
    sections: list[_Section] = []
    for line in text.split("\n"):
        if line.startswith(SECTION_MARK):
            sections.append(_Section([line]))
        elif not sections:
            header.append(line)
        elif line.startswith(ENTRY_MARK):
            sections[-1].entries.append(line)
        elif sections[-1].entries:
            sections[-1].entries[-1] += "\n" + line
        else:
            sections[-1].head.append(line)  # a note under the heading, before any entry
    return "\n".join(header), sections


def _marker(header: str, dropped: int) -> str:
    if "长对话记忆" in header:
        return f"（另有 {dropped} 条因长度上限 hooks.maxContextChars 省略）"
    return f"({dropped} more entries left out to fit hooks.maxContextChars)"


def cap_block(text: str, max_chars: int) -> str:
    """`text` if it fits in `max_chars`, else its most important whole entries that do."""
    if len(text) <= max_chars:
        return text
    header, sections = _parse(text)
    total = sum(len(s.entries) for s in sections)
    # Room for the note saying how many entries were cut (its widest form).
    budget = max_chars - len(_marker(header, total)) - 2
    parts = [header.rstrip("\n")]
    used = len(parts[0])
    kept = 0
    for section in sections:
        head = "\n".join(section.head).rstrip("\n")
        shown = False
        for entry in section.entries:
            body = entry.rstrip("\n")
            cost = len(body) + 1 + (0 if shown else len(head) + 2)
            if used + cost > budget:
                continue  # a later, shorter entry may still fit; order is kept
            if not shown:
                parts.append("\n\n" + head)
                shown = True
            parts.append("\n" + body)
            used += cost
            kept += 1
    if used > budget:
        return ""  # not even the header fits: better no context than a broken one
    parts.append("\n\n" + _marker(header, total - kept))
    return "".join(parts)
