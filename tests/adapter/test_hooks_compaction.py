"""`lcm hook session-start` with source `compact`: what the user set down comes back.

A Claude Code transcript sets a budget, a latency limit with its condition and a port
that is later corrected, then only filler; Claude Code compacts it (a boundary and a
summary) twice. After each compaction the SessionStart block must carry the budget with
含税, the latency limit with its condition and the corrected port, and name the old port
only as superseded; a filler prompt right after adds nothing the block already shows.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from click.testing import CliRunner

from lcm_adapter.cli.main import cli

sys.path.insert(0, str(Path(__file__).parent))  # the transcript writer beside these tests
from claude_transcript import (
    BUDGET,
    CORRECTION,
    LATENCY,
    OLD_MARKERS,
    PORT,
    Transcript,
    assert_carries_what_the_user_set,
)

SESSION = "5b0c1d2e-3f40-4a5b-8c6d-7e8f9a0b1c2d"
HEADER = "[长对话记忆 · long-conversation-memory"


def hook(db: Path, event: str, body: dict[str, Any]) -> str:
    """The additionalContext of one hook call ('' when it adds nothing)."""
    result = CliRunner().invoke(cli, ["--db", str(db), "hook", event], input=json.dumps(body))
    assert result.exit_code == 0, result.output
    if not result.stdout.strip():
        return ""
    return str(json.loads(result.stdout)["hookSpecificOutput"]["additionalContext"])


def payload(transcript: Transcript, **extra: Any) -> dict[str, Any]:
    return {"session_id": SESSION, "transcript_path": str(transcript.path), **extra}


def test_session_start_after_each_compaction_restates_the_resident_set(tmp_path: Path) -> None:
    db = tmp_path / "m.sqlite"
    talk = Transcript(tmp_path / "projects" / f"{SESSION}.jsonl", SESSION, "/home/dev/invoices")
    for text in (BUDGET, LATENCY, PORT, CORRECTION):
        talk.say(text)
    talk.chatter(7, start=5)
    for round_ in (1, 2):
        talk.boundary(f"<summary>第 {round_} 次压缩：之前是闲聊。</summary>")
        block = hook(db, "session-start", payload(talk, source="compact"))
        assert block.startswith(HEADER)
        assert_carries_what_the_user_set(block)
        notice = block.partition("## 提示")[2]
        assert "6432" in notice and any(m in notice for m in OLD_MARKERS)
        # A filler prompt right after: the resident set is already in context, and the
        # compacted filler turns only echo the prompt, so nothing is added.
        prompt = f"第 {round_} 次压缩后，第 12 轮闲聊，一些无关的填充文字。"
        assert hook(db, "user-prompt-submit", payload(talk, prompt=prompt)) == ""
        for turn in range(3):
            talk.say(f"压缩后第 {turn} 轮闲聊。")
