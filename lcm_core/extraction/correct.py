"""Corrections: spotting them, finding the earlier item they correct, and rewriting its value.

A correction is explicit ("actually", "I meant", "no, make it 5", "不对", "更正", "改成") or
implicit (", not 3000", "instead of SQLite", "而不是…") — an implicit one counts only when
the replaced value is found in an earlier item. The target is the active item that shares
the most with the correction: the replaced value, numbers in the same unit, key terms;
ties go to the most recent. "No, make it 5" names no subject, so its new item is the
target's sentence with the old number swapped for the new one.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Final

from lcm_core.store.models import MemoryItem
from lcm_core.text.lazy_regex import Regex, lazy_compile
from lcm_core.text.numbers import Quantity
from lcm_core.text.numbers_role import MEASURE_UNITS
from lcm_core.text.query import can_narrow
from lcm_core.text.tokens import tokenize

_EN_LEAD: Final = lazy_compile(
    r"^(?:(?:hmm+|oh|ah|um+|uh|ugh|argh|well|so|ok(?:ay)?|right)\b[\s,.!:—–-]*)*"
    r"(?P<cue>actually|correction|scratch that|i meant|i mean|no wait|wait,? no|nope|oops|"
    r"(?:sorry[\s,.!:—–-]*)?(?:wrong again|my bad|my mistake)|sorry|wrong again|"
    r"no(?=\s*[,.!—–-]|\s+wait\b)|i misspoke|i mistyped|mis-?typed|typo|"
    r"let me correct (?:that|myself)|make (?:it|that)|change (?:it|that) to|"
    r"(?:that|it) should (?:be|say))(?![A-Za-z])[\s,.!:：—–-]*",
    re.IGNORECASE,
)
_ZH_LEAD: Final = lazy_compile(
    r"^(?:(?:嗯|哦|啊|哎|诶|呃)[\s,，。!！]*)*"
    r"(?P<cue>不对|不是的|又?错了|我?(?:刚才)?又?说错了|更正(?:一下)?|纠正(?:一下)?|改一下|其实是|"
    r"我的意思是|写错了|打错了|口误|不[，,])"
    r"[\s,，。.!！:：—–-]*"
)
_CHANGE_TO: Final = lazy_compile(r"改成|改为|换成|改用|^\s*change\b.*\bto\b", re.IGNORECASE)
# ", not just X but (also) Y" adds to X; it replaces nothing.
_ADDITIVE: Final = "just|only|merely|simply|solely"
_REPLACED_EN: Final = lazy_compile(
    rf"(?:,\s*not(?!\s+(?:{_ADDITIVE})\b)|\binstead of|\brather than|"
    r"\b(?:we(?:'re|’re| are)\s+)?(?:retiring|dropping|replacing|no longer using)\b|"
    r"\bno longer(?!\s+(?:need|have|want|use)\b)|\b(?:i(?:'ve| have)?\s+)?changed my mind about|"
    r"\bswitch(?:ing)? from|\b(?:which|that) replaces)"
    r"\s+(?P<x>[^,.;:!?—–()\n]+)|"
    # "…, so '_ox' is out", "`gn_` is retired now": the old value, then the word retiring it.
    r"(?:,\s*)?\b(?:so|and)\s+(?P<y>[^,.;:!?—–()\n]{1,40}?)\s+(?:is|are)\s+(?:out|gone|"
    r"retired|deprecated|history|dropped|dead|no more)\b",
    re.IGNORECASE,
)
_REPLACED_ZH: Final = lazy_compile(
    r"(?:而不是|而非|不再是|不是)\s*(?P<x>[^，。；,;！？\n]+?)(?:\s*了)?(?=[，。；,;！？\n]|$)|"
    # The value is bounded: unbounded, a long text without a comma costs quadratic time.
    r"(?P<y>[^，。；,;！？\n]{1,60}?)\s*(?:那套不用了|就别用了|别用了|不行了|作废了?|不对了?|不用了|不算了|不要了)|"
    r"(?:代替|取代|替换掉|替掉|换掉|不再用|别再用|(?:我们)?弃用)\s*(?P<z>[^，。；,;！？\n]+)"
)
# "Scratch '_m';", "不要再用 “_r” 了，" before the new value: the old one, named to retire it.
_STOPPED: Final = (
    r"(?:scratch|forget|drop|stop using|no more)\s+[^,;.!?，。；]{1,40}?|"
    r"(?:不要再用|别再用|不再用)\s*[^，。；,;]{1,30}?\s*了?"
)
_STOPPED_LEAD: Final = lazy_compile(rf"^\s*(?:{_STOPPED})\s*[;,；，—–-]\s*(?=\S)", re.IGNORECASE)
_STOPPED_ONLY: Final = lazy_compile(_STOPPED, re.IGNORECASE)
_FILLER_ONLY: Final = lazy_compile(
    rf"(?:\s*\b(?:{_ADDITIVE}|really|quite|yet|even|always|ever|exactly|necessarily|"
    r"entirely|totally|sure|so|too|very|much|now|anymore|again|here|there|at all|that)\b)+"
    r"\s*",
    re.IGNORECASE,
)
_REPLACED_STOP: Final = lazy_compile(
    r"\s+(?:for|in|on|at|to|as|with|because|since|which|that|so)\b.*$|\s*[—–].*$", re.I
)
_LEADING_NUMBER: Final = lazy_compile(
    r"^[$¥￥€£]?\s?(?:\d[\d,]*(?:\.\d+)?[kK万千亿]?|[零〇一二两三四五六七八九十百千万亿]+)"
)
# Words of the correction itself, which say nothing about what is corrected.
_CUE_TEXT: Final = """actually correction scratch meant mean make change instead rather sorry oops wait
    argh ugh wrong again bad mistake 决定 决定了 采用 统一 以后 我们
    mistyped misspoke typo nope hmm right then correct set use 不对 应该 该是 改成 改为 换成
    改用 更正 纠正 说错 错了 刚才 我说 其实 意思 就行 不是 而不是 成为 一下 我刚"""
_CUE_TERMS: Final = frozenset(_CUE_TEXT.split())
_UNIT_TEXT: Final = """ms sec secs seconds second min mins minutes minute hours hour hrs days day weeks week
    months month years year mb gb kb tb bytes percent items 毫秒 分钟 小时 秒钟"""
_UNIT_TERMS: Final = frozenset(_UNIT_TEXT.split())
RECENT_ITEMS: Final = 150  # candidates considered: corrections refer to recent values


@dataclass(frozen=True, slots=True)
class CorrectionCue:
    """What a sentence says about correcting: the rest of it, and what it replaces."""

    body: str
    explicit: bool
    replaced: tuple[str, ...] = ()


@lru_cache(maxsize=16_384)
def correction_cue(sentence: str) -> CorrectionCue | None:
    """The correction a user sentence makes, or None when it corrects nothing.

    Cached: a pre-step asks it of the same quoted sentences step after step.
    """
    body, explicit = sentence.strip(), False
    for lead in (_EN_LEAD, _ZH_LEAD):
        match = lead.match(body)
        if match:
            body, explicit = body[match.end() :].strip(), True
            break
    if _CHANGE_TO.search(body):
        explicit = True
    replaced = tuple(
        _REPLACED_STOP.sub("", _old_value(m)).strip()
        for pattern in (_REPLACED_EN, _REPLACED_ZH)
        for m in pattern.finditer(body)
    )
    # "not really", "not yet": a word that only softens the "not" names no replaced value.
    replaced = tuple(r for r in replaced if r and not _FILLER_ONLY.fullmatch(r))
    if not explicit and not replaced:
        return None
    return CorrectionCue(body=body, explicit=explicit, replaced=replaced)


def _old_value(match: re.Match[str]) -> str:
    """The replaced value a match of `_REPLACED_EN` / `_REPLACED_ZH` names."""
    found = match.groupdict()
    value = found.get("x") or found.get("y") or found.get("z") or ""
    # "之前说的 'vr_' 作废", "原来说的 150 毫秒 不对": the words before the value say it was said.
    return re.sub(r"^(?:之前|原来|刚才|以前)?(?:说的|定的|用的)\s*", "", value)


def drop_replaced(text: str) -> str:
    """The text without the values it says are replaced (", not 3000", "instead of '_x'",
    "，不是 'a_'"), for showing a rule whose old value is listed as old elsewhere."""
    return strip_replaced(text) or text


def strip_replaced(text: str) -> str:
    """The text without the phrases that name replaced values ("" when that is all it says)."""
    kept = _REPLACED_ZH.sub("", _REPLACED_EN.sub(" ", _STOPPED_LEAD.sub("", text)))
    if kept == text:
        return text.strip()
    # What the cut leaves at the ends is separators, not words ("task-" keeps its dash).
    return " ".join(kept.split()).strip(" ,，;；:：—–")


def stops_using(clause: str) -> bool:
    """A clause that only retires an old value ("Scratch '_m'", "不要再用 `camelCase` 了")."""
    return _STOPPED_ONLY.fullmatch(clause.strip(" .。;；,，")) is not None


def key_terms(text: str) -> frozenset[str]:
    """Content words and CJK bigrams, without numbers, units and correction words."""
    return _key_terms(text)


@lru_cache(maxsize=4096)
def _key_terms(text: str) -> frozenset[str]:
    # Pure and called for the same stored contents again and again while picking targets.
    return frozenset(
        t
        for t in tokenize(text)
        if can_narrow(t) and not t.isdigit() and t not in _CUE_TERMS and t not in _UNIT_TERMS
    )


def is_subject_less(body: str, quantities: Sequence[Quantity]) -> bool:
    """True for "make it 5", "改成5分钟": a new value and nothing that names its subject."""
    return any(not q.negated for q in quantities) and not key_terms(_without_numbers(body))


def _without_numbers(text: str) -> str:
    # Digits inside a name ("k8s", "s3", "ec2") stay: they are part of the subject.
    return re.sub(r"(?<![A-Za-z])\d[\d,.]*(?![A-Za-z])", " ", text)


@dataclass(frozen=True, slots=True)
class TargetView:
    """An active item as corrections see it: folded text, key terms, (value, unit) pairs."""

    item: MemoryItem
    folded: str
    terms: frozenset[str]
    numbers: tuple[tuple[Any, Any], ...]


def target_view(item: MemoryItem) -> TargetView:
    """Prepare an item once; it is then scored against every correction of the run."""
    return TargetView(
        item=item,
        folded=item.content.casefold(),
        terms=key_terms(_without_numbers(item.content)),
        numbers=tuple((n.get("value"), n.get("unit")) for n in item.numbers),
    )


@dataclass(frozen=True, slots=True)
class _Probe:
    """What a correction is matched with, prepared once per correction."""

    terms: frozenset[str]
    replaced: tuple[tuple[str, Regex], ...]
    negated: tuple[Quantity, ...]
    units: frozenset[str]
    values: frozenset[tuple[int | float, str | None]]
    subject_less: bool


def pick_target(
    cue: CorrectionCue, quantities: Sequence[Quantity], views: Sequence[TargetView]
) -> MemoryItem | None:
    """The active item the correction replaces, or None when nothing fits well enough."""
    positive = [q for q in quantities if not q.negated]
    probe = _Probe(
        terms=key_terms(_without_numbers(cue.body)),
        # ASCII edges: "3000" must match in "3000元" but not in "13000" or "v3000x".
        replaced=tuple(
            (
                text.casefold(),
                lazy_compile(
                    r"(?<![A-Za-z0-9_.])" + re.escape(text.casefold()) + r"(?![A-Za-z0-9_])"
                ),
            )
            for text in cue.replaced
        ),
        negated=tuple(q for q in quantities if q.negated),
        units=frozenset(q.unit for q in positive if q.unit),
        values=frozenset((q.value, q.unit) for q in positive),
        subject_less=is_subject_less(cue.body, quantities),
    )
    needed = 3.0 if not cue.explicit else (0.5 if probe.subject_less else 1.0)
    best: tuple[float, int] | None = None
    chosen: MemoryItem | None = None
    for order, view in enumerate(views[-RECENT_ITEMS:]):
        score, replaced_hit = _score(probe, view)
        if (not cue.explicit and not replaced_hit) or score < needed:
            continue
        rank = (score, order)  # later items win ties
        if best is None or rank > best:
            best, chosen = rank, view.item
    return chosen


def _score(probe: _Probe, view: TargetView) -> tuple[float, bool]:
    numbers = view.numbers
    shared_terms = probe.terms & view.terms
    number_hit = any(
        v == q.value and (u == q.unit or None in (u, q.unit))
        for q in probe.negated
        for v, u in numbers
    )
    # The unit of the replaced value, or of the new one ("150 ms, not 200").
    units = probe.units | {q.unit for q in probe.negated if q.unit}
    same_unit = any(u in units for _, u in numbers if u)
    text_hit = number_text_hit = False
    for text, rx in probe.replaced:
        if text in view.folded and rx.search(view.folded):
            if _LEADING_NUMBER.fullmatch(text):
                number_text_hit = True
            else:
                text_hit = True
    # A bare number ("not 3000") is shared by many unrelated values (a port, a budget
    # of 3000元): it names the target only when a subject word or the unit agrees too.
    replaced_hit = text_hit or ((number_hit or number_text_hit) and bool(shared_terms or same_unit))
    score = 3.0 if replaced_hit else 0.0
    if probe.units and any(u in probe.units for _, u in numbers):
        score += 1.0
    if probe.values and any(pair in probe.values for pair in numbers):
        score += 2.0  # the old value, mentioned again ("20太小了")
    if probe.terms:
        score += min(len(shared_terms), 3)
    if probe.subject_less and numbers:
        if not _compatible(probe, numbers):
            return 0.0, False  # "不，是 1.30" never rewrites "2 GB": another kind of value
        score += 0.5
    return score, replaced_hit


def _compatible(probe: _Probe, numbers: tuple[tuple[Any, Any], ...]) -> bool:
    """A bare new value never replaces a measurement ("2 GB"); a stated unit must agree."""
    if probe.units:
        return any(u in probe.units or u not in MEASURE_UNITS for _, u in numbers)
    return any(u not in MEASURE_UNITS for _, u in numbers)


def substitute(target: MemoryItem, new: Quantity, replaced: Sequence[Quantity]) -> str | None:
    """The target's content with its old number swapped for `new`, or None if it has none."""
    numbers = [n for n in target.numbers if isinstance(n.get("raw"), str) and n["raw"]]
    if not numbers:
        return None
    old_values = {q.value for q in replaced}
    pick = (
        next((n for n in numbers if n.get("value") in old_values), None)
        or next((n for n in numbers if new.unit and n.get("unit") == new.unit), None)
        or numbers[0]
    )
    old_raw = str(pick["raw"])
    if old_raw not in target.content:
        return None
    old_digits = _LEADING_NUMBER.match(old_raw)
    new_digits = _LEADING_NUMBER.match(new.raw)
    if new.unit is not None and new.unit != pick.get("unit"):
        new_raw = new.raw
    elif old_digits and new_digits:
        new_raw = new_digits.group() + old_raw[old_digits.end() :]
    else:
        new_raw = new.raw
    return target.content.replace(old_raw, new_raw, 1)
