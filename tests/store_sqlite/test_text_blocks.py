"""Which texts of a copy hold a key, as the core's match rule decides it (casefold inside
casefold): by block scan, by kept positions, and through the index of word runs, the
answer is the same."""

from __future__ import annotations

import random

import pytest

from lcm_core.store.matching import fold, matching
from lcm_store_sqlite import text_blocks
from lcm_store_sqlite.text_blocks import TextBlocks

PIECES = (
    "deploy", "Deployment", "UPDATE", "updated", "port", "export", "src/memory/school.py",
    "a_b", "3000", "3000元", "预算", "不超过", "端口", "医生说", "Straße", "naïve", "x",
    "—", "  ", ", ", "!", "\x00tail after nul", "p95", "_", "元", "İSTANBUL", "ılık",
    "ÉTÉ", "STRASSE",
)  # fmt: skip
KEYS = (
    "deploy", "updat", "port", "a_b", "3000", "3000元", "预算", "端口", "生说", "p9",
    "_", "x", "naïve", "stra", "strasse", "été", "i̇stanbul", "ılık",  # word characters only
    "src/memory", "deploy deploy", "3000 ", ", 预", "y-", "tail", "—",  # any other key
)  # fmt: skip


def _texts(rng: random.Random, count: int) -> list[str]:
    return ["".join(rng.choice(PIECES) for _ in range(rng.randint(0, 8))) for _ in range(count)]


def _reference(texts: list[str], keys: tuple[str, ...]) -> set[int]:
    return set(matching(texts, keys))


class _Folded(list[str]):
    """The casefolds of a growing list of texts, as a copy keeps them for its blocks."""

    def __init__(self, texts: list[str]) -> None:
        super().__init__()
        self.texts = texts

    def __getitem__(self, i: int) -> str:  # type: ignore[override]
        return fold(self.texts[i])


@pytest.mark.parametrize("runs_from", [0, 10**9])
@pytest.mark.parametrize("seed", range(3))
def test_every_path_finds_what_the_rule_finds(
    monkeypatch: pytest.MonkeyPatch, runs_from: int, seed: int
) -> None:
    """Texts are appended between searches (inside a block, across block ends); each
    key is asked alone and with others, first seen and seen again."""
    monkeypatch.setattr(text_blocks, "BLOCK", 64)
    monkeypatch.setattr(text_blocks, "RUNS_FROM", runs_from)
    monkeypatch.setattr(text_blocks, "RUNS_AFTER", 0)
    rng = random.Random(seed)
    texts: list[str] = []
    blocks = TextBlocks(_Folded(texts).__getitem__)
    for grow in (5, 59, 1, 64, 130, 3):
        texts += _texts(rng, grow)
        fresh = TextBlocks(_Folded(texts).__getitem__)  # every key a first sight, so far
        for key in KEYS:
            expected = _reference(texts, (key,))
            assert blocks.matching([key], len(texts)) == expected, key
            assert fresh.matching([key], len(texts)) == expected, key
        picked = tuple(rng.sample(KEYS, 4))
        assert blocks.matching(list(picked), len(texts)) == _reference(texts, picked)


def test_keys_and_texts_fold_by_unicode_casefold(monkeypatch: pytest.MonkeyPatch) -> None:
    """ß is ss, Ï is ï, İ is i with a dot above; accents and the dotless ı stay."""
    monkeypatch.setattr(text_blocks, "RUNS_FROM", 0)
    monkeypatch.setattr(text_blocks, "RUNS_AFTER", 0)
    texts = ["DEPLOY now", "Straße", "STRASSE", "naÏve", "naïve", "İstanbul", "ılık", "naive"]
    blocks = TextBlocks([fold(t) for t in texts].__getitem__)
    assert blocks.matching(["Deploy"], 8) == {0}
    assert blocks.matching(["strasse"], 8) == {1, 2}
    assert blocks.matching(["STRAßE"], 8) == {1, 2}
    assert blocks.matching(["naïve"], 8) == {3, 4}
    assert blocks.matching(["i̇stanbul"], 8) == {5}
    assert blocks.matching(["istanbul"], 8) == set()
    assert blocks.matching(["ILIK"], 8) == set()


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
    blocks = TextBlocks([fold(t) for t in texts].__getitem__)
    for number, key in enumerate(KEYS * 2):
        assert blocks.matching([key], len(texts)) == _reference(texts, (key,)), key
        runs = blocks._runs
        assert (runs.texts if runs else 0) == min(180, 50 * max(0, number))
