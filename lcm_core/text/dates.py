"""Dates as people and datasets write them, read into ISO form so evidence can be dated.

Hosts stamp events in ISO 8601. Imported conversations often do not ("8 May, 2023",
"1:56 pm on 8 May, 2023", "May 8 2023", "2023/05/08", "2023年5月8日"); their turns
would show no date in the block and fall into no session day. `iso_time` reads the
common written forms, deterministically and without a locale, and gives up (None) on
anything else rather than guess.
"""

from __future__ import annotations

import datetime as dt
import re
from typing import Final

from lcm_core.text.languages import en, zh
from lcm_core.text.lazy_regex import lazy_compile

_MONTHS: Final = {
    name: number
    for number, names in enumerate(
        (
            ("january", "jan"),
            ("february", "feb"),
            ("march", "mar"),
            ("april", "apr"),
            ("may",),
            ("june", "jun"),
            ("july", "jul"),
            ("august", "aug"),
            ("september", "sep", "sept"),
            ("october", "oct"),
            ("november", "nov"),
            ("december", "dec"),
        ),
        1,
    )
    for name in names
}
_MONTH: Final = r"\b(?P<month>" + "|".join(sorted(_MONTHS, key=len, reverse=True)) + r")\.?"
_YEAR: Final = r"(?P<year>\d{4})"
_DAY: Final = r"(?<!\d)(?P<day>\d{1,2})(?:st|nd|rd|th)?"
# An ISO date (with anything after it) is kept exactly as written.
ISO_DATE_RE: Final = lazy_compile(r"\d{4}-\d{2}-\d{2}")
_DATE_RES: Final = (
    lazy_compile(rf"{_DAY}\s+(?:of\s+)?{_MONTH},?\s+{_YEAR}", re.IGNORECASE),  # 8 May, 2023
    lazy_compile(rf"{_MONTH}\s+{_DAY},?\s+{_YEAR}", re.IGNORECASE),  # May 8, 2023
    lazy_compile(rf"{_YEAR}[/.](?P<month>\d{{1,2}})[/.]{_DAY}"),  # 2023/05/08
    lazy_compile(rf"{_YEAR}\s*年\s*(?P<month>\d{{1,2}})\s*月\s*{_DAY}\s*[日号]"),  # 2023年5月8日
)
# A day and month without a year ("30 Nov", "Nov 30", "11月30日"): named as `--MM-DD`.
_NO_YEAR: Final = r"(?![\s,]*(?:\d{4}|年))"
_YEARLESS_RES: Final = (
    lazy_compile(rf"{_DAY}\s+(?:of\s+)?{_MONTH}(?![a-z]){_NO_YEAR}", re.IGNORECASE),
    lazy_compile(rf"{_MONTH}\s+{_DAY}(?![\d:]){_NO_YEAR}", re.IGNORECASE),
    lazy_compile(r"(?<![\d年])(?<!年\s)(?P<month>\d{1,2})\s*月\s*(?P<day>\d{1,2})\s*[日号]"),
)
# A date in digits with day and month in either order ("10.01.2024", "1/10/2024").
_NUMERIC_DATE_RE: Final = lazy_compile(r"(?<![\d.])(\d{1,2})[./](\d{1,2})[./](\d{4})(?![\d.])")
# A word for a day before or after the one it is said on ("yesterday", "明天"); a longer
# phrase first, so "the day before yesterday" is not read as "yesterday".
_RELATIVE_DAYS: Final = {**en.RELATIVE_DAYS, **zh.RELATIVE_DAYS}
_RELATIVE_RE: Final = lazy_compile(
    "|".join(
        en.WORD_START + word.replace(" ", r"\s+") + en.WORD_END
        for word in sorted(_RELATIVE_DAYS, key=len, reverse=True)
    ),
    re.IGNORECASE,
)
# A clock time beside the date ("1:56 pm", "13:56"); 下午/上午 are not read.
_CLOCK_RE: Final = lazy_compile(
    r"(?<!\d)(?P<hour>\d{1,2}):(?P<minute>\d{2})\s*(?P<half>[ap]\.?m\b\.?)?", re.IGNORECASE
)


# Epoch milliseconds of this century have 12 or 13 digits; fewer is no DSH time.
_EPOCH_MS_DIGITS: Final = 12


def said_on(time: str | None) -> str | None:
    """The ISO date a time begins with (`2026-03-02T09:15:00+08:00` -> `2026-03-02`), or
    of an epoch-milliseconds time (DSH's) in UTC, or None when it is absent or neither.

    The date as the host wrote it, never converted to another zone, so the block is the
    same bytes wherever it is built; "when did ...?" questions need it.
    """
    if time is None:
        return None
    if time.isdigit() and len(time) >= _EPOCH_MS_DIGITS:
        # DSH writes epoch milliseconds: the UTC date, the same wherever it is read.
        try:
            moment = dt.datetime.fromtimestamp(int(time) / 1000, tz=dt.UTC)
        except (OverflowError, OSError, ValueError):
            return None
        return moment.date().isoformat()
    return time[:10] if ISO_DATE_RE.fullmatch(time[:10]) else None


