"""Text primitives shared by every layer: normalisation, hashing, ids, tokens, token cost."""

from __future__ import annotations

import functools
import hashlib
import math
import re
import unicodedata
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Final, TypeVar

from lcm_core.text.lazy_regex import Regex, lazy_compile

# Han (incl. extension A and compatibility), kana and Hangul: scripts written without
# spaces, which we index as character bigrams.
CJK_CLASS: Final = "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\u3040-\u30ff\uac00-\ud7af"
CJK_RE: Final = lazy_compile(f"[{CJK_CLASS}]")
CJK_RUN_RE: Final = lazy_compile(f"[{CJK_CLASS}]+")
_LATIN_WORD_RE: Final = lazy_compile(r"[^\W_]+(?:[_\-.'][^\W_]+)*")
# Runs of letters and digits, nothing joined: every number and a Chinese phrase whole.
WORD_RUN_RE: Final = lazy_compile(r"[^\W_]+")
_SURROGATE_RE: Final = lazy_compile("[\ud800-\udfff]")
# Control characters other than tab and newline carry no meaning in stored text.
_CONTROL_RE: Final = lazy_compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
_SPACE_RE: Final = lazy_compile(r"\s+")

MAX_QUERY_TOKENS: Final = 160
# Texts longer than this are not kept by `per_text_cache` (a tool output can be huge).
CACHED_TEXT_CHARS: Final = 20_000
_R = TypeVar("_R")


def per_text_cache(maxsize: int) -> Callable[[Callable[[str], _R]], Callable[[str], _R]]:
    """An LRU cache for a function of one text that keeps only texts up to
    `CACHED_TEXT_CHARS` long, so a few huge outputs cannot hold memory."""

    def wrap(function: Callable[[str], _R]) -> Callable[[str], _R]:
        cached = functools.lru_cache(maxsize=maxsize)(function)

        @functools.wraps(function)
        def call(text: str) -> _R:
            return cached(text) if len(text) <= CACHED_TEXT_CHARS else function(text)

        return call

    return wrap


def normalize_text(value: str) -> str:
    """Make text safe and canonical to store: NFC, LF line ends, no NUL, no lone surrogates."""
    if not value:
        return ""
    text = _SURROGATE_RE.sub("\ufffd", value)
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    text = _CONTROL_RE.sub("", text)
    return unicodedata.normalize("NFC", text).strip()


def clamp_text(text: str, limit: int) -> tuple[str, bool]:
    """Cut text to `limit` characters; the flag says whether anything was cut."""
    if len(text) <= limit:
        return text, False
    return text[:limit], True


def sha256_hex(text: str) -> str:
    """SHA-256 of the UTF-8 text, as hex."""
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def fingerprint(text: str) -> str:
    """Hash that ignores case and spacing: two phrasings differing only there dedupe."""
    return sha256_hex(_SPACE_RE.sub(" ", normalize_text(text)).casefold())


def stable_item_id(session_id: str, kind: str, content: str) -> str:
    """`mem_<session-part>_<hash16>`: the same session, kind and content give the same id."""
    session_part = sha256_hex(session_id)[:8]
    content_part = sha256_hex(kind + "\n" + fingerprint(content))[:16]
    return f"mem_{session_part}_{content_part}"


def tokenize(text: str, limit: int = MAX_QUERY_TOKENS) -> list[str]:
    """Lower-cased Latin words of two or more characters plus CJK bigrams, first-seen order."""
    tokens: list[str] = []
    seen: set[str] = set()

    def add(token: str) -> bool:
        if token not in seen:
            seen.add(token)
            tokens.append(token)
        return len(tokens) >= limit

    normalized = normalize_text(text).casefold()
    # Walk the text once, alternating CJK runs and the Latin text between them, so
    # the tokens come out in reading order.
    position = 0
    for run in CJK_RUN_RE.finditer(normalized):
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


def estimate_tokens(text: str) -> int:
    """The spec's token estimate: ceil(cjk / 1.6 + other / 4)."""
    if not text:
        return 0
    cjk = len(CJK_RE.findall(text))
    return math.ceil(cjk / 1.6 + (len(text) - cjk) / 4)


def scrub_surrogates(text: str) -> str:
    """Replace lone surrogates, which no UTF-8 store can hold, and leave all else as is."""
    return _SURROGATE_RE.sub("\ufffd", text)


