"""A question that names a chat log's speaker favours that speaker's own turns."""

from __future__ import annotations

from typing import Any

import pytest

from lcm_core.config import load_config
from lcm_core.retrieval.lifts import scored_pool
from lcm_core.store.ports import MemoryStore
from lcm_core.text.query import query_signals
from lcm_core.text.speakers import chat_speakers, named_speakers, speaker_of, writes_names

S = "sess"
# The speaker alone: no neighbours, context, episode or answer kind to lift a turn.
ALONE = {"neighbourRadius": 0, "contextWeight": 0, "episodeWeight": 0, "answerKindWeight": 0}
ON = load_config({"retrieval": ALONE})
OFF = load_config({"retrieval": {**ALONE, "ablate": ["speaker"]}})


@pytest.mark.parametrize(
    ("text", "name"),
    [
        ("Emi: I went hiking in Yosemite", "Emi"),
        ("  elise : ok!", "elise"),
        ("Mary Ann: see you at 10:30", "Mary Ann"),
        ("O'Brien: fine", "O'Brien"),
        ("小明：我上周去黄山爬山了", "小明"),
        ("Zoë: ça va", "Zoë"),
        ("10:30 works for me", None),
        ("see http://example.com: it is down", None),
        ("https://example.com", None),
        ("Note:no space after the colon", None),
        ("no name heads this turn", None),
        ("", None),
    ],
)
def test_the_name_that_heads_a_turn(text: str, name: str | None) -> None:
    assert speaker_of(text) == name


def test_only_a_chat_log_has_speakers() -> None:
    """Most turns must begin with a name, and a speaker heads more than one of them."""
    log = ["Emi: hi", "Elise: hey", "Emi: how was the trip?", "Elise: great", "Bo: hello"]
    assert writes_names(log) and chat_speakers(log) == {"Emi", "Elise"}
    assert writes_names(["Emi: hi", "Elise: hey", "Emi: bye", "Elise: ok", "ok"])
    # One name heading most turns is a run of labels, not a conversation.
    assert not writes_names(["Error: refused", "Error: timeout", "fixed it", "Error: disk"])
    work = ["Note: the port is 8080", "deploy on friday", "run the tests", "Note: ok", "go"]
    assert not writes_names(work)
    assert not writes_names(["问题：登录页面白屏", "部署好了", "问题：端口冲突", "好的"])
    assert not writes_names([])


def _order(store: MemoryStore, question: str, config: Any) -> list[int]:
    pool = scored_pool(store, S, query_signals(question), config)
    return sorted(pool.turns, key=lambda seq: (-pool.turns[seq].relevance, seq))


def _chat(script: Any, first: str, second: str, filler: list[str]) -> None:
    """Two speakers taking turns over many topics: each name heads half the turns."""
    for seq in range(3, 123):
        speaker = first if seq % 2 else second
        script.user(seq, f"{speaker}{filler[seq % len(filler)]} {seq}")


CHATS = {
    # The first speaker says the topic word twice, the second once; the question names
    # the second, then no one.
    "en": (
        ("Emi", "Elise"),
        ("Emi: hiking, hiking in the Alps", "Elise: we did some hiking near the lake"),
        [": the bakery was closed", ": my cat is sick", ": tram"],
        ("Where did Elise go hiking?", "Who went hiking?"),
    ),
    "zh": (
        ("小明", "小红"),
        ("小明：爬山，爬山", "小红：爬山，黄山"),
        ["：面包店关门了", "：我的猫生病了", "：电车"],
        ("小红去哪里爬山了？", "谁去爬山了？"),
    ),
}


@pytest.mark.parametrize("language", sorted(CHATS))
def test_the_named_speakers_turn_comes_first(script: Any, language: str) -> None:
    """Asked about the second speaker, her single mention beats his double one; a
    question that names no one is scored as ever."""
    (first, second), (his, hers), filler, (named, unnamed) = CHATS[language]
    script.user(1, his)
    script.user(2, hers)
    _chat(script, first, second, filler)
    assert _order(script.store, named, OFF)[:2] == [1, 2]
    assert _order(script.store, named, ON)[:2] == [2, 1]
    # Without a name in the question nothing changes.
    assert _order(script.store, unnamed, ON) == _order(script.store, unnamed, OFF)


