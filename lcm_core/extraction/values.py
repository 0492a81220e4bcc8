"""The values a rule sets, by their shape: what tells an update of a rule from a new rule.

A convention's value has a shape that says what it is: an affix (`x_`, `_p`, `feat-`,
`wip/`), a decorator (`@timer`), a quoted or backticked name (`black`, "Kate"), a number
with its unit (500 rows, 3000元), a case style (camelCase). A message that names a rule's
value beside a new value of the same shape revises that rule, however it is worded
("'_nv' replaces '_l'", "`pv_` 不要了，换成 'g_'"); and what a rule's words say only of
the value it replaced is not shown as if it held ("…we're moving away from '_nv'").
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Final

from lcm_core.text.lazy_regex import lazy_compile
from lcm_core.text.numbers import parse_quantities

_QUOTED: Final = lazy_compile(
    r"(?<![A-Za-z0-9])'([^'\n]{1,40})'(?![A-Za-z0-9])|\"([^\"\n]{1,40})\"|`([^`\n]{1,40})`|"
    r"“([^”\n]{1,40})”|‘([^’\n]{1,40})’|「([^」\n]{1,40})」"
)
_AFFIX: Final = lazy_compile(
    r"(?<![\w/@-])(?:[A-Za-z][A-Za-z0-9]{0,9}[_/-](?![\w/-])|_[A-Za-z0-9]{1,10}(?![\w-]))"
)
_DECORATOR: Final = lazy_compile(r"(?<![\w@])@[A-Za-z_][\w.]*")
# Clauses of a rule's words, to show only those that hold (`shown_values`).
_CLAUSE: Final = lazy_compile(r"[^,;:，；：—–]+[,;:，；：—–]*")
# "from `task-` to story/", "从 X 改成 Y": the old value inside the clause that sets the new.
_FROM_TO: Final = lazy_compile(
    r"\bfrom\s+([^\s,;]+(?:\s+[^\s,;]+){0,3}?)\s+to\b|"
    r"(?:从|由)\s*([^，。；,;]{1,20}?)\s*(?:改成|换成|改为|变成|调整为|改到了?|换到了?|到)",
    re.IGNORECASE,
)
# In a Chinese clause a bare Latin word is a name ("之前定的 Spyder 取消"); dates are values.
_LATIN_IN_CJK: Final = lazy_compile(
    r"(?<![A-Za-z0-9_@`'\"-])[A-Za-z][A-Za-z0-9+.-]{1,30}(?![A-Za-z0-9_`'\"-])"
)
_CJK: Final = lazy_compile(r"[\u4e00-\u9fff]")
_DATE: Final = lazy_compile(
    r"\d{1,2}\s*月\s*\d{1,2}\s*[日号]|(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\.?\s+\d{1,2}\b",
    re.IGNORECASE,
)


@dataclass(frozen=True, slots=True)
class Value:
    """One value a text names: its shape and its folded form."""

    shape: str  # "affix-prefix", "affix-suffix", "decorator", "name", "date", "number:<unit>"
    text: str


def values_of(text: str) -> frozenset[Value]:
    """Every value the text names, by shape (quotes taken off)."""
    found: set[Value] = set()
    for match in _QUOTED.finditer(text):
        inner = next(g for g in match.groups() if g is not None).strip()
        found.add(_shaped(inner))
    for match in _DECORATOR.finditer(text):
        found.add(Value("decorator", match.group().casefold()))
    for match in _AFFIX.finditer(text):
        found.add(_shaped(match.group()))
    for quantity in parse_quantities(text):
        if quantity.unit:
            found.add(Value(f"number:{quantity.unit}", str(quantity.value)))
    for match in _DATE.finditer(text):
        found.add(Value("date", "".join(match.group().casefold().split())))
    if _CJK.search(text):
        for match in _LATIN_IN_CJK.finditer(text):
            found.add(Value("name", match.group().casefold()))
    return frozenset(found)


def affix_aspect(text: str) -> str:
    """`prefix` or `suffix` when the values the text names are affixes of one kind."""
    shapes = {v.shape for v in values_of(text) if v.shape.startswith("affix-")}
    if len(shapes) != 1:
        return ""
    return "prefix" if shapes == {"affix-prefix"} else "suffix"


def without_retired(content: str, retired: Callable[[str], bool]) -> str:
    """A rule's words without the clause that retires an old value beside the new one.

    "We agreed to phase out `@memoize`, which means you should stick @timer above each
    function" shows from "which means"; "switch line length from 80 characters to 120"
    loses "from 80 characters". `retired` tells a clause with a retiring word. A clause is
    dropped only when another clause names a value of the same shape (the new one).
    """
    content = _FROM_TO.sub(_to_new_value, content)
    clauses = _CLAUSE.findall(content)
    if len(clauses) < 2:
        return content
    shapes = [{v.shape for v in values_of(clause)} for clause in clauses]
    kept = []
    for index, clause in enumerate(clauses):
        others = set().union(*(s for n, s in enumerate(shapes) if n != index))
        if shapes[index] and shapes[index] <= others and retired(clause):
            continue
        kept.append(clause)
    shown = "".join(kept).strip(" ,;:，；：—–")
    return shown if shown else content


_NOT_OLD: Final = lazy_compile(r"(?:now|today|tomorrow|here|then|there|the start)\b", re.IGNORECASE)


def _to_new_value(match: re.Match[str]) -> str:
    """ "from 80 characters to" -> "to ", "from pycodestyle to `pyright`" -> "to `pyright`";
    a from-part that is a time or place ("from now on, ask X to") stays."""
    old = match.group(1) if match.group(1) is not None else match.group(2)
    if _NOT_OLD.match(old):
        return match.group(0)
    return "to " if match.group(1) is not None else "改成"


def _shaped(token: str) -> Value:
    folded = token.casefold()
    if folded.startswith("@"):
        return Value("decorator", folded)
    if re.fullmatch(r"_[a-z0-9]{1,10}", folded):
        return Value("affix-suffix", folded)
    if re.fullmatch(r"[a-z][a-z0-9]{0,9}[_/-]", folded):
        return Value("affix-prefix", folded)
    return Value("name", folded)


def revises(old: str, new: str) -> bool:
    """Whether `new` names a value of `old` beside a new value of the same shape."""
    before, after = values_of(old), values_of(new)
    kept = before & after
    if not kept:
        return False
    shapes = {v.shape for v in kept}
    return any(v.shape in shapes for v in after - before)


def shown_values(content: str, replaced: str) -> str:
    """`content` without its clauses that name only values of the `replaced` rule.

    "We're moving away from '_nv'; could you end every variable name in '_ez'?" shows
    its second clause; a clause naming a new value, or none, is kept.
    """
    old = values_of(replaced)
    new = values_of(content) - old
    if not old & values_of(content):
        return content
    kept = [
        clause
        for clause in _CLAUSE.findall(content)
        if not ((mine := values_of(clause)) and mine & old and not mine & new)
    ]
    shown = "".join(kept).strip(" ,;:，；：—–")
    return shown if shown else content
