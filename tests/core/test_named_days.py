"""A question that names a day favours the turns said that day (`retrieval.dayWeight`)."""

from __future__ import annotations

from typing import Any

import pytest

from lcm_core.config import Config, load_config
from lcm_core.retrieval.lifts import scored_pool
from lcm_core.text.query import query_signals

S = "sess"
# The day alone: no neighbours, context or episode to lift a turn.
ALONE = {"neighbourRadius": 0, "contextWeight": 0, "episodeWeight": 0}


def _order(script: Any, question: str, config: Config) -> list[int]:
    pool = scored_pool(script.store, S, query_signals(question), config)
    return sorted(pool.turns, key=lambda seq: (-pool.turns[seq].relevance, seq))


def _first_two(
    script: Any, older: str, newer: tuple[str, str], question: str
) -> tuple[list[int], list[int]]:
    """The two best turns without and with the day lift: `older` said on 1 March 2024 (seq
    1), `newer` said on its day (seq 2), then filler said later."""
    script.user(1, older, time="2024-03-01T09:00:00Z")
    script.user(2, newer[0], time=f"{newer[1]}T09:00:00Z")
    for seq in range(3, 40):
        script.user(seq, f"filler {seq}", time="2024-03-06T09:00:00Z")
    on = load_config({"retrieval": ALONE})
    off = load_config({"retrieval": {**ALONE, "ablate": ["day"]}})
    return _order(script, question, off)[:2], _order(script, question, on)[:2]


DAYS = {
    # The same statement on two days; the question names the later day in its own form.
    "en": ("we ordered the blue tiles", "What did we order on 3 March 2024?"),
    "zh": ("我们订了蓝色的瓷砖", "2024年3月3日我们订了什么？"),
}


@pytest.mark.parametrize("language", sorted(DAYS))
def test_a_named_day_favours_the_turns_said_that_day(script: Any, language: str) -> None:
    """Asked about a day, the turn said that day comes first; switched off, the older
    one does (equal scores keep seq order)."""
    statement, question = DAYS[language]
    assert _first_two(script, statement, (statement, "2024-03-03"), question) == ([1, 2], [2, 1])


SPOKEN_OF = {
    # Two reports of the same thing; the later one is about the named day as "yesterday".
    "en": (
        "we ordered the blue tiles",
        "yesterday we ordered the blue tiles",
        "What did we order on 3 March 2024?",
    ),
    "zh": ("我们订了蓝色的瓷砖", "昨天我们订了蓝色的瓷砖", "2024年3月3日我们订了什么？"),
}


@pytest.mark.parametrize("language", sorted(SPOKEN_OF))
def test_yesterday_said_the_day_after_is_the_named_day(script: Any, language: str) -> None:
    """A turn said the day after the named day that calls it "yesterday" (昨天) is lifted
    like a turn said that day; without the lift the shorter, older statement leads."""
    plain, yesterday, question = SPOKEN_OF[language]
    assert _first_two(script, plain, (yesterday, "2024-03-04"), question) == ([1, 2], [2, 1])
