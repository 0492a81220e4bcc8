"""`lcm hook session-start` with source `compact`: what the user set down comes back.

A Claude Code transcript sets a budget, a latency limit with its condition and a port
that is later corrected, then only filler; Claude Code compacts it (a boundary and a
summary) twice. After each compaction the SessionStart block must carry the budget with
含税, the latency limit with its condition and the corrected port, and name the old port
only as superseded; a filler prompt right after adds nothing the block already shows.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from click.testing import CliRunner

from lcm_adapter.cli.main import cli

SESSION = "5b0c1d2e-3f40-4a5b-8c6d-7e8f9a0b1c2d"
HEADER = "[长对话记忆 · long-conversation-memory"
BUDGET = "这个项目的预算不超过3000元（含税）。"
LATENCY = "The p95 latency of /invoices must stay under 180 ms when the cache is warm."
PORT = "The staging database listens on port 6432."
# The wording: a plain fact with no cue word, then its correction by subject.
# The notice marks an old value in the block's language.
OLD_MARKERS = ("旧值", "old value")
CORRECTION = "Correction: the staging database listens on port 5433, not 6432."


class Transcript:
    """A Claude Code transcript written line by line."""

    def __init__(self, path: Path) -> None:
        self.path, self.count = path, 0
        path.parent.mkdir(parents=True, exist_ok=True)

    def add(self, entry: dict[str, Any]) -> None:
        self.count += 1
        base = {
            "sessionId": SESSION,
            "cwd": "/home/dev/invoices",
            "uuid": f"00000000-0000-4000-8000-{self.count:012d}",
            "timestamp": f"2026-11-30T02:{self.count // 60:02d}:{self.count % 60:02d}.000Z",
        }
        with self.path.open("a", encoding="utf-8") as out:
            out.write(json.dumps({**base, **entry}, ensure_ascii=False) + "\n")

    def user(self, text: str) -> None:
        self.add({"type": "user", "message": {"role": "user", "content": text}})
        self.add(
            {
                "type": "assistant",
                "message": {"role": "assistant", "content": [{"type": "text", "text": "好的。"}]},
            }
        )

    def compact(self, summary: str) -> None:
        boundary = {"type": "system", "subtype": "compact_boundary", "content": "Compacted"}
        self.add(boundary)
        self.add(
            {
                "type": "user",
                "isCompactSummary": True,
                "message": {"role": "user", "content": summary},
            }
        )


def hook(db: Path, event: str, body: dict[str, Any]) -> str:
    """The additionalContext of one hook call ('' when it adds nothing)."""
    result = CliRunner().invoke(cli, ["--db", str(db), "hook", event], input=json.dumps(body))
    assert result.exit_code == 0, result.output
    if not result.stdout.strip():
        return ""
    return str(json.loads(result.stdout)["hookSpecificOutput"]["additionalContext"])


def payload(transcript: Transcript, **extra: Any) -> dict[str, Any]:
    return {"session_id": SESSION, "transcript_path": str(transcript.path), **extra}


def assert_carries_what_the_user_set(block: str) -> None:
    """Budget with 含税, latency with its condition, the new port; the old one only marked."""
    assert block.startswith(HEADER)
    assert "预算不超过3000元（含税）" in block
    assert "180 ms" in block and "/invoices" in block and "when the cache is warm" in block
    assert "5433" in block
    for line in block.splitlines():
        if "6432" in line and not any(m in line for m in OLD_MARKERS):
            # The correction's own words name the old value as not current.
            assert re.sub(r"not 6432", "", line).count("6432") == 0, line


def test_session_start_after_each_compaction_restates_the_resident_set(tmp_path: Path) -> None:
    db = tmp_path / "m.sqlite"
    talk = Transcript(tmp_path / "projects" / f"{SESSION}.jsonl")
    for text in (BUDGET, LATENCY, PORT, CORRECTION):
        talk.user(text)
    for turn in range(5, 12):
        talk.user(f"第 {turn} 轮闲聊，一些无关的填充文字。")
    for round_ in (1, 2):
        talk.compact(f"<summary>第 {round_} 次压缩：之前是闲聊。</summary>")
        block = hook(db, "session-start", payload(talk, source="compact"))
        assert_carries_what_the_user_set(block)
        notice = block.partition("## 提示")[2]
        assert "6432" in notice and any(m in notice for m in OLD_MARKERS)
        # A filler prompt right after: the resident set is already in context, and the
        # compacted filler turns only echo the prompt, so nothing is added.
        prompt = f"第 {round_} 次压缩后，第 12 轮闲聊，一些无关的填充文字。"
        assert hook(db, "user-prompt-submit", payload(talk, prompt=prompt)) == ""
        for turn in range(3):
            talk.user(f"压缩后第 {turn} 轮闲聊。")
