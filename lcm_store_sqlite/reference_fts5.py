"""A second frozen reference ranking for `lcm bench retrieval`: SQLite FTS5, as people use it.

Each conversation's raw turns go into an in-memory FTS5 table with the `porter
unicode61` tokenizer (stemmed, case- and accent-folded words); a question becomes an OR
of its words less a fixed list of English stop words, and turns come back by FTS5's own
`ORDER BY rank` (its BM25), earlier turn first on ties. It is what a developer would get
from SQLite's full-text search in ten lines, so it lives beside the SQLite backend and
stays as it is, whatever the ranking work changes. unicode61 does not split CJK runs, so
on Chinese text this reference finds little: that is part of what it shows.
"""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Sequence
from typing import Final

# A common English stop list (articles, pronouns, auxiliaries, prepositions, question
# words), fixed here so the reference never moves with the pipeline's own lists.
_STOP_TEXT: Final = """
a about above after again against all am an and any are as at be because been before
being below between both but by can could did do does doing down during each few for
from further had has have having he her here hers herself him himself his how i if in
into is it its itself just me more most my myself no nor not now of off on once only or
other our ours ourselves out over own same she should so some such than that the their
theirs them themselves then there these they this those through to too under until up
very was we were what when where which while who whom why will with would you your
yours yourself yourselves
"""
STOP_WORDS: Final = frozenset(_STOP_TEXT.split())
_WORD_RE: Final = re.compile(r"\w+")


def query_words(question: str) -> list[str]:
    """The question's distinct words, lower-cased, stop words left out, as FTS5 strings."""
    words = dict.fromkeys(w.casefold() for w in _WORD_RE.findall(question))
    return [w for w in words if w not in STOP_WORDS and not w.startswith("_")]


class FTS5Reference:
    """The reference callable: (turn texts, question, k) -> indices of the k best turns."""

    name: Final = "fts5 porter unicode61, English stop words removed, ORDER BY rank"

    def __init__(self) -> None:
        self._texts: Sequence[str] | None = None
        self._db: sqlite3.Connection | None = None

    def _index(self, texts: Sequence[str]) -> sqlite3.Connection:
        if self._db is None or self._texts is not texts:
            if self._db is not None:
                self._db.close()
            db = sqlite3.connect(":memory:")
            db.execute("CREATE VIRTUAL TABLE turns USING fts5(text, tokenize='porter unicode61')")
            db.executemany(
                "INSERT INTO turns(rowid, text) VALUES (?, ?)",
                ((i + 1, text) for i, text in enumerate(texts)),
            )
            self._texts, self._db = texts, db
        return self._db

    def __call__(self, texts: Sequence[str], question: str, k: int) -> list[int]:
        words = query_words(question)
        if not words or k <= 0:
            return []
        match = " OR ".join('"' + w.replace('"', '""') + '"' for w in words)
        rows = self._index(texts).execute(
            "SELECT rowid FROM turns WHERE turns MATCH ? ORDER BY rank, rowid LIMIT ?",
            (match, k),
        )
        return [rowid - 1 for (rowid,) in rows]

    def close(self) -> None:
        if self._db is not None:
            self._db.close()
            self._db = None
