"""Regular expressions compiled on first use, so a short-lived hook pays only for the ones it runs.

lcm's modules hold about 250 patterns; compiling them all at import took ~200 ms (a class of
CJK ranges alone costs 2-10 ms to compile), while one `lcm hook user-prompt-submit` runs
about 35 of them. A `LazyPattern` keeps its source and flags and compiles on the first call;
from then on its methods are the compiled pattern's own bound methods, so the hot paths of
extraction and ranking pay no extra call.
"""

from __future__ import annotations

import re
import sys
import weakref
from collections.abc import Callable, Iterator
from typing import Any, TypeAlias

_METHODS = ("search", "match", "fullmatch", "finditer", "findall", "sub", "subn", "split")


class LazyPattern:
    """A `re.Pattern[str]` stand-in that compiles itself when first used."""

    def __init__(self, pattern: str, flags: int = 0) -> None:
        self.pattern = pattern
        self.flags = flags
        _CREATED.add(self)

    def compiled(self) -> re.Pattern[str]:
        """The compiled pattern; the first call also rebinds this object's methods to it."""
        regex = re.compile(self.pattern, self.flags)
        for name in _METHODS:
            self.__dict__[name] = getattr(regex, name)
        self.__dict__["compiled"] = lambda: regex
        return regex

    def search(self, string: str, pos: int = 0, endpos: int = sys.maxsize) -> re.Match[str] | None:
        """As `re.Pattern.search`."""
        return self.compiled().search(string, pos, endpos)

    def match(self, string: str, pos: int = 0, endpos: int = sys.maxsize) -> re.Match[str] | None:
        """As `re.Pattern.match`."""
        return self.compiled().match(string, pos, endpos)

    def fullmatch(
        self, string: str, pos: int = 0, endpos: int = sys.maxsize
    ) -> re.Match[str] | None:
        """As `re.Pattern.fullmatch`."""
        return self.compiled().fullmatch(string, pos, endpos)

    def finditer(
        self, string: str, pos: int = 0, endpos: int = sys.maxsize
    ) -> Iterator[re.Match[str]]:
        """As `re.Pattern.finditer`."""
        return self.compiled().finditer(string, pos, endpos)

    def findall(self, string: str, pos: int = 0, endpos: int = sys.maxsize) -> list[Any]:
        """As `re.Pattern.findall`."""
        return self.compiled().findall(string, pos, endpos)

    def sub(self, repl: str | Callable[[re.Match[str]], str], string: str, count: int = 0) -> str:
        """As `re.Pattern.sub`."""
        return self.compiled().sub(repl, string, count)

    def subn(
        self, repl: str | Callable[[re.Match[str]], str], string: str, count: int = 0
    ) -> tuple[str, int]:
        """As `re.Pattern.subn`."""
        return self.compiled().subn(repl, string, count)

    def split(self, string: str, maxsplit: int = 0) -> list[str | Any]:
        """As `re.Pattern.split`."""
        return self.compiled().split(string, maxsplit)

    def __repr__(self) -> str:
        return f"LazyPattern({self.pattern!r}, {self.flags!r})"


# Every pattern alive, for `compile_all` (weak: a pattern made inside a call is let go).
_CREATED: weakref.WeakSet[LazyPattern] = weakref.WeakSet()


def compile_all() -> int:
    """Compile every pattern made so far; returns how many.

    A long-lived process (the DSH sidecar) calls it once at start, so its first steps do
    not pay for compiling what a short-lived hook gladly skips.
    """
    for pattern in list(_CREATED):
        pattern.compiled()
    return len(_CREATED)


# What code that takes a pattern accepts: compiled now or on first use.
Regex: TypeAlias = "re.Pattern[str] | LazyPattern"


def lazy_compile(pattern: str, flags: int = 0) -> LazyPattern:
    """A pattern that compiles on first use (drop-in for a module-level `re.compile`)."""
    return LazyPattern(pattern, flags)
