"""Turning query terms into safe FTS5 and LIKE clauses over the trigram index."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from lcm_core.text.tokens import MIN_INDEXED_TERM_CHARS, search_terms


@dataclass(frozen=True, slots=True)
class SplitTerms:
    """Query terms divided by how the store can serve them."""

    fts: tuple[str, ...]
    like: tuple[str, ...]


def split_terms(terms: Sequence[str]) -> SplitTerms:
    """Clean terms, then divide them: the trigram index serves only 3+ characters."""
    cleaned = search_terms(terms)
    return SplitTerms(
        tuple(t for t in cleaned if len(t) >= MIN_INDEXED_TERM_CHARS),
        tuple(t for t in cleaned if len(t) < MIN_INDEXED_TERM_CHARS),
    )


def fts_phrase(term: str) -> str:
    """One FTS5 string literal: inside double quotes every character but `"` is literal."""
    return '"' + term.replace('"', '""') + '"'


def like_pattern(term: str) -> str:
    """A LIKE pattern matching `term` literally anywhere (escape character `\\`)."""
    escaped = term.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return f"%{escaped}%"


# SQLite refuses LIKE patterns over 50 000 bytes; longer terms are matched with instr().
LIKE_MAX_CHARS = 10_000
_ASCII_LOWER = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")


def contains_clause(column: str, term: str) -> tuple[str, str]:
    """A SQL test that `column` contains `term` literally, ASCII case-insensitive, and its parameter."""
    if len(term) <= LIKE_MAX_CHARS:
        return f"{column} LIKE ? ESCAPE '\\'", like_pattern(term)
    # lower() folds ASCII only, as LIKE does, so the two paths agree.
    return f"instr(lower({column}), ?) > 0", term.translate(_ASCII_LOWER)
