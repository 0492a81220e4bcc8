"""Two-character search terms through the trigram index, row for row as LIKE finds them.

The trigram index answers terms of three or more characters; a two-character term (a
Chinese word such as 预算 or 端口, the bridge's translations of English words, `py`,
`CI`, `42`) fell back to LIKE over every row of the table: 70 ms per term over 250 000
items. But every occurrence of a pair in a text starts one of the text's trigrams,
except an occurrence that ends the text. So the rows holding a pair are the rows holding
a trigram that the index's vocabulary lists with the pair in front, plus the rows whose
text ends with the pair (schema v4 indexes each text's last two characters,
`tail_expression`). Each candidate is then tested with the LIKE it stands in for.

The vocabulary folds case the way the trigram tokenizer does, LIKE folds ASCII only, so
the index serves a pair of ASCII or caseless characters (Latin, digits, Chinese); a pair
with a cased non-ASCII letter (`éa`) or one of U+FFFD-U+FFFF is still matched with LIKE
over the table (`is_pair_term`). A pair found in most rows is cheaper by LIKE too, which
stops once it holds `limit` rows: the LIKE is tried first over the table's newest
`WINDOW` rows; and a pair the vocabulary follows with more than `VOCABULARY_MAX`
characters is matched by LIKE over the table.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from typing import Any, Final

from lcm_store_sqlite.like import Searched, ascii_fold, fts_phrase

PAIR_CHARS: Final = 2
# Newest rows the LIKE is tried on before the index: about 1.5 ms, and a pair in one row
# of 8 fills a limit of 600 there.
WINDOW: Final = 5_000
# Vocabulary entries joined in one MATCH.
PHRASES_PER_QUERY: Final = 200
_LAST_CHAR: Final = "\U0010ffff"
_READ_AS_REPLACEMENT: Final = frozenset("\ufffd\ufffe\uffff")
# Past this many trigrams in the vocabulary (a pair followed by nearly every character in
# the file) the index saves nothing: the LIKE reads the table.
VOCABULARY_MAX: Final = 20_000


def tail_expression(column: str) -> str:
    """A text's last two characters as LIKE reads them (up to a NUL; `length` stops
    there), ASCII folded (`lower` folds ASCII only): the expression schema v4 indexes."""
    return f"lower(substr({column}, length({column}) - 1, 2))"


def is_pair_term(term: str) -> bool:
    """Whether the index serves this term: two characters, each ASCII or caseless, none
    of U+FFFD-U+FFFF (LIKE and the tokenizer read U+FFFE and U+FFFF as U+FFFD, `substr`
    keeps them: the last-two-characters index would disagree)."""
    return len(term) == PAIR_CHARS and all(
        (c.isascii() or c.lower() == c.upper()) and c not in _READ_AS_REPLACEMENT for c in term
    )


def pair_rows(searched: Searched, terms: Sequence[str], limit: int) -> dict[int, str]:
    """rowid -> text of the newest `limit` rows holding any of `terms` (each `is_pair_term`,
    at most `like.TERMS_PER_QUERY`: one OR of their LIKEs), as `SearchMixin._like_rows`
    finds them."""
    raw, table, column = searched.raw, searched.table, searched.column
    test, patterns = searched.any_of(terms)
    test += searched.where
    params = (*patterns, *searched.params, limit)
    end = raw.execute(f"SELECT MAX(rowid) FROM {table}").fetchone()[0]
    if end is None:
        return {}
    sql = (
        f"SELECT t.rowid, t.{column} FROM {table} AS t WHERE t.rowid > ? AND {test} "
        "ORDER BY t.rowid DESC LIMIT ?"
    )
    newest = raw.execute(sql, (end - WINDOW, *params)).fetchall()
    if len(newest) >= limit:
        return dict(newest)
    keys = sorted({ascii_fold(term) for term in terms})
    found = _vocabulary(raw, searched.fts_table, keys)
    if len(found) > VOCABULARY_MAX:
        sql = (
            f"SELECT t.rowid, t.{column} FROM {table} AS t WHERE {test} "
            "ORDER BY t.rowid DESC LIMIT ?"
        )
        return dict(raw.execute(sql, params))
    marks = ",".join("?" * len(keys))
    sources = [f"SELECT rowid FROM {table} WHERE {tail_expression(column)} IN ({marks})"]
    args: list[Any] = list(keys)
    fts_table = searched.fts_table
    for begin in range(0, len(found), PHRASES_PER_QUERY):
        sources.append(f"SELECT rowid FROM {fts_table} WHERE {fts_table} MATCH ?")
        chunk = found[begin : begin + PHRASES_PER_QUERY]
        args.append(" OR ".join(fts_phrase(t) for t in chunk))
    sql = (
        f"SELECT t.rowid, t.{column} FROM {table} AS t WHERE t.rowid IN "
        f"({' UNION '.join(sources)}) AND {test} ORDER BY t.rowid DESC LIMIT ?"
    )
    return dict(raw.execute(sql, (*args, *params)))


def _vocabulary(raw: sqlite3.Connection, fts_table: str, keys: Sequence[str]) -> list[str]:
    """The index's trigrams that begin with any key (the vocabulary is a temp table)."""
    vocab = f"lcm_vocab_{fts_table}"
    raw.execute(
        f"CREATE VIRTUAL TABLE IF NOT EXISTS temp.{vocab} USING fts5vocab(main, {fts_table}, row)"
    )
    found: list[str] = []
    for key in keys:
        rows = raw.execute(
            f"SELECT term FROM temp.{vocab} WHERE term >= ? AND term <= ?", (key, key + _LAST_CHAR)
        )
        found += [row[0] for row in rows if row[0].startswith(key)]
    return found