@functools.lru_cache(maxsize=512)
def _glob_regex(pattern: str) -> Regex:
    """Compile a path glob: `**` spans folders, `*` and `?` stay inside one, `[...]` is a class."""
    out: list[str] = []
    i, n = 0, len(pattern)
    while i < n:
        char = pattern[i]
        if pattern.startswith("**", i):
            i += 2
            if i < n and pattern[i] == "/":
                out.append("(?:.*/)?")
                i += 1
            else:
                out.append(".*")
            continue
        if char == "*":
            out.append("[^/]*")
        elif char == "?":
            out.append("[^/]")
        elif char == "[" and "]" in pattern[i + 2 :]:
            end = pattern.index("]", i + 2)
            body = pattern[i + 1 : end].replace("\\", "\\\\")
            out.append("[" + ("^" + body[1:] if body.startswith("!") else body) + "]")
            i = end
        else:
            out.append(re.escape(char))
        i += 1
    return lazy_compile("".join(out) + r"\Z", re.DOTALL)


def glob_match(pattern: str, path: str) -> bool:
    """Whether a slash-separated path matches a glob, gitignore style.

    A pattern without `/` may match any single component (`*.bak`, `drafts`); a pattern
    ending in `/` matches everything below that folder; a pattern that matches a leading
    folder of the path matches the whole path, so `drafts/**` and `drafts` both exclude
    `drafts/x/SKILL.md`.
    """
    pattern = pattern.strip().replace("\\", "/")
    path = path.replace("\\", "/")
    while pattern.startswith("./"):
        pattern = pattern[2:]
    while path.startswith("./"):
        path = path[2:]
    if not pattern or not path:
        return False
    if pattern.endswith("/"):
        pattern += "**"
    regex = _glob_regex(pattern)
    parts = path.split("/")
    if "/" not in pattern:
        return any(regex.match(part) for part in parts if part)
    # The full path, then each leading folder of it.
    return any(regex.match("/".join(parts[:end])) for end in range(len(parts), 0, -1))


# Shortest term a trigram index can look up; the BM25 part of a search score counts only
# terms at least this long, on every backend, so the backends rank alike.
MIN_INDEXED_TERM_CHARS: Final = 3


def normalized_terms(terms: Sequence[object]) -> tuple[str, ...]:
    """Normalised query terms, blanks and non-strings dropped, deduped case-insensitively."""
    cleaned: list[str] = []
    seen: set[str] = set()
    for raw in terms:
        if not isinstance(raw, str):
            continue
        term = normalize_text(raw)
        key = term.casefold()
        if term and key not in seen:
            seen.add(key)
            cleaned.append(term)
    return tuple(cleaned)


def relevance(text: str, terms: Sequence[str], bm25: float) -> float:
    """Distinct terms the text contains (case-insensitive), plus bm25 squashed into [0, 1).

    The matched-term count means the same at any store size and on every backend; bm25
    only orders texts that match equally many terms.
    """
    folded = text.casefold()
    matched = sum(1 for term in terms if term.casefold() in folded)
    return matched + bm25 / (1.0 + bm25)


# Okapi BM25 constants, for the store-side scan and the core's relevance alike. k1 is
# the usual 1.2. b is 0.2, not the usual 0.75: turns of a conversation are short and
# their length says little about topic, and full length normalisation let a bare
# "Aisha: yo!" outrank the long turn that answers. R@10 (speakerWeight 0.5) with
# b 0.75 / 0.5 / 0.3 / 0.2 / 0.1: REALTALK 0.526 / 0.533 / 0.543 / 0.548 / 0.549,
# chat-like 0.451 / 0.459 / 0.463 / 0.467 / 0.468; original synthetic 0.953 at 0.75,
# 0.956 at 0.2 and 0.1.
BM25_K1: Final = 1.2
BM25_B: Final = 0.2
BM25_K1_PLUS_ONE: Final = BM25_K1 + 1.0


# Texts at least this long keep their casefold between steps; a shorter one is folded
# again, which costs less than looking it up (10 against 17 ms for 36 000 chat turns).
FOLD_CACHE_MIN_CHARS: Final = 512


@per_text_cache(maxsize=50_000)
def _casefolded(text: str) -> str:
    """`str.casefold`, kept per text: a session's turns are scored again at every step."""
    return text.casefold()


def _folded(texts: Sequence[str]) -> list[str]:
    """Each text's casefold, long ones from the cache."""
    return [t.casefold() if len(t) < FOLD_CACHE_MIN_CHARS else _casefolded(t) for t in texts]


def _match_idf(total: int, having: int) -> float:
    """The store-side match score's idf, ln(1 + ...), always positive: not the ranking's
    (`text.relevance.Corpus.idf`, floored classic idf over the session's turns)."""
    return math.log(1.0 + (total - having + 0.5) / (having + 0.5))


def _score(length: int, row: Sequence[int], idf: Sequence[float], avg_len: float) -> float:
    """One text's relevance from its length and term counts (the formula of `score_matches`)."""
    norm = BM25_K1 * (1.0 - BM25_B + BM25_B * length / avg_len)
    # Added term after term (`sum` of floats compensates rounding since Python 3.12,
    # which would make scores differ in the last bit between versions).
    bm25: float = 0
    matched = 0
    for weight, tf in zip(idf, row, strict=True):
        if tf:
            matched += 1
            bm25 += weight * tf * BM25_K1_PLUS_ONE / (tf + norm)
    return matched + bm25 / (1.0 + bm25)


