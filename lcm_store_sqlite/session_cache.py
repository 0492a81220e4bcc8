"""A long-lived handle's copy of the sessions it searches, so a step does not re-read them.

A pre-step searches one session's events two or three times, its memory items once or
twice, and reads some events by seq; a sidecar does that at every step of a session
that only grows. Each session a search touches is copied once per table (its rows) and
then followed:

- rows added since (by any connection) have larger rowids than any seen, and are
  appended by one `rowid > ?` read (rowids only grow: events are never deleted
  except by a purge, which clears the copy);
- any commit by another connection changes `PRAGMA data_version`, and then every copy
  is dropped and read afresh (a forget or purge there rewrites rows in place);
- this handle's own in-place rewrites (forget, purge, vacuum) call `invalidate`;
- items are also updated in place in normal use (a status): the schema's triggers count
  every update and delete of an item (`rewrites`, v5), and an items copy read at
  another count is read afresh.

Copies are bounded in rows and in characters of text (`speed_layer.CACHE_*`). Inside an
open transaction the copy is not used (rows it would read may be rolled back). A search
over the copy is the same scan as the SQL one (`search.SearchMixin`): the core's matching
rule, the same scorer, the same order, so results are identical. This is the speed
layer `speed_layer` declares.
"""

from __future__ import annotations

import sqlite3
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from lcm_core.store.matching import SCOPE_COUNT_MAX, fold
from lcm_core.text.tokens import best_matches
from lcm_store_sqlite.speed_layer import CACHE_ROWS_MAX, CACHE_TOTAL_CHARS, CACHE_TOTAL_ROWS
from lcm_store_sqlite.text_blocks import TextBlocks


class CopiedRow(sqlite3.Row):
    """A row of a copy, carrying the object the store made of it (an event or an item):
    a copy's rows are kept as long as they are current, so the object is made once."""

    __slots__ = ("converted",)
    converted: object  # None until the store first reads the row


@dataclass(slots=True)
class _Copy:
    """One session's rows of one table in rowid order (the `rowid AS _rowid, *` shape of a
    search), searched as the SQL scan searches them."""

    column: str  # the searched text column
    filters: tuple[str, ...]  # the columns a search may filter on
    max_rowid: int
    changes: int = -1  # the connection's total_changes when rows were last looked for
    chars: int = 0  # characters of text in the rows
    rows: list[CopiedRow] = field(default_factory=list)
    # Per row: its text, the text casefolded (the same object when folding changes
    # nothing) as the scorer reads it, and the values of the filter columns.
    texts: list[str] = field(default_factory=list)
    folded: list[str] = field(default_factory=list)
    values: dict[str, list[str]] = field(init=False)
    blocks: TextBlocks = field(init=False)

    def __post_init__(self) -> None:
        self.values = {column: [] for column in self.filters}
        self.blocks = TextBlocks(self.folded.__getitem__)

    def add(self, row: CopiedRow) -> None:
        row.converted = None
        text = str(row[self.column])
        folded = fold(text)
        self.chars += len(text)
        self.rows.append(row)
        self.texts.append(text)
        self.folded.append(text if folded == text else folded)
        for column, values in self.values.items():
            values.append(row[column])

    def best(
        self, terms: Sequence[str], among: Mapping[str, Sequence[str] | None], limit: int
    ) -> list[tuple[sqlite3.Row, float]]:
        """The SQL scan's answer (`search.SearchMixin._search`): rows holding any of the
        cleaned `terms` whose filter columns hold values `among` the allowed ones (None:
        any), scored over the matches, the best `limit` and any tied with the last."""
        if limit <= 0 or not terms:
            return []
        all_terms = list(terms)
        found = sorted(self.blocks.matching(all_terms, len(self.rows)))
        for column, allowed in among.items():
            if allowed is not None:
                wanted, values = frozenset(allowed), self.values[column]
                found = [i for i in found if values[i] in wanted]
        scope = min(len(self.rows), SCOPE_COUNT_MAX)
        texts, folded = self.texts, self.folded
        best = best_matches(
            [texts[i] for i in found],
            all_terms,
            scope,
            limit,
            folded=[folded[i] for i in found],
        )
        return [(self.rows[found[i]], score) for i, score in best]


@dataclass(slots=True)
class CachedSession(_Copy):
    """One session's events, and where each seq is."""

    index: dict[int, int] = field(default_factory=dict)  # seq -> position

    def add(self, row: CopiedRow) -> None:
        self.index[int(row["seq"])] = len(self.rows)
        _Copy.add(self, row)


@dataclass(slots=True)
class CachedItems(_Copy):
    """One session's memory items (any status), current as of `rewrites`."""

    rewrites: int = -1  # the file's count of item rewrites when the copy was made


