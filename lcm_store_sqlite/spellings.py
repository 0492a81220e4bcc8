"""The spellings SQLite's index must be asked for, so it finds every text a term matches.

The core's rule compares casefolds (`lcm_core.store.matching`). SQLite's two candidate
sources fold less: the trigram index folds case one letter to one letter (Unicode
simple folding: `É` is `é`, `K` is `k`), and LIKE folds ASCII letters only. So a
term is asked for in each spelling that folds to its casefold there:

- for the index, each run of the casefold that a typed letter folds into is also asked
  as that letter: `strasse` as `straße`, `i̇stanbul` as `İstanbul` (`TYPED_MULTI`);
- for LIKE, each letter also in every other letter that folds to the same one (`é` as
  `É`, `k` as the Kelvin sign), and every multi-character folding (`ss` as `ß`, `fi`
  as `ﬁ`): its terms are one or two characters, so the spellings stay few.

Every candidate is then checked by the core's rule. What stays out of reach of a large
scope: a long term whose text holds a typographic multi-character letter (a ligature
`ﬁ`, a Greek letter with iota `ᾳ`) where the term spells it out; a term that begins or
ends inside such a folding (`s` in `ß`, which casefolds to `ss`); and a term with more
spellings than `MAX_SPELLINGS` (its first ones are asked). Asking the index for every
ligature would multiply its queries for common English words (`first` as `ﬁrst`,
`firﬅ`...). A session's search reads its rows and is exact.
"""

from __future__ import annotations

from functools import cache
from typing import Final

from lcm_core.store.matching import fold
from lcm_store_sqlite.like import ascii_fold

# Spellings asked for one term, at most.
MAX_SPELLINGS: Final = 32
# The multi-character foldings the index is asked for: letters people type (German ß
# and capital ẞ, Turkish İ), not typography.
TYPED_MULTI: Final = "\u00df\u1e9e\u0130"
# The letters whose casefold is several characters (ß, İ, ﬁ, Greek with iota...), and the
# letters folding to one letter that is neither their lower case's upper nor title case
# (µ, ſ, ς, K, Å, Cherokee small letters...): code point ranges, so nothing scans all of
# Unicode at run time. `tests/store_sqlite/test_spellings.py` checks both against
# Python's own tables.
MULTI_FOLDING: Final = (
    (0x00DF, 0x00DF), (0x0130, 0x0130), (0x0149, 0x0149), (0x01F0, 0x01F0), (0x0390, 0x0390),
    (0x03B0, 0x03B0), (0x0587, 0x0587), (0x1E96, 0x1E9A), (0x1E9E, 0x1E9E), (0x1F50, 0x1F50),
    (0x1F52, 0x1F52), (0x1F54, 0x1F54), (0x1F56, 0x1F56), (0x1F80, 0x1FAF), (0x1FB2, 0x1FB4),
    (0x1FB6, 0x1FB7), (0x1FBC, 0x1FBC), (0x1FC2, 0x1FC4), (0x1FC6, 0x1FC7), (0x1FCC, 0x1FCC),
    (0x1FD2, 0x1FD3), (0x1FD6, 0x1FD7), (0x1FE2, 0x1FE4), (0x1FE6, 0x1FE7), (0x1FF2, 0x1FF4),
    (0x1FF6, 0x1FF7), (0x1FFC, 0x1FFC), (0xFB00, 0xFB06), (0xFB13, 0xFB17),
)  # fmt: skip
IRREGULAR_FOLDING: Final = (
    (0x00B5, 0x00B5), (0x017F, 0x017F), (0x0345, 0x0345), (0x03C2, 0x03C2), (0x03D0, 0x03D1),
    (0x03D5, 0x03D6), (0x03F0, 0x03F1), (0x03F4, 0x03F5), (0x13F8, 0x13FD), (0x1C80, 0x1C88),
    (0x1E9B, 0x1E9B), (0x1FBE, 0x1FBE), (0x2126, 0x2126), (0x212A, 0x212B), (0xAB70, 0xABBF),
)  # fmt: skip


