"""A second item from a turn a better item already cites adds no evidence: the next
turn's item goes before it."""

from __future__ import annotations

from typing import Any

import pytest

from lcm_core.config import load_config
from lcm_core.retrieval.evidence import retrieve
from lcm_core.text.query import query_signals

S = "sess"

CASES = {
    # Two sentences of one turn, both made items, and a weaker item from another turn.
    "en": (
        "Travel insurance: I buy travel insurance. Money: I tell my bank about the travel.",
        ("I buy travel insurance", "I tell my bank about the travel"),
        "I love travel photos",
        "What does Paola do before travel?",
    ),
    "zh": (
        "旅行保险：我会买旅行保险。钱：我会告诉银行我的旅行计划。",
        ("我会买旅行保险", "我会告诉银行我的旅行计划"),
        "我喜欢拍旅行照片",
        "旅行前她会做什么准备？",
    ),
}


@pytest.mark.parametrize("language", sorted(CASES))
def test_a_second_item_of_the_same_turn_goes_after_another_turns(
    script: Any, language: str
) -> None:
    turn, (first, second), other, question = CASES[language]
    script.user(1, turn)
    script.user(2, other)
    for seq in range(3, 40):
        script.user(seq, f"the tram timetable changed on line {seq} 电车时刻表")
    a = script.item(first, [1])
    b = script.item(second, [1])
    c = script.item(other, [2])
    deep = {"relativeMinScore": 0.0}

    def order(config: Any) -> list[str]:
        found = retrieve(script.store, S, query_signals(question), config)
        return [r.item.id for r in found.ranking.selected]

    plain = order(load_config({"retrieval": {**deep, "ablate": ["redundancy"]}}))
    assert set(plain[:2]) == {a.id, b.id} and plain[2] == c.id
    lowered = order(load_config({"retrieval": deep}))
    assert lowered[1] == c.id and set(lowered) == {a.id, b.id, c.id}
