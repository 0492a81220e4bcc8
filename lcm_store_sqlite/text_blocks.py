"""The texts of a copied session joined in blocks, to find which hold a term as LIKE does.

A copy (`session_cache`) searches its texts at every step; one `str.find` over a block of
joined, ASCII-folded texts is much cheaper than a test per text. Texts are only ever
appended to a copy (a rewrite drops the whole copy), so where a key was found stays
true: the texts each key was found in are kept (`HITS_HELD` positions per copy, least
recently used key first out), and a step that searches the same words again (every step
of one user turn does) scans only the texts appended since.
"""

from __future__ import annotations

from array import array
from bisect import bisect_right
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from lcm_store_sqlite.like import ascii_fold

# Texts per block of joined text: a growing copy rebuilds only its last block.
BLOCK = 1024
# Positions of matching texts kept per copy, over all its keys.
HITS_HELD = 1_000_000
# Joins a block's texts. SQLite's LIKE reads a text only up to its first NUL, so each
# text is cut there too, and no text can then hold the separator.
_SEP = "\x00"


@dataclass(slots=True)
class _Block:
    """Up to `BLOCK` consecutive texts joined and folded, and where each starts."""

    first: int  # index of the block's first text in the copy
    joined: str = ""
    starts: list[int] = field(default_factory=list)

    def find(self, key: str, found: array[int], since: int = 0) -> None:
        """Append the index of every text of the block from its `since`-th on holding `key`
        (one search per hit)."""
        joined, starts = self.joined, self.starts
        if since >= len(starts):
            return
        position = joined.find(key, starts[since])
        while position >= 0:
            local = bisect_right(starts, position) - 1
            found.append(self.first + local)
            if local + 1 >= len(starts):
                return
            position = joined.find(key, starts[local + 1])


@dataclass(slots=True)
class _Hits:
    """Where one key was found among the first `texts` texts."""

    texts: int = 0
    positions: array[int] = field(default_factory=lambda: array("q"))


class TextBlocks:
    """The copy's texts in blocks, kept current as texts are appended."""

    def __init__(self, text_at: Callable[[int], str]) -> None:
        self._text_at = text_at
        self._blocks: list[_Block] = []
        self._hits: OrderedDict[str, _Hits] = OrderedDict()
        self._held = 0

    def matching(self, terms: Sequence[str], size: int) -> set[int]:
        """Indexes (below `size`, the texts held) of the texts holding any term, ASCII
        case-insensitive, up to a NUL: LIKE's rule."""
        blocks = self._current(size)
        found: set[int] = set()
        for key in {ascii_fold(term) for term in terms}:
            if not key or _SEP in key:
                continue  # the store's term cleaning removes NUL: never met in practice
            found.update(self._found(key, blocks, size))
        return found

    def _found(self, key: str, blocks: list[_Block], size: int) -> array[int]:
        """Where `key` is among the `size` texts: kept positions, then the texts after them."""
        hits = self._hits.pop(key, None) or _Hits()
        self._held -= len(hits.positions)
        for block in blocks[hits.texts // BLOCK :]:
            block.find(key, hits.positions, max(0, hits.texts - block.first))
        hits.texts = size
        self._hits[key] = hits  # newest last
        self._held += len(hits.positions)
        while self._held > HITS_HELD and self._hits:
            _, oldest = self._hits.popitem(last=False)
            self._held -= len(oldest.positions)
        return hits.positions

    def _current(self, size: int) -> list[_Block]:
        """The blocks, the last one rebuilt when texts were appended since it was joined."""
        covered = self._blocks[-1].first + len(self._blocks[-1].starts) if self._blocks else 0
        if covered < size:
            if self._blocks and len(self._blocks[-1].starts) < BLOCK:
                self._blocks.pop()
            first = self._blocks[-1].first + BLOCK if self._blocks else 0
            while first < size:
                texts = [
                    self._text_at(i).partition(_SEP)[0]
                    for i in range(first, min(size, first + BLOCK))
                ]
                starts, offset = [], 0
                for text in texts:
                    starts.append(offset)
                    offset += len(text) + 1
                # One fold per block: folding keeps every length, so the starts hold.
                self._blocks.append(_Block(first, ascii_fold(_SEP.join(texts)), starts))
                first += BLOCK
        return self._blocks
