"""Lexical relevance: words not substrings, stems, stop words, idf, CJK bigrams, the bridge,
and the Retriever seam, checked through the tokens and through retrieval over a store."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest

from lcm_core.config import load_config
from lcm_core.retrieval.evidence import retrieve
from lcm_core.retrieval.lifts import scored_pool
from lcm_core.retrieval.rank import rank_items
from lcm_core.retrieval.retriever import Pool, ScoredTurn
from lcm_core.store.ports import MemoryStore
from lcm_core.text.languages.concepts import concept_words
from lcm_core.text.query import query_signals
from lcm_core.text.relevance import (
    IDF_FLOOR,
    Scorer,
    corpus_of,
    query_terms,
    relevance_tokens,
    text_bag,
)

S = "sess"

# Direct matches only: the turns quoted beside a strong match (neighbours) have
# their own tests in test_neighbours.py.
DIRECT = load_config({"retrieval": {"neighbourRadius": 0}})


@pytest.fixture
def store(script: Any) -> MemoryStore:
    return script.store


def turn_scores(store: MemoryStore, question: str) -> dict[int, float]:
    """seq -> relevance of every raw turn the default pool holds for the question."""
    pool = scored_pool(store, S, query_signals(question), load_config())
    return {seq: turn.relevance for seq, turn in pool.turns.items()}


def test_a_possessive_matches_the_name(store: MemoryStore, script: Any) -> None:
    """`Anna's` and `Anna’s` are the token `anna`; a question with the possessive finds the name."""
    assert relevance_tokens("Anna's") == relevance_tokens("Anna’s") == ("anna",)
    script.user(1, "Anna turned nine on Saturday")
    script.user(2, "the bakery was closed")
    found = retrieve(store, S, query_signals("How old is Anna's daughter now?"), DIRECT)
    assert [r.ref for r in found.evidence.rows] == ["seq:1"]


def test_inflections_share_a_stem(store: MemoryStore, script: Any) -> None:
    """`painted`, `painting` and `paints` match `paint`, in both directions."""
    assert relevance_tokens("painted painting paints paint") == ("paint",) * 4
    script.user(1, "Mel painted a sunset over the lake last week")
    script.user(2, "we walked to the market")
    assert set(turn_scores(store, "What does Mel like to paint?")) == {1}
    script.user(3, "I paint mostly in watercolour")
    assert set(turn_scores(store, "who painted something?")) == {1, 3}


@pytest.mark.parametrize(
    ("said", "asked"),
    [
        ("we went hiking", "Who likes to hike?"),
        ("baking bread", "who baked?"),
        ("I'm moving to Lyon", "Where is she moving?"),
    ],
)
def test_a_stem_that_gained_an_e_finds_the_ing_form(
    store: MemoryStore, script: Any, said: str, asked: str
) -> None:
    """Porter2 stems `hiking` as `hike`; the store is asked for `hike` and `hiking` too."""
    script.user(1, said)
    script.user(2, "the tram was late")
    assert set(turn_scores(store, asked)) == {1}


def test_a_stem_in_e_is_searched_whole_among_many_near_words(
    store: MemoryStore, script: Any
) -> None:
    """`note` is searched as `note` and `noting`, never as `not`: 450 turns full of "not"
    must not push the one note out of the pool."""
    script.user(1, "Keep this note: the vault code is 4711")
    for seq in range(2, 452):
        script.user(seq, f"no, that is not it, not yet, I cannot say, nothing works {seq}")
    assert query_terms("What was in my note?").filters() == ("note", "noting")
    assert 1 in turn_scores(store, "What was in my note?")


def test_a_latin_word_matches_words_not_substrings(store: MemoryStore, script: Any) -> None:
    """`port` scores the line about the port, not one about `export`: item or raw turn."""
    script.user(1, "export the invoices to parquet every night")
    script.user(2, "the api listens on port 8080")
    export = script.item("export the invoices to parquet every night", [1])
    port = script.item("the api listens on port 8080", [2], kind="decision")
    pool = scored_pool(store, S, query_signals("port"), DIRECT)
    # The store serves `export` by substring; the relevance of it is nothing.
    assert dict((item.id, score) for item, score in pool.items)[export.id] == 0.0
    assert pool.turns[1].relevance == 0.0 and pool.turns[2].relevance > 0.0
    ranking = rank_items(store, S, query_signals("port"), DIRECT)
    assert [r.item.id for r in ranking.selected] == [port.id]
    assert export.id in {o.ref for o in ranking.omitted}
    found = retrieve(store, S, query_signals("port"), DIRECT)
    assert [r.ref for r in found.evidence.rows] == ["seq:2"]


def test_a_term_in_most_turns_weighs_close_to_nothing(store: MemoryStore, script: Any) -> None:
    """A speaker's name that begins every turn has the floor idf; the topic word decides."""
    topics = ["kayak", "garden", "bakery", "tram", "concert", "printer"]
    for seq in range(1, 122):
        script.user(seq, f"Anna: today was about the {topics[seq % len(topics)]} {seq}")
    script.user(122, "Anna: Anna says Anna is tired, Anna")
    texts = [text_bag(e.text) for e in store.list_events(S)]
    corpus = corpus_of(texts, len(texts), query_terms("Anna kayak"))
    assert corpus.idf("anna") == IDF_FLOOR
    assert corpus.idf("kayak") > 30 * corpus.idf("anna")  # kayak is in one turn in six
    found = retrieve(store, S, query_signals("What did Anna say about the kayak?"), DIRECT)
    refs = [r.ref for r in found.evidence.rows]
    kayak = {f"seq:{seq}" for seq in range(1, 122) if seq % len(topics) == 0}
    # The kayak turns first; after them only turns that follow one (their context).
    assert set(refs[: len(kayak)]) == kayak
    assert all(int(ref[4:]) % len(topics) == 1 for ref in refs[len(kayak) :])
    # The name alone, even four times, is under the floor.
    assert "seq:122" in {o.ref for o in found.evidence.omitted}


