"""A long-lived handle's copy of the sessions it searches, so a step does not re-read them.

A pre-step searches one session's events two or three times and reads some of them by
seq; a sidecar does that at every step of a session that only grows. Each session a
search touches is copied once (its rows) and then followed:

- rows added since (by any connection) have larger rowids than any seen, and are
  appended by one `rowid > ?` read (rowids only grow: events are never deleted
  except by a purge, which clears the copy);
- any commit by another connection changes `PRAGMA data_version`, and then every copy
  is dropped and read afresh (a forget or purge there rewrites rows in place);
- this handle's own in-place rewrites (forget, purge, vacuum) call `invalidate`.

Copies are bounded in rows and in characters of text (`CACHE_*`). Inside an open
transaction the copy is not used (rows it would read may be rolled back). A search over
the copy is the same scan as the SQL one (`search.SearchMixin`): the same matching rule,
the same scorer, the same order, so results are identical.
"""

from __future__ import annotations

import sqlite3
from bisect import bisect_right
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from lcm_core.store.queries import SCOPE_COUNT_MAX, split_terms
from lcm_core.text.tokens import best_matches
from lcm_store_sqlite.like import ascii_fold

# A session with more rows than this is not copied (its search is the SQL one).
CACHE_ROWS_MAX = 100_000
# Rows and characters of text held across sessions; the least recently searched session
# goes first. Text is held twice (the rows, and the folded blocks searched), and tool
# output can be long: a session whose text alone passes the bound is not copied.
CACHE_TOTAL_ROWS = 200_000
CACHE_TOTAL_CHARS = 32_000_000

# Events per block of joined text: a growing session rebuilds only its last block.
_BLOCK = 1024
# Joins a block's texts. SQLite's LIKE reads a text only up to its first NUL, so each
# text is cut there too, and no text can then hold the separator.
_SEP = "\x00"


@dataclass(slots=True)
class _Block:
    """Up to `_BLOCK` consecutive events' texts joined and folded, and where each starts."""

    first: int  # index of the block's first event in the session
    joined: str = ""
    starts: list[int] = field(default_factory=list)


@dataclass(slots=True)
class CachedSession:
    """One session's event rows in rowid order (the `rowid AS _rowid, *` shape of a search)."""

    max_rowid: int
    changes: int = -1  # the connection's total_changes when rows were last looked for
    chars: int = 0  # characters of text in the rows
    rows: list[sqlite3.Row] = field(default_factory=list)
    types: list[str] = field(default_factory=list)
    index: dict[int, int] = field(default_factory=dict)  # seq -> position
    _blocks: list[_Block] = field(default_factory=list)

    def add(self, row: sqlite3.Row) -> None:
        self.index[int(row["seq"])] = len(self.rows)
        self.chars += len(row["text"])
        self.rows.append(row)
        self.types.append(str(row["type"]))

    def search(
        self, terms: Sequence[str], types: Sequence[str] | None, limit: int
    ) -> list[tuple[sqlite3.Row, float]]:
        """The SQL scan's answer (`search.SearchMixin._search`): rows holding any term,
        scored over the matches, the best `limit` and any tied with the last."""
        split = split_terms(terms)
        all_terms = split.indexed + split.short
        if limit <= 0 or not all_terms:
            return []
        found = self.matching(all_terms, types)
        scope = min(len(self.rows), SCOPE_COUNT_MAX)
        texts = [self.rows[i]["text"] for i in found]
        best = best_matches(texts, all_terms, scope, limit)
        return [(self.rows[found[i]], score) for i, score in best]

    def matching(self, terms: Sequence[str], types: Sequence[str] | None) -> list[int]:
        """Positions of the events (of `types`) whose text contains any term, ASCII
        case-insensitive, in rowid order."""
        keys = [ascii_fold(term) for term in terms]
        found: set[int] = set()
        for key in keys:
            if not key or _SEP in key:
                continue  # the store's term cleaning removes NUL: never met in practice
            for block in self._current_blocks():
                self._find(block, key, found)
        if types is None:
            return sorted(found)
        wanted = frozenset(types)
        return [i for i in sorted(found) if self.types[i] in wanted]

    @staticmethod
    def _find(block: _Block, key: str, found: set[int]) -> None:
        """Add the index of every text of `block` holding `key` (one search per hit)."""
        joined, starts = block.joined, block.starts
        position = joined.find(key)
        while position >= 0:
            local = bisect_right(starts, position) - 1
            found.add(block.first + local)
            if local + 1 >= len(starts):
                return
            position = joined.find(key, starts[local + 1])

    def _current_blocks(self) -> list[_Block]:
        """The blocks, the last one rebuilt when events were added since it was joined."""
        size = len(self.rows)
        covered = self._blocks[-1].first + len(self._blocks[-1].starts) if self._blocks else 0
        if covered < size:
            if self._blocks and len(self._blocks[-1].starts) < _BLOCK:
                self._blocks.pop()
            first = self._blocks[-1].first + _BLOCK if self._blocks else 0
            while first < size:
                texts = [
                    row["text"].partition(_SEP)[0] for row in self.rows[first : first + _BLOCK]
                ]
                starts, offset = [], 0
                for text in texts:
                    starts.append(offset)
                    offset += len(text) + 1
                # One fold per block: folding keeps every length, so the starts hold.
                self._blocks.append(_Block(first, ascii_fold(_SEP.join(texts)), starts))
                first += _BLOCK
        return self._blocks


