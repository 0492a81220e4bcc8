"""`best_matches` keeps exactly what scoring every match and cutting at the limit keeps.

The store searches score only the groups of texts (by distinct terms matched) that can
fill the limit; the hits, their order and every score must be the same as before.
"""

from __future__ import annotations

import random

import pytest

from lcm_core.text.tokens import best_keys, best_matches, score_matches


def _kept(scores: dict[int, float], limit: int) -> list[int]:
    """`best_keys` written the plain way: best score first, ties by key, then the cut."""
    ordered = sorted(scores, key=lambda key: (-scores[key], key))
    if len(ordered) <= limit:
        return ordered
    cutoff = scores[ordered[limit - 1]]
    return [key for key in ordered if scores[key] >= cutoff]


PIECES = (
    "deploy", "Deploy", "DEPLOY", "port", "export", "ana", "banana", "Straße", "STRASSE",
    "预算", "不超过", "3000", "3000元", "含税", "端口", "x", "", "the", "ΣΊΣΥΦΟΣ", "σίσυφος",
)  # fmt: skip
TERMS = (
    ["deploy"],
    ["port", "端口"],
    ["预算", "3000", "含税"],
    ["strasse", "ana"],
    ["σίσυφος", "x"],
    ["deploy", "port", "预算", "3000", "ana", "straße"],
    ["nothing"],
    [""],
    [],
)


@pytest.mark.parametrize("seed", range(12))
def test_best_matches_is_score_then_cut(seed: int) -> None:
    rng = random.Random(seed)
    texts = [" ".join(rng.choice(PIECES) for _ in range(rng.randint(0, 12))) for _ in range(300)]
    for terms in TERMS:
        for limit in (-1, 0, 1, 5, 40, 299, 300, 1000):
            scores = dict(enumerate(score_matches(texts, terms, 5000)))
            expected = [(i, scores[i]) for i in _kept(scores, limit)]
            assert best_keys(scores, limit) == _kept(scores, limit)
            assert best_matches(texts, terms, 5000, limit) == expected


@pytest.mark.parametrize("seed", range(4))
def test_chat_like_turns_are_cut_exactly(seed: int) -> None:
    """Thousands of chat-like turns, most naming one term once, many of one length and
    some repeated word for word: every text tied with the last kept score is kept."""
    rng = random.Random(seed)
    words = ("deploy", "port", "预算", "cache", "the", "a", "ok", "we", "Nina", "端口", "3000")
    texts = []
    for _ in range(3000):
        size = rng.randint(3, 14)
        pool = words if rng.random() < 0.2 else words[4:8]
        texts.append(" ".join(rng.choice(pool) for _ in range(size)) + " deploy")
    texts += texts[:200]  # repeated turns: exact ties
    for terms in (["deploy"], ["deploy", "预算"], ["nina", "port", "3000"]):
        scores = dict(enumerate(score_matches(texts, terms, 50_000)))
        for limit in (1, 40, 400, 2500):
            expected = [(i, scores[i]) for i in _kept(scores, limit)]
            assert best_matches(texts, terms, 50_000, limit) == expected
