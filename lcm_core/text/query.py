"""Query signals: what a step's task text asks about, as terms a store can search for.

The signals are: content tokens (Latin words and CJK bigrams from `text.tokenize`),
exact terms (identifiers, versions, acronyms), numbers, filesystem paths and quoted
phrases. Only the exact kinds earn the exact-match boost in ranking.

Search terms are a filtered view of the signals. A term that occurs in nearly every
row (function words, particles, single digits) cannot narrow a search, makes trigram
matching slow on large files and inflates every row's match count, so it is dropped
from what is sent to the store; it still counts nowhere else.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Final

from lcm_core.text.languages import en, zh
from lcm_core.text.lazy_regex import lazy_compile
from lcm_core.text.tokens import MAX_QUERY_TOKENS, normalize_text, per_text_cache, tokenize

# Cap on terms sent to the store in one search: every extra OR branch costs a posting
# list walk, and past a few dozen terms the ranking no longer changes in practice.
MAX_SEARCH_TERMS: Final = 48
# An assembly log keeps this many characters of the step's text (its `query` reason).
LOGGED_QUERY_CHARS: Final = 200

# Function words live in the language packs; the query side uses the same lists.
STOPWORDS: Final[frozenset[str]] = en.STOP_WORDS
_CJK_PARTICLES: Final = zh.PARTICLES
_CJK_FUNCTION_CHARS: Final = zh.FUNCTION_CHARS

# A digit run glued to a word or after `word-` belongs to an id (w123, PROJ-7), not a number.
_NUMBER_RE: Final = lazy_compile(r"(?<![A-Za-z0-9_.])(?<![A-Za-z0-9]-)\d+(?:[.,]\d+)*")
# Identifier-like words: letters and digits joined by `_ . -`, kept with their case.
_WORD_RE: Final = lazy_compile(r"[A-Za-z0-9]+(?:[_.\-][A-Za-z0-9]+)*")
_CAMEL_RE: Final = lazy_compile(r"[a-z][A-Z]")
_PATH_RES: Final = (
    # Absolute, home-relative or dot-relative POSIX paths: /etc/hosts, ~/x, ./a/b
    lazy_compile(r"(?<![\w/])(?:~|\.{1,2})?/[\w.\-@+]+(?:/[\w.\-@+]+)*/?"),
    # Windows drive paths: C:\Users\me\file.txt
    lazy_compile(r"\b[A-Za-z]:\\[\w.\-\\]*[\w.\-]"),
    # Relative paths with a folder and a file extension: src/app/main.py
    lazy_compile(r"(?<![\w/])[\w.\-]+(?:/[\w.\-]+)*/[\w\-]+\.[A-Za-z0-9]{1,8}\b"),
)
_PHRASE_RES: Final = (
    lazy_compile(r'"([^"\n]{2,200})"'),
    lazy_compile(r"“([^”\n]{2,200})”"),
    lazy_compile(r"「([^」\n]{1,200})」"),
    lazy_compile(r"『([^』\n]{1,200})』"),
    lazy_compile(r"`([^`\n]{2,200})`"),
    # Single quotes only when they cannot be apostrophes: not touching a letter outside.
    lazy_compile(r"(?<![A-Za-z0-9])'([^'\n]{2,200})'(?![A-Za-z0-9])"),
)
_PATH_TRAILERS: Final = ".,;:!?)]}'\""


@dataclass(frozen=True, slots=True)
class QuerySignals:
    """Everything retrieval reads from the task text, each list in first-seen order."""

    text: str
    tokens: tuple[str, ...] = ()
    exact_terms: tuple[str, ...] = ()
    numbers: tuple[str, ...] = ()
    paths: tuple[str, ...] = ()
    phrases: tuple[str, ...] = ()

    @property
    def empty(self) -> bool:
        return not (self.tokens or self.exact_terms or self.numbers or self.paths or self.phrases)

    def exact_signals(self) -> tuple[str, ...]:
        """The signals that earn the exact-match boost, deduplicated case-insensitively."""
        return _dedupe((*self.phrases, *self.paths, *self.exact_terms, *self.numbers))


def _dedupe(values: Iterable[str]) -> tuple[str, ...]:
    seen: set[str] = set()
    kept: list[str] = []
    for value in values:
        key = value.casefold()
        if value and key not in seen:
            seen.add(key)
            kept.append(value)
    return tuple(kept)


def canonical_number(raw: str) -> str:
    """Drop thousands separators so `3,000` and `3000` compare equal."""
    if "," in raw and all(len(part) == 3 for part in raw.split(",")[1:]):
        return raw.replace(",", "")
    return raw


def numbers_in(text: str) -> tuple[str, ...]:
    """The numbers written in `text`, canonical, in order; digits inside words do not count."""
    return _dedupe(canonical_number(match) for match in _NUMBER_RE.findall(text))


def _is_exact_word(word: str) -> bool:
    has_digit = any(ch.isdigit() for ch in word)
    has_alpha = any(ch.isalpha() for ch in word)
    if not has_alpha:
        return False
    if has_digit or "_" in word or _CAMEL_RE.search(word):
        return True
    # Dotted or hyphenated names (node.js, gpt-4o, e-mail) and acronyms (GPU, SLA).
    if any(sep in word for sep in ".-"):
        return True
    return len(word) >= 2 and word.isupper() and word.casefold() not in STOPWORDS


def _paths(text: str) -> tuple[str, ...]:
    found: list[tuple[int, str]] = []
    for pattern in _PATH_RES:
        for match in pattern.finditer(text):
            path = match.group().rstrip(_PATH_TRAILERS)
            if len(path) >= 3 and any(ch.isalnum() for ch in path):
                found.append((match.start(), path))
    found.sort()
    # A path found by two patterns (or a tail of a longer one) is kept once.
    kept: list[str] = []
    for _, path in found:
        if not any(path in other for other in kept):
            kept = [other for other in kept if other not in path]
            kept.append(path)
    return _dedupe(kept)


def _phrases(text: str) -> tuple[str, ...]:
    found: list[tuple[int, str]] = []
    for pattern in _PHRASE_RES:
        for match in pattern.finditer(text):
            phrase = match.group(1).strip()
            if phrase:
                found.append((match.start(), phrase))
    found.sort()
    return _dedupe(phrase for _, phrase in found)


# A task text longer than this (a pasted log, a whole file) is read at its start and
# its end, where the instruction usually is; every signal is then bounded in cost.
MAX_QUERY_CHARS: Final = 8_000


@per_text_cache(maxsize=1024)  # every step of a turn asks the same question; signals are frozen
def query_signals(text: str) -> QuerySignals:
    """Derive the query signals of a task text; any input is accepted."""
    normalized = normalize_text(text or "")
    if not normalized:
        return QuerySignals(text="")
    if len(normalized) > MAX_QUERY_CHARS:
        half = MAX_QUERY_CHARS // 2
        normalized = normalized[:half] + "\n…\n" + normalized[-half:]
    exact = _dedupe(w for w in _WORD_RE.findall(normalized) if _is_exact_word(w))
    return QuerySignals(
        text=normalized,
        tokens=tuple(tokenize(normalized, MAX_QUERY_TOKENS)),
        exact_terms=exact,
        numbers=numbers_in(normalized),
        paths=_paths(normalized),
        phrases=_phrases(normalized),
    )


def can_narrow(term: str) -> bool:
    """False for a term that matches almost any row: function words, particles, one digit."""
    folded = term.casefold()
    if folded in STOPWORDS:
        return False
    if len(folded) < 2:
        return False
    if len(folded) == 2 and (
        any(ch in _CJK_PARTICLES for ch in folded)
        or all(ch in _CJK_FUNCTION_CHARS for ch in folded)
    ):
        return False
    return any(ch.isalnum() for ch in folded)


_SUFFIXES: Final = ("ies", "ing", "es", "ed", "s")


def substring_stem(word: str) -> str:
    """A light suffix strip for Latin words, so `guests` finds `guest list` and `booked` `book`.

    Not the ranking's stemmer (`text.stemming`, Snowball): this one makes a store search
    term, and a store searches by substring, so the cut form must still be a prefix of
    every form of the word (Snowball's `happi` is not one of `happy`). Stems shorter
    than three characters are not kept: they would match almost anything.
    """
    if not word.isascii() or not word.isalpha() or len(word) < 4:
        return word
    for suffix in _SUFFIXES:
        if word.endswith(suffix) and not word.endswith(("ss", "us", "is")):
            base = word[: -len(suffix)]
            if suffix == "ing" and len(base) >= 5 and base[-1] == base[-2]:
                base = base[:-1]  # shopping -> shop; "wedding" keeps "wedd", not "wed"
            return base if len(base) >= 3 else word
    return word


def search_terms(signals: QuerySignals, limit: int = MAX_SEARCH_TERMS) -> tuple[str, ...]:
    """The terms to send to the store: the exact signals first, then content tokens."""
    # Digit-only tokens are pieces of numbers ("3,000" gives "000"); numbers come whole.
    tokens = (substring_stem(t) for t in signals.tokens if not t.isdigit())
    ordered = (*signals.exact_signals(), *tokens)
    return _dedupe(term for term in ordered if can_narrow(term))[:limit]


def evidence_terms(signals: QuerySignals) -> tuple[str, ...]:
    """Terms worth an exact search of raw events: numbers, paths and quoted phrases."""
    candidates = (*signals.phrases, *signals.paths, *signals.numbers)
    return _dedupe(term for term in candidates if can_narrow(term))


def exact_hits(content: str, signals: QuerySignals) -> tuple[str, ...]:
    """The exact signals `content` contains; numbers must match a whole number."""
    if not (signals.phrases or signals.paths or signals.exact_terms or signals.numbers):
        return ()
    folded, content_numbers = _content_view(content)
    hits: list[str] = []
    for signal, key, number in _exact_plan(signals):
        if number is not None:
            if number in content_numbers:
                hits.append(signal)
        elif key in folded:
            hits.append(signal)
    return tuple(hits)


@functools.lru_cache(maxsize=32)
def _exact_plan(signals: QuerySignals) -> tuple[tuple[str, str, str | None], ...]:
    """Per exact signal: itself, its folded form, and its canonical number (None for text).

    Worked out once per query: `exact_hits` runs for every candidate of a step.
    """
    wanted_numbers = {value.casefold() for value in signals.numbers}
    plan = []
    for signal in signals.exact_signals():
        key = signal.casefold()
        plan.append((signal, key, canonical_number(signal) if key in wanted_numbers else None))
    return tuple(plan)


@per_text_cache(maxsize=16_384)
def _content_view(content: str) -> tuple[str, frozenset[str]]:
    """A stored text case-folded and its numbers (cached: the same turns come back)."""
    return content.casefold(), frozenset(numbers_in(content))
