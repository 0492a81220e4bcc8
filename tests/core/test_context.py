"""A turn is scored with its context: the message it follows (the one it answers)."""

from __future__ import annotations

from typing import Any

import pytest

from lcm_core.config import load_config
from lcm_core.retrieval.rank import default_pool
from lcm_core.text.query import query_signals

S = "sess"
# Context alone: no episode prior, no neighbours.
ALONE = {"neighbourRadius": 0, "episodeWeight": 0}
ON = load_config({"retrieval": ALONE})
OFF = load_config({"retrieval": {**ALONE, "ablate": ["context"]}})

CASES = {
    "en": (
        "happy birthday to Mia",
        "we brought dessert",
        ("the tram was late", "the bakery was closed"),
        "what dessert did we bring for the birthday?",
    ),
    "zh": (
        "祝米娅生日快乐",
        "我们带了甜点",
        ("电车晚点了", "面包店关门了"),
        "生日那天带了什么甜点？",
    ),
}


@pytest.mark.parametrize("language", sorted(CASES))
def test_the_message_before_lifts_a_turn(script: Any, language: str) -> None:
    """Three equal turns: one follows a matching message, one is followed by it, one has
    neither. Only the first gains, by contextWeight times that message's own score."""
    matching, turn, (filler_a, filler_b), question = CASES[language]
    texts = [matching, turn, filler_a, filler_b, turn, matching, filler_a, turn, filler_b]
    for seq, text in enumerate(texts, 1):
        script.user(seq, text)
    after, before, alone = 2, 5, 8
    pool = default_pool(script.store, S, query_signals(question), ON)
    score = {seq: pool.turns[seq].relevance for seq in (after, before, alone)}
    assert score[before] == score[alone]
    gain = score[after] - score[alone]
    assert gain == pytest.approx(ON.retrieval.context_weight * pool.turns[1].own)
    assert gain > 0
    off = default_pool(script.store, S, query_signals(question), OFF)
    assert len({off.turns[seq].relevance for seq in (after, before, alone)}) == 1
