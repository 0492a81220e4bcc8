"""Everyday concepts a question names in one word, for query expansion.

"What are Kate's hobbies?" is answered by "I love skiing, it's my favourite sport" and
"taking a cooking class today": turns that never say "hobby". A question word that names
a concept (`asks`: hobby, job, food, family, pet, travel, sport, music, 爱好, 宠物 …)
also searches the words of its parts (`finds`), in English and Chinese, at
`relevance.CONCEPT_WEIGHT`. An English word asks as a whole word, not by its stem ("book"
a cabin is no reading). The groups are package data, `data/concepts.json`,
written for lcm from general knowledge and checked entry by entry when first read. Words
that name other things in a work session ("show", "work", "plan", "goal", "home",
"series", "health", 对象, 类型) ask for nothing, so a coding step's terms stay its own.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from typing import Final

from lcm_core.text.languages.vocabulary import WordFile
from lcm_core.text.lazy_regex import lazy_compile
from lcm_core.text.tokens import CJK_RE

# An English word of a question ("kate's" is "kate" and "s": the possessive asks nothing).
_WORD_RE: Final = lazy_compile(r"[a-z]+")


@dataclass(frozen=True, slots=True)
class _Index:
    """The groups looked up by an English word or a Chinese word of `asks`."""

    by_word: dict[str, tuple[int, ...]]
    # English phrases ("her job", "'s job", "part-time"): a word that asks only so.
    phrases: tuple[tuple[re.Pattern[str], int], ...]
    chinese: tuple[tuple[str, int], ...]
    finds: tuple[str, ...]


@functools.lru_cache(maxsize=1)
def _index() -> _Index:
    """Read `data/concepts.json` once, at the first question that could use it."""
    groups = WordFile.read("concepts.json").groups("concepts")
    by_word: dict[str, list[int]] = {}
    phrases: list[tuple[re.Pattern[str], int]] = []
    chinese: list[tuple[str, int]] = []
    for position, (asks, _) in enumerate(groups):
        for word in asks:
            if CJK_RE.search(word):
                chinese.append((word, position))
            elif _WORD_RE.fullmatch(word):
                by_word.setdefault(word, []).append(position)
            else:
                start = "(?<![a-z])" if word[0].isalpha() else ""  # "'s job" follows a name
                phrases.append((re.compile(rf"{start}{re.escape(word)}(?![a-z])"), position))
    return _Index(
        {key: tuple(dict.fromkeys(v)) for key, v in by_word.items()},
        tuple(phrases),
        tuple(chinese),
        tuple(" ".join(finds) for _, finds in groups),
    )


def concept_words(text: str) -> tuple[str, ...]:
    """The `finds` words of every concept the question asks about, in the groups' order:
    an English `asks` word or phrase as a whole word of `text` (case folded; "her job" asks
    where "the cron job" does not), a Chinese one as written."""
    index = _index()
    hits: set[int] = set()
    folded = text.casefold().replace("’", "'")
    for word in _WORD_RE.findall(folded):
        hits.update(index.by_word.get(word, ()))
    hits.update(position for pattern, position in index.phrases if pattern.search(folded))
    if CJK_RE.search(text):
        hits.update(position for word, position in index.chinese if word in text)
    return tuple(index.finds[position] for position in sorted(hits))
