"""The retrieval-quality harness: dataset parsing, recall arithmetic, baseline in the same run."""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest

from lcm_core.assembly.assemble import assemble
from lcm_core.assembly.step import StepMessage
from lcm_core.bench.bm25 import BM25Baseline, BM25Index, bm25_index, top_k
from lcm_core.bench.dataset import load_dataset, parse_line
from lcm_core.bench.retrieval import default_extractor, format_table, ingest, run
from lcm_core.config import Config, load_config
from lcm_core.retrieval.evidence import retrieve
from lcm_core.store.ports import MemoryStore
from lcm_core.testing.builders import make_item
from lcm_core.text.query import query_signals
from lcm_core.text.tokens import tokenize
from lcm_store_sqlite import SQLiteMemoryStore

# Direct matches only: the turns quoted beside a strong match (neighbours) have
# their own tests in test_neighbours.py.
DIRECT = load_config({"retrieval": {"limit": 25, "evidenceLimit": 25, "neighbourRadius": 0}})

CONV = {
    "id": "c1",
    "turns": [
        {
            "id": "t0",
            "speaker": "user",
            "text": "we drove to Lisbon last weekend, the kids loved the tram",
        },
        {"id": "t1", "speaker": "assistant", "text": "Lovely! Lisbon trams are iconic."},
        {"id": "t2", "speaker": "user", "text": "周末我们去了杭州西湖"},
        {"id": "t3", "speaker": "user", "text": "the dentist moved my appointment to the 24th"},
    ],
    "questions": [
        {
            "id": "q1",
            "question": "Where did the weekend road trip go?",
            "evidence": ["t0"],
            "category": "fact",
        },
        {"id": "q2", "question": "西湖是哪个周末去的？", "evidence": ["t2"], "category": "zh"},
        {
            "id": "q3",
            "question": "When is the dentist now?",
            "evidence": ["t3"],
            "category": "fact",
        },
    ],
}


DEEP = load_config({"retrieval": {"limit": 25, "evidenceLimit": 25}})


@pytest.fixture
def store() -> Iterator[MemoryStore]:
    one = SQLiteMemoryStore(":memory:")
    yield one
    one.close()


def every_user_turn(store: MemoryStore, session_id: str, config: Config) -> None:
    """A stand-in extractor: one fact per user message except the dentist one."""
    for event in store.list_events(session_id, types=["user/message"]):
        if "dentist" not in event.text:
            store.insert_item(make_item(session_id, event.text, source_refs=(f"seq:{event.seq}",)))


def last_turn_first(texts: Sequence[str], question: str, k: int) -> list[int]:
    """A stand-in baseline that always ranks the newest turns first."""
    return list(reversed(range(len(texts))))[:k]


def test_report_counts_recall_per_category_and_overall() -> None:
    """Items count for what they cite; a turn extraction missed still comes back as raw evidence."""
    conv = parse_line(json.dumps(CONV))
    report = run(
        [conv], lambda: SQLiteMemoryStore(":memory:"), last_turn_first, extract=every_user_turn
    )
    assert report["zh"]["recall@5"] == 1.0 and report["zh"]["blockRecall"] == 1.0
    assert report["fact"]["questions"] == 2
    # The dentist turn has no item: items alone find half, the merged pipeline finds both.
    assert report["fact"]["itemsRecall@5"] == 0.5 and report["fact"]["extracted"] == 0.5
    assert report["fact"]["recall@5"] == 1.0 and report["fact"]["blockRecall"] == 1.0
    assert report["overall"]["questions"] == 3
    assert report["overall"]["itemsRecall@10"] == pytest.approx(2 / 3, abs=1e-4)
    # The stand-in baseline puts t3 first and t0 last among four turns.
    assert report["fact"]["baseline@5"] == 1.0
    assert report["overall"]["blockTokens"] > 0


