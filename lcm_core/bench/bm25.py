"""The retrieval harness's baseline: Okapi BM25 over a conversation's raw turns, stdlib only.

It follows rank-bm25's `BM25Okapi` (k1 1.5, b 0.75, idf `ln((N - n + 0.5) / (n + 0.5))`
with negative values raised to `epsilon` times the mean idf) and tokenises with
`lcm_core.text.tokens.tokenize`, the tokenizer of the pipeline itself, so that a comparison is
one of ranking, not of tokenizers. `tokenize` yields each distinct token once, so term
frequencies are 1 (for chat turns of a sentence or two they nearly always are); its
160-token cap for queries is lifted here, so a long turn is indexed whole. Ties go to
the earlier turn.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from typing import Final

from lcm_core.text.tokens import tokenize

K1: Final = 1.5
B: Final = 0.75
EPSILON: Final = 0.25
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
