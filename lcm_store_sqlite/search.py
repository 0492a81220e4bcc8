"""Turning query terms into safe FTS5 and LIKE clauses over the trigram index."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from lcm_core.text import normalize_text

# The trigram tokenizer indexes runs of three characters, so a shorter term can only
# be found by scanning with LIKE.
MIN_FTS_CHARS = 3


@dataclass(frozen=True, slots=True)
class SplitTerms:
    """Query terms divided by how the store can serve them."""

    fts: tuple[str, ...]
    like: tuple[str, ...]


def split_terms(terms: Sequence[str]) -> SplitTerms:
    """Clean, dedupe and divide terms into trigram-searchable and LIKE-only ones."""
    fts: list[str] = []
    like: list[str] = []
    seen: set[str] = set()
    for raw in terms:
        if not isinstance(raw, str):
            continue
        term = normalize_text(raw)
        key = term.casefold()
        if not term or key in seen:
            continue
        seen.add(key)
        (fts if len(term) >= MIN_FTS_CHARS else like).append(term)
    return SplitTerms(tuple(fts), tuple(like))


def fts_phrase(term: str) -> str:
    """One FTS5 string literal: inside double quotes every character but `"` is literal."""
    return '"' + term.replace('"', '""') + '"'


def like_pattern(term: str) -> str:
    """A LIKE pattern matching `term` literally anywhere (escape character `\\`)."""
    escaped = term.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return f"%{escaped}%"


def relevance(text: str, terms: Sequence[str], bm25: float) -> float:
    """Distinct terms the text contains, plus bm25 squashed into [0, 1) as a tie-breaker.

    bm25 alone says little in a small session (its IDF is near zero when a term is in
    most rows), while the count of matched terms is meaningful at any size and is the
    same on every backend; bm25 then orders rows that match equally many terms.
    """
    folded = text.casefold()
    matched = sum(1 for term in terms if term.casefold() in folded)
    return matched + bm25 / (1.0 + bm25)