def test_table_has_every_column_and_lines_up() -> None:
    """One header cell per value, and every row of the table is as wide as the header."""
    conv = parse_line(json.dumps(CONV))
    report = run([conv], lambda: SQLiteMemoryStore(":memory:"), BM25Baseline())
    lines = format_table(report).splitlines()
    head = [cell.strip() for cell in lines[0].strip("|").split("|")]
    assert head[:3] == ["category", "n", "extracted"]
    assert {"R@10", "items R@10", "block R", "BM25 R@10"} <= set(head)
    assert len({len(line) for line in lines}) == 1
    assert len({tuple(i for i, ch in enumerate(line) if ch == "|") for line in lines}) == 1
    overall = next(line for line in lines if line.startswith("| overall "))
    assert [cell.strip() for cell in overall.strip("|").split("|")][1] == "3"
    assert report["overall"]["baseline@10"] > 0


def test_merged_ranking_is_one_list_by_score(store: Any) -> None:
    """The harness's pipeline list: items and raw turns on one scale, best first; an item
    stands for the turn it cites, so that turn is not listed again as a raw turn."""
    conv = parse_line(json.dumps(CONV))
    ingest(store, conv, load_config(), every_user_turn)
    question = "dentist appointment moved and the Lisbon tram"
    found = retrieve(store, "c1", query_signals(question), DIRECT)
    merged = found.merged()
    # The dentist turn matches three terms found nowhere else; the Lisbon item two terms
    # that the assistant's reply shares, so they weigh less.
    assert [seqs for _, _, seqs in merged] == [(3,), (0,)]
    assert merged[0][0] == "seq:3" and merged[1][0].startswith("mem_")
    assert merged[0][1] > merged[1][1] > 0
    assert "seq:0" not in {ref for ref, _, _ in merged}


def test_a_malformed_line_names_its_number(tmp_path: Path) -> None:
    """A record without questions is rejected with the line number, not a traceback deep inside."""
    path = tmp_path / "bad.jsonl"
    path.write_text(json.dumps(CONV) + "\n\n" + json.dumps({"id": "x", "turns": []}) + "\n")
    with pytest.raises(ValueError, match="line 3"):
        load_dataset(path)
    path.write_text(json.dumps(CONV) + "\n")
    assert [c.id for c in load_dataset(path)] == ["c1"]


def test_bm25_agrees_with_rank_bm25() -> None:
    """The stdlib BM25 gives rank-bm25's BM25Okapi scores, float for float (idf floor included)."""
    rank_bm25 = pytest.importorskip("rank_bm25")
    texts = [
        "we drove to Lisbon last weekend, the kids loved the tram",
        "Lovely! Lisbon trams are iconic.",
        "周末我们去了杭州西湖",
        "",
        "the the the tram tram",
        "the dentist moved my appointment to the 24th",
    ]
    docs = [tokenize(text) or ["\u0000"] for text in texts]
    ours, theirs = BM25Index(docs), rank_bm25.BM25Okapi(docs)
    for question in ("the tram in Lisbon", "西湖 周末", "the the dentist", "nothing matches"):
        query = tokenize(question)
        assert ours.scores(query) == list(theirs.get_scores(query))


def test_bm25_top_k_and_the_baseline_cache() -> None:
    """Best first (a shorter turn wins), earlier turn on ties; a new list gets a new index."""
    texts = ["apple pie", "pear tart", "apple crumble with custard and cream", "pear tart", "jam"]
    index = bm25_index(texts)
    assert top_k(index, "apple", 2) == [0, 2]
    assert top_k(index, "tart", 3) == [1, 3, 0]
    long_turn = " ".join(f"word{i}" for i in range(300)) + " needle"
    assert top_k(bm25_index(["hay", long_turn, "straw"]), "needle", 1) == [1]
    baseline = BM25Baseline()
    assert baseline(["tram ride", "bus ride", "walk"], "tram", 1) == [0]
    assert baseline(["bus ride", "tram ride", "walk"], "tram", 1) == [1]


