"""The language packs' word lists as package data, read once and checked entry by entry.

Each file in `lcm_core/text/languages/data/` is one JSON object with an `about` string
and one object per list, each with its own `about` and its entries, as in
`lcm_core/extraction/data/`. Adding a word is a data change; a malformed entry stops the
import with a `VocabularyError` that names the file, the list and the entry, so a bad
edit cannot ship quietly or change ranking unseen.

The files are read beside this module with `open` rather than `importlib.resources`:
importing that package costs a hook about 4 ms at start-up, and lcm is installed as files.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from typing import Any, Final, NoReturn

from lcm_core.text.lazy_regex import lazy_compile

DATA_DIR: Final = os.path.join(os.path.dirname(__file__), "data")
_SHOWN_DIR: Final = "lcm_core/text/languages/data"
# An English side of a bridge pair: lower-case words, one space between them.
_ENGLISH: Final = lazy_compile(r"[a-z]+(?: [a-z]+)*")
# A Chinese side: no Latin letter, digit or space.
_CHINESE: Final = lazy_compile(r"[^A-Za-z0-9\s]+")


class VocabularyError(ValueError):
    """A word-list file that does not hold what its reader expects."""


class WordFile:
    """One parsed data file: the name errors show, and its top-level object.

    A plain class, not a dataclass: building a dataclass at import costs a hook more than
    reading the file does.
    """

    __slots__ = ("data", "name")

    def __init__(self, name: str, data: Mapping[str, Any]) -> None:
        self.name = name
        self.data = data

    @classmethod
    def read(cls, filename: str, folder: str | None = None) -> WordFile:
        """The file `filename` of `folder` (the package's data folder by default), parsed."""
        path = os.path.join(folder or DATA_DIR, filename)
        shown = f"{_SHOWN_DIR}/{filename}" if folder is None else path
        try:
            with open(path, encoding="utf-8") as handle:
                text = handle.read()
        except OSError as exc:
            raise VocabularyError(f"{shown}: cannot read it ({exc.strerror})") from None
        return cls.parse(shown, text)

    @classmethod
    def parse(cls, name: str, text: str) -> WordFile:
        """A file's text as a `WordFile`: it must be a JSON object with an `about` string."""
        try:
            data = json.loads(text)
        except ValueError as exc:
            raise VocabularyError(f"{name}: not JSON ({exc})") from None
        if not isinstance(data, dict) or not isinstance(data.get("about"), str):
            raise VocabularyError(f"{name}: expected a JSON object with an 'about' string")
        return cls(name, data)

    def words(self, key: str, *, lower: bool = False) -> tuple[str, ...]:
        """List `key`'s words in file order: each a non-empty trimmed string, listed once
        (and in lower case with `lower`, for words matched after case folding)."""
        entries = self._entries(key, "words", list)
        seen: dict[str, int] = {}
        for index, word in enumerate(entries):
            problem = ""
            if not isinstance(word, str) or not word or word != word.strip():
                problem = f"{word!r} is not a word (a non-empty trimmed string)"
            elif lower and word != word.lower():
                problem = f"{word!r} is not lower case (text is folded before matching)"
            elif word in seen:
                problem = f"{word!r} is listed already, at {key}[{seen[word]}]"
            if problem:
                self._fail(f"{key}[{index}]", problem)
            seen[word] = index
        return tuple(entries)

    def chars(self, key: str) -> frozenset[str]:
        """List `key`'s characters, written as one string: no space, none twice."""
        text = self._entries(key, "chars", str)
        for index, char in enumerate(text):
            if char.isspace() or text.index(char) != index:
                self._fail(f"{key}[{index}]", f"{char!r} is a space or listed already")
        if not text:
            self._fail(key, "holds no character")
        return frozenset(text)

    def day_offsets(self, key: str) -> dict[str, int]:
        """List `key`'s words for another day, each with how many days away it is."""
        days = self._entries(key, "days", dict)
        for word, offset in days.items():
            if not word or word != word.strip() or word != word.lower():
                self._fail(f"{key}[{word!r}]", "is not a trimmed lower-case word")
            if isinstance(offset, bool) or not isinstance(offset, int):
                self._fail(f"{key}[{word!r}]", f"{offset!r} is not a whole number of days")
        return dict(days)

    def pairs(self, key: str) -> tuple[tuple[str, str], ...]:
        """List `key`'s [english, chinese] pairs: English lower-case words, Chinese with no
        Latin letter, digit or space; sorted, each pair once (their order is the output's)."""
        found: list[tuple[str, str]] = []
        previous: tuple[str, str] | None = None
        for index, pair in enumerate(self._entries(key, "pairs", list)):
            problem = _pair_problem(pair, previous)
            if problem:
                self._fail(f"{key}[{index}]", problem)
            previous = (pair[0], pair[1])
            found.append(previous)
        return tuple(found)

    def groups(self, key: str) -> tuple[tuple[tuple[str, ...], tuple[str, ...]], ...]:
        """List `key`'s concept groups: each `{"asks": [...], "finds": [...]}`, two lists of
        lower-case trimmed words, none listed twice in one list."""
        found: list[tuple[tuple[str, ...], tuple[str, ...]]] = []
        for index, group in enumerate(self._entries(key, "groups", list)):
            if not isinstance(group, dict) or set(group) != {"asks", "finds"}:
                self._fail(f"{key}[{index}]", "expected an object with 'asks' and 'finds'")
            sides = []
            for side in ("asks", "finds"):
                words = group[side]
                ok = isinstance(words, list) and words and len(set(words)) == len(words)
                if not ok or not all(
                    isinstance(w, str) and w and w == w.strip() and w == w.lower() for w in words
                ):
                    self._fail(
                        f"{key}[{index}].{side}",
                        "expected lower-case trimmed words, each once",
                    )
                sides.append(tuple(words))
            found.append((sides[0], sides[1]))
        return tuple(found)

    def _entries(self, key: str, field: str, kind: type) -> Any:
        """The entries of list `key`: `{"about": ..., field: <kind>}`."""
        entry = self.data.get(key)
        if not isinstance(entry, dict) or not isinstance(entry.get("about"), str):
            self._fail(key, "expected an object with an 'about' string")
        value = entry.get(field)
        if not isinstance(value, kind):
            self._fail(key, f"expected '{field}' to be a JSON {_JSON_NAMES[kind]}")
        return value

    def _fail(self, where: str, problem: str) -> NoReturn:
        raise VocabularyError(f"{self.name}: {where}: {problem}")


def _pair_problem(pair: Any, previous: tuple[str, str] | None) -> str:
    """What is wrong with one bridge entry ("" for a good pair); the fast path is a few checks
    per pair, as the whole list is read when a hook first translates."""
    if not (type(pair) is list and len(pair) == 2):
        return f"{pair!r} is not an [english, chinese] pair of strings"
    english, chinese = pair
    if type(english) is not str or type(chinese) is not str:
        return f"{pair!r} is not an [english, chinese] pair of strings"
    if not _ENGLISH.fullmatch(english):
        return f"{english!r} is not lower-case English words"
    if not _CHINESE.fullmatch(chinese):
        return f"{chinese!r} is empty or holds a Latin letter, digit or space"
    if previous is not None and (english, chinese) <= previous:
        return f"{pair!r} is out of order or repeated (after {list(previous)!r})"
    return ""


_JSON_NAMES: Final[dict[type, str]] = {list: "array", str: "string", dict: "object"}
