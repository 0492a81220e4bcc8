"""A Claude Code transcript written line by line, as the CLI writes one, for hook tests.

The line shapes are the real CLI's (2.1): user and assistant messages, the lines of a
local command such as `/compact`, `<synthetic>` replies, the `hook_additional_context`
attachment holding what a hook returned, and a compaction's boundary and summary. Also
what the hook tests' user sets down, and the check that a block carries it.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

BUDGET = "这个项目的预算不超过3000元（含税）。"
LATENCY = "The p95 latency of /invoices must stay under 180 ms when the cache is warm."
# The wording: a plain fact with no cue word, then its correction by subject.
PORT = "The staging database listens on port 6432."
CORRECTION = "Correction: the staging database listens on port 5433, not 6432."
# The notice marks an old value in the block's language.
OLD_MARKERS = ("旧值", "old value")


def assert_carries_what_the_user_set(block: str) -> None:
    """Budget with 含税, latency with its condition, the new port; the old one only marked."""
    assert "预算不超过3000元（含税）" in block
    assert "180 ms" in block and "/invoices" in block and "when the cache is warm" in block
    assert "5433" in block
    for line in block.splitlines():
        if "6432" in line and not any(m in line for m in OLD_MARKERS):
            # The correction's own words name the old value as not current.
            assert re.sub(r"not 6432", "", line).count("6432") == 0, line


class Transcript:
    """One session's transcript file; each `add` appends a line with its ids and time."""

    def __init__(self, path: Path, session: str, cwd: str, day: str = "2026-12-03") -> None:
        self.path, self.session, self.cwd, self.day, self.count = path, session, cwd, day, 0
        path.parent.mkdir(parents=True, exist_ok=True)

    def add(self, entry: dict[str, Any]) -> None:
        self.count += 1
        base = {
            "sessionId": self.session,
            "cwd": self.cwd,
            "uuid": f"00000000-0000-4000-8000-{self.count:012d}",
            "timestamp": f"{self.day}T09:{self.count // 60:02d}:{self.count % 60:02d}.000Z",
        }
        with self.path.open("a", encoding="utf-8") as out:
            out.write(json.dumps({**base, **entry}, ensure_ascii=False) + "\n")

    def user(self, text: str, **extra: Any) -> None:
        self.add({"type": "user", "message": {"role": "user", "content": text}, **extra})

    def reply(self, text: str = "好的。", model: str = "claude-opus-5-5") -> None:
        message = {"role": "assistant", "model": model, "content": [{"type": "text", "text": text}]}
        self.add({"type": "assistant", "message": message})

    def say(self, text: str) -> None:
        """A prompt and the model's short reply."""
        self.user(text)
        self.reply()

    def chatter(self, turns: int, start: int = 0) -> None:
        """Filler turns that mention nothing the user set."""
        for turn in range(start, start + turns):
            self.say(f"第 {turn} 轮闲聊，一些无关的填充文字。")

    def context(self, text: str, event: str = "UserPromptSubmit") -> None:
        """What Claude Code writes after a hook returned `additionalContext`."""
        attachment = {"type": "hook_additional_context", "content": [text], "hookName": event}
        self.add({"type": "attachment", "attachment": attachment})

    def local_compact(self) -> None:
        """The lines of a `/compact` typed in Claude Code, after its boundary and summary."""
        self.user(
            "<local-command-caveat>The command below was run directly in Claude Code, not "
            "sent to you as a request.</local-command-caveat>",
            isMeta=True,
        )
        self.user(
            "<command-name>/compact</command-name>\n<command-message>compact</command-message>"
            "\n<command-args></command-args>"
        )
        self.user(
            "<local-command-stdout>Compacted (ctrl+o to see full summary)</local-command-stdout>"
        )

    def boundary(self, summary: str = "<summary>之前主要是闲聊。</summary>") -> None:
        """A compaction: its boundary line, then the summary Claude Code continues from."""
        boundary = {"type": "system", "subtype": "compact_boundary", "content": "Compacted"}
        self.add(boundary)
        self.user(summary, isCompactSummary=True)
