"""Reading README.md and docs/*.md for the docs tests: pages, code, links, headings.

The docs tests check what the pages claim against the code (commands, options, files,
settings, outputs). This module only finds the claims; it knows nothing about lcm.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Final

ROOT: Final = Path(__file__).resolve().parents[2]
README: Final = ROOT / "README.md"
DOCS: Final = ROOT / "docs"

_FENCE: Final = re.compile(r"^```(\w*)[^\n]*\n(.*?)^```", re.MULTILINE | re.DOTALL)
_SPAN: Final = re.compile(r"(?<!`)`([^`]+)`(?!`)")
_LINK: Final = re.compile(r"\[([^\]\n]*)\]\(([^)\s]+)\)")
_HEADING: Final = re.compile(r"^#{1,6}\s+(.+?)\s*#*\s*$", re.MULTILINE)
_SHELLS: Final = frozenset({"", "bash", "sh", "shell", "console"})


@dataclass(frozen=True, slots=True)
class Claim:
    """One piece of a page: its text and where it is (page and line)."""

    page: Path
    line: int
    text: str

    def where(self) -> str:
        return f"{self.page.relative_to(ROOT)}:{self.line}"


def pages() -> list[Path]:
    """README.md and every page under docs/, in a stable order."""
    return [README, *sorted(DOCS.glob("*.md"))]


def _line_of(text: str, offset: int) -> int:
    return text.count("\n", 0, offset) + 1


def _without_fences(text: str) -> str:
    """The page with its fenced blocks blanked (line numbers kept)."""
    return _FENCE.sub(lambda m: "\n" * m.group(0).count("\n"), text)


def code_spans(page: Path) -> Iterator[Claim]:
    """Every inline `code` span outside fenced blocks, with markdown's `\\|` read as `|`."""
    text = page.read_text(encoding="utf-8")
    prose = _without_fences(text)
    for match in _SPAN.finditer(prose):
        if "\n\n" not in match.group(1):  # a span may wrap once, never across paragraphs
            text = " ".join(match.group(1).replace("\\|", "|").split("\n"))
            yield Claim(page, _line_of(prose, match.start()), text)


def fenced_blocks(page: Path, languages: frozenset[str] | None = None) -> Iterator[Claim]:
    """Every fenced block (of the given languages), its body as the text."""
    text = page.read_text(encoding="utf-8")
    for match in _FENCE.finditer(text):
        if languages is None or match.group(1) in languages:
            yield Claim(page, _line_of(text, match.start(2)), match.group(2))


def split_commands(line: str) -> list[str]:
    """The commands of one shell line: a comment cut, split at `&&`, `;` and ` | `, each
    without its redirection (`> FILE`)."""
    line = re.sub(r"(^|\s)#.*$", "", line).strip()
    pieces = re.split(r"\s*(?:&&|;|\s\|\|?\s)\s*", line)
    return [p for p in (re.split(r"\s\d?>", piece)[0].strip() for piece in pieces) if p]


def shell_lines(page: Path) -> Iterator[Claim]:
    """Each command of the page's shell blocks, with the line it is on."""
    for block in fenced_blocks(page, _SHELLS):
        for number, raw in enumerate(block.text.splitlines()):
            for piece in split_commands(raw):
                yield Claim(page, block.line + number, piece)


def words(command: str) -> list[str]:
    """A command split as a shell would; unbalanced quotes fall back to spaces."""
    try:
        return shlex.split(command)
    except ValueError:
        return command.split()


def links(page: Path) -> Iterator[Claim]:
    """The target of every markdown link outside fenced blocks."""
    prose = _without_fences(page.read_text(encoding="utf-8"))
    for match in _LINK.finditer(prose):
        yield Claim(page, _line_of(prose, match.start()), match.group(2))


def slug(heading: str) -> str:
    """The anchor GitHub gives a heading: lower case, punctuation out, spaces as hyphens."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading).replace("`", "")
    text = re.sub(r"[^\w\- ]", "", text.strip().lower())
    return text.replace(" ", "-")


def anchors(page: Path) -> set[str]:
    """The anchors of a page's headings (a repeated heading gets `-1`, `-2`, ...)."""
    seen: dict[str, int] = {}
    found: set[str] = set()
    for match in _HEADING.finditer(_without_fences(page.read_text(encoding="utf-8"))):
        base = slug(match.group(1))
        count = seen.get(base, 0)
        seen[base] = count + 1
        found.add(base if count == 0 else f"{base}-{count}")
    return found


def marked_block(page: Path, name: str) -> str:
    """The text between `<!-- NAME...-->` and `<!-- /NAME -->` on a page."""
    text = page.read_text(encoding="utf-8")
    match = re.search(
        rf"<!-- {re.escape(name)}\b[^>]*-->\n(.*?)<!-- /{re.escape(name)} -->", text, re.DOTALL
    )
    assert match, f"{page.relative_to(ROOT)} has no <!-- {name} --> block"
    return match.group(1)


def fenced_body(markdown: str) -> str:
    """The body of the first fenced block in some markdown text."""
    match = _FENCE.search(markdown)
    assert match, "no fenced block"
    return match.group(2)


def table_cells(markdown: str, column: int = 0) -> list[str]:
    """The cells of one column of the markdown table(s) in `markdown`, header row left out."""
    cells: list[str] = []
    rows = [line for line in markdown.splitlines() if line.startswith("|")]
    for row in rows[2:]:
        escaped = row.strip().strip("|").replace("\\|", "\x00")
        parts = [part.strip().replace("\x00", "|") for part in escaped.split("|")]
        if len(parts) > column and not set(parts[0]) <= {"-", ":", " "}:
            cells.append(parts[column])
    return cells


def unquote(cell: str) -> str:
    """A table cell's text without its backticks."""
    return cell.strip().strip("`")
