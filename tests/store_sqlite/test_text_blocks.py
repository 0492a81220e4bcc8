"""Which texts of a copy hold a key, as SQLite's LIKE decides it: by block scan, by kept
positions, and through the index of word runs, the answer is the same."""

from __future__ import annotations

import random

import pytest

from lcm_store_sqlite import text_blocks
from lcm_store_sqlite.like import as_like_reads, ascii_fold
from lcm_store_sqlite.text_blocks import TextBlocks

PIECES = (
    "deploy", "Deployment", "UPDATE", "updated", "port", "export", "src/memory/school.py",
    "a_b", "3000", "3000元", "预算", "不超过", "端口", "医生说", "Straße", "naïve", "x",
    "—", "  ", ", ", "!", "\x00tail after nul", "p95", "_", "元",
)  # fmt: skip
KEYS = (
    "deploy", "updat", "port", "a_b", "3000", "3000元", "预算", "端口", "生说", "p9",
    "_", "x", "naïve", "stra",  # keys of word characters only: the runs index
    "src/memory", "deploy deploy", "3000 ", ", 预", "y-", "tail", "—",  # any other key
)  # fmt: skip


def _texts(rng: random.Random, count: int) -> list[str]:
    return ["".join(rng.choice(PIECES) for _ in range(rng.randint(0, 8))) for _ in range(count)]


def _reference(texts: list[str], keys: tuple[str, ...]) -> set[int]:
    folded = [as_like_reads(text) for text in texts]
    wanted = [ascii_fold(key) for key in keys]
    return {i for i, text in enumerate(folded) for key in wanted if key in text}


@pytest.mark.parametrize("runs_from", [0, 10**9])
@pytest.mark.parametrize("seed", range(3))
def test_every_path_finds_what_like_finds(
    monkeypatch: pytest.MonkeyPatch, runs_from: int, seed: int
) -> None:
    """Texts are appended between searches (inside a block, across block ends); each
    key is asked alone and with others, first seen and seen again."""
    monkeypatch.setattr(text_blocks, "BLOCK", 64)
    monkeypatch.setattr(text_blocks, "RUNS_FROM", runs_from)
    monkeypatch.setattr(text_blocks, "RUNS_AFTER", 0)
    rng = random.Random(seed)
    texts: list[str] = []
    blocks = TextBlocks(texts.__getitem__)
    for grow in (5, 59, 1, 64, 130, 3):
        texts += _texts(rng, grow)
        fresh = TextBlocks(texts.__getitem__)  # every key a first sight, on all texts so far
        for key in KEYS:
            expected = _reference(texts, (key,))
            assert blocks.matching([key], len(texts)) == expected, key
            assert fresh.matching([key], len(texts)) == expected, key
        picked = tuple(rng.sample(KEYS, 4))
        assert blocks.matching(list(picked), len(texts)) == _reference(texts, picked)


def test_upper_case_keys_fold_as_like_folds(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(text_blocks, "RUNS_FROM", 0)
    monkeypatch.setattr(text_blocks, "RUNS_AFTER", 0)
    texts = ["DEPLOY now", "Straße", "STRASSE", "naÏve", "naïve"]
    blocks = TextBlocks(texts.__getitem__)
    assert blocks.matching(["Deploy"], 5) == {0}
    assert blocks.matching(["strasse"], 5) == {2}  # ß is not folded to ss by LIKE
    assert blocks.matching(["naïve"], 5) == {4}  # nor Ï to ï


def test_the_index_is_built_a_slice_per_search_and_used_once_complete(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A copy indexes its runs from its RUNS_AFTER-th search on, a slice per search, and
    answers from the scan until the index covers every text: never a partial answer."""
    monkeypatch.setattr(text_blocks, "BLOCK", 16)
    monkeypatch.setattr(text_blocks, "RUNS_FROM", 0)
    monkeypatch.setattr(text_blocks, "RUNS_AFTER", 2)
    monkeypatch.setattr(text_blocks, "RUNS_SLICE", 50)
    rng = random.Random(7)
    texts = _texts(rng, 180)
    blocks = TextBlocks(texts.__getitem__)
    for number, key in enumerate(KEYS * 2):
        assert blocks.matching([key], len(texts)) == _reference(texts, (key,)), key
        runs = blocks._runs
        assert (runs.texts if runs else 0) == min(180, 50 * max(0, number))
