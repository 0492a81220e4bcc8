"""What the real Claude Code 2.1 writes and sends, handled: lines recorded from its transcripts.

Each test builds a transcript the way Claude Code writes one (the line shapes come from
the CLI's own files: local-command lines, `<synthetic>` replies, `hook_additional_context`
attachments holding what a hook returned, a boundary written after `SessionStart`) and
drives `lcm hook` with the payloads Claude Code sends.
"""

from __future__ import annotations

import json
import sqlite3
import sys
from pathlib import Path
from typing import Any

import pytest
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

SESSION = "3c1f2a9e-7d44-4b0e-9f6a-2e8d5c7b1a90"
CWD = "/home/dev/发票服务"


@pytest.fixture
def talk(tmp_path: Path) -> Transcript:
    return Transcript(tmp_path / "projects" / "-home-dev" / f"{SESSION}.jsonl", SESSION, CWD)


def hook(db: Path, event: str, transcript: Transcript, **extra: Any) -> str:
    """The additionalContext of one hook call ('' when it adds nothing)."""
    body = {"session_id": SESSION, "transcript_path": str(transcript.path), "cwd": CWD, **extra}
    result = CliRunner().invoke(cli, ["--db", str(db), "hook", event], input=json.dumps(body))
    assert result.exit_code == 0, result.output
    assert result.stderr == "", result.stderr
    if not result.stdout.strip():
        return ""
    reply = json.loads(result.stdout)["hookSpecificOutput"]
    return str(reply["additionalContext"])


def rows(db: Path, sql: str) -> list[tuple[Any, ...]]:
    with sqlite3.connect(db) as conn:
        return conn.execute(sql).fetchall()


def the_user_sets_four_things(talk: Transcript) -> None:
    for text in (BUDGET, LATENCY, PORT, CORRECTION):
        talk.say(text)


def test_local_command_lines_and_synthetic_replies_are_not_user_evidence(
    tmp_path: Path, talk: Transcript
) -> None:
    db = tmp_path / "m.sqlite"
    the_user_sets_four_things(talk)
    talk.boundary()
    talk.local_compact()
    talk.reply("No response requested.", model="<synthetic>")
    hook(db, "stop", talk)
    kinds = dict(rows(db, "SELECT text, source_kind FROM events WHERE type LIKE '%/message'"))
    assert kinds[BUDGET] == "user"
    commands = [k for text, k in kinds.items() if "command" in text]
    assert commands and set(commands) <= {"local-command", "runtime-context"}
    assert kinds["No response requested."] == "synthetic"
    # Asked about the command itself, memory still never quotes its lines.
    block = hook(db, "user-prompt-submit", talk, prompt="What did /compact print? 压缩输出了什么？")
    assert "<command-name>" not in block and "<local-command" not in block
    assert "No response requested" not in block
    assert not rows(db, "SELECT id FROM memory_items WHERE content LIKE '%command%'")


def test_a_transcript_that_does_not_exist_yet_is_not_an_error(tmp_path: Path) -> None:
    db = tmp_path / "m.sqlite"
    early = Transcript(tmp_path / "projects" / "new" / f"{SESSION}.jsonl", SESSION, CWD)
    early.path.parent.rmdir()  # Claude Code names the file before it writes its first line
    assert hook(db, "session-start", early, source="startup") == ""
    assert hook(db, "user-prompt-submit", early, prompt=BUDGET) == ""
    assert not (tmp_path / "hooks.log").exists()


def test_pre_compact_and_session_end_capture_what_the_transcript_gained(
    tmp_path: Path, talk: Transcript
) -> None:
    db = tmp_path / "m.sqlite"
    talk.say(BUDGET)
    assert hook(db, "pre-compact", talk, trigger="auto", custom_instructions=None) == ""
    assert rows(db, "SELECT count(*) FROM events") == [(2,)]
    talk.user(LATENCY)
    assert hook(db, "session-end", talk, reason="other") == ""
    assert rows(db, "SELECT count(*) FROM events") == [(3,)]


