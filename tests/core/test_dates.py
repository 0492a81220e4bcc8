"""Written dates read into ISO form, so an imported turn can be dated in the block."""

from __future__ import annotations

import pytest

from lcm_core.text.dates import (
    days_spoken_of,
    iso_time,
    named_days,
    on_named_day,
    speaks_of_named_day,
)


@pytest.mark.parametrize(
    ("written", "iso"),
    [
        ("1:56 pm on 8 May, 2023", "2023-05-08T13:56"),
        ("12:05 am on 1 January 2024", "2024-01-01T00:05"),
        ("10:00 on 1 Jan 2024", "2024-01-01T10:00"),
        ("8 May 2023", "2023-05-08"),
        ("the 3rd of Sept. 2024", "2024-09-03"),
        ("May 8, 2023", "2023-05-08"),
        ("7:05 AM, December 31st 2023", "2023-12-31T07:05"),
        ("2023/05/08", "2023-05-08"),
        ("2023.5.8", "2023-05-08"),
        ("2023年5月8日", "2023-05-08"),
        ("2023 年 12 月 1 号 上午", "2023-12-01"),
        # An ISO time is kept exactly as the host wrote it, zone and all.
        ("2026-03-02T09:15:00+08:00", "2026-03-02T09:15:00+08:00"),
    ],
)
def test_common_written_forms(written: str, iso: str) -> None:
    assert iso_time(written) == iso


@pytest.mark.parametrize(
    "written",
    ["yesterday", "31 Feb 2023", "dismay 8, 2023", "2023年13月1日", "Mayday 2023", ""],
)
def test_no_date_is_guessed(written: str) -> None:
    """Anything not a real date of a known form is left alone rather than guessed."""
    assert iso_time(written) is None


def test_a_clock_time_that_is_no_time_of_day_is_dropped() -> None:
    assert iso_time("25:61 on 8 May 2023") == "2023-05-08"
    assert iso_time("13:10 pm on 8 May 2023") == "2023-05-08"


@pytest.mark.parametrize(
    ("text", "days"),
    [
        ("What kind of pasta did Kate make on 29 Dec 2023?", {"2023-12-29"}),
        ("What happened on the 17th of January, 2024?", {"2024-01-17"}),
        ("How many naps on January 6 2024?", {"2024-01-06"}),
        ("2026年11月30日定了什么？", {"2026-11-30"}),
        ("the release of 2026-11-30", {"2026-11-30"}),
        # Day and month either way round: both days are named, neither is guessed.
        ("What is Paola doing on 10.01.2024?", {"2024-01-10", "2024-10-01"}),
        ("on 17.01.2024", {"2024-01-17"}),
        # No year: the day in any year.
        ("what did we decide on 30 Nov?", {"--11-30"}),
        ("11月30号说了什么", {"--11-30"}),
        ("The May 3 deadline", {"--05-03"}),
        # No such day, no date, or "may" the verb.
        ("31 Feb 2023", set()),
        ("may 3 people come?", set()),
        ("winter 2021 - 2022", set()),
        ("port 8080", set()),
    ],
)
def test_the_days_a_question_names(text: str, days: set[str]) -> None:
    assert named_days(text) == days


def test_a_turn_on_a_named_day() -> None:
    """A turn said on a named day, in the named year or, without one, in any year."""
    assert on_named_day("2023-12-29T10:00", frozenset({"2023-12-29"}))
    assert not on_named_day("2024-12-29T10:00", frozenset({"2023-12-29"}))
    assert on_named_day("2026-11-30", frozenset({"--11-30"}))
    assert not on_named_day(None, frozenset({"--11-30"}))
    assert not on_named_day("1:56 pm on 8 May", frozenset({"--05-08"}))


@pytest.mark.parametrize(
    ("time", "text", "days"),
    [
        ("2023-12-30T10:00:00Z", "We made pasta yesterday!", {"2023-12-29"}),
        ("2024-01-01", "This was it last night", {"2023-12-31"}),
        ("2024-01-09", "Tomorrow I am going to Osaka", {"2024-01-10"}),
        ("2024-03-03", "the day before  yesterday it rained", {"2024-03-01"}),
        ("2024-03-03", "The day after tomorrow is free", {"2024-03-05"}),
        ("2024-01-09", "我昨天去了上海，明天回来", {"2024-01-08", "2024-01-10"}),
        ("2024-01-09", "前天和后天都不行", {"2024-01-07", "2024-01-11"}),
        # Its own day, other words, or no ISO time: no other day.
        ("2024-01-09", "today and tonight", set()),
        ("2024-01-09", "yesteryear's tomorrowland", set()),
        (None, "yesterday", set()),
        ("1:56 pm on 8 May", "yesterday", set()),
    ],
)
def test_the_days_a_turn_speaks_of(time: str | None, text: str, days: set[str]) -> None:
    assert days_spoken_of(time, text) == days


def test_a_turn_that_speaks_of_a_named_day() -> None:
    """ "Yesterday" said the day after a named day is about it, in any year for `--MM-DD`."""
    assert speaks_of_named_day("2023-12-30", "we made pasta yesterday", frozenset({"2023-12-29"}))
    assert speaks_of_named_day("2026-12-01", "昨天提交了", frozenset({"--11-30"}))
    assert not speaks_of_named_day(
        "2023-12-29", "we made pasta yesterday", frozenset({"2023-12-29"})
    )