def _letters(ranges: tuple[tuple[int, int], ...]) -> dict[str, tuple[str, ...]]:
    """casefold -> the letters of `ranges` that fold to it."""
    found: dict[str, list[str]] = {}
    for first, last in ranges:
        for point in range(first, last + 1):
            found.setdefault(chr(point).casefold(), []).append(chr(point))
    return {folded: tuple(letters) for folded, letters in found.items()}


@cache
def _multi(typed: bool) -> dict[str, tuple[str, ...]]:
    if typed:
        return _letters(tuple((ord(c), ord(c)) for c in TYPED_MULTI))
    return _letters(MULTI_FOLDING)


@cache
def _irregular() -> dict[str, tuple[str, ...]]:
    return _letters(IRREGULAR_FOLDING)


def _single(folded: str) -> tuple[str, ...]:
    """The other letters that casefold to the one letter `folded`."""
    choices = (folded.upper(), folded.title(), *_irregular().get(folded, ()))
    return tuple(
        c for c in dict.fromkeys(choices) if len(c) == 1 and c != folded and c.casefold() == folded
    )


def index_spellings(term: str) -> list[str]:
    """The term, its casefold, and the casefold with typed multi-character foldings
    spelled as their letters: what the trigram index is asked for, once per spelling the
    index (which folds case letter by letter) tells apart."""
    seen: dict[str, str] = {}
    for spelling in _spelled(term, letters=False):
        seen.setdefault(_simple_fold(spelling), spelling)
    return list(seen.values())


def _simple_fold(text: str) -> str:
    """Lower case letter by letter, as the trigram index folds (`İ` stays one letter)."""
    return "".join(low if len(low := c.lower()) == 1 else c for c in text)


def like_spellings(term: str) -> list[str]:
    """Every spelling LIKE must be asked for (ASCII-only case folding), once per ASCII fold."""
    seen: dict[str, str] = {}
    for spelling in _spelled(term, letters=True):
        seen.setdefault(ascii_fold(spelling), spelling)
    return list(seen.values())


def _spelled(term: str, *, letters: bool) -> list[str]:
    """The term, its casefold, then the casefold with some of its runs spelled as letters
    that fold to them (single letters too when `letters`), at most `MAX_SPELLINGS`."""
    folded = fold(term)
    multi = _multi(typed=not letters)
    widest = max(map(len, multi))
    # (start, end, letter): folded[start:end] may be written as `letter`.
    spots: list[tuple[int, int, str]] = []
    for at in range(len(folded)):
        if letters:
            spots += [(at, at + 1, letter) for letter in _single(folded[at])]
        for width in range(2, widest + 1):
            spots += [(at, at + width, letter) for letter in multi.get(folded[at : at + width], ())]
    found: dict[str, None] = dict.fromkeys((term, folded))
    # Depth first over the spots, each left as it is or taken when it does not overlap
    # one taken before: every leaf is one spelling, and the first ones come at once.
    stack: list[tuple[int, int, tuple[tuple[int, int, str], ...]]] = [(0, 0, ())]
    while stack and len(found) < MAX_SPELLINGS:
        index, covered, taken = stack.pop()
        if index == len(spots):
            found.setdefault(_written(folded, taken))
            continue
        start, end, letter = spots[index]
        stack.append((index + 1, covered, taken))
        if start >= covered:
            stack.append((index + 1, end, (*taken, (start, end, letter))))
    return list(found)


def _written(folded: str, taken: tuple[tuple[int, int, str], ...]) -> str:
    """`folded` with each taken run replaced by its letter."""
    parts: list[str] = []
    at = 0
    for start, end, letter in taken:
        parts += [folded[at:start], letter]
        at = end
    parts.append(folded[at:])
    return "".join(parts)
