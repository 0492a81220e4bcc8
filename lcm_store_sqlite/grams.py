"""Two-character index of memory items: the pairs a trigram index cannot serve.

The trigram index answers terms of three or more characters; a two-character term (a
Chinese word, mostly: 预算, 端口, and the bridge's translations of English words) fell
back to LIKE over every item of the file, 70 ms per term at 250 000 items. `item_grams`
holds, for every item, each distinct pair of adjacent characters of its content that
holds a non-ASCII character, as LIKE reads the content (`like.as_like_reads`). A
two-letter ASCII term is left to LIKE: its pairs would be most of every text.

Triggers in plain SQL keep the index exact whoever writes: an inserted or rewritten item
is queued in `item_grams_todo` and a rewritten or removed item's pairs are dropped (a
forgotten item leaves no trace here). Before each commit the store works out the pairs
of up to `DRAIN_PER_COMMIT` queued items. A search takes the items the pairs name plus
every item still queued, and tests each with the LIKE it replaces, so it returns the
same rows the full scan returned.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from typing import Any, Final

from lcm_store_sqlite.like import as_like_reads, contains_clause

GRAM_CHARS: Final = 2
# Queued items indexed per commit: a bulk write by another tool is caught up over a few
# commits instead of stalling one (about 5 ms per 1 000 items).
DRAIN_PER_COMMIT: Final = 2_000


def is_gram_term(term: str) -> bool:
    """Whether `item_grams` serves this search term: two characters, one of them non-ASCII."""
    return len(term) == GRAM_CHARS and not term.isascii()


def grams_of(content: str) -> list[str]:
    """The distinct non-ASCII character pairs of a text as LIKE reads it, sorted."""
    text = as_like_reads(content)
    if text.isascii():
        return []
    pairs = {text[i : i + GRAM_CHARS] for i in range(len(text) - 1)}
    return sorted(pair for pair in pairs if not pair.isascii())


def drain(raw: sqlite3.Connection, limit: int | None = DRAIN_PER_COMMIT) -> int:
    """Index up to `limit` queued items (all with None) inside the caller's transaction."""
    sql = (
        "SELECT q.item, m.content FROM item_grams_todo AS q "
        "LEFT JOIN memory_items AS m ON m.rowid = q.item ORDER BY q.item"
    )
    queued = raw.execute(sql + " LIMIT ?", (limit,)) if limit is not None else raw.execute(sql)
    rows = queued.fetchall()
    if not rows:
        return 0
    raw.executemany(
        "INSERT OR IGNORE INTO item_grams (gram, item) VALUES (?, ?)",
        [
            (gram, item)
            for item, content in rows
            if content is not None
            for gram in grams_of(content)
        ],
    )
    raw.execute("DELETE FROM item_grams_todo WHERE item <= ?", (rows[-1][0],))
    return len(rows)


def gram_rows(
    raw: sqlite3.Connection, terms: Sequence[str], where: str, params: Sequence[Any], limit: int
) -> dict[int, Any]:
    """Items containing any of `terms` (all served by the index), lowest rowid first.

    The rows `SearchMixin._like_rows` finds with the same limit: the candidates are the
    indexed and the queued items, and each is tested with the same LIKE.
    """
    keys = sorted({as_like_reads(term) for term in terms})
    clauses, patterns = zip(*(contains_clause("t.content", term) for term in terms), strict=True)
    sql = (
        "SELECT t.rowid AS _rowid, t.* FROM memory_items AS t WHERE t.rowid IN "
        f"(SELECT item FROM item_grams WHERE gram IN ({','.join('?' * len(keys))}) "
        "UNION SELECT item FROM item_grams_todo) "
        f"AND ({' OR '.join(clauses)}){where} ORDER BY t.rowid LIMIT ?"
    )
    return {row[0]: row for row in raw.execute(sql, (*keys, *patterns, *params, limit))}
