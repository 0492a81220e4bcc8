"""The part of a long turn worth quoting: the sentences that match the question.

A block of 3 000 tokens holds a few dozen turns when each is quoted whole, and a long
turn usually answers with one or two of its sentences. A turn longer than
`assembly.snippetChars` is cut into sentences (after `.` `!` `?` followed by a space,
after `。` `！` `？` `；`, and at line breaks); the sentences holding an exact term of
the question (a number, path, quoted phrase) come first, then those holding the most
weight of its relevance terms, as many as fit, shown in their own order with `…` where
text was left out. A turn no sentence of which matches (a neighbour quoted for context)
is quoted from its start. The cut depends only on the text and the question, so the
block stays the same bytes for the same state.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Final

from lcm_core.text.lazy_regex import lazy_compile
from lcm_core.text.relevance import relevance_tokens

ELLIPSIS: Final = "…"
# Where a sentence ends: Latin end marks before a space, CJK end marks, line breaks.
_BREAK_RE: Final = lazy_compile(r"(?<=[.!?])\s+|(?<=[。！？；])|\n+")


def sentence_spans(text: str) -> list[tuple[int, int]]:
    """(start, end) of each non-blank sentence of `text`, in order."""
    spans: list[tuple[int, int]] = []
    start = 0
    for match in _BREAK_RE.finditer(text):
        if match.start() > start and text[start : match.start()].strip():
            spans.append((start, match.start()))
        start = max(start, match.end())
    if start < len(text) and text[start:].strip():
        spans.append((start, len(text)))
    return spans


def snippet(
    text: str, terms: Mapping[str, float], max_chars: int, exact: Sequence[str] = ()
) -> str:
    """`text` when it is short, else its best-matching sentences within `max_chars`."""
    if len(text) <= max_chars or max_chars <= 0:
        return text
    spans = sentence_spans(text)
    wanted = [term.casefold() for term in exact if term]
    scored: list[tuple[float, int, tuple[int, int]]] = []
    for index, (start, end) in enumerate(spans):
        piece = text[start:end]
        weight = sum(terms.get(token, 0.0) for token in set(relevance_tokens(piece)))
        folded = piece.casefold()
        exact_hits = sum(1 for term in wanted if term in folded)
        if weight > 0.0 or exact_hits:
            scored.append((exact_hits * 1000.0 + weight, index, (start, end)))
    if not scored:
        return text[:max_chars].rstrip() + ELLIPSIS
    scored.sort(key=lambda entry: (-entry[0], entry[1]))
    chosen: list[tuple[int, int]] = []
    used = 0
    for _, _, (start, end) in scored:
        length = end - start + (len(ELLIPSIS) + 2 if chosen else 0)
        if chosen and used + length > max_chars:
            continue
        chosen.append((start, end))
        used += length
    chosen.sort()
    parts: list[str] = []
    previous_end = 0
    for start, end in chosen:
        if start > previous_end and text[previous_end:start].strip():
            parts.append(ELLIPSIS)
        parts.append(text[start:end].strip())
        previous_end = end
    if text[previous_end:].strip():
        parts.append(ELLIPSIS)
    return " ".join(parts)