# A hand-written chatty conversation, not from the generator: facts said in passing,
# a correction, and questions in other words than the turns that answer them.
REALISTIC = [
    ("user", "morning! coffee in hand, let's get going on the week"),
    ("assistant", "Good morning! What's first on the list?"),
    (
        "user",
        "first, some context: my partner Priya and I are hosting her parents next month, "
        "they fly in from Chennai on the 14th",
    ),
    ("assistant", "That's exciting. Do you want help planning the visit?"),
    (
        "user",
        "yes eventually. also the guest room still has the broken radiator, the landlord "
        "keeps ignoring my emails",
    ),
    ("assistant", "That's frustrating. Should I draft a firmer email to the landlord?"),
    ("user", "maybe later. today I mostly want to sort out the work stuff"),
    ("assistant", "Sure, what's going on at work?"),
    (
        "user",
        "we're migrating the billing service off the old Oracle box, my manager Tomasz wants "
        "it done before the audit",
    ),
    ("assistant", "Understood. When is the audit?"),
    ("user", "end of Q3 I think, I'll double check"),
    ("assistant", "OK."),
    ("user", "lol my cat just walked across the keyboard"),
    ("assistant", "Ha! What's the cat's name?"),
    ("user", "Biscuit, she's a ginger menace, fourteen years old and still bossy"),
    ("assistant", "Biscuit sounds like a character."),
    (
        "user",
        "she is. anyway, for the migration we picked Postgres 16, the DBA team already has "
        "a cluster for us",
    ),
    ("assistant", "Great, Postgres 16 it is."),
    (
        "user",
        "I'm a bit nervous about the cutover weekend, last time we did something like this "
        "it went badly",
    ),
    ("assistant", "Understandable. We can plan a rollback path."),
    ("user", "ok so Priya's parents are vegetarian, her dad doesn't eat onion or garlic either"),
    ("assistant", "Noted, I can suggest recipes that fit."),
    ("user", "we went to that Georgian place on Saturday, the khachapuri was unreal"),
    ("assistant", "Sounds delicious."),
    ("user", "I've started running again, did 5k on Sunday in 31 minutes, slow but happy"),
    ("assistant", "Nice work getting back into it!"),
    ("user", "oh, checked with Tomasz: the audit is actually October 3rd, not end of Q3"),
    ("assistant", "Thanks, October 3rd then."),
    ("user", "my sister's wedding is in Porto in June, we still haven't booked flights"),
    ("assistant", "Would you like me to look at flights?"),
    ("user", "not yet. the cutover is planned for the weekend of September 20th"),
    ("assistant", "Got it."),
    (
        "user",
        "ugh the landlord finally replied, someone will look at the radiator Thursday afternoon",
    ),
    ("assistant", "Good news, finally."),
]
REALISTIC_QUESTIONS = [
    ("When do Priya's parents arrive?", 2),
    ("Which database are we moving billing to?", 16),
    ("What is my pet called?", 14),
    ("What food restrictions do the in-laws have?", 20),
    ("When is the audit?", 26),
    ("Where is the wedding happening?", 28),
    ("How fast was my last run?", 24),
    ("When is the heating in the spare room getting fixed?", 32),
    ("What restaurant did we try at the weekend?", 22),
    ("Who is pushing for the migration deadline?", 8),
    ("When is the switch-over scheduled?", 30),
]


def realistic_conversation() -> dict[str, Any]:
    return {
        "id": "realistic",
        "turns": [
            {"id": f"t{i}", "speaker": who, "text": text} for i, (who, text) in enumerate(REALISTIC)
        ],
        "questions": [
            {"id": f"q{i}", "question": question, "evidence": [f"t{turn}"]}
            for i, (question, turn) in enumerate(REALISTIC_QUESTIONS)
        ],
    }


