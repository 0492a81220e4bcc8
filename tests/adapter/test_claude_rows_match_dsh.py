"""A conversation captured from a Claude Code transcript is stored as from DSH's live events.

The Claude face builds the core's own records from transcript lines, the DSH face parses
envelopes; the same conversation must give the same rows either way (text, time, role,
source kind, tool and call ids, archive and truncation), so memory, search and the
blocks behave alike whichever host the user runs.
"""

from __future__ import annotations

import json
from dataclasses import asdict
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from lcm_adapter.claude.transcript import sync_transcript
from lcm_adapter.runtime import MemoryRuntime
from lcm_core.store.models import MAX_EVENT_TEXT

START = datetime(2026, 12, 3, 9, 0, tzinfo=UTC)
LONG = "预算不超过3000元（含税）, the cap holds. " * (MAX_EVENT_TEXT // 20)
RESULT = [
    {"type": "text", "text": "账单 export: 12 rows\r\nstatus ok"},
    {"type": "image", "source": {"type": "base64", "data": "AAAA"}},
    [{"type": "text", "text": "嵌套 nested"}, 7],
]
# (Claude line content, the DSH envelope type and data for the same event)
CONVERSATION: list[tuple[dict[str, Any], list[tuple[str, dict[str, Any]]]]] = [
    (
        {"type": "user", "message": {"role": "user", "content": "用 port 5433 连 staging。"}},
        [
            (
                "user/message",
                {
                    "role": "user",
                    "content": [{"type": "text", "text": "用 port 5433 连 staging。"}],
                    "source": {"kind": "user"},
                },
            )
        ],
    ),
    (
        {
            "type": "assistant",
            "message": {
                "model": "claude-x",
                "content": [
                    {"type": "text", "text": "好的, checking."},
                    {"type": "tool_use", "id": "toolu_1", "name": "Bash", "input": {"cmd": "ls"}},
                ],
            },
        },
        [
            (
                "assistant/message",
                {
                    "message": {
                        "role": "assistant",
                        "content": [{"type": "text", "text": "好的, checking."}],
                        "source": {"kind": "model"},
                    }
                },
            ),
            ("tool/call", {"callId": "toolu_1", "name": "Bash", "arguments": {"cmd": "ls"}}),
        ],
    ),
    (
        {
            "type": "user",
            "message": {
                "role": "user",
                "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": RESULT}],
            },
        },
        [
            (
                "tool/result",
                {
                    "message": {
                        "role": "tool",
                        "content": [
                            {"type": "tool-result", "toolCallId": "toolu_1", "content": RESULT}
                        ],
                        "source": {"kind": "tool"},
                    }
                },
            )
        ],
    ),
    (
        {"type": "user", "message": {"role": "user", "content": LONG}},
        [
            (
                "user/message",
                {
                    "role": "user",
                    "content": [{"type": "text", "text": LONG}],
                    "source": {"kind": "user"},
                },
            )
        ],
    ),
    (
        {"type": "system", "subtype": "compact_boundary", "content": "Compacted"},
        [("compaction/start", {})],
    ),
    (
        {
            "type": "user",
            "isCompactSummary": True,
            "message": {"content": "<summary>预算</summary>"},
        },
        [
            (
                "compaction/summary",
                {"summary": [{"type": "text", "text": "<summary>预算</summary>"}]},
            )
        ],
    ),
]


def stored(runtime: MemoryRuntime, session: str) -> list[dict[str, Any]]:
    """Every stored row of a session with its archived text, less the session and ingest stamp."""
    rows = []
    for event in runtime.store.list_events(session):
        row = asdict(event)
        del row["session_id"], row["ingested_at"]
        archive = runtime.store.get_archive(session, f"seq:{event.seq}")
        row["archive"] = None if archive is None else archive.text
        rows.append(row)
    return rows


def test_a_claude_transcript_is_stored_as_the_same_dsh_events(tmp_path: Path) -> None:
    transcript = tmp_path / "s.jsonl"
    envelopes: list[dict[str, Any]] = []
    with transcript.open("w", encoding="utf-8") as out:
        for minute, (line, events) in enumerate(CONVERSATION):
            when = START.replace(minute=minute)
            stamp = when.isoformat().replace("+00:00", "Z")
            out.write(json.dumps({**line, "timestamp": stamp}, ensure_ascii=False) + "\n")
            for event_type, data in events:
                seq, millis = len(envelopes), int(when.timestamp() * 1000)
                envelopes.append({"type": event_type, "seq": seq, "time": millis, "data": data})
    runtime = MemoryRuntime.open(str(tmp_path / "m.sqlite"))
    try:
        assert sync_transcript(runtime, "claude", str(transcript)).inserted == len(envelopes)
        assert runtime.on_events("dsh", envelopes).inserted == len(envelopes)
        claude, dsh = stored(runtime, "claude"), stored(runtime, "dsh")
    finally:
        runtime.close()
    assert claude == dsh
    # The conversation reaches every path the rows differ by.
    assert {row["store"] for row in claude} == {"host", "archive", "none"}
    assert any(row["truncated"] for row in claude)
    assert {row["role"] for row in claude} >= {"user", "assistant", "tool"}
