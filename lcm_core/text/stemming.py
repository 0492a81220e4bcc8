"""The English stemmer ranking and the language bridge share, so neither imports the other."""

from __future__ import annotations

import functools
from typing import Final

import snowballstemmer  # type: ignore[import-untyped]

_STEMMER: Final = snowballstemmer.stemmer("english")


@functools.lru_cache(maxsize=65_536)
def stem(word: str) -> str:
    """The Snowball (Porter2) stem of a lower-case English word."""
    return str(_STEMMER.stemWord(word))
