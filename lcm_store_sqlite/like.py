"""How SQLite matches text: LIKE's rules (every path that stands in for a LIKE matches the
same way), FTS5 string literals, and what one search reads (`Searched`)."""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any


def fts_phrase(term: str) -> str:
    """One FTS5 string literal: inside double quotes every character but `"` is literal."""
    return '"' + term.replace('"', '""') + '"'


def like_pattern(term: str) -> str:
    """A LIKE pattern matching `term` literally anywhere (escape character `\\`)."""
    escaped = term.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return f"%{escaped}%"


# Terms joined in one OR of LIKEs (more go to further statements): SQLite caps an
# expression's depth at 1 000.
TERMS_PER_QUERY = 200
# SQLite refuses LIKE patterns over 50 000 bytes; longer terms are matched with instr().
LIKE_MAX_CHARS = 10_000
_ASCII_LOWER = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")


def ascii_fold(text: str) -> str:
    """Lower-case ASCII letters only, as SQLite's LIKE and lower() compare them."""
    return text.translate(_ASCII_LOWER)


def contains_clause(column: str, term: str) -> tuple[str, str]:
    """A SQL test that `column` contains `term` literally, ASCII case-insensitive, and its parameter."""
    if len(term) <= LIKE_MAX_CHARS:
        return f"{column} LIKE ? ESCAPE '\\'", like_pattern(term)
    # lower() folds ASCII only, as LIKE does, so the two paths agree.
    return f"instr(lower({column}), ?) > 0", ascii_fold(term)


def as_like_reads(text: str) -> str:
    """The text LIKE compares a term with: up to its first NUL, ASCII letters folded."""
    return ascii_fold(text.partition("\x00")[0])


@dataclass(frozen=True, slots=True)
class Searched:
    """What one search reads: the connection, the content table (alias `t.`), its FTS5
    index and text column, and the filters (`where`: " AND ..." clauses on `t.`, with
    their `params`)."""

    raw: sqlite3.Connection
    table: str
    fts_table: str
    column: str
    where: str
    params: Sequence[Any]

    def any_of(self, terms: Sequence[str]) -> tuple[str, list[str]]:
        """The test that the text contains any of `terms` (one OR of LIKEs), and its
        parameters; at most `TERMS_PER_QUERY` terms."""
        clauses, patterns = zip(
            *(contains_clause(f"t.{self.column}", term) for term in terms), strict=True
        )
        return f"({' OR '.join(clauses)})", list(patterns)