def test_cjk_bigrams_score(store: MemoryStore, script: Any) -> None:
    """A CJK run is its character bigrams; a two-character word of the question scores."""
    assert relevance_tokens("西湖划船") == ("西湖", "湖划", "划船")
    terms = query_terms("划船")
    bag = text_bag("孩子们特别喜欢在西湖划船")
    assert Scorer.of(terms, corpus_of([bag], 1, terms))(bag) > 0
    script.user(1, "孩子们特别喜欢在西湖划船")
    script.user(2, "今天下雨了")
    assert set(turn_scores(store, "划船好玩吗？")) == {1}


def test_a_word_before_a_particle_still_scores(store: MemoryStore, script: Any) -> None:
    """报了 ("signed up") keeps its bigram: a particle after a word marks its aspect and
    is no reason to lose the word, while 了个 and 了吗 (a particle first) say nothing.
    "张磊报了哪些班？" then finds the turn that says what was signed up for."""
    assert relevance_tokens("报了个游泳班") == ("报了", "个游", "游泳", "泳班")
    assert relevance_tokens("我的目的") == ("目的",)
    script.user(1, "张磊: 报了个游泳班，第一节课挺好玩")
    script.user(2, "张磊: 今天好累，想早点睡")
    script.user(3, "李娜: 张磊你周末去哪儿了？")
    assert max(turn_scores(store, "张磊报了哪些班？").items(), key=lambda p: p[1])[0] == 1


@pytest.mark.parametrize(
    "text",
    ["what did we say to them?", "is it the one that was there", "我们的是了吗", "这个那个就是也"],
)
def test_stop_words_do_not_score(text: str) -> None:
    """English and Chinese function words are no terms: they neither query nor match."""
    assert query_terms(text).empty
    own_words = query_terms("kayak " + text, bridge=False)
    assert dict(own_words.weights) == {"kayak": 1.0}
    assert relevance_tokens(text) == ()


def test_a_turn_of_stop_words_matches_nothing(store: MemoryStore, script: Any) -> None:
    """Filler shares no term with a question made of filler: nothing to quote."""
    script.user(1, "what did we say to them, was it the one?")
    script.user(2, "我们的是了吗")
    found = retrieve(store, S, query_signals("What did we say? 我们的是什么？"), load_config())
    assert found.evidence.rows == () and found.ranking.selected == ()


def test_an_english_question_finds_a_chinese_constraint(store: MemoryStore, script: Any) -> None:
    """The bridge adds `预算` to "budget": the Chinese constraint is selected with its source."""
    script.user(1, "预算不超过3000元（含税）")
    script.user(2, "we should meet on Tuesday")
    item = script.item("预算不超过3000元（含税）", [1], kind="constraint")
    found = retrieve(store, S, query_signals("what is our budget?"), DIRECT)
    assert [r.item.id for r in found.ranking.selected] == [item.id]
    assert [r.ref for r in found.evidence.rows] == ["seq:1"]
    unbridged = load_config({"retrieval": {"neighbourRadius": 0, "ablate": ["bridge"]}})
    assert (
        retrieve(store, S, query_signals("what is our budget?"), unbridged).ranking.selected == ()
    )


def test_a_chinese_question_finds_an_english_line(store: MemoryStore, script: Any) -> None:
    """The bridge adds `port` to 端口: "端口是多少？" finds "use port 8080"."""
    script.user(1, "use port 8080 for the api")
    script.user(2, "lunch was good")
    item = script.item("use port 8080 for the api", [1], kind="decision")
    found = retrieve(store, S, query_signals("端口是多少？"), DIRECT)
    assert [r.item.id for r in found.ranking.selected] == [item.id]
    assert [r.ref for r in found.evidence.rows] == ["seq:1"]


