"""English-Chinese vocabulary of work sessions, for cross-lingual query expansion.

Written for lcm (no dictionary package): a question in one language also searches the
other language's word for the same thing, at `relevance.BRIDGE_WEIGHT`, so "what is our
budget?" finds `预算不超过3000元`, and "端口是多少" finds "use port 8080". The pairs are
package data, `data/bridge.json`, checked entry by entry when first read
(`lcm_core.text.languages.vocabulary`).
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from lcm_core.text.languages.vocabulary import WordFile
from lcm_core.text.stemming import stem
from lcm_core.text.tokens import CJK_RE


@functools.lru_cache(maxsize=1)
def pairs() -> tuple[tuple[str, str], ...]:
    """The (english, chinese) pairs of `data/bridge.json`, sorted; an English word may have
    two Chinese words. Read at the first translation, not at import (a hook that never
    translates never pays for them)."""
    return WordFile.read("bridge.json").pairs("pairs")


@dataclass(frozen=True, slots=True)
class _Index:
    """The pairs looked up both ways, built once."""

    # English stem tuple -> Chinese words, in the pairs' order.
    to_zh: dict[tuple[str, ...], tuple[str, ...]]
    # Chinese word -> English words, in the pairs' order.
    to_en: dict[str, tuple[str, ...]]
    # A stem -> the positions (in `to_zh`) of the keys that hold it, so a query looks
    # up only the keys its own stems can complete instead of walking all of them.
    by_stem: dict[str, tuple[int, ...]]
    keys: tuple[tuple[str, ...], ...]
    # True when every Chinese word holds a CJK character (a text without one has none).
    all_cjk: bool


@functools.lru_cache(maxsize=1)
def _index() -> _Index:
    """English stem tuple -> Chinese words, and Chinese word -> English words."""
    to_zh: dict[tuple[str, ...], list[str]] = {}
    to_en: dict[str, list[str]] = {}
    for english, chinese in pairs():
        key = tuple(stem(word) for word in english.split())
        to_zh.setdefault(key, []).append(chinese)
        if len(chinese) >= 2:  # one character alone is too often part of another word
            to_en.setdefault(chinese, []).append(english)
    keys = tuple(to_zh)
    by_stem: dict[str, list[int]] = {}
    for position, key in enumerate(keys):
        for part in dict.fromkeys(key):
            by_stem.setdefault(part, []).append(position)
    return _Index(
        {k: tuple(v) for k, v in to_zh.items()},
        {k: tuple(v) for k, v in to_en.items()},
        {k: tuple(v) for k, v in by_stem.items()},
        keys,
        all(CJK_RE.search(word) for word in to_en),
    )


def translations(text: str, tokens: Sequence[str]) -> Iterable[str]:
    """Words of the other language for what the text says, in a stable order."""
    index = _index()
    present = set(tokens)
    found: list[str] = []
    candidates = {p for token in present for p in index.by_stem.get(token, ())}
    for position in sorted(candidates):  # the pairs' order, as a walk over all keys gives
        key = index.keys[position]
        if all(part in present for part in key):
            found.extend(index.to_zh[key])
    if not index.all_cjk or CJK_RE.search(text):
        for word, english in index.to_en.items():
            if word in text:
                found.extend(english)
    return dict.fromkeys(found)