class SessionCache:
    """Sessions copied from one connection, kept current by rowid and `data_version`."""

    def __init__(self, *, rows_max: int) -> None:
        self._rows_max = min(rows_max, CACHE_ROWS_MAX)
        self._sessions: OrderedDict[str, CachedSession] = OrderedDict()
        self._version: int | None = None
        self._held = 0  # rows
        self._held_chars = 0
        # Sessions found too big to copy: rows only grow until a purge (`invalidate`).
        self._too_big: set[str] = set()

    def invalidate(self) -> None:
        """Drop every copy: this handle rewrote rows in place (forget, purge, vacuum)."""
        self._sessions.clear()
        self._held = self._held_chars = 0
        self._too_big.clear()

    def session(
        self, raw: sqlite3.Connection, session_id: str, *, read: bool = True
    ) -> CachedSession | None:
        """The session's current copy, or None when it is not kept (too big, in a
        transaction); without `read`, only a session already copied (reads by seq of
        other sessions must not push out the one being searched)."""
        if self._rows_max <= 0 or raw.in_transaction or session_id in self._too_big:
            return None
        version = int(raw.execute("PRAGMA data_version").fetchone()[0])
        if version != self._version:
            self.invalidate()
            self._version = version
        entry = self._sessions.get(session_id)
        if entry is None and not read:
            return None
        changes = raw.total_changes
        if entry is not None and entry.changes == changes:
            # No commit elsewhere (data_version) and no write here since the last look.
            self._sessions.move_to_end(session_id)
            return entry
        top = int(raw.execute("SELECT MAX(rowid) FROM events").fetchone()[0] or 0)
        if entry is None:
            entry = self._read(raw, session_id, top)
            if entry is None:
                return None
        elif top > entry.max_rowid and not self._extend(raw, session_id, entry, top):
            return None
        entry.changes = changes
        self._sessions.move_to_end(session_id)
        while len(self._sessions) > 1 and (
            self._held > CACHE_TOTAL_ROWS or self._held_chars > CACHE_TOTAL_CHARS
        ):
            _, oldest = self._sessions.popitem(last=False)
            self._held -= len(oldest.rows)
            self._held_chars -= oldest.chars
        return entry

    def _read(self, raw: sqlite3.Connection, session_id: str, top: int) -> CachedSession | None:
        count = raw.execute(
            "SELECT COUNT(*) FROM (SELECT 1 FROM events WHERE session_id = ? LIMIT ?)",
            (session_id, self._rows_max + 1),
        ).fetchone()[0]
        if count > self._rows_max:
            self._too_big.add(session_id)
            return None
        found = raw.execute(
            "SELECT rowid AS _rowid, * FROM events WHERE session_id = ? AND rowid <= ?",
            (session_id, top),
        ).fetchall()
        entry = CachedSession(top)
        # Sorted here, not in SQL: `ORDER BY rowid` walks the whole table instead of the
        # session's index (see `search.SearchMixin._like_rows`).
        for row in sorted(found, key=_rowid):
            entry.add(row)
        if entry.chars > CACHE_TOTAL_CHARS:
            self._too_big.add(session_id)
            return None
        self._sessions[session_id] = entry
        self._held += len(entry.rows)
        self._held_chars += entry.chars
        return entry

    def _extend(
        self, raw: sqlite3.Connection, session_id: str, entry: CachedSession, top: int
    ) -> bool:
        found = raw.execute(
            "SELECT rowid AS _rowid, * FROM events WHERE rowid > ? AND rowid <= ? "
            "AND session_id = ?",
            (entry.max_rowid, top, session_id),
        ).fetchall()
        entry.max_rowid = top
        if not found:
            return True
        before = entry.chars
        for row in sorted(found, key=_rowid):
            entry.add(row)
        self._held += len(found)
        self._held_chars += entry.chars - before
        if len(entry.rows) > self._rows_max or entry.chars > CACHE_TOTAL_CHARS:
            self._too_big.add(session_id)
            del self._sessions[session_id]
            self._held -= len(entry.rows)
            self._held_chars -= entry.chars
            return False
        return True


def _rowid(row: Any) -> int:
    return int(row["_rowid"])
