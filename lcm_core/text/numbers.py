"""Numbers with units, comparators and the conditions that qualify them, English and Chinese.

"keep p95 under 200 ms when the cache is warm" gives 200, `ms`, `<=`, ["when the cache is
warm"]; "预算不超过3000元（含税）" gives 3000, `元`, `<=`, ["含税"]. Dates, clock times,
versions, addresses and digits inside identifiers (p95, S3, e2e) are not quantities.
Units are canonical for measures (ms, s, min, h, day, week, month, year, B..TB, %, USD,
元, EUR) so values compare across languages; a counted noun keeps its own words.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from dataclasses import dataclass, replace
from typing import Any, Final

from lcm_core.text.conditions import Condition, find_conditions
from lcm_core.text.lazy_regex import Regex, lazy_compile
from lcm_core.text.numbers_role import (
    identifier_after,
    identifier_before,
    is_version_after_name,
    is_year_in_name,
    port_after,
)
from lcm_core.text.numbers_vocab import (
    ATTACHED_UNITS,
    CURRENCY_PREFIX,
    EN_COMPARATORS,
    EN_SUFFIX_COMPARATORS,
    MEASURE_WORDS,
    NOUN_STOP,
    SPACED_UNITS,
    VERSIONED_NAMES,
    ZH_COMPARATORS,
    ZH_SUFFIX_COMPARATORS,
)

# Full-width digits and signs become ASCII, one character for one, so offsets still line up.
_WIDE: Final = str.maketrans(
    "０１２３４５６７８９％．＄＜＞～－＝",
    "0123456789%.$<>~-=",
)
_ZH_DIGITS: Final = {"零": 0, "〇": 0, "一": 1, "二": 2, "两": 2, "三": 3, "四": 4, "五": 5}
_ZH_DIGITS.update({"六": 6, "七": 7, "八": 8, "九": 9})
_ZH_UNITS: Final = {"十": 10, "百": 100, "千": 1000}
_ZH_BIG: Final = {"万": 10_000, "亿": 100_000_000}
_ZH_NUM_CHARS: Final = "零〇一二两三四五六七八九十百千万亿"

_NUMBER_RE: Final = lazy_compile(
    r"(?P<ar>\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?)|(?P<zh>[" + _ZH_NUM_CHARS + r"]+)"
)
# Spans that hold digits but no quantity.
_NOT_QUANTITY: Final = (
    lazy_compile(r"```.*?(?:```|$)", re.S),
    lazy_compile(r"`[^`\n]*`"),
    lazy_compile(r"https?://\S+"),
    lazy_compile(r"\b\d{4}[-/.]\d{1,2}[-/.]\d{1,2}(?:[T ]\d{1,2}:\d{2}(?::\d{2})?\S*)?"),
    lazy_compile(r"\d{4}年(?:\d{1,2}月(?:\d{1,2}[日号])?)?|\d{1,2}月\d{1,2}[日号]"),
    lazy_compile(r"\b\d{1,2}:\d{2}(?::\d{2})?\b"),
    lazy_compile(r"\d{1,2}[点時时](?:\d{1,2}分)?(?:[到至\-~]\d{1,2}[点时])?"),
    lazy_compile(r"\b\d{1,3}(?:\.\d{1,3}){3}(?::\d+)?\b"),
    lazy_compile(r"\bv?\d+(?:\.\d+){2,}\b"),
    # Not \b: between a Han character and a Latin letter there is no word boundary. The
    # lookahead first lets every position that is no letter fail before the long alternation.
    lazy_compile(
        r"(?:(?=[A-Za-z])(?<![A-Za-z0-9_])(?:" + VERSIONED_NAMES + r")|版本)[ \-]?v?\d+(?:\.\d+)*",
        re.I,
    ),
    lazy_compile(
        r"(?:版本|version|升级到|降级到|upgrade to|bump(?:ed)? to)[^,;，。；\d]{0,8}\d+(?:\.\d+)+",
        re.I,
    ),
    lazy_compile(r"[#@]\d+"),
)
_LEFT_BLOCK: Final = lazy_compile(r"[A-Za-z0-9_./\\#@\-]$")
_ALLOWED_LEFT_DASH: Final = lazy_compile(r"(?:^|[\s(（:：=])-$")
_NEGATED: Final = lazy_compile(
    r"(?:\bnot|\binstead of|\brather than|而不是|而非|不是)\s*(?:the\s+)?(?:port\s*|端口\s*)?$",
    re.I,
)
_PORT_PREFIX: Final = lazy_compile(
    r"(?:\bport|端口号?)(?:\s*(?:is|to|=|:|number|no\.?))?\s*"
    r"(?:改为|改成|设为|设成|设置为|用|是|为|:|：)?\s*$",
    re.I,
)
_RANGE_AFTER: Final = lazy_compile(r"\s*(?:-|–|~|〜|到|至)\s*(?=\d)")
_BETWEEN_AFTER: Final = lazy_compile(r"\s*(?:and|&)\s*(?=\d)", re.I)
_MULTIPLIER: Final = lazy_compile(
    r"(?:\s?(?:thousand|million|billion)\b|[kK](?![A-Za-z])|万|千|亿|M(?![A-Za-z]))"
)
_MULTIPLIER_VALUES: Final = {"thousand": 1_000, "million": 1_000_000, "billion": 1_000_000_000}
_MULTIPLIER_VALUES.update(
    {"k": 1_000, "万": 10_000, "千": 1_000, "亿": 100_000_000, "m": 1_000_000}
)
_WORD: Final = lazy_compile(r"[A-Za-z][A-Za-z\-]*")
_NO_END: Final = 1 << 62
_TAIL: Final = 60  # characters before a number that cues (comparator, "not", "port") may use
# Anything that could be a number: text without one skips every other pattern.
_MAYBE_NUMBER: Final = lazy_compile("[0-9０-９" + _ZH_NUM_CHARS + "]")


def _alternation(raws: list[str], flags: int = 0) -> Regex:
    """One regex for a longest-first list of spellings; a spelling ending in a Latin letter
    must not run into another letter ("ms" is no unit in "msgs")."""
    parts = [
        re.escape(raw) + ("(?![A-Za-z])" if raw[-1].isascii() and raw[-1].isalpha() else "")
        for raw in raws
    ]
    return lazy_compile("(?:" + "|".join(parts) + ")", flags)


_ATTACHED_RE: Final = _alternation([raw for raw, _ in ATTACHED_UNITS])
_ATTACHED_MAP: Final = dict(ATTACHED_UNITS)
_SPACED_RE: Final = _alternation([raw for raw, _ in SPACED_UNITS], re.IGNORECASE)
_SPACED_MAP: Final = {raw.casefold(): canonical for raw, canonical in SPACED_UNITS}
_MEASURE_RE: Final = _alternation(list(MEASURE_WORDS))
# One search says whether any comparator cue is there; the ordered list then says which.
_ANY_BEFORE: Final = lazy_compile(
    "|".join(p.pattern for p, _ in (*EN_COMPARATORS, *ZH_COMPARATORS)), re.IGNORECASE
)
_ANY_AFTER: Final = lazy_compile(
    "|".join(p.pattern for p, _ in (*EN_SUFFIX_COMPARATORS, *ZH_SUFFIX_COMPARATORS)),
    re.IGNORECASE,
)


@dataclass(frozen=True, slots=True)
class Quantity:
    """One stated number: value, unit, comparator, range end and qualifying conditions."""

    raw: str
    value: int | float
    unit: str | None = None
    comparator: str | None = None
    upper: int | float | None = None
    conditions: tuple[str, ...] = ()
    negated: bool = False
    start: int = 0
    end: int = 0

    def to_dict(self) -> dict[str, Any]:
        """The stored shape (`numbers_json`): every key present, so rows compare byte for byte."""
        return {
            "raw": self.raw,
            "value": self.value,
            "unit": self.unit,
            "comparator": self.comparator,
            "max": self.upper,
            "conditions": list(self.conditions),
        }


def parse_quantities(text: str) -> list[Quantity]:
    """The quantities of one sentence in reading order, each with its conditions."""
    if not _MAYBE_NUMBER.search(text):
        return []  # no digit, no numeral: skip the condition scan the quantities would need
    return quantities_and_conditions(text)[0]


def quantities_and_conditions(text: str) -> tuple[list[Quantity], list[Condition]]:
    """The quantities of one sentence and the condition clauses found on the way."""
    conditions = find_conditions(text)
    if not _MAYBE_NUMBER.search(text):
        return [], conditions
    wide = text.translate(_WIDE)
    blocked = _blocked_spans(wide)
    found: list[Quantity] = []
    consumed_to = -1
    for match in _NUMBER_RE.finditer(wide):
        if match.start() < consumed_to or _inside(match.start(), blocked):
            continue
        quantity = _read(text, wide, match)
        if quantity is not None:
            found.append(quantity)
            consumed_to = quantity.end
    return attach_conditions(text, found, conditions), conditions


def attach_conditions(
    text: str, quantities: list[Quantity], conditions: list[Condition]
) -> list[Quantity]:
    """Give each number the conditions of its clause; a clause without numbers covers all.

    A number inside a condition ("if more than 1000 jobs") does not own that condition.
    """
    if not conditions or not quantities:
        return quantities
    owned: list[list[str]] = [[] for _ in quantities]
    for cond in conditions:
        outside = [i for i, q in enumerate(quantities) if not (cond.start <= q.start < cond.end)]
        same_clause = [i for i in outside if _same_clause(text, quantities[i], cond)]
        for i in same_clause or outside:
            owned[i].append(cond.text)
    return [replace(q, conditions=tuple(dict.fromkeys(owned[i]))) for i, q in enumerate(quantities)]


def _same_clause(text: str, q: Quantity, cond: Condition) -> bool:
    low, high = sorted((q.start, cond.start))
    return not re.search(r"[,;，；:：]", text[low:high])


def _blocked_spans(text: str) -> list[tuple[int, int]]:
    """Spans holding no quantity, sorted and merged so that they do not overlap."""
    merged: list[tuple[int, int]] = []
    for start, end in sorted((m.start(), m.end()) for p in _NOT_QUANTITY for m in p.finditer(text)):
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], end))
        else:
            merged.append((start, end))
    return merged


def _inside(position: int, spans: list[tuple[int, int]]) -> bool:
    # Spans are disjoint and sorted: only the last one starting at or before it can hold it.
    index = bisect_right(spans, (position, _NO_END))
    return index > 0 and spans[index - 1][1] > position


def _read(text: str, wide: str, match: re.Match[str]) -> Quantity | None:
    start, end = match.span()
    # Only the last few characters before a number matter; a bounded tail keeps
    # long texts with many numbers linear.
    before = wide[max(0, start - _TAIL) : start]
    if match.group("zh"):
        return _read_chinese(text, wide, start, end)
    if _LEFT_BLOCK.search(before) and not _ALLOWED_LEFT_DASH.search(before):
        return None
    marked = identifier_before(before)
    if marked == "id" or identifier_after(wide[end : end + 12]):
        return None  # "issue 15", "case 7", "1.29 版本": a name, not an amount
    value = _arabic(match.group("ar"))
    value, end = _apply_multiplier(wide, end, value)
    upper: int | float | None = None
    range_match = _RANGE_AFTER.match(wide, end) or (
        _BETWEEN_AFTER.match(wide, end) if _comparator_before(before) == "between" else None
    )
    if range_match:
        second = _NUMBER_RE.match(wide, range_match.end())
        if second and second.group("ar"):
            upper, end = _apply_multiplier(wide, second.end(), _arabic(second.group("ar")))
    unit, end_after_unit = _unit_after(wide, end)
    glued = wide[end : end + 1]
    if unit is None and glued and (glued == "_" or (glued.isalpha() and glued.isascii())):
        return None  # digits glued to a word that is no unit: an identifier
    if before.endswith("百分之"):
        unit, start = "%", start - 3
    if marked == "port" or (unit is None and port_after(wide[end : end + 8])):
        unit = "port"
    unit = _prefix_unit(before) or unit
    if unit is None and is_version_after_name(match.group("ar"), before):
        return None  # "dbt-core 1.8", "RabbitMQ 3.13": a version
    comparator = _comparator_before(before) or _comparator_after(wide, end_after_unit)
    if is_year_in_name(match.group("ar"), unit, comparator):
        return None
    if upper is not None:
        comparator = "between"
    raw_start = start - len(_currency_prefix(before))
    return Quantity(
        raw=text[raw_start:end_after_unit].strip(),
        value=value,
        unit=unit,
        comparator=comparator,
        upper=upper,
        negated=bool(_NEGATED.search(before[: len(before) - len(_currency_prefix(before))])),
        start=raw_start,
        end=end_after_unit,
    )


def _read_chinese(text: str, wide: str, start: int, end: int) -> Quantity | None:
    chars = wide[start:end]
    value = chinese_number(chars)
    if value is None or wide[start - 1 : start] == "第":
        return None  # not a numeral, or an ordinal ("第三个")
    before = wide[max(0, start - _TAIL) : start]
    comparator = _comparator_before(before)
    unit: str | None
    if before.endswith("百分之"):
        unit, unit_end, start = "%", end, start - 3
    else:
        unit, unit_end = _unit_after(wide, end)
        has_place = any(ch in "百千万亿" for ch in chars)
        if unit is None and comparator is None and not has_place:
            return None  # a bare numeral is usually part of a word ("统一", "一起")
    if chars == "一" and unit == "个" and comparator is None:
        return None  # "一个" is usually the article "a", not a count
    comparator = comparator or _comparator_after(wide, unit_end)
    return Quantity(
        raw=text[start:unit_end].strip(),
        value=value,
        unit=unit,
        comparator=comparator,
        negated=bool(_NEGATED.search(before)),
        start=start,
        end=unit_end,
    )


def chinese_number(chars: str) -> int | None:
    """Value of a Chinese numeral ("三百二十", "两万五", "十五"); None if it is not one."""
    if not chars or any(ch not in _ZH_NUM_CHARS for ch in chars):
        return None
    if not any(ch in _ZH_DIGITS or ch == "十" for ch in chars):
        return None  # "千万", "万" alone are words ("by all means"), not amounts
    total, section = 0, 0
    digit: int | None = None
    previous = ""
    for ch in chars:
        if ch in ("零", "〇"):
            digit = None
        elif ch in _ZH_DIGITS:
            if digit is not None:
                return None  # "一二" is a list of digits, not a numeral
            digit = _ZH_DIGITS[ch]
        elif ch in _ZH_UNITS:
            section += (1 if digit is None else digit) * _ZH_UNITS[ch]
            digit = None
        else:
            total += ((section + (digit or 0)) or 1) * _ZH_BIG[ch]
            section, digit = 0, None
        previous = ch if ch not in _ZH_DIGITS or ch in ("零", "〇") else previous
    if digit is not None:
        # A trailing digit right after a place counts one place lower: "两万五" is
        # 25000, "三千五" 3500, "一百二" 120; after "零" or alone it is units.
        place = _ZH_UNITS.get(previous) or _ZH_BIG.get(previous) or 10
        section += digit * (place // 10) if previous and chars[-2:-1] == previous else digit
    return total + section


def _arabic(raw: str) -> int | float:
    number = float(raw.replace(",", ""))
    return int(number) if number.is_integer() and "." not in raw else number


def _apply_multiplier(wide: str, end: int, value: int | float) -> tuple[int | float, int]:
    match = _MULTIPLIER.match(wide, end)
    if not match:
        return value, end
    word = match.group().strip().casefold()
    if word == "m" and not re.match(r"M\s+[A-Za-z]", wide[end:]):
        return value, end  # "500M" alone is a size; "2M requests" is two million
    scaled = value * _MULTIPLIER_VALUES[word]
    return (int(scaled) if float(scaled).is_integer() else scaled), match.end()


def _unit_after(wide: str, end: int) -> tuple[str | None, int]:
    """The unit written after a number (attached, spaced, or a counted noun), and its end."""
    attached = _ATTACHED_RE.match(wide, end)
    if attached:
        return _ATTACHED_MAP[attached.group()], attached.end()
    gap = 1 if wide[end : end + 1] == " " else 0
    if gap and wide[end + 1 : end + 2] == " ":
        return None, end
    spaced = _SPACED_RE.match(wide, end + gap)
    if spaced:
        return _SPACED_MAP[spaced.group().casefold()], spaced.end()
    measure = _MEASURE_RE.match(wide, end + gap)
    if measure:
        return MEASURE_WORDS[measure.group()], measure.end()
    if gap:
        return _counted_noun(wide, end + gap)
    return None, end


def _counted_noun(wide: str, start: int) -> tuple[str | None, int]:
    """Up to three words after a number, stopping at function words: "daily active users"."""
    words: list[str] = []
    position = start
    while len(words) < 3:
        match = _WORD.match(wide, position)
        if not match or match.group().casefold() in NOUN_STOP:
            break
        words.append(match.group())
        position = match.end()
        if wide[position : position + 1] != " ":
            break
        position += 1
    while words and words[0].casefold() in {"more", "extra", "additional", "other"}:
        words.pop(0)
    if not words:
        return None, start
    end = wide.find(words[-1], start) + len(words[-1])
    return " ".join(words), end


def _prefix_unit(before: str) -> str | None:
    if _PORT_PREFIX.search(before):
        return "port"
    prefix = _currency_prefix(before)
    return CURRENCY_PREFIX.get(prefix.strip()) if prefix else None


def _currency_prefix(before: str) -> str:
    match = re.search(r"[$¥￥€£]\s?$", before)
    return match.group() if match else ""


def _comparator_before(before: str) -> str | None:
    tail = before[-40:]
    tail = tail[: len(tail) - len(_currency_prefix(tail))]
    if not _ANY_BEFORE.search(tail):
        return None
    for pattern, comparator in EN_COMPARATORS:
        if pattern.search(tail):
            return comparator
    for pattern, comparator in ZH_COMPARATORS:
        if pattern.search(tail):
            return comparator
    return None


def _comparator_after(wide: str, end: int) -> str | None:
    rest = wide[end : end + 16]
    if not _ANY_AFTER.match(rest):
        return None
    for pattern, comparator in (*EN_SUFFIX_COMPARATORS, *ZH_SUFFIX_COMPARATORS):
        if pattern.match(rest):
            return comparator
    return None