def test_a_hand_written_chatty_conversation(store: MemoryStore) -> None:
    """Real extraction on chatty text: raw turns add what items miss, and a correction wins."""
    conv = parse_line(json.dumps(realistic_conversation()))
    report = run([conv], lambda: SQLiteMemoryStore(":memory:"), BM25Baseline())["overall"]
    assert report["recall@10"] > report["itemsRecall@10"]
    assert report["blockRecall"] >= report["recall@10"]
    ingest(store, conv, load_config(), default_extractor)
    run_found = retrieve(store, "realistic", query_signals("How fast was my last run?"), DEEP)
    assert run_found.merged()[0][2] == (24,)
    # The audit date was corrected at turn 26; that turn ranks above the older mention.
    audit = [
        seqs for _, _, seqs in retrieve(store, "realistic", query_signals("audit?"), DEEP).merged()
    ]
    assert audit.index((26,)) < audit.index((8,))
    # No word or concept in common with "What is my blood type?": nothing is made up.
    assert (
        retrieve(store, "realistic", query_signals("What is my blood type?"), DEEP).merged() == []
    )
    # "pet" names a concept whose parts include "cat": the cat's turn, said in passing.
    pet = retrieve(store, "realistic", query_signals("What is my pet called?"), DEEP).merged()
    assert pet[0][2] == (12,)


def test_turn_time_becomes_the_event_time(store: MemoryStore) -> None:
    """A dataset turn's `time` is stored as its event's time, so evidence can be dated."""
    line = json.dumps(
        {
            "id": "dated",
            "turns": [
                {"id": "a", "speaker": "user", "text": "Ana: hi", "time": "2024-01-02"},
                {"id": "b", "speaker": "user", "text": "Bo: 你好"},
            ],
            "questions": [],
        }
    )
    ingest(store, parse_line(line), load_config(), default_extractor)
    assert [e.time for e in store.list_events("dated")] == ["2024-01-02", None]


def test_a_written_turn_time_is_stored_in_iso_form_and_dates_the_evidence(
    store: MemoryStore,
) -> None:
    """A dataset that writes "1:56 pm on 8 May, 2023" gets the same dated evidence as one
    that writes ISO; a time that names no date is stored as given and dates nothing."""
    line = json.dumps(
        {
            "id": "written",
            "turns": [
                {
                    "id": "a",
                    "speaker": "user",
                    "text": "Ana: I adopted a cat named Miso",
                    "time": "1:56 pm on 8 May, 2023",
                },
                {
                    "id": "b",
                    "speaker": "user",
                    "text": "Bo: 我周末去了杭州西湖",
                    "time": "2023年5月9日",
                },
                {
                    "id": "c",
                    "speaker": "user",
                    "text": "Ana: the cat sleeps all day",
                    "time": "sometime",
                },
            ],
            "questions": [],
        }
    )
    ingest(store, parse_line(line), load_config(), default_extractor)
    assert [e.time for e in store.list_events("written")] == [
        "2023-05-08T13:56",
        "2023-05-09",
        "sometime",
    ]
    block = assemble(
        store, "written", [StepMessage("user", "what is Ana's cat named? 杭州")], load_config()
    ).text
    assert "2023-05-08" in block and "2023-05-09" in block
    assert "sometime" not in block


def test_the_frozen_baseline_tokenizer_does_not_move() -> None:
    """BM25's tokenizer is pinned: ranking work elsewhere never changes the baseline."""
    from lcm_core.bench.bm25 import tokenize as frozen

    assert frozen("Anna's dogs painted 预算不超过 a x_y-z", 100) == [
        "anna's",
        "dogs",
        "painted",
        "预算",
        "算不",
        "不超",
        "超过",
        "x_y-z",
    ]


