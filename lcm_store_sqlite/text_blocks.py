"""The casefolded texts of a copied session joined in blocks, to find which hold a term.

Part of the speed layer (`speed_layer`). A copy (`session_cache`) searches its texts at
every step; one `str.find` over a block of joined texts is much cheaper than a test per
text. The texts come in casefolded (the copy keeps each text's casefold for the scorer
anyway) and the keys are the terms' casefolds: the core's match rule
(`lcm_core.store.matching`). No key holds NUL (term cleaning drops control characters),
so the separator never joins two texts into a false match. Texts are only ever appended
to a copy (a rewrite drops the whole copy), so where a key was found stays true: the
texts each key was found in are kept (`HITS_HELD` positions per copy, least recently
used key first out), and a step that searches the same words again (every step of one
user turn does) scans only the texts appended since.

A word not searched before would scan every text. In a copy of `RUNS_FROM` texts or
more, a key made only of word characters (letters, digits, CJK and `_`, as a regex
reads them) is looked up instead in an index of the texts' maximal runs of word
characters: every occurrence of such a key lies inside one run, so the texts holding it
are those holding a run that contains it, and the runs are far fewer than the
characters.
"""

from __future__ import annotations

import re
from array import array
from bisect import bisect_right
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from lcm_core.store.matching import fold
from lcm_store_sqlite.speed_layer import BLOCK, HITS_HELD, RUNS_AFTER, RUNS_FROM, RUNS_SLICE

_WORDS = re.compile(r"\w+")
# Joins a block's texts; no key holds it.
_SEP = "\x00"


@dataclass(slots=True)
class _Block:
    """Up to `BLOCK` consecutive casefolded texts joined, and where each starts."""

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


class _Runs:
    """The maximal runs of word characters of the first `texts` casefolded texts, each
    with the texts holding it, and the runs joined in blocks to search."""

    def __init__(self) -> None:
        self.texts = 0
        self._postings: list[array[int]] = []  # per run, in the order first seen
        self._number: dict[str, int] = {}  # run -> its place
        self._runs: list[str] = []
        self._blocks: list[_Block] = []

    def add(self, folded: str) -> None:
        """Index the next casefolded text."""
        for run in set(_WORDS.findall(folded)):
            number = self._number.get(run)
            if number is None:
                number = self._number[run] = len(self._runs)
                self._runs.append(run)
                self._postings.append(array("q"))
            self._postings[number].append(self.texts)
        self.texts += 1

    def holding(self, key: str) -> array[int]:
        """The texts (in order) holding `key`, a key of word characters only."""
        places: array[int] = array("q")
        for block in _joined(self._blocks, len(self._runs), self._runs.__getitem__):
            block.find(key, places)
        if len(places) == 1:
            return array("q", self._postings[places[0]])
        texts: set[int] = set()
        for place in places:
            texts.update(self._postings[place])
        return array("q", sorted(texts))


class TextBlocks:
    """The copy's casefolded texts in blocks, kept current as texts are appended."""

    def __init__(self, text_at: Callable[[int], str]) -> None:
        """`text_at(i)` is the i-th text's casefold."""
        self._text_at = text_at
        self._blocks: list[_Block] = []
        self._hits: OrderedDict[str, _Hits] = OrderedDict()
        self._held = 0
        self._runs: _Runs | None = None
        self._searches = 0

    def matching(self, terms: Sequence[str], size: int) -> set[int]:
        """Indexes (below `size`, the texts held) of the texts holding any (cleaned) term,
        by the core's rule: the term's casefold inside the text's."""
        blocks = self._current(size)
        self._searches += 1
        runs = self._indexed(size) if size >= RUNS_FROM and self._searches >= RUNS_AFTER else None
        found: set[int] = set()
        for key in {fold(term) for term in terms}:
            if not key or _SEP in key:
                continue  # term cleaning drops NUL: never met in practice
            found.update(self._found(key, blocks, size, runs))
        return found

    def _found(self, key: str, blocks: list[_Block], size: int, runs: _Runs | None) -> array[int]:
        """Where `key` is among the `size` texts: kept positions, then the texts after them
        (from the runs index when it covers them all and the key is of word characters)."""
        hits = self._hits.pop(key, None) or _Hits()
        self._held -= len(hits.positions)
        if not hits.texts and runs is not None and runs.texts >= size and _WORDS.fullmatch(key):
            hits.positions, hits.texts = runs.holding(key), size
        for block in blocks[hits.texts // BLOCK :]:
            block.find(key, hits.positions, max(0, hits.texts - block.first))
        hits.texts = size
        self._hits[key] = hits  # newest last
        self._held += len(hits.positions)
        while self._held > HITS_HELD and self._hits:
            _, oldest = self._hits.popitem(last=False)
            self._held -= len(oldest.positions)
        return hits.positions

    def _indexed(self, size: int) -> _Runs:
        """The runs index, brought up to the first `size` texts by at most `RUNS_SLICE`."""
        if self._runs is None:
            self._runs = _Runs()
        runs = self._runs
        for _ in range(min(size - runs.texts, RUNS_SLICE)):
            runs.add(self._text_at(runs.texts))
        return runs

    def _current(self, size: int) -> list[_Block]:
        """The blocks, the last one rebuilt when texts were appended since it was joined."""
        return _joined(self._blocks, size, self._text_at)


def _joined(blocks: list[_Block], size: int, text_at: Callable[[int], str]) -> list[_Block]:
    """`blocks` of the first `size` strings (`text_at`, casefolded already); the last
    block is rebuilt when strings were appended since."""
    covered = blocks[-1].first + len(blocks[-1].starts) if blocks else 0
    if covered < size:
        if blocks and len(blocks[-1].starts) < BLOCK:
            blocks.pop()
        first = blocks[-1].first + BLOCK if blocks else 0
        while first < size:
            texts = [text_at(i) for i in range(first, min(size, first + BLOCK))]
            starts, offset = [], 0
            for text in texts:
                starts.append(offset)
                offset += len(text) + 1
            blocks.append(_Block(first, _SEP.join(texts), starts))
            first += BLOCK
    return blocks
