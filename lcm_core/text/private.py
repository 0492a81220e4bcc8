"""Hide what the user marked private: `<private>...</private>` spans and configured patterns.

The tags are matched case-insensitively, with optional spaces inside the brackets
(`<private>`, `< PRIVATE >`, `</private>`), and nest: text stays hidden until every
open tag is closed. An open tag that is never closed hides everything after it to the
end of the text, because the safer reading of a forgotten `</private>` is that the
rest was meant to be private too. A stray closing tag outside any span is left as it
is. Each hidden span (tags included) becomes one `PLACEHOLDER`, so the stored text
still shows that something was withheld, and where.

Extra patterns are regular expressions a user configures (`capture.privatePatterns`);
each match becomes the placeholder too. Everything here is pure and deterministic.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from functools import lru_cache
from typing import Final

from lcm_core.text.lazy_regex import lazy_compile

PLACEHOLDER: Final = "[private]"
_TAG: Final = lazy_compile(r"<\s*(/?)\s*private\s*>", re.IGNORECASE)


def hide_tagged(text: str) -> str:
    """The text with every `<private>` span (nested, or unclosed to the end) replaced."""
    if "<" not in text or _TAG.search(text) is None:
        return text
    out: list[str] = []
    depth = 0
    cursor = 0
    for match in _TAG.finditer(text):
        closing = match.group(1) == "/"
        if depth == 0:
            if closing:
                continue  # a stray `</private>` outside a span: not ours to touch
            out.append(text[cursor : match.start()])
            out.append(PLACEHOLDER)
            depth = 1
        elif closing:
            depth -= 1
        else:
            depth += 1
        if depth == 0:
            cursor = match.end()
    if depth == 0:
        out.append(text[cursor:])
    return "".join(out)


def compile_patterns(patterns: Iterable[object]) -> tuple[tuple[re.Pattern[str], ...], list[str]]:
    """The usable patterns, compiled, and one problem line per pattern left out."""
    compiled: list[re.Pattern[str]] = []
    problems: list[str] = []
    for index, pattern in enumerate(patterns):
        if not isinstance(pattern, str) or not pattern:
            problems.append(f"pattern {index} is not a non-empty string: {pattern!r}")
            continue
        try:
            regex = re.compile(pattern)
        except re.error as exc:
            problems.append(
                f"pattern {index} {pattern!r} is not a valid regular expression ({exc})"
            )
            continue
        if regex.search("") is not None:
            # A pattern that matches nothing-at-all would put a placeholder between every character.
            problems.append(f"pattern {index} {pattern!r} matches the empty string")
            continue
        compiled.append(regex)
    return tuple(compiled), problems


@lru_cache(maxsize=32)
def _compiled(patterns: tuple[str, ...]) -> tuple[re.Pattern[str], ...]:
    return compile_patterns(patterns)[0]


def hide_private(text: str, patterns: Sequence[str] = ()) -> str:
    """The text with `<private>` spans, then every match of `patterns`, replaced by the placeholder."""
    if not text:
        return text
    hidden = hide_tagged(text)
    for regex in _compiled(tuple(patterns)):
        hidden = regex.sub(PLACEHOLDER, hidden)
    return hidden