def test_a_name_given_only_in_the_name_field_heads_the_turn(store: MemoryStore) -> None:
    """A chat between people whose converter keeps names out of the text loses nothing:
    the harness writes each turn as a chat log shows it ("Ana: ..."), once, for the
    pipeline and the baselines."""
    line = json.dumps(
        {
            "id": "named",
            "turns": [
                {"id": "a", "speaker": "user", "name": "Ana", "text": "I adopted a cat"},
                {"id": "b", "speaker": "user", "name": "Bo", "text": "Bo: 我也养了一只猫"},
                {"id": "c", "speaker": "user", "name": "小明", "text": "我昨天去了杭州"},
                {"id": "d", "speaker": "user", "text": "no name here"},
            ],
            "questions": [{"id": "q", "question": "What did Ana adopt?", "evidence": ["a"]}],
        }
    )
    conv = parse_line(line)
    ingest(store, conv, load_config(), default_extractor)
    assert [e.text for e in store.list_events("named")] == [
        "Ana: I adopted a cat",
        "Bo: 我也养了一只猫",
        "小明: 我昨天去了杭州",
        "no name here",
    ]
    seen: list[Sequence[str]] = []

    def spy(texts: Sequence[str], question: str, k: int) -> list[int]:
        seen.append(list(texts))
        return list(range(len(texts)))[:k]

    run([conv], lambda: SQLiteMemoryStore(":memory:"), spy, extract=default_extractor)
    assert seen[0][0] == "Ana: I adopted a cat" and seen[0][1] == "Bo: 我也养了一只猫"


def test_a_person_a_converter_put_on_the_assistant_side_speaks_as_a_user(
    store: MemoryStore,
) -> None:
    """Two people, one labelled "assistant" by a converter: both are user messages (a
    person's words are what someone said), in English and Chinese, with names from the
    field or from the text's chat-log heads. An unnamed assistant keeps its role."""
    line = json.dumps(
        {
            "id": "pair",
            "turns": [
                {"id": "a", "speaker": "user", "name": "Ana", "text": "I adopted a cat"},
                {"id": "b", "speaker": "assistant", "name": "Bo", "text": "我也养了一只猫"},
                {"id": "c", "speaker": "assistant", "text": "How can I help?"},
            ],
            "questions": [],
        }
    )
    ingest(store, parse_line(line), load_config(), default_extractor)
    assert [(e.type, e.text) for e in store.list_events("pair")] == [
        ("user/message", "Ana: I adopted a cat"),
        ("user/message", "Bo: 我也养了一只猫"),
        ("assistant/message", "How can I help?"),
    ]
    heads = [
        {"id": f"t{i}", "speaker": side, "text": text}
        for i, (side, text) in enumerate(
            [("user", "Emi: hi"), ("assistant", "Kai: hello"), ("user", "Emi: art?"),
             ("assistant", "Kai: 我喜欢画画")]
        )
    ]  # fmt: skip
    turns = parse_line(json.dumps({"id": "h", "turns": heads, "questions": []})).turns
    assert [t.speaker for t in turns] == ["user"] * 4
    assert [t.text for t in turns][3] == "Kai: 我喜欢画画"


def test_a_user_and_assistant_session_keeps_its_texts() -> None:
    """One named user and an assistant: the role tells who spoke, and no host writes the
    user's name before each message, so the texts are stored as given."""
    line = json.dumps(
        {
            "id": "solo",
            "turns": [
                {"id": "a", "speaker": "user", "name": "Sam", "text": "I prefer tea"},
                {"id": "b", "speaker": "assistant", "name": "assistant", "text": "noted"},
            ],
            "questions": [],
        }
    )
    assert [(t.speaker, t.text) for t in parse_line(line).turns] == [
        ("user", "I prefer tea"),
        ("assistant", "noted"),
    ]
    # Names that stand for roles are no people either, whatever the texts begin with.
    roles = [
        {"id": "a", "speaker": "user", "name": "user", "text": "Error: it failed"},
        {"id": "b", "speaker": "assistant", "name": "Assistant", "text": "Note: retry"},
    ]
    kept = parse_line(json.dumps({"id": "r", "turns": roles, "questions": []})).turns
    assert [(t.speaker, t.text) for t in kept] == [
        ("user", "Error: it failed"),
        ("assistant", "Note: retry"),
    ]