class SessionCache:
    """Sessions copied from one connection, kept current by rowid and `data_version`."""

    def __init__(self, *, rows_max: int) -> None:
        self._rows_max = min(rows_max, CACHE_ROWS_MAX)
        # (table, session) -> its copy, the least recently searched first.
        self._copies: OrderedDict[tuple[str, str], _Copy] = OrderedDict()
        self._version: int | None = None
        self._held = 0  # rows
        self._held_chars = 0
        # Copies found too big: rows only grow until a purge (`invalidate`).
        self._too_big: set[tuple[str, str]] = set()

    def invalidate(self) -> None:
        """Drop every copy: this handle rewrote rows in place (forget, purge, vacuum)."""
        self._copies.clear()
        self._held = self._held_chars = 0
        self._too_big.clear()

    def session(
        self, raw: sqlite3.Connection, session_id: str, *, read: bool = True
    ) -> CachedSession | None:
        """The session's current copy of its events, or None when it is not kept (too
        big, in a transaction); without `read`, only a session already copied (reads by
        seq of other sessions must not push out the one being searched)."""
        found = self._current(raw, "events", session_id, read)
        return found if isinstance(found, CachedSession) else None

    def items(self, raw: sqlite3.Connection, session_id: str) -> CachedItems | None:
        """The session's current copy of its memory items (every status), or None."""
        found = self._current(raw, "memory_items", session_id, True)
        return found if isinstance(found, CachedItems) else None

    def _current(
        self, raw: sqlite3.Connection, table: str, session_id: str, read: bool
    ) -> _Copy | None:
        key = (table, session_id)
        if self._rows_max <= 0 or raw.in_transaction or key in self._too_big:
            return None
        version = int(raw.execute("PRAGMA data_version").fetchone()[0])
        if version != self._version:
            self.invalidate()
            self._version = version
        entry = self._copies.get(key)
        if entry is None and not read:
            return None
        changes = raw.total_changes
        if entry is not None and entry.changes == changes:
            # No commit elsewhere (data_version) and no write here since the last look.
            self._copies.move_to_end(key)
            return entry
        rewrites = -1
        if table == "memory_items":
            # Items are updated in place (a status, a forgotten text): a trigger counts
            # every update and delete, and a copy older than the count is read afresh.
            count, triggers = raw.execute(_REWRITES).fetchone()
            if count is None or triggers != 2:
                # Someone removed the count or its triggers: changes would go unseen.
                if entry is not None:
                    self._drop(key)
                return None
            rewrites = int(count)
            if isinstance(entry, CachedItems) and entry.rewrites != rewrites:
                self._drop(key)
                entry = None
        top = int(raw.execute(f"SELECT MAX(rowid) FROM {table}").fetchone()[0] or 0)
        if entry is None:
            entry = self._read(raw, key, top)
            if entry is None:
                return None
        elif top > entry.max_rowid and not self._extend(raw, key, entry, top):
            return None
        entry.changes = changes
        if isinstance(entry, CachedItems):
            entry.rewrites = rewrites
        self._copies.move_to_end(key)
        while len(self._copies) > 1 and (
            self._held > CACHE_TOTAL_ROWS or self._held_chars > CACHE_TOTAL_CHARS
        ):
            self._drop(next(iter(self._copies)))
        return entry

    def _drop(self, key: tuple[str, str]) -> None:
        gone = self._copies.pop(key)
        self._held -= len(gone.rows)
        self._held_chars -= gone.chars

    def _read(self, raw: sqlite3.Connection, key: tuple[str, str], top: int) -> _Copy | None:
        table, session_id = key
        count = raw.execute(
            f"SELECT COUNT(*) FROM (SELECT 1 FROM {table} WHERE session_id = ? LIMIT ?)",
            (session_id, self._rows_max + 1),
        ).fetchone()[0]
        if count > self._rows_max:
            self._too_big.add(key)
            return None
        found = _copied_rows(
            raw,
            f"SELECT rowid AS _rowid, * FROM {table} WHERE session_id = ? AND rowid <= ?",
            (session_id, top),
        )
        entry: _Copy = (
            CachedSession("text", ("type",), top)
            if table == "events"
            else CachedItems("content", ("status", "kind"), top)
        )
        # Sorted here, not in SQL: `ORDER BY rowid` walks the whole table instead of the
        # session's index (see `search.SearchMixin._like_rows`).
        for row in sorted(found, key=_rowid):
            entry.add(row)
        if entry.chars > CACHE_TOTAL_CHARS:
            self._too_big.add(key)
            return None
        self._copies[key] = entry
        self._held += len(entry.rows)
        self._held_chars += entry.chars
        return entry

    def _extend(
        self, raw: sqlite3.Connection, key: tuple[str, str], entry: _Copy, top: int
    ) -> bool:
        table, session_id = key
        found = _copied_rows(
            raw,
            f"SELECT rowid AS _rowid, * FROM {table} WHERE rowid > ? AND rowid <= ? "
            "AND session_id = ?",
            (entry.max_rowid, top, session_id),
        )
        entry.max_rowid = top
        if not found:
            return True
        before = entry.chars
        for row in sorted(found, key=_rowid):
            entry.add(row)
        self._held += len(found)
        self._held_chars += entry.chars - before
        if len(entry.rows) > self._rows_max or entry.chars > CACHE_TOTAL_CHARS:
            self._too_big.add(key)
            self._drop(key)
            return False
        return True


# The count of memory item updates and deletes, kept by the schema's triggers (v5), and
# how many of those two triggers are in place.
_REWRITES = (
    "SELECT (SELECT n FROM rewrites WHERE name = 'memory_items'), "
    "(SELECT COUNT(*) FROM sqlite_master WHERE type = 'trigger' "
    "AND name IN ('memory_items_rewritten', 'memory_items_removed'))"
)


def _copied_rows(raw: sqlite3.Connection, sql: str, params: tuple[Any, ...]) -> list[CopiedRow]:
    cursor = raw.cursor()
    cursor.row_factory = CopiedRow
    return cursor.execute(sql, params).fetchall()


def _rowid(row: Any) -> int:
    return int(row["_rowid"])
