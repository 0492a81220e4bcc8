"""Reading a conversation-QA dataset the way converters write it: speakers, evidence ids."""

from __future__ import annotations

import json
from typing import Any

from lcm_core.bench.dataset import parse_line


def _line(turns: list[dict[str, Any]], questions: list[dict[str, Any]]) -> str:
    return json.dumps({"id": "c", "turns": turns, "questions": questions}, ensure_ascii=False)


def test_a_name_in_the_speaker_field_is_a_person() -> None:
    """ "speaker": "Caroline" (a chat dataset's own field, copied as it is) makes a user turn
    headed by the name: before, every such turn was an assistant message, and REALTALK
    written that way ranked R@10 0.006 instead of 0.565."""
    turns = parse_line(
        _line(
            [
                {"id": "a", "speaker": "Caroline", "text": "I went to a support group"},
                {"id": "b", "speaker": "小明", "text": "我昨天去了杭州"},
                {"id": "c", "speaker": "Caroline", "text": "Caroline: that's great"},
            ],
            [],
        )
    ).turns
    assert [(t.speaker, t.text) for t in turns] == [
        ("user", "Caroline: I went to a support group"),
        ("user", "小明: 我昨天去了杭州"),
        ("user", "Caroline: that's great"),
    ]


def test_role_words_are_roles() -> None:
    """ "Human" / "AI" / 用户 / 助手 are the user and the assistant, not two people."""
    turns = parse_line(
        _line(
            [
                {"id": "a", "speaker": "Human", "text": "I prefer tea"},
                {"id": "b", "speaker": "AI", "text": "noted"},
                {"id": "c", "speaker": "用户", "text": "预算三千"},
                {"id": "d", "speaker": "助手", "text": "好的"},
            ],
            [],
        )
    ).turns
    assert [(t.speaker, t.text) for t in turns] == [
        ("user", "I prefer tea"),
        ("assistant", "noted"),
        ("user", "预算三千"),
        ("assistant", "好的"),
    ]


def test_evidence_ids_are_resolved_against_the_turns() -> None:
    """An id naming no turn is dropped, a string listing several gives each, and a question
    left with no evidence is counted, not scored."""
    conv = parse_line(
        _line(
            [{"id": f"D1:{i}", "speaker": "user", "text": f"turn {i}"} for i in range(1, 4)],
            [
                {"id": "q1", "question": "a?", "evidence": ["D1:1", "D9:9"]},
                {"id": "q2", "question": "b?", "evidence": ["D1:2; D1:3"]},
                {"id": "q3", "question": "c?", "evidence": ["D7:1"]},
                {"id": "q4", "question": "d?", "evidence": []},
            ],
        )
    )
    assert [(q.id, q.evidence) for q in conv.questions] == [
        ("q1", ("D1:1",)),
        ("q2", ("D1:2", "D1:3")),
    ]
    assert conv.left_out == 2
