"""The retrieval-quality harness: dataset parsing, recall arithmetic, baseline in the same run."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

import pytest

from lcm_core.bench_retrieval import format_table, load_dataset, parse_line, run
from lcm_core.config import Config
from lcm_core.ports import MemoryStore
from lcm_core.testing.builders import make_item
from lcm_store_sqlite import SQLiteMemoryStore

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


def every_user_turn(store: MemoryStore, session_id: str, config: Config) -> None:
    """A stand-in extractor: one fact per user message except the dentist one."""
    for event in store.list_events(session_id, types=["user/message"]):
        if "dentist" not in event.text:
            store.insert_item(make_item(session_id, event.text, source_refs=(f"seq:{event.seq}",)))


def last_turn_first(texts: Sequence[str], question: str, k: int) -> list[int]:
    """A stand-in baseline that always ranks the newest turns first."""
    return list(reversed(range(len(texts))))[:k]


def test_report_counts_recall_per_category_and_overall() -> None:
    """Extracted facts are found; a fact extraction missed costs recall and shows as not extracted."""
    conv = parse_line(json.dumps(CONV))
    report = run(
        [conv], lambda: SQLiteMemoryStore(":memory:"), last_turn_first, extract=every_user_turn
    )
    assert report["zh"]["recall@5"] == 1.0 and report["zh"]["blockRecall"] == 1.0
    assert report["fact"]["questions"] == 2
    assert report["fact"]["recall@5"] == 0.5 and report["fact"]["extracted"] == 0.5
    assert report["overall"]["questions"] == 3
    assert report["overall"]["recall@10"] == pytest.approx(2 / 3, abs=1e-4)
    # The stand-in baseline puts t3 first and t0 last among four turns.
    assert report["fact"]["baseline@5"] == 1.0
    assert report["overall"]["blockTokens"] > 0
    assert "| overall | 3 |" in format_table(report)


def test_a_malformed_line_names_its_number(tmp_path: Path) -> None:
    """A record without questions is rejected with the line number, not a traceback deep inside."""
    path = tmp_path / "bad.jsonl"
    path.write_text(json.dumps(CONV) + "\n\n" + json.dumps({"id": "x", "turns": []}) + "\n")
    with pytest.raises(ValueError, match="line 3"):
        load_dataset(path)
    path.write_text(json.dumps(CONV) + "\n")
    assert [c.id for c in load_dataset(path)] == ["c1"]