def test_session_start_compact_before_its_boundary_restates_and_nothing_repeats(
    tmp_path: Path, talk: Transcript
) -> None:
    """Claude Code's order for an automatic compaction, then the next prompt."""
    db = tmp_path / "m.sqlite"
    the_user_sets_four_things(talk)
    talk.chatter(6)
    prompt = "Let's carry on with the next step."
    talk.user(prompt)  # written before the compaction starts
    hook(db, "user-prompt-submit", talk, prompt=prompt)
    hook(db, "pre-compact", talk, trigger="auto")
    block = hook(db, "session-start", talk, source="compact")  # the boundary is not written yet
    assert_carries_what_the_user_set(block)
    notice = block.partition("## 提示")[2] or block.partition("## Notice")[2]
    assert "6432" in notice and any(m in notice for m in OLD_MARKERS)
    # Then Claude Code writes the boundary, the summary and the block it was given.
    talk.boundary()
    talk.context(block, "SessionStart")
    talk.reply()
    hook(db, "stop", talk)
    types = [
        t
        for (t,) in rows(db, "SELECT type FROM events WHERE type LIKE 'compaction/%' ORDER BY seq")
    ]
    assert types == ["compaction/start", "compaction/end", "compaction/summary"]
    # A resume and the next prompt: the block in the history is not sent again.
    assert hook(db, "session-start", talk, source="resume") == ""
    again = hook(db, "user-prompt-submit", talk, prompt="预算是多少？")
    assert "预算不超过3000元" not in again


def test_a_question_asked_again_gets_nothing_and_explain_says_why(
    tmp_path: Path, talk: Transcript
) -> None:
    db = tmp_path / "m.sqlite"
    the_user_sets_four_things(talk)
    talk.chatter(8)
    talk.boundary()
    question = "What is the budget, and which port? 预算和端口？"
    first = hook(db, "user-prompt-submit", talk, prompt=question)
    assert "3000" in first and "5433" in first
    talk.user(question)
    talk.context(first)
    talk.reply()
    assert hook(db, "user-prompt-submit", talk, prompt=question) == ""
    result = CliRunner().invoke(cli, ["--db", str(db), "explain", "--session", SESSION])
    assert result.exit_code == 0, result.output
    assert "already shown" in result.stdout


def test_a_named_database_under_a_missing_folder_is_never_created(tmp_path: Path) -> None:
    target = tmp_path / "no" / "such" / "folder" / "m.sqlite"
    body = json.dumps({"session_id": SESSION, "prompt": BUDGET})
    result = CliRunner().invoke(
        cli, ["--db", str(target), "hook", "user-prompt-submit"], input=body
    )
    assert result.exit_code == 0 and result.stdout == ""
    assert "no folder" in result.stderr and str(target.parent) in result.stderr
    assert not (tmp_path / "no").exists()


def test_the_default_database_of_a_claude_code_user_is_under_its_home(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "home"
    (home / ".claude").mkdir(parents=True)
    monkeypatch.setenv("HOME", str(home))
    for name in ("DSH_HOME", "CLAUDE_CONFIG_DIR", "LCM_DB"):
        monkeypatch.delenv(name, raising=False)
    body = json.dumps({"session_id": SESSION, "prompt": BUDGET})
    result = CliRunner().invoke(cli, ["hook", "user-prompt-submit"], input=body)
    assert result.exit_code == 0, result.output
    folder = home / ".claude" / "long-conversation-memory"
    assert (folder / "memory.sqlite").is_file()
    assert oct(folder.stat().st_mode & 0o777) == "0o700"
    assert not (home / ".dsh").exists()


def test_without_a_home_to_put_it_in_the_default_database_is_not_made_up(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path / "nobody"))
    for name in ("DSH_HOME", "CLAUDE_CONFIG_DIR", "LCM_DB"):
        monkeypatch.delenv(name, raising=False)
    body = json.dumps({"session_id": SESSION, "prompt": BUDGET})
    result = CliRunner().invoke(cli, ["hook", "user-prompt-submit"], input=body)
    assert result.exit_code == 0 and result.stdout == ""
    assert "no folder" in result.stderr
    assert not (tmp_path / "nobody").exists()