def iso_time(written: str) -> str | None:
    """`written` in ISO form: `2023-05-08T13:56` with a clock time, `2023-05-08` without;
    an ISO time as given; None when no date of a known form is in it."""
    text = written.strip()
    if said_on(text) is not None:
        return text
    for pattern in _DATE_RES:
        found = pattern.search(text)
        if found is None:
            continue
        day = _day(found.group("year"), _month(found), found.group("day"))
        if not day:
            return None
        clock = _CLOCK_RE.search(text[: found.start()] + " " + text[found.end() :])
        return day[0] + (_clock(clock) if clock else "")
    return None


def named_days(text: str) -> frozenset[str]:
    """Every calendar day `text` names, as ISO dates ("on 29 Dec 2023", "10.01.2024"), or
    as `--MM-DD` when it names no year ("on 30 Nov", "11月30日").

    A date in digits whose day and month could be either way round ("10.01.2024") names
    both days: which one the writer meant is not guessed, and a day with no turns costs
    nothing. Dates that do not exist ("31 Feb 2023") name no day.
    """
    days: set[str] = set()
    for found in ISO_DATE_RE.finditer(text):
        days.update(_day(found.group()[:4], found.group()[5:7], found.group()[8:10]))
    for pattern in _DATE_RES:
        for found in pattern.finditer(text):
            days.update(_day(found.group("year"), _month(found), found.group("day")))
    for found in _NUMERIC_DATE_RE.finditer(text):
        first, second, year = found.groups()
        days.update(_day(year, second, first))
        days.update(_day(year, first, second))
    for pattern in _YEARLESS_RES:
        for found in pattern.finditer(text):
            if found.group("month").lower() == "may" and found.group("month") != "May":
                continue  # "may 3 people come?" is a verb
            # A leap year, so "29 Feb" is a day; the year is then left out.
            days.update("-" + day[4:] for day in _day("2000", _month(found), found.group("day")))
    return frozenset(days)


def on_named_day(time: str | None, days: frozenset[str]) -> bool:
    """True when `time` falls on one of `named_days` (a `--MM-DD` day in any year)."""
    day = said_on(time)
    return day is not None and _is_named(day, days)


def speaks_of_named_day(time: str | None, text: str, days: frozenset[str]) -> bool:
    """True when `text`, said at `time`, speaks of one of `named_days` by a relative word:
    "we made pasta yesterday" said on 30 Dec 2023 is about 29 Dec 2023."""
    return any(_is_named(day, days) for day in days_spoken_of(time, text))


def days_spoken_of(time: str | None, text: str) -> frozenset[str]:
    """The ISO days other than its own that `text`, said at `time`, names by a relative
    word ("yesterday", "tomorrow", "昨天", "明天"); none when `time` has no ISO date."""
    day = said_on(time)
    if day is None:
        return frozenset()
    offsets = {
        _RELATIVE_DAYS[" ".join(found.group().casefold().split())]
        for found in _RELATIVE_RE.finditer(text)
    }
    said = dt.date.fromisoformat(day)
    return frozenset((said + dt.timedelta(days=offset)).isoformat() for offset in offsets)


def _is_named(day: str, days: frozenset[str]) -> bool:
    """True when the ISO `day` is one of `days`, or its month and day are (`--MM-DD`)."""
    return day in days or "-" + day[4:] in days


def _month(found: re.Match[str]) -> int:
    """The month number of a date match: written in digits or as a name ("Sept.")."""
    month = found.group("month")
    return int(month) if month.isdigit() else _MONTHS[month.lower().rstrip(".")]


def _day(year: str | int, month: str | int, day: str | int) -> tuple[str, ...]:
    """The ISO date of these numbers, or nothing when there is no such day."""
    try:
        return (dt.date(int(year), int(month), int(day)).isoformat(),)
    except ValueError:
        return ()


def _clock(found: re.Match[str]) -> str:
    """The clock time as `T13:56` ("1:56 pm"), or "" when it is no time of day."""
    hour, minute = int(found.group("hour")), int(found.group("minute"))
    half = (found.group("half") or "").lower()
    if half:
        if not 1 <= hour <= 12:
            return ""
        hour = hour % 12 + (12 if half.startswith("p") else 0)
    if hour > 23 or minute > 59:
        return ""
    return f"T{hour:02d}:{minute:02d}"


def instant(time: str | None) -> int | None:
    """A stored event time as epoch milliseconds, to order statements of different sessions.

    DSH writes epoch milliseconds, hooks and imported chats ISO times (a time without a
    zone is read as UTC); None when the time is absent or of neither form.
    """
    if not time:
        return None
    text = time.strip()
    if text.isdigit():
        return int(text)
    if said_on(text) is None:
        return None
    try:
        moment = dt.datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=dt.UTC)
    return int(moment.timestamp() * 1000)


def readable_time(value: str | None) -> str:
    """A stored event time as a person reads it: ISO 8601 in UTC for the epoch
    milliseconds DSH writes (`1796000073400` -> `2026-11-30T00:01:13.400+00:00`); any
    other value as it was stored, `-` when there is none. For display only: the stored
    value, `--json` and the block keep what the host wrote."""
    if not value:
        return "-"
    text = value.strip()
    if text.isdigit() and 9 <= len(text) <= 14:
        seconds = int(text) / (1000 if len(text) > 10 else 1)
        try:
            moment = dt.datetime.fromtimestamp(seconds, dt.UTC)
        except (OverflowError, OSError, ValueError):
            return text
        return moment.isoformat(timespec="milliseconds" if len(text) > 10 else "seconds")
    return text
