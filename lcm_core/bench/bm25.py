"""The retrieval harness's baseline: Okapi BM25 over a conversation's raw turns, stdlib only.

It follows rank-bm25's `BM25Okapi` (k1 1.5, b 0.75, idf `ln((N - n + 0.5) / (n + 0.5))`
with negative values raised to `epsilon` times the mean idf) and tokenises as the
pipeline did when the baseline was frozen (lower-cased Latin words of two or more
characters and CJK bigrams, each distinct token once, so term frequencies are 1).
The tokenizer is a frozen copy on purpose: the pipeline's own tokenizer may change with
the ranking work, and "beats BM25 in the same run" must keep one meaning. A long turn
is indexed whole. Ties go to the earlier turn.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Sequence
from typing import Final

from lcm_core.text.tokens import normalize_text

K1: Final = 1.5
B: Final = 0.75
EPSILON: Final = 0.25
# The tokenizer as it stood when the baseline was frozen (lcm 0.1.0): never edit it.
_CJK_CLASS: Final = "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\u3040-\u30ff\uac00-\ud7af"
_CJK_RUN_RE: Final = re.compile(f"[{_CJK_CLASS}]+")
_LATIN_WORD_RE: Final = re.compile(r"[^\W_]+(?:[_\-.'][^\W_]+)*")


def tokenize(text: str, limit: int) -> list[str]:
    """Distinct lower-cased Latin words (2+ characters) and CJK bigrams, in reading order."""
    tokens: list[str] = []
    seen: set[str] = set()

    def add(token: str) -> bool:
        if token not in seen:
            seen.add(token)
            tokens.append(token)
        return len(tokens) >= limit

    normalized = normalize_text(text).casefold()
    position = 0
    for run in _CJK_RUN_RE.finditer(normalized):
        for word in _LATIN_WORD_RE.findall(normalized[position : run.start()]):
            if len(word) >= 2 and add(word):
                return tokens
        chars = run.group()
        grams = [chars] if len(chars) == 1 else [chars[i : i + 2] for i in range(len(chars) - 1)]
        for gram in grams:
            if add(gram):
                return tokens
        position = run.end()
    for word in _LATIN_WORD_RE.findall(normalized[position:]):
        if len(word) >= 2 and add(word):
            return tokens
    return tokens


# A turn with no token still counts as a document, of one token that matches nothing.
_EMPTY_TOKEN: Final = "\u0000"
# Tokens kept per text: every one (tokenize's default cap is meant for queries).
_ALL_TOKENS: Final = 1 << 30


class BM25Index:
    """BM25 scores of tokenised documents for any tokenised query."""

    def __init__(self, documents: Sequence[Sequence[str]]) -> None:
        self.size = len(documents)
        self.lengths = [len(doc) for doc in documents]
        self.avgdl = sum(self.lengths) / self.size if self.size else 0.0
        self.postings: dict[str, list[tuple[int, int]]] = {}
        for index, doc in enumerate(documents):
            for word, freq in Counter(doc).items():
                self.postings.setdefault(word, []).append((index, freq))
        self.idf: dict[str, float] = {}
        negative: list[str] = []
        idf_sum = 0.0  # summed in order, as rank-bm25 does (sum() compensates, from 3.12)
        for word, posting in self.postings.items():
            df = len(posting)
            idf = math.log(self.size - df + 0.5) - math.log(df + 0.5)
            self.idf[word] = idf
            idf_sum += idf
            if idf < 0:
                negative.append(word)
        mean_idf = idf_sum / len(self.idf) if self.idf else 0.0
        for word in negative:
            self.idf[word] = EPSILON * mean_idf

    def scores(self, query: Sequence[str]) -> list[float]:
        """One score per document; a repeated query token counts each time."""
        scores = [0.0] * self.size
        for word in query:
            idf = self.idf.get(word, 0.0)
            for index, freq in self.postings.get(word, ()):
                norm = K1 * (1 - B + B * self.lengths[index] / self.avgdl)
                scores[index] += idf * (freq * (K1 + 1) / (freq + norm))
        return scores


def bm25_index(texts: Sequence[str]) -> BM25Index:
    """An index of raw texts, tokenised as the pipeline tokenises."""
    return BM25Index([tokenize(text, _ALL_TOKENS) or [_EMPTY_TOKEN] for text in texts])


def top_k(index: BM25Index, question: str, k: int) -> list[int]:
    """Indices of the `k` best documents for the question, best first, earlier on ties."""
    scores = index.scores(tokenize(question, _ALL_TOKENS))
    return sorted(range(index.size), key=lambda i: (-scores[i], i))[: max(0, k)]


class BM25Baseline:
    """The harness's baseline callable: BM25 top-k of one conversation's turns.

    The index is rebuilt only when another list of texts comes in; the list itself is
    kept, so a new list can never be mistaken for the old one.
    """

    def __init__(self) -> None:
        self._texts: Sequence[str] | None = None
        self._index: BM25Index | None = None

    def __call__(self, texts: Sequence[str], question: str, k: int) -> list[int]:
        if self._index is None or self._texts is not texts:
            self._texts, self._index = texts, bm25_index(texts)
        return top_k(self._index, question, k)