def score_matches(texts: Sequence[str], terms: Sequence[str], scope_rows: int) -> list[float]:
    """Relevance of each matching text: distinct terms it contains, plus BM25 in [0, 1).

    BM25 is computed here, over the matching rows of the searched scope (`scope_rows`
    rows in all), instead of by a backend's index: every backend then scores the same
    rows identically, and a session's memory is ranked by what is rare in that session
    rather than across every session in the file. Term frequency counts
    non-overlapping, case-insensitive occurrences; length is in characters.
    """
    folded = _folded(texts)
    keys = [term.casefold() for term in terms]
    if not folded or not keys:
        return [0.0 for _ in texts]
    counts = [[doc.count(key) for key in keys] for doc in folded]
    total = max(scope_rows, len(folded))
    avg_len = max(1.0, sum(len(doc) for doc in folded) / len(folded))
    idf = [
        _match_idf(total, sum(1 for row in counts if row[column])) for column in range(len(keys))
    ]
    return [_score(len(doc), row, idf, avg_len) for doc, row in zip(folded, counts, strict=True)]


def best_keys(scores: Mapping[Any, float], limit: int) -> list[Any]:
    """The `limit` best-scored keys plus any tied with the last one, best first (ties by key)."""
    # Keys in order, then a stable sort by score, best first: the order of
    # (-score, key) without a Python call per key.
    ordered = sorted(sorted(scores), key=scores.__getitem__, reverse=True)
    if len(ordered) <= limit:
        return ordered
    cutoff = scores[ordered[limit - 1]]
    return [key for key in ordered if scores[key] >= cutoff]


def best_matches(
    texts: Sequence[str],
    terms: Sequence[str],
    scope_rows: int,
    limit: int,
    *,
    folded: Sequence[str] | None = None,
) -> list[tuple[int, float]]:
    """(position, score) of the texts `best_keys` keeps from `score_matches`, best first.

    The same result, without the term counts of texts that cannot make the cut: a text
    containing more distinct terms always outscores one containing fewer (BM25 adds less
    than 1), so only the groups by distinct terms that fill `limit` are scored. Document
    frequencies and the average length still come from every text. `folded` are the
    texts casefolded, when the caller keeps them.
    """
    if limit <= 0:  # `best_keys` keeps ties then: no group can be left out
        every = dict(enumerate(score_matches(texts, terms, scope_rows)))
        return [(i, every[i]) for i in best_keys(every, limit)]
    folded = _folded(texts) if folded is None else folded
    keys = [term.casefold() for term in terms]
    if not folded or not keys:
        zero = dict.fromkeys(range(len(texts)), 0.0)
        return [(i, 0.0) for i in best_keys(zero, limit)]
    # Which text holds which key, a column per key (one short loop per key), then a row
    # per text; document frequencies are the columns' sums.
    columns = [[key in doc for doc in folded] for key in keys]
    present = list(zip(*columns, strict=True))
    total = max(scope_rows, len(folded))
    avg_len = max(1.0, sum(map(len, folded)) / len(folded))
    idf = [_match_idf(total, sum(column)) for column in columns]
    # The texts of the groups (by distinct keys held) that fill the limit, best group first.
    counts = list(map(sum, present))
    sizes = Counter(counts)
    least, taken = 0, 0
    for matched in sorted(sizes, reverse=True):
        least, taken = matched, taken + sizes[matched]
        if taken >= limit:
            break
    chosen = [position for position, n in enumerate(counts) if n >= least]
    scores = _scores_of(chosen, folded, keys, present, idf, avg_len)
    return [(i, scores[i]) for i in best_keys(scores, limit)]


def _scores_of(
    chosen: Sequence[int],
    folded: Sequence[str],
    keys: Sequence[str],
    present: Sequence[Sequence[bool]],
    idf: Sequence[float],
    avg_len: float,
) -> dict[int, float]:
    """`_score` of each chosen text, bit for bit, with less work per text: a search can
    score tens of thousands of turns, most of a few lengths and holding a term once or
    twice. A score depends only on the text's length and its count of each key, so each
    distinct (length, counts) is scored once, by `_score` itself."""
    docs = [folded[i] for i in chosen]
    rows = [present[i] for i in chosen]
    columns = [
        [doc.count(key) if row[column] else 0 for doc, row in zip(docs, rows, strict=True)]
        for column, key in enumerate(keys)
    ]
    shapes = list(zip(map(len, docs), *columns, strict=True))
    scored = {shape: _score(shape[0], shape[1:], idf, avg_len) for shape in set(shapes)}
    return dict(zip(chosen, map(scored.__getitem__, shapes), strict=True))
