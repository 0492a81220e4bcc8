"""`lcm hook EVENT` on recorded Claude-Code-style payloads, good and malformed."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from lcm_adapter.cli.main import cli
from lcm_adapter.runtime import MemoryRuntime
from lcm_core.store.registry import open_store

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "hooks"
SESSION = "7f2d9c1a-4b8e-4e6f-9a3d-2c5b1e8f0a47"
HEADER = "[长对话记忆 · long-conversation-memory"


def payload(event: str, transcript: Path | None, **extra: Any) -> dict[str, Any]:
    """A payload shaped like the ones Claude Code (and DSH's hooks bridge) send."""
    data: dict[str, Any] = {
        "session_id": SESSION,
        "cwd": "/home/dev/ledger-sync",
        "permission_mode": "default",
        "hook_event_name": event,
    }
    if transcript is not None:
        data["transcript_path"] = str(transcript)
    data.update(extra)
    return data


def hook(db: Path, event: str, stdin: bytes | str, *global_args: str) -> Result:
    return CliRunner().invoke(cli, ["--db", str(db), *global_args, "hook", event], input=stdin)


@pytest.fixture
def transcript(tmp_path: Path) -> Path:
    path = tmp_path / "projects" / f"{SESSION}.jsonl"
    path.parent.mkdir()
    shutil.copy(FIXTURES / "claude_transcript.jsonl", path)
    return path


def events(db: Path) -> list[Any]:
    store = open_store(str(db))
    try:
        return store.list_events(SESSION)
    finally:
        store.close()


def test_prompt_submit_adds_the_memory_block(tmp_path: Path, transcript: Path) -> None:
    db = tmp_path / "m.sqlite"
    body = payload("UserPromptSubmit", transcript, prompt="Which port and what budget (预算) now?")
    result = hook(db, "user-prompt-submit", json.dumps(body))
    assert result.exit_code == 0, result.output
    reply = json.loads(result.stdout)
    output = reply["hookSpecificOutput"]
    assert output["hookEventName"] == "UserPromptSubmit"
    context = output["additionalContext"]
    assert context.startswith(HEADER) and "8080" in context
    assert "30000" not in context and "db-primary" not in context


def test_transcript_is_captured_with_generated_text_kept_apart(
    tmp_path: Path, transcript: Path
) -> None:
    db = tmp_path / "m.sqlite"
    assert hook(db, "post-tool-use", json.dumps(payload("PostToolUse", transcript))).stdout == ""
    stored = events(db)
    assert [e.seq for e in stored] == list(range(len(stored)))
    kinds = [(e.type, e.source_kind) for e in stored]
    assert kinds.count(("user/message", "user")) == 4
    assert ("tool/call", "model") in kinds and ("tool/result", "tool") in kinds
    assert ("user/message", "runtime-context") in kinds  # the /compact meta message
    assert any(t == "compaction/start" for t, _ in kinds)
    assert any(t == "compaction/summary" for t, _ in kinds)
    store = open_store(str(db))
    items = store.list_items(SESSION)
    store.close()
    assert items and not any("30000" in item.content for item in items)


def test_capture_is_incremental(tmp_path: Path, transcript: Path) -> None:
    db = tmp_path / "m.sqlite"
    body = json.dumps(payload("Stop", transcript, stop_hook_active=False))
    assert hook(db, "stop", body).exit_code == 0
    first = len(events(db))
    assert hook(db, "stop", body).exit_code == 0
    assert len(events(db)) == first  # nothing read twice
    line = {
        "type": "user",
        "message": {"role": "user", "content": "批大小改成500。"},
        "uuid": "u-new",
        "timestamp": "2026-11-30T02:00:00.000Z",
    }
    half = json.dumps(line, ensure_ascii=False)
    with transcript.open("a", encoding="utf-8") as handle:
        handle.write(half[:20])  # the host is still writing this line
    assert hook(db, "stop", body).exit_code == 0
    assert len(events(db)) == first
    with transcript.open("a", encoding="utf-8") as handle:
        handle.write(half[20:] + "\n")
    assert hook(db, "stop", body).exit_code == 0
    stored = events(db)
    assert len(stored) == first + 1 and stored[-1].text == "批大小改成500。"
    assert stored[-1].seq == first


def test_a_replaced_transcript_is_read_again_without_duplicates(
    tmp_path: Path, transcript: Path
) -> None:
    db = tmp_path / "m.sqlite"
    body = json.dumps(payload("Stop", transcript))
    hook(db, "stop", body)
    count = len(events(db))
    transcript.write_text(transcript.read_text(encoding="utf-8").splitlines()[0] + "\n")
    assert hook(db, "stop", body).exit_code == 0
    assert len(events(db)) == count


def test_a_dsh_session_log_as_transcript(tmp_path: Path) -> None:
    """DSH's hooks bridge points at its own session log; its seqs are kept."""
    from lcm_adapter.demo import session_log

    db = tmp_path / "m.sqlite"
    with session_log() as log:
        copy = tmp_path / "session.v4.jsonl"
        shutil.copy(log, copy)
    result = hook(db, "post-tool-use", json.dumps(payload("PostToolUse", copy)))
    assert result.exit_code == 0 and result.stdout == ""
    stored = events(db)
    assert stored[0].seq == 0 and stored[-1].seq == 110


def test_session_start_after_compaction_reinjects(tmp_path: Path, transcript: Path) -> None:
    db = tmp_path / "m.sqlite"
    started = hook(
        db, "session-start", json.dumps(payload("SessionStart", transcript, source="compact"))
    )
    reply = json.loads(started.stdout)["hookSpecificOutput"]
    assert reply["hookEventName"] == "SessionStart" and reply["additionalContext"].startswith(
        HEADER
    )
    fresh = hook(db, "session-start", json.dumps(payload("SessionStart", None, source="startup")))
    assert fresh.exit_code == 0 and fresh.stdout == ""


def test_pre_tool_use_denies_on_a_failing_precondition(tmp_path: Path) -> None:
    db = tmp_path / "m.sqlite"
    (tmp_path / "exists.txt").write_text("x", encoding="utf-8")
    config = tmp_path / "lcm.json"
    rule = {"id": "edit-existing", "pathPattern": "**/*.txt", "mustExist": True, "tools": ["Edit"]}
    config.write_text(json.dumps({"validation": {"preconditions": [rule]}}), encoding="utf-8")
    missing = payload(
        "PreToolUse",
        None,
        cwd=str(tmp_path),
        tool_name="Edit",
        tool_input={
            "file_path": str(tmp_path / "missing.txt"),
            "old_string": "a",
            "new_string": "b",
        },
    )
    result = hook(db, "pre-tool-use", json.dumps(missing), "--config", str(config))
    output = json.loads(result.stdout)["hookSpecificOutput"]
    assert output["permissionDecision"] == "deny" and output["permissionDecisionReason"]
    present = {**missing, "tool_input": {"file_path": str(tmp_path / "exists.txt")}}
    allowed = hook(db, "pre-tool-use", json.dumps(present), "--config", str(config))
    assert allowed.exit_code == 0 and allowed.stdout == ""


def test_pre_tool_use_reply_shape(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def deny(self: MemoryRuntime, session_id: str, tool: str, args: Any, **kw: Any) -> dict:
        return {"kind": "deny", "reason": "写入前必须先读取文件"}

    monkeypatch.setattr(MemoryRuntime, "pre_tool", deny)
    body = payload("PreToolUse", None, tool_name="Write", tool_input={"file_path": "a.txt"})
    result = hook(tmp_path / "m.sqlite", "PreToolUse", json.dumps(body))
    assert json.loads(result.stdout) == {
        "hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": "deny",
            "permissionDecisionReason": "写入前必须先读取文件",
        }
    }


MALFORMED: list[tuple[str, bytes]] = [
    ("empty", b""),
    ("not-json", b"{session_id: oops"),
    ("json-list", b"[1, 2, 3]"),
    ("no-session", json.dumps({"prompt": "hi"}).encode()),
    ("session-not-string", json.dumps({"session_id": 7}).encode()),
    ("binary", bytes(range(256))),
    ("bad-utf8", b'{"session_id": "\xff\xfe", "prompt": "x"}'),
    (
        "missing-transcript",
        json.dumps({"session_id": "s", "transcript_path": "/nope/x.jsonl"}).encode(),
    ),
    ("transcript-is-a-folder", json.dumps({"session_id": "s", "transcript_path": "/"}).encode()),
    ("garbage-fields", json.dumps({"session_id": "s", "prompt": ["x"], "tool_input": 5}).encode()),
]


@pytest.mark.parametrize(("name", "stdin"), MALFORMED, ids=[m[0] for m in MALFORMED])
@pytest.mark.parametrize("event", ["user-prompt-submit", "pre-tool-use", "stop"])
def test_malformed_input_prints_nothing_harmful_and_exits_0(
    tmp_path: Path, name: str, stdin: bytes, event: str
) -> None:
    db = tmp_path / "m.sqlite"
    result = hook(db, event, stdin)
    assert result.exit_code == 0
    if result.stdout:  # a reply, if any, is still the hook protocol
        assert set(json.loads(result.stdout)) == {"hookSpecificOutput"}
    assert "Traceback" not in result.output


def test_errors_are_logged_beside_the_database(tmp_path: Path) -> None:
    db = tmp_path / "m.sqlite"
    result = hook(db, "user-prompt-submit", b"not json")
    assert result.stdout == "" and "bad hook input" in result.stderr
    log = (tmp_path / "hooks.log").read_text(encoding="utf-8")
    assert "user-prompt-submit: bad hook input" in log


def test_unknown_event_and_missing_event_exit_0(tmp_path: Path) -> None:
    body = json.dumps({"session_id": "s"})
    for args in (["hook", "nope"], ["hook"]):
        result = CliRunner().invoke(cli, ["--db", str(tmp_path / "m.sqlite"), *args], input=body)
        assert result.exit_code == 0 and result.stdout == ""
        assert "unknown hook event" in result.stderr


def test_a_broken_database_never_stops_the_agent(tmp_path: Path, transcript: Path) -> None:
    broken = tmp_path / "broken.sqlite"
    broken.write_bytes(b"this is not a database" * 100)
    body = json.dumps(payload("UserPromptSubmit", transcript, prompt="hi"))
    result = hook(broken, "user-prompt-submit", body)
    assert result.exit_code == 0 and result.stdout == ""
    assert "cannot open the memory database" in result.stderr
    assert broken.read_bytes() == b"this is not a database" * 100


def test_a_bad_config_falls_back_to_defaults(tmp_path: Path, transcript: Path) -> None:
    config = tmp_path / "bad.json"
    config.write_text("{nope", encoding="utf-8")
    body = json.dumps(payload("UserPromptSubmit", transcript, prompt="Which port?"))
    result = hook(tmp_path / "m.sqlite", "user-prompt-submit", body, "--config", str(config))
    assert result.exit_code == 0 and "using the default settings" in result.stderr
    assert json.loads(result.stdout)["hookSpecificOutput"]["additionalContext"]


def test_as_a_real_process_stdout_holds_only_the_reply(tmp_path: Path, transcript: Path) -> None:
    body = json.dumps(payload("UserPromptSubmit", transcript, prompt="预算是多少？"))
    proc = subprocess.run(
        [
            sys.executable,
            "-c",
            "from lcm_adapter.cli.main import main; main()",
            "--db",
            str(tmp_path / "m.sqlite"),
            "hook",
            "user-prompt-submit",
        ],
        input=body.encode(),
        capture_output=True,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    reply = json.loads(proc.stdout)  # nothing but the one JSON reply
    assert reply["hookSpecificOutput"]["additionalContext"].startswith(HEADER)