WORK_SESSIONS = {
    # A question about errors pools the "Error:" turns: most of the pool is headed,
    # the session is not a chat log.
    "en": (
        [
            "Error: connection refused on port 5432",
            "Error: timeout while running the migration",
            "we fixed the migration timeout by raising lock_timeout to 30s",
            "Error: disk full on the build box",
            "deploy on friday",
            "run the tests first",
            "the staging port is 8080",
        ],
        "How did we fix the migration timeout error?",
    ),
    "zh": (
        [
            "问题：登录页面白屏",
            "问题：部署后端口冲突",
            "端口冲突是因为nginx占用了80，改成8080就解决了",
            "问题：日志太多",
            "周五上线",
            "先跑测试",
            "预发环境端口是8080",
        ],
        "端口冲突的问题是怎么解决的？",
    ),
}


@pytest.mark.parametrize("language", sorted(WORK_SESSIONS))
def test_a_heading_word_outside_a_chat_log_is_no_speaker(script: Any, language: str) -> None:
    """A work session with "Error:" / "问题：" turns: the question is scored as ever."""
    texts, question = WORK_SESSIONS[language]
    for seq, text in enumerate(texts, 1):
        script.user(seq, text)
    on = scored_pool(script.store, S, query_signals(question), ON)
    off = scored_pool(script.store, S, query_signals(question), OFF)
    assert {s: t.relevance for s, t in on.turns.items()} == {
        s: t.relevance for s, t in off.turns.items()
    }
    assert any(speaker_of(on.turns[seq].event.text) for seq in on.turns)


ALIASES = {
    # The second speaker is called by another name than her handle: by the first speaker
    # ("Hey Kate!", "Thanks Kate", "…, Kate?"), and once by herself ("I'm Kate"), which
    # does not make her the caller.
    "en": (
        ("Emi", "elise"),
        ("Emi: hiking, hiking in the Alps", "elise: we did some hiking near the lake"),
        [
            "Emi: Hey Kate! how was the bakery",
            "Emi: Thanks Kate",
            "Emi: and the tram, Kate?",
            "elise: I'm Kate, by the way",
        ],
        ("Where did Kate go hiking?", "Where did Anna go hiking?"),
    ),
    "zh": (
        ("小明", "小红"),
        ("小明：爬山，爬山", "小红：爬山，黄山"),
        ["小明：嗨，红红！面包店关门了", "小明：谢谢红红。", "小明：红红，电车来了"],
        ("红红去哪里爬山了？", "阿强去哪里爬山了？"),
    ),
}


@pytest.mark.parametrize("language", sorted(ALIASES))
def test_a_speaker_called_by_another_name_is_the_named_speaker(script: Any, language: str) -> None:
    """A name the other speaker calls her by ("Kate" for elise, "红红" for 小红) names
    her; a name no one is called by changes nothing."""
    (first, second), (his, hers), calls, (named, stranger) = ALIASES[language]
    script.user(1, his)
    script.user(2, hers)
    for seq, text in enumerate(calls, 3):
        script.user(seq, text)
    _chat(script, first, second, [": the bakery was closed", ": my cat is sick", ": tram"])
    off, on = _order(script.store, named, OFF), _order(script.store, named, ON)
    assert off.index(1) < off.index(2)
    assert on[0] == 2 and on.index(2) < on.index(1)
    assert _order(script.store, stranger, ON) == _order(script.store, stranger, OFF)


@pytest.mark.parametrize(
    ("question", "speakers"),
    [
        ("What did Muhammad build?", {"Muhhamed"}),  # another spelling of the handle
        ("Where did Aqib travel?", {"Akib"}),
        ("What did Fahim say?", set()),  # the handle's own first name: asked already
        ("What did Mohan build?", set()),  # too far from any speaker's name
        ("What did they build?", set()),
    ],
)
def test_another_spelling_of_a_speakers_name_names_him(question: str, speakers: set[str]) -> None:
    log = ["Muhhamed: I built a shelf", "Akib: nice", "Fahim Khan: hi", "Akib: ok"]
    assert named_speakers(question, log, {"Muhhamed", "Akib", "Fahim Khan"}) == speakers


def test_a_third_person_one_speaker_talks_about_is_no_speakers_name() -> None:
    """ "my sister Anna" is talked of, not talked to; and a name both call is nobody's."""
    log = [
        "Emi: my sister Anna visited",
        "elise: how is Anna",
        "Emi: Anna is great",
        "Emi: Anna loves tea",
        "elise: hey Bob!",
        "Emi: hi Bob!",
        "elise: thanks Bob",
        "Emi: bye Bob!",
    ]
    speakers = {"Emi", "elise"}
    assert named_speakers("What does Anna like?", log, speakers) == frozenset()
    assert named_speakers("What did Bob say?", log, speakers) == frozenset()
