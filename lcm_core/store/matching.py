"""The one search rule every store follows: how text folds, what matches, what a scope yields.

- **Folding.** Text and terms compare after Unicode `str.casefold`, on every backend:
  `ÉTÉ` matches `été`, `Straße` matches `strasse`, `İ` folds to `i` plus a combining dot
  (so `İstanbul` matches `i̇stanbul`, not `istanbul`), and the dotless `ı` stays a letter
  of its own. Accents are kept; CJK has no case and matches as written.
- **A match.** A row matches a term when the term's casefold is a substring of the row's
  text's casefold. Terms are cleaned first (`clean_terms`: normalised, blanks dropped,
  deduped by casefold), long ones (`MIN_INDEXED_TERM_CHARS`+) ahead of short ones, the
  order scores sum in.
- **Which rows a scope yields.** A search of one session whose rows (after the status,
  kind or type filters) number at most `SCAN_ROWS_MAX` scores every matching row. A
  larger scope (no session, or a bigger one) may score candidates instead, at least:
  for each term of `MIN_INDEXED_TERM_CHARS` or more characters, its
  `candidates_per_term` newest matching rows, and for the shorter terms together, the
  `candidate_pool` newest rows matching any of them ("newest": last written; a backend
  that keeps no write order says which order it uses). A backend may score more rows
  (DuckDB and the reference store score every match), never fewer.

Scores are the core's (`lcm_core.text.tokens.best_matches`) over the rows a scope
yields, so every store ranks alike.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Final

from lcm_core.text.tokens import MIN_INDEXED_TERM_CHARS, normalized_terms

# A session-scoped search over at most this many rows (after its filters) is exact.
SCAN_ROWS_MAX: Final = 100_000
# How far the scope count (the N of BM25) counts a big scope, on every backend.
SCOPE_COUNT_MAX: Final = 1_000_000
# Past this many long terms, each brings fewer candidates (the pool is shared).
FULL_TERMS: Final = 8
# The least a large scope's candidate list holds per long term, and for the short ones.
MIN_CANDIDATES: Final = 50


@dataclass(frozen=True, slots=True)
class SplitTerms:
    """Cleaned query terms divided by what a trigram index can serve, long ones first;
    `ordered` is every term, long ones first: the order scores are summed in."""

    indexed: tuple[str, ...]
    short: tuple[str, ...]
    ordered: tuple[str, ...]


def split_terms(terms: Sequence[object]) -> SplitTerms:
    """Clean terms (`normalized_terms`), then divide them: a trigram index serves 3+ characters."""
    cleaned = normalized_terms(terms)
    indexed = tuple(t for t in cleaned if len(t) >= MIN_INDEXED_TERM_CHARS)
    short = tuple(t for t in cleaned if len(t) < MIN_INDEXED_TERM_CHARS)
    return SplitTerms(indexed, short, indexed + short)


def clean_terms(terms: Sequence[object]) -> tuple[str, ...]:
    """The terms a search matches and scores, in scoring order (long ones first)."""
    return split_terms(terms).ordered


def fold(text: str) -> str:
    """The form text and terms are compared in: Unicode casefold."""
    return text.casefold()


def fold_keys(terms: Iterable[str]) -> list[str]:
    """Each (cleaned) term's casefold, in order."""
    return [term.casefold() for term in terms]


def holds_any(folded: str, keys: Iterable[str]) -> bool:
    """Whether a casefolded text contains any casefolded key: the match rule."""
    return any(key in folded for key in keys)


def matching(texts: Sequence[str], terms: Sequence[str]) -> list[int]:
    """Positions of the texts that match any (cleaned) term, in order."""
    keys = fold_keys(terms)
    return [i for i, text in enumerate(texts) if holds_any(fold(text), keys)]


def candidate_pool(limit: int) -> int:
    """Candidates a large scope yields for the short terms together (and the base per term)."""
    return max(limit * 4, MIN_CANDIDATES)


def candidates_per_term(limit: int, long_terms: int) -> int:
    """Newest matches a large scope yields for each long term: the pool, shared past
    `FULL_TERMS` terms, never under `MIN_CANDIDATES`."""
    return max(MIN_CANDIDATES, candidate_pool(limit) * FULL_TERMS // max(FULL_TERMS, long_terms))
