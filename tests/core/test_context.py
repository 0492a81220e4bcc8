"""A turn is scored with its context: the message it follows (the one it answers)."""

from __future__ import annotations

from typing import Any

import pytest

from lcm_core.config import load_config
from lcm_core.retrieval.lifts import scored_pool
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
    pool = scored_pool(script.store, S, query_signals(question), ON)
    score = {seq: pool.turns[seq].relevance for seq in (after, before, alone)}
    assert score[before] == score[alone]
    gain = score[after] - score[alone]
    # Turn 1 has no message before it: its relevance is its own text's.
    assert gain == pytest.approx(ON.retrieval.context_weight * pool.turns[1].relevance)
    assert gain > 0
    off = scored_pool(script.store, S, query_signals(question), OFF)
    assert len({off.turns[seq].relevance for seq in (after, before, alone)}) == 1


@pytest.mark.parametrize("language", sorted(CASES))
def test_the_bm25_retriever_scores_a_turn_by_its_own_text(script: Any, language: str) -> None:
    """`retrieval.retriever: plain` is the reference: no context, no day prior, so the
    three equal turns score alike; the lifts after it still apply (a day the question names)."""
    matching, turn, (filler_a, filler_b), question = CASES[language]
    texts = [matching, turn, filler_a, filler_b, turn, matching, filler_a, turn, filler_b]
    for seq, text in enumerate(texts, 1):
        script.user(seq, text)
    plain = load_config({"retrieval": {"retriever": "plain", "neighbourRadius": 0}})
    pool = scored_pool(script.store, S, query_signals(question), plain)
    assert len({pool.turns[seq].relevance for seq in (2, 5, 8)}) == 1
    lexical = scored_pool(script.store, S, query_signals(question), ON)
    assert lexical.turns[2].relevance > pool.turns[2].relevance


def test_an_unknown_retriever_falls_back_to_lexical_with_a_warning() -> None:
    """A config naming a retriever lcm does not have never breaks the host: it warns once
    and ranks as by default."""
    config = load_config({"retrieval": {"retriever": "semantic"}})
    assert config.retrieval.retriever == "lexical"
    assert any(w.startswith("retrieval.retriever: 'semantic'") for w in config.warnings)
