"""Condition clauses ("when the cache is warm", "含税", "高峰期"): what a stated value depends on.

Extraction keeps these beside numbers and items so a limit is never quoted without the
circumstances it was given for. The patterns are generic clause markers in English and
Chinese; a clause runs from its marker to the next clause boundary.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Final

from lcm_core.text.lazy_regex import lazy_compile
from lcm_core.text.tokens import CJK_CLASS

MAX_CONDITIONS: Final = 16  # per sentence; more is a pasted text, not a stated limit
# English markers that open a clause lasting to the next boundary.
_EN_CLAUSE: Final = lazy_compile(
    r"\b(?:(?:only|even|except) )?(?:when(?:ever)?|if|unless|while|during|until|once|"
    r"as long as|provided(?: that)?|excluding|including|not including|measured|"
    r"only (?:on|in|for|during|after|before)|after|before)\b[^,;:.!?\n，。；：！？()（）]*",
    re.IGNORECASE,
)
# English qualifiers that are complete on their own.
_EN_FIXED: Final = lazy_compile(
    r"\b(?:at peak(?: \w+)?|under (?:heavy |peak |normal |high )?load|in prod(?:uction)?|"
    r"under the [\w\- ]{1,30}?(?:load test|stress test|benchmark|test)|at steady state|at idle|"
    r"on (?:warm|cold|busy|quiet|peak|normal) days|"
    r"(?:on|in) (?:staging|ci)|locally|with an? (?:warm|cold|empty|full) cache|"
    r"on (?:a )?(?:cold|warm) (?:start|cache)|(?:un)?compressed|gzipped|(?:before|after) tax|"
    r"on the [\w\- ]{1,30}? (?:build|platform|plan|tier|branch|cluster|region)|"
    r"per (?:[a-z][\w\-]*)(?: [a-z][\w\-]*)?)\b",
    re.IGNORECASE,
)
# Verbs after which "if" asks a question rather than stating a condition.
_IF_QUESTION_VERBS: Final = lazy_compile(
    r"\b(?:check|see|know|ask|wonder|verify|tell me|sure|unsure|decide|whether)\s*$", re.I
)
_PER_STOP_TEXT: Final = (
    "and or but per the a an to of with when whenever if unless until while on in at for"
)
_PER_STOP: Final = frozenset(_PER_STOP_TEXT.split())

# Chinese: "在/当 … 时/情况下/期间", "如果 …", "X 的时候", inclusion terms, fixed qualifiers.
_ZH_AT: Final = lazy_compile(
    r"(?:在|当)[^，。；,;！？：:\n（）()]{1,24}?"
    r"(?:的时候|的情况下|情况下|条件下|期间|时候|时|之前|之后|以前|以后|环境下|环境中|中|下)"
)
_ZH_IF: Final = lazy_compile(r"(?:如果|假如|要是|只要|除非|一旦|若)[^，。；,;！？\n（）()]{1,30}")
_ZH_TAIL: Final = lazy_compile(r"(?:的时候|的情况下|情况下|期间|之前|之后|以前|以后)")
_ZH_INCLUDE: Final = lazy_compile(
    r"(?:不含|不包含|不包括|包含|包括|除去|扣除|含)[^，。；,;！？：:\n（）()]{1,12}"
)
_ZH_FIXED: Final = lazy_compile(
    r"税前|税后|高峰期|峰值时|大促期间|夜间|白天|工作日|周末|节假日|弱网|冷启动|"
    r"压缩前|压缩后|生产环境|测试环境|线上环境|按[^，。；,;！？\n]{1,12}?(?:统计|计算|算)|"
    r"(?:发布|上线|部署|提交|合并|发版|打包|构建|测试|重启|迁移|升级|回滚|删除)(?:之)?[前后]|"
    rf"每(?:秒|分钟|小时|天|日|周|月|年|人|次|个(?:[A-Za-z]+|[{CJK_CLASS}]{{1,2}}))"
)
_PAREN: Final = lazy_compile(r"[（(]([^（）()\n]{1,40})[）)]")
_CODEISH: Final = lazy_compile(r"[=<>{}\[\]`]|--|\w\(|^\s*[\d:.\-\s~到至]*$")


@dataclass(frozen=True, slots=True)
class Condition:
    """A condition phrase and where it sits in the text it was found in."""

    text: str
    start: int
    end: int


def find_conditions(text: str) -> list[Condition]:
    """The condition clauses of one sentence, in reading order, overlaps merged."""
    found: list[Condition] = []
    position = 0
    while (match := _EN_CLAUSE.search(text, position)) is not None:
        if match.group().casefold().startswith("if") and _IF_QUESTION_VERBS.search(
            text[: match.start()]
        ):
            position = match.start() + 2  # "check if …" asks; look on inside the clause
            continue
        found.append(_trimmed(text, match.start(), match.end()))
        position = match.end()
    for match in _EN_FIXED.finditer(text):
        end = match.end()
        if match.group().casefold().startswith("per "):
            end = _per_end(text, match.start(), end)
        found.append(_trimmed(text, match.start(), end))
    for pattern in (_ZH_AT, _ZH_IF, _ZH_INCLUDE, _ZH_FIXED):
        found.extend(_trimmed(text, m.start(), m.end()) for m in pattern.finditer(text))
    found.extend(_zh_tails(text))
    for match in _PAREN.finditer(text):
        inner = match.group(1).strip()
        if inner and not _CODEISH.search(inner):
            found.append(Condition(inner, match.start(1), match.end(1)))
    return _merge([c for c in found if c.text])


def _trimmed(text: str, start: int, end: int) -> Condition:
    phrase = text[start:end]
    stripped = phrase.rstrip(" \t的话")
    lead = len(phrase) - len(phrase.lstrip())
    return Condition(stripped.strip(), start + lead, start + len(stripped))


def _per_end(text: str, start: int, end: int) -> int:
    # "per minute per key" is two conditions; "per file and" stops before "and".
    words = text[start:end].split()
    while len(words) > 2 and words[-1].casefold() in _PER_STOP:
        words.pop()
    return start + len(" ".join(words))


def _zh_tails(text: str) -> list[Condition]:
    """Clauses that end in a time marker without an opening one: "跑测试的时候"."""
    found: list[Condition] = []
    for match in _ZH_TAIL.finditer(text):
        window = max(0, match.start() - 24)  # only a short stretch can belong to the clause
        clause_start = (
            max(text.rfind(ch, window, match.start()) for ch in "，。；,;！？：:\n（(") + 1
        )
        clause_start = max(clause_start, window)
        start = max(clause_start, match.start() - 16)
        # Do not begin inside a Latin word.
        while start < match.start() and text[start - 1 : start].isalnum() and start > clause_start:
            if not text[start].isascii():
                break
            start += 1
        phrase = text[start : match.end()].strip()
        if len(phrase) > len(match.group()):
            found.append(Condition(phrase, match.end() - len(phrase), match.end()))
    return found


def _merge(conditions: list[Condition]) -> list[Condition]:
    """Drop a condition that lies inside another; keep reading order."""
    ordered = sorted(conditions, key=lambda c: (c.start, -c.end))
    kept: list[Condition] = []
    reach = -1  # every kept condition starts before this one; the furthest end decides
    for cond in ordered:
        if cond.end <= reach:
            continue
        kept.append(cond)
        reach = cond.end
    return kept[:MAX_CONDITIONS]
