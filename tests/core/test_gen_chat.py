"""benchmarks/gen_chat.py: the chat-shaped synthetic set keeps the shape tests rely on."""

from __future__ import annotations

import datetime as dt
import json
import statistics
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from lcm_core.bench.dataset import parse_line
from lcm_core.text.tokens import CJK_RE, tokenize

# English function words; what is left of a question is its content.
_STOP_TEXT = """a an the and or but of to in on at for with from by is are was were be been do does
    did what when where which who whom how why has have had her his their its it up now this
    that about into as so if any some"""
STOP = frozenset(_STOP_TEXT.split())


@pytest.fixture(scope="module")
def module(benchmark_script: Callable[[str], ModuleType]) -> ModuleType:
    return benchmark_script("gen_chat")


@pytest.fixture(scope="module")
def dataset(module: ModuleType) -> list[dict[str, Any]]:
    return list(module.generate(conversations=10, seed=7))


def _shared(question: str, turn: dict[str, Any], names: set[str]) -> set[str]:
    """Content tokens (words, CJK bigrams) a question shares with a turn, names left out."""
    drop = STOP | names
    return (set(tokenize(question)) - drop) & (set(tokenize(turn["text"])) - drop)


def test_same_seed_gives_byte_identical_files(module: ModuleType, tmp_path: Path) -> None:
    first, second, other = tmp_path / "a.jsonl", tmp_path / "b.jsonl", tmp_path / "c.jsonl"
    module.main(["--out", str(first), "--conversations", "3", "--seed", "11"])
    module.main(["--out", str(second), "--conversations", "3", "--seed", "11"])
    module.main(["--out", str(other), "--conversations", "3", "--seed", "12"])
    assert first.read_bytes() == second.read_bytes()
    assert first.read_bytes() != other.read_bytes()
    # The file is a dataset `lcm bench retrieval` reads.
    lines = first.read_text(encoding="utf-8").splitlines()
    assert [parse_line(line, n).id for n, line in enumerate(lines)] == [
        json.loads(line)["id"] for line in lines
    ]


def test_conversation_depends_only_on_seed_and_index(module: ModuleType) -> None:
    few = list(module.generate(conversations=2, seed=5))
    more = list(module.generate(conversations=4, seed=5))
    assert few == more[:2]


def test_every_turn_is_a_named_dated_user_turn(dataset: list[dict[str, Any]]) -> None:
    for conv in dataset:
        turns = conv["turns"]
        assert 300 <= len(turns) <= 900, conv["id"]
        assert {t["speaker"] for t in turns} == {"user"}
        names = {t["name"] for t in turns}
        assert len(names) == 2, conv["id"]
        for turn in turns:
            assert turn["text"].startswith(turn["name"] + ": "), turn["id"]
            assert dt.date.fromisoformat(turn["time"]).isoformat() == turn["time"]
        dates = [t["time"] for t in turns]
        assert dates == sorted(dates), "sessions run forward in time"
        assert 15 <= len(set(dates)) <= 25, conv["id"]
        assert len({t["id"] for t in turns}) == len(turns)


def test_questions_resolve_and_cover_three_categories(dataset: list[dict[str, Any]]) -> None:
    for conv in dataset:
        by_id = {t["id"]: t for t in conv["turns"]}
        names = {t["name"] for t in conv["turns"]}
        questions = conv["questions"]
        assert 40 <= len(questions) <= 80, conv["id"]
        assert {q["category"] for q in questions} == {"single-fact", "temporal", "multi-turn"}
        for q in questions:
            assert q["evidence"] and all(e in by_id for e in q["evidence"]), q["id"]
            owners = {by_id[e]["name"] for e in q["evidence"]}
            assert len(owners) == 1 and owners.pop() in q["question"], q["id"]
            if q["category"] == "temporal":
                assert len(q["evidence"]) == 1
            if q["category"] == "multi-turn":
                assert 2 <= len(set(q["evidence"])) == len(q["evidence"]) <= 3
        # Most turns are small talk: evidence is a small share of the conversation.
        evidence = {e for q in questions for e in q["evidence"]}
        assert len(evidence) < 0.2 * len(conv["turns"]), conv["id"]
        assert all(any(name in q["question"] for name in names) for q in questions)


def test_chinese_and_mixed_conversations_exist(dataset: list[dict[str, Any]]) -> None:
    def chinese_share(conv: dict[str, Any]) -> float:
        turns = conv["turns"]
        return sum(any(bool(CJK_RE.match(c)) for c in t["text"]) for t in turns) / len(turns)

    shares = [chinese_share(conv) for conv in dataset]
    assert sum(s > 0.9 for s in shares) >= 1, "a Chinese conversation"
    assert sum(0.2 < s < 0.8 for s in shares) >= 1, "a mixed Chinese/English conversation"
    assert sum(s == 0 for s in shares) >= 6, "most conversations are English"
    zh_questions = [
        q for conv in dataset for q in conv["questions"] if CJK_RE.match(q["question"][-2])
    ]
    assert len(zh_questions) >= 40


def test_questions_share_few_words_with_their_evidence(dataset: list[dict[str, Any]]) -> None:
    shared_counts: list[int] = []
    elsewhere: list[bool] = []
    for conv in dataset:
        by_id = {t["id"]: t for t in conv["turns"]}
        names = {token for t in conv["turns"] for token in tokenize(t["name"])}
        for q in conv["questions"]:
            for e in q["evidence"]:
                shared = _shared(q["question"], by_id[e], names)
                assert len(shared) <= 3, (q["question"], by_id[e]["text"], shared)
                shared_counts.append(len(shared))
                others = (t for t in conv["turns"] if t["id"] not in q["evidence"])
                other_tokens = {tok for t in others for tok in tokenize(t["text"])}
                elsewhere.extend(token in other_tokens for token in shared)
    # Like real chat: most pairs share nothing or one word, few share more.
    assert statistics.mean(shared_counts) <= 1.0
    assert sum(c == 0 for c in shared_counts) >= 0.4 * len(shared_counts)
    # A shared word is mostly a topic word that other turns use too, so it does not
    # single the evidence out.
    assert sum(elsewhere) >= 0.7 * len(elsewhere)
