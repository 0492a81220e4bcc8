"""Lexical relevance on one scale for memory items and raw turns: BM25 the way IR does it.

A text becomes relevance tokens: English words less stop words and clitics (`Anna's` ->
`anna`), Snowball-stemmed (`painted` -> `paint`), so a Latin word matches words, never
a substring of another word (`port` does not match `export`); words holding digits stay
whole (`8080`, `v2`); CJK runs become character bigrams less the ones that are grammar.
A query's tokens, plus weighted translations from the English-Chinese bridge, are scored
against candidate texts with Okapi BM25 whose idf is the classic
`ln((N - n + 0.5) / (n + 0.5))` over the session's turns (floored at `IDF_FLOOR`): a
term in half the turns, such as a speaker's name that begins each line, weighs close to
nothing by construction.

The store serves candidates by substring (`filter_terms`: a stem whose last letter the
stemmer may have rewritten is cut back: `studi` is searched as `stud`; a stem in `e`
is searched in its -ing form too: `hike` and `hiking`); the score is
always computed here, so every backend ranks alike.
"""

from __future__ import annotations

import functools
import math
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Final

from lcm_core.text.languages import en, zh
from lcm_core.text.languages.bridge import translations
from lcm_core.text.languages.concepts import concept_words
from lcm_core.text.lazy_regex import lazy_compile
from lcm_core.text.stemming import stem
from lcm_core.text.tokens import (
    BM25_B,
    BM25_K1,
    BM25_K1_PLUS_ONE,
    CJK_RUN_RE,
    normalize_text,
)

_WORD_RE: Final = lazy_compile(r"[^\W_]+(?:'[^\W_]+)*")
# The least idf a matched term keeps, so tiny sessions still rank what they hold.
IDF_FLOOR: Final = 0.05
# A scope is taken to hold at least this many rows when idf is computed: in a session of a
# few turns every matched term still counts, while a term in half of a long session's
# turns (a speaker's name) still weighs nearly nothing.
MIN_SCOPE_ROWS: Final = 100
# Weight of a query term that comes from the bridge, not from the user's words.
BRIDGE_WEIGHT: Final = 0.6
# Weight of a term a concept of the question adds ("hobbies" -> enjoy, favourite): lower
# than a translation, which says the same thing. On REALTALK 0.3 gives block recall
# 0.749 (0.730 without), 0.5 gives 0.754 with R@5 0.507 (0.513 at 0.3), 0.15 0.746.
CONCEPT_WEIGHT: Final = 0.3


def _word_token(word: str, stop: bool = True, stemmed: bool = True) -> str | None:
    """One Latin word as a relevance token, or None for a stop word or a single letter."""
    word = word.replace("’", "'")
    for clitic in en.CLITICS:
        if word.endswith(clitic) and len(word) > len(clitic):
            word = word[: -len(clitic)]
            break
    word = word.strip("'")
    if len(word) < 2 or (stop and word in en.STOP_WORDS):
        return None
    if stemmed and word.isascii() and word.isalpha():
        return stem(word)
    return word


@functools.lru_cache(maxsize=50_000)
def relevance_tokens(text: str, stop: bool = True, stemmed: bool = True) -> tuple[str, ...]:
    """The text's relevance tokens in reading order, repeats kept (they are term frequency).

    `stop` and `stemmed` switch stop-word removal and stemming (on by default; off only
    for ablations). Cached: a long-lived sidecar scores the same turns step after step.
    """
    folded = normalize_text(text).casefold().replace("’", "'")
    tokens: list[str] = []
    position = 0

    def latin(part: str) -> None:
        for word in _WORD_RE.findall(part):
            token = _word_token(word, stop, stemmed)
            if token is not None:
                tokens.append(token)

    for run in CJK_RUN_RE.finditer(folded):
        latin(folded[position : run.start()])
        chars = run.group()
        grams = [chars] if len(chars) == 1 else [chars[i : i + 2] for i in range(len(chars) - 1)]
        tokens.extend(g for g in grams if not (stop and zh.is_stop_bigram(g)))
        position = run.end()
    latin(folded[position:])
    return tuple(tokens)


def filter_terms(token: str) -> tuple[str, ...]:
    """The substrings a store searches for a token: a stem ending in `i` (y/ies) loses
    it; a stem ending in `e` is also searched in its -ing form, the one form that drops
    the e (`hike`: `hiking`; cutting it to `hik` would make `note` search `not`)."""
    if token.isascii() and token.isalpha() and len(token) > 3:
        if token.endswith("i"):
            return (token[:-1],)
        if token.endswith("e"):
            return (token, token[:-1] + "ing")
    return (token,)


@dataclass(frozen=True, slots=True)
class QueryTerms:
    """A query's relevance tokens with their weights (1.0 own words, less for bridged ones)."""

    weights: Mapping[str, float] = field(default_factory=dict)

    @property
    def empty(self) -> bool:
        return not self.weights

    def filters(self) -> tuple[str, ...]:
        """Distinct substrings a store should search for, in the query's order."""
        return tuple(dict.fromkeys(f for t in self.weights for f in filter_terms(t)))


