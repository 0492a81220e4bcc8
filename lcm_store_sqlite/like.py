"""How SQLite's LIKE finds short terms: its patterns, FTS5 string literals, and what one
search reads (`Searched`). LIKE folds ASCII letters only; every path that uses it
asks for the other case variants itself (`search.case_variants`) and checks each row
against the core's rule afterwards."""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

# Terms joined in one OR of LIKEs (more go to further statements): SQLite caps an
# expression's depth at 1 000.
TERMS_PER_QUERY = 200
_ASCII_LOWER = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")


def fts_phrase(term: str) -> str:
    """One FTS5 string literal: inside double quotes every character but `"` is literal."""
    return '"' + term.replace('"', '""') + '"'


def like_pattern(term: str) -> str:
    """A LIKE pattern matching `term` literally anywhere (escape character `\\`)."""
    escaped = term.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return f"%{escaped}%"


def ascii_fold(text: str) -> str:
    """Lower-case ASCII letters only, as SQLite's LIKE and lower() compare them."""
    return text.translate(_ASCII_LOWER)


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
        test = f"t.{self.column} LIKE ? ESCAPE '\\'"
        return f"({' OR '.join([test] * len(terms))})", [like_pattern(t) for t in terms]
