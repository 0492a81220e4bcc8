"""Written dates read into ISO form, so an imported turn can be dated in the block."""

from __future__ import annotations

import pytest

from lcm_core.text.dates import iso_time


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