@functools.lru_cache(maxsize=256)
def query_terms(
    text: str,
    *,
    bridge: bool = True,
    stop: bool = True,
    stemmed: bool = True,
    concepts: bool = True,
) -> QueryTerms:
    """The weighted relevance tokens of a query; `bridge` adds translations at lower weight,
    `concepts` the words of the everyday concepts it names, lower still.

    Cached: a step's retriever, lifts and rendering ask for the same terms. Read only."""
    tokens = relevance_tokens(text, stop, stemmed)
    weights: dict[str, float] = dict.fromkeys(tokens, 1.0)
    if bridge:
        for translated in translations(text, relevance_tokens(text)):
            for token in relevance_tokens(translated, stop, stemmed):
                weights.setdefault(token, BRIDGE_WEIGHT)
    if concepts:
        for words in concept_words(text):
            for token in relevance_tokens(words, stop, stemmed):
                weights.setdefault(token, CONCEPT_WEIGHT)
    return QueryTerms(weights)


@dataclass(frozen=True, slots=True)
class Corpus:
    """What BM25 needs to know of the searched scope: its size and each term's frequency."""

    rows: int
    document_frequency: Mapping[str, int]
    average_length: float
    # idf per token, filled as asked: a query scores hundreds of texts with few terms.
    _idf: dict[str, float] = field(default_factory=dict, compare=False, repr=False)

    def idf(self, token: str) -> float:
        known = self._idf.get(token)
        if known is not None:
            return known
        having = self.document_frequency.get(token, 0)
        rows = max(self.rows, MIN_SCOPE_ROWS, having)
        value = self._idf[token] = max(IDF_FLOOR, math.log((rows - having + 0.5) / (having + 0.5)))
        return value


@dataclass(frozen=True, slots=True)
class Bag:
    """A text's relevance tokens as counts in first-seen order, and how many there are."""

    length: int
    counts: Mapping[str, int]
    # Each token's first-seen rank: scores sum their terms in this order (stable bits).
    first: Mapping[str, int]


def bag_of(tokens: Sequence[str]) -> Bag:
    """The bag of a token sequence (repeats are term frequency)."""
    counts = dict(Counter(tokens))
    return Bag(len(tokens), counts, {t: i for i, t in enumerate(counts)})


@functools.lru_cache(maxsize=50_000)
def text_bag(text: str, stop: bool = True, stemmed: bool = True) -> Bag:
    """The bag of a text's relevance tokens. Cached by text: a sidecar scores the same
    turns step after step, and a text's hash is kept by the string (a token tuple's is not)."""
    return bag_of(relevance_tokens(text, stop, stemmed))


def corpus_of(bags: Iterable[Bag], rows: int, terms: QueryTerms) -> Corpus:
    """Document frequencies of the query's terms among the given texts, in a scope of `rows`."""
    listed = list(bags)
    held = [bag.counts for bag in listed]
    # One short pass per query term, not one per text: a query has a few terms, a pool
    # hundreds of texts. Only `get` reads the frequencies, so their order is free.
    frequency: dict[str, int] = {}
    for term in terms.weights:
        having = len([1 for counts in held if term in counts])
        if having:
            frequency[term] = having
    count = len(held)
    average = sum(bag.length for bag in listed) / count if count else 1.0
    return Corpus(max(rows, count), frequency, max(average, 1.0))


# The part of BM25's length normalisation that does not depend on the text.
_ONE_LESS_B: Final = 1.0 - BM25_B


@dataclass(frozen=True, slots=True)
class Scorer:
    """Okapi BM25 for one query over one corpus, with each term's weight times idf taken once.

    The sum goes term by term in the text's order, so a text scores the same to the bit
    whichever other texts are scored with it.
    """

    corpus: Corpus
    factors: Mapping[str, float]  # query term -> its weight times its idf, in query order

    @classmethod
    def of(cls, terms: QueryTerms, corpus: Corpus) -> Scorer:
        """The scorer of these query terms over this corpus."""
        return cls(corpus, {t: w * corpus.idf(t) for t, w in terms.weights.items()})

    def __call__(self, bag: Bag) -> float:
        """Okapi BM25 of one text's bag."""
        counts = bag.counts
        present = [t for t in self.factors if t in counts]
        if not present or not bag.length:
            return 0.0
        if len(present) > 1:
            present.sort(key=bag.first.__getitem__)  # the text's order, as the sum always went
        factors = self.factors
        norm = BM25_K1 * (_ONE_LESS_B + BM25_B * bag.length / self.corpus.average_length)
        return sum(factors[t] * counts[t] * BM25_K1_PLUS_ONE / (counts[t] + norm) for t in present)


def saturation(count: int) -> float:
    """BM25's term-frequency curve without length: how much `count` occurrences weigh."""
    return count * BM25_K1_PLUS_ONE / (count + BM25_K1)


# Item kinds a question about a rule, limit or liking is asking for.
NORM_KINDS: Final = frozenset({"preference", "constraint", "decision"})


def asks_for_norm(text: str) -> bool:
    """True when a question asks about a rule, limit or liking (`should`, `can`, 应该, 不能...)."""
    folded = normalize_text(text).casefold().replace("’", "'")
    if any(cue in folded for cue in zh.NORM_CUES):
        return True
    return any(word in en.NORM_CUES for word in _WORD_RE.findall(folded))