class FixedRetriever:
    """A stand-in retriever: whatever the query, these candidates at these relevances."""

    def __init__(self, pool: Pool) -> None:
        self.fixed = pool
        self.calls: list[tuple[str, tuple[str, ...] | None]] = []

    def pool(
        self,
        store: MemoryStore,
        session_id: str,
        text: str,
        turn_types: Sequence[str] | None,
    ) -> Pool:
        self.calls.append((text, None if turn_types is None else tuple(turn_types)))
        return self.fixed


def test_a_plugged_in_retriever_decides_the_candidates(store: MemoryStore, script: Any) -> None:
    """Through the seam, candidates sharing no word with the question are ranked and quoted,
    and the lexical favourite is not even considered: ranking follows the pool it is given,
    with the same lifts after it as after the lexical retriever."""
    script.user(1, "the kayak rental closes at six")
    script.user(2, "grandma's recipe uses a lot of cardamom")
    script.user(3, "the spice cake is for Sunday")
    lexical = script.item("the kayak rental closes at six", [1])
    spice = script.item("grandma's recipe uses a lot of cardamom", [2])
    events = {e.seq: e for e in store.list_events(S)}
    question = query_signals("when does the kayak rental close?")
    fixed = Pool(
        items=((spice, 5.0),),
        turns={3: ScoredTurn(events[3], 4.0)},
        asked=True,
    )
    retriever = FixedRetriever(fixed)
    found = retrieve(store, S, question, DIRECT, retriever=retriever)
    assert retriever.calls == [(question.text, ("user/message",))]
    assert [r.item.id for r in found.ranking.selected] == [spice.id]
    # The lifts apply after any retriever: "when" asks for a date, and turn 3 holds one
    # (Sunday), so its 4.0 rises by answerKindWeight over the item's source.
    assert [r.ref for r in found.evidence.rows] == ["seq:3", "seq:2"]
    lifted = 4.0 * (1 + DIRECT.retrieval.answer_kind_weight)
    assert found.evidence.rows[0].search_score == pytest.approx(lifted)
    default = retrieve(store, S, question, DIRECT)
    assert [r.item.id for r in default.ranking.selected] == [lexical.id]


CONCEPT_CHATS = {
    # The answers never say "hobby" / "爱好"; the question does.
    "en": (
        ["Emi: I love skiing, it's my favorite sport", "Emi: the bus was late again"],
        "What are Emi's hobbies?",
    ),
    "zh": (["小红：我周末喜欢去爬山", "小红：公交车又晚点了"], "小红有什么爱好？"),
}


@pytest.mark.parametrize("language", sorted(CONCEPT_CHATS))
def test_a_concept_the_question_names_finds_its_parts(
    store: MemoryStore, script: Any, language: str
) -> None:
    """ "hobbies" searches enjoy, favourite, weekend…; without concepts nothing but the
    speaker's name matches, and the answer does not outrank the bus."""
    turns, question = CONCEPT_CHATS[language]
    for seq, text in enumerate(turns, 1):
        script.user(seq, text)
    alone = {"neighbourRadius": 0, "contextWeight": 0, "episodeWeight": 0}
    on = scored_pool(store, S, query_signals(question), load_config({"retrieval": alone}))
    off = load_config({"retrieval": {**alone, "ablate": ["concepts"]}})
    plain = scored_pool(store, S, query_signals(question), off)
    assert on.turns[1].relevance > on.turns[2].relevance
    assert plain.turns[1].relevance <= plain.turns[2].relevance


@pytest.mark.parametrize(
    "question",
    [
        "Does the build work on CI?",
        "show me the plan for the exporter",
        "这个脚本在家里的电脑上不工作",
        "what is the goal of the stress test on the home page?",
        "这个函数的返回类型是什么？画面为什么不刷新？",
        "which cabin did we book? is the health check of the time series job green?",
        "这个对象的健康检查为什么失败？菜单和购物车还在吗？",
    ],
)
def test_a_work_sessions_words_ask_for_no_concept(question: str) -> None:
    """ "work", "show", "plan", "home", "book", "health", 对象, 类型 name other things in a
    coding step, and a one-character Chinese word is part of too many: the terms stay the
    question's own and their translations."""
    assert query_terms(question).weights == query_terms(question, concepts=False).weights


@pytest.mark.parametrize(
    ("question", "asks"),
    [
        ("What is Kate's job?", True),
        ("What is Kate’s job?", True),
        ("Does she work part-time?", True),
        ("why did the cron job fail?", False),
        ("What are Kate's hobbies?", True),
        ("小红有什么爱好？", True),
        ("把购物车的接口改一下", False),
    ],
)
def test_a_concept_asks_only_in_its_own_sense(question: str, asks: bool) -> None:
    """ "her job" and "Kate's job" ask about work; "the cron job" does not."""
    assert bool(concept_words(question)) == asks
