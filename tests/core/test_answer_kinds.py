"""A question's cue word (when, where, who, how many; 什么时候, 哪里, 谁, 多少) favours the
turns that hold that kind of answer: a date, a place, a name, a number."""

from __future__ import annotations

from typing import Any

import pytest

from lcm_core.config import load_config
from lcm_core.retrieval.lifts import scored_pool
from lcm_core.store.ports import MemoryStore
from lcm_core.text.answer_kinds import DATE, NUMBER, PERSON, PLACE, asked_kind, holds_kind
from lcm_core.text.query import query_signals

S = "sess"
# The answer kind alone: no neighbours, context or episode to lift a turn.
ALONE = {"neighbourRadius": 0, "contextWeight": 0, "episodeWeight": 0}
ON = load_config({"retrieval": ALONE})
OFF = load_config({"retrieval": {**ALONE, "ablate": ["answer-kind"]}})


@pytest.mark.parametrize(
    ("question", "kind"),
    [
        ("When did Kate start skiing?", DATE),
        ("What year did you move?", DATE),
        ("地漏什么时候有人来修？", DATE),
        ("母亲哪天过生日？", DATE),
        ("Where does Elise live?", PLACE),
        ("Which cities has Paola visited?", PLACE),
        ("周末去哪里玩了？", PLACE),
        ("Who did Nicolas go to the movies with?", PERSON),
        ("纪念日是和谁过的？", PERSON),
        ("How many pets does Vanessa have?", NUMBER),
        ("How long have I worked for Northwind?", NUMBER),
        ("我在远山软件工作多久了？", NUMBER),
        ("一共养了几只猫？", NUMBER),
        ("What did Kate cook?", None),
        ("晚饭不能安排哪种菜？", None),
    ],
)
def test_the_kind_of_answer_a_question_asks_for(question: str, kind: str | None) -> None:
    assert asked_kind(question) == kind


@pytest.mark.parametrize(
    ("text", "kind", "held"),
    [
        ("I started skiing last winter", DATE, True),
        ("we went on 8 May, 2023", DATE, True),
        ("skiing is my favourite sport", DATE, False),
        ("我上个月开始学滑雪", DATE, True),
        ("滑雪是我最喜欢的运动", DATE, False),
        ("we spent the day in Galveston", PLACE, True),
        ("我们去了杭州市的西湖", PLACE, True),
        ("we spent the day at home", PLACE, False),
        ("I went with Barbara and the kids", PERSON, True),
        ("我跟小明一起去的", PERSON, True),
        ("I went alone, as always", PERSON, False),
        ("we adopted 3 cats", NUMBER, True),
        ("we adopted two cats", NUMBER, True),
        ("我们养了三只猫", NUMBER, True),
        ("we adopted cats", NUMBER, False),
    ],
)
def test_what_kind_of_answer_a_turn_holds(text: str, kind: str, held: bool) -> None:
    assert holds_kind(text, kind) is held


def test_a_name_the_question_holds_is_no_answer() -> None:
    """ "Where is Paola going?" is not answered by a turn that only names Paola again."""
    assert holds_kind("I am travelling to Paola soon", PLACE)
    assert not holds_kind("I am travelling to Paola soon", PLACE, known={"paola"})
    assert not holds_kind("this one is from The shop", PLACE)  # "The" starts no name


def _order(store: MemoryStore, question: str, config: Any) -> list[int]:
    pool = scored_pool(store, S, query_signals(question), config)
    return sorted(pool.turns, key=lambda seq: (-pool.turns[seq].relevance, seq))


CASES = {
    # The first turn says the topic word twice, so it wins on words alone; the second
    # holds the kind of answer the question asks for.
    "en-when": (
        ("skiing, skiing is the best sport", "I was skiing last winter"),
        "When were you skiing?",
    ),
    "en-where": (
        ("hiking, hiking is my favourite thing", "we went hiking in Yosemite"),
        "Where did you go hiking?",
    ),
    "zh-when": (("滑雪，滑雪是最好的运动", "我去年冬天滑雪"), "你什么时候滑雪？"),
    "zh-how-many": (("小猫，我喜欢小猫，小猫很可爱", "我家养了三只小猫"), "你家有多少小猫？"),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_the_turn_holding_the_asked_kind_comes_first(script: Any, case: str) -> None:
    (words, answer), question = CASES[case]
    script.user(1, words)
    script.user(2, answer)
    for seq in range(3, 60):
        script.user(seq, f"the tram timetable changed on line {seq} 电车时刻表")
    assert _order(script.store, question, OFF)[:2] == [1, 2]
    assert _order(script.store, question, ON)[:2] == [2, 1]
