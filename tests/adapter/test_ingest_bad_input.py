"""`lcm ingest` on bad input loses nothing it could keep and says exactly what it stored.

A byte that is not UTF-8 inside a user message used to be "line is not valid JSON" and
cost the whole turn (and the constraint in it); a Ctrl-C during a batch's extraction
reported one batch fewer than was committed; an empty file or a file that is not a
session log left an empty database behind; `--db ''` silently used the default one.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from lcm_adapter.cli.main import cli
from lcm_adapter.dsh import ingest as ingest_module
from lcm_adapter.dsh.sample import conversation, lines_of, write_plain
from lcm_core.steps import capture as capture_step
from lcm_core.store.registry import open_store


def run(db: Path | str, *args: str, env: dict[str, str] | None = None) -> Result:
    return CliRunner().invoke(cli, ["--db", str(db), *args], env=env)


def _damaged_log(path: Path, text: str, bad: bytes) -> Path:
    """A log whose first user message holds `bad` (not UTF-8) in the middle of `text`."""
    events = conversation([(text, "OK."), ("And the second turn.", "Sure.")])
    lines = lines_of("会话-utf8", events)
    marker = text[len(text) // 2 :].encode("utf-8")
    lines[2] = lines[2].replace(marker, bad + marker, 1)
    assert bad in lines[2]
    path.write_bytes(b"".join(lines))
    return path


@pytest.mark.parametrize(
    ("text", "bad", "kept"),
    [
        ("Never deploy on Fridays, the budget is 500 USD.", b"\xff", "Never deploy on Fridays"),
        ("预算不超过3000元（含税），不要在周五部署。", b"\xe9\x83", "预算不超过3000元"),
    ],
    ids=["english", "chinese-torn-character"],
)
def test_a_byte_that_is_not_utf8_keeps_its_turn(
    tmp_path: Path, text: str, bad: bytes, kept: str
) -> None:
    log = _damaged_log(tmp_path / "session.v4.jsonl", text, bad)
    db = tmp_path / "m.sqlite"
    result = run(db, "ingest", str(log))
    assert result.exit_code == 0, result.output
    assert "not valid JSON" not in result.output
    assert "1 bytes that were not UTF-8 read as U+FFFD in 1 lines" in result.stdout
    assert "session.v4.jsonl:3: 1 bytes that are not UTF-8" in result.stderr
    store = open_store(str(db))
    try:
        events = store.list_events("会话-utf8")
        message = next(e for e in events if e.seq == 1)
        items = store.list_items("会话-utf8")
    finally:
        store.close()
    assert len(events) == 8  # every event of both turns: nothing dropped
    assert "\ufffd" in message.text and message.text.replace("\ufffd", "") == text
    assert any(kept in item.content for item in items), [i.content for i in items]


def test_the_json_report_counts_the_replaced_bytes(tmp_path: Path) -> None:
    log = _damaged_log(
        tmp_path / "s.jsonl", "Keep the cache under 2 GB, 缓存不超过2GB。", b"\xc3\x28\xff"
    )
    result = run(tmp_path / "m.sqlite", "ingest", str(log), "--json", "--quiet")
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert report["replaced_bytes"] == 2 and len(report["repaired"]) == 1  # \xc3 and \xff
    assert report["issues"] == [] and report["inserted"] == 8


def test_a_line_that_is_not_json_is_still_reported(tmp_path: Path) -> None:
    """Decoding with replacement never hides a line that is broken for another reason."""
    log = write_plain(tmp_path / "s.jsonl", "坏行", conversation([("你好", "好")]))
    log.write_bytes(log.read_bytes() + b'{"type": "user/message", \xff\n')
    result = run(tmp_path / "m.sqlite", "ingest", str(log))
    assert result.exit_code == 1 and "s.jsonl:6: line is not valid JSON" in result.stderr


def test_ctrl_c_during_extraction_counts_the_committed_batch(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The batch is committed before extraction runs; an interrupt there must not make it
    look lost ("0 new events committed" while they were stored)."""
    monkeypatch.setattr(ingest_module, "BATCH", 10)
    log = write_plain(
        tmp_path / "s" / "session.v4.jsonl",
        "中断",
        conversation([("约束：不要使用 Redis。", "好的。"), ("Use port 8080.", "OK.")] * 5),
    )
    real = capture_step.run_extraction
    calls = {"n": 0}

    def stop_in_the_second(*args: object, **kwargs: object) -> object:
        calls["n"] += 1
        if calls["n"] == 2:
            raise KeyboardInterrupt
        return real(*args, **kwargs)

    monkeypatch.setattr(capture_step, "run_extraction", stop_in_the_second)
    db = tmp_path / "m.sqlite"
    result = run(db, "ingest", str(log))
    assert result.exit_code == 130, (result.output, result.exception)
    store = open_store(str(db))
    try:
        stored = len(store.list_events("中断"))
    finally:
        store.close()
    assert stored == 20  # two batches of 10 committed, the second one's extraction cut short
    assert f"lcm: interrupted: {stored} new events committed ({stored} read" in result.stderr
    monkeypatch.setattr(capture_step, "run_extraction", real)
    again = json.loads(run(db, "ingest", str(log), "--json", "--quiet").stdout)
    assert (again["inserted"], again["duplicates"]) == (20, 20)


def test_a_hook_reading_the_log_keeps_the_turn_too(tmp_path: Path) -> None:
    """Hooks read the same logs (`transcript_path`); a bad byte costs them no turn either."""
    from lcm_adapter.claude.transcript import sync_transcript
    from lcm_adapter.runtime import MemoryRuntime

    log = _damaged_log(tmp_path / "session.v4.jsonl", "不要在周五部署，预算上限500元。", b"\xff")
    runtime = MemoryRuntime.open(str(tmp_path / "m.sqlite"))
    try:
        sync_transcript(runtime, "会话-utf8", str(log))
        events = runtime.store.list_events("会话-utf8")
    finally:
        runtime.close()
    assert len(events) == 8
    assert (
        next(e for e in events if e.seq == 1).text.replace("\ufffd", "")
        == "不要在周五部署，预算上限500元。"
    )


@pytest.mark.parametrize(
    ("content", "reason"),
    [
        (b"", "empty"),
        ("会议记录：周五不部署\nmeeting notes\n".encode(), "first line is not JSON"),
        (b"root:x:0:0:root:/root:/bin/bash\n", "first line is not JSON"),
        (b'{"type": "user", "message": {"content": "hi"}}\n', "not a DSH session line"),
    ],
    ids=["empty", "chinese-notes", "passwd", "claude-transcript"],
)
def test_a_file_that_is_not_a_session_log_creates_no_database(
    tmp_path: Path, content: bytes, reason: str
) -> None:
    named = tmp_path / "记录.jsonl"
    named.write_bytes(content)
    db = tmp_path / "m.sqlite"
    result = run(db, "ingest", str(named))
    assert result.exit_code == 1, result.output
    assert f"skipped {named}: " in result.stderr and reason in result.stderr
    assert "no DSH session logs" in result.stderr
    assert not db.exists() and sorted(p.name for p in tmp_path.iterdir()) == ["记录.jsonl"]


def test_a_named_log_is_read_beside_a_skipped_file(tmp_path: Path) -> None:
    """The logs among the named files are read; the others are listed, not fatal."""
    log = write_plain(
        tmp_path / "s" / "session.v4.jsonl", "甲", conversation([("预算500元", "好")])
    )
    empty = tmp_path / "empty.jsonl"
    empty.write_bytes(b"")
    result = run(tmp_path / "m.sqlite", "ingest", str(log), str(empty))
    assert result.exit_code == 0, result.output
    assert f"skipped {empty}: empty" in result.stderr and "4 new" in result.stdout


def test_a_log_that_lost_its_header_is_still_read_when_named(tmp_path: Path) -> None:
    folder = tmp_path / "会话-无头"
    folder.mkdir()
    log = folder / "session.v4.jsonl"
    log.write_bytes(b"".join(lines_of("x", conversation([("不要用 Redis。", "好")]))[1:]))
    result = run(tmp_path / "m.sqlite", "ingest", str(log), "--json", "--quiet")
    report = json.loads(result.stdout)  # exit 1: the missing header is reported
    assert report["inserted"] == 4 and report["sessions"] == 1
    assert any("no session header; using folder name '会话-无头'" in i for i in report["issues"])


def test_an_empty_db_option_is_a_usage_error_not_the_default(tmp_path: Path) -> None:
    home = tmp_path / "dsh"
    env = {"DSH_HOME": str(home), "LCM_DB": ""}
    for command in (["status"], ["ingest", str(tmp_path)], ["demo"]):
        result = CliRunner().invoke(cli, ["--db", "", *command], env=env)
        assert result.exit_code == 2 and "--db: is empty" in result.output, command
        blank = CliRunner().invoke(cli, ["--db", "  ", *command, "--json"], env=env)
        assert blank.exit_code == 2 and json.loads(blank.stderr)["exit_code"] == 2
    assert not home.exists()


def test_a_hook_with_an_empty_db_option_writes_nowhere_and_exits_zero(tmp_path: Path) -> None:
    import os
    import subprocess
    import sys

    home = tmp_path / "dsh"
    env = {**os.environ, "DSH_HOME": str(home), "HOME": str(tmp_path)}
    env.pop("LCM_DB", None)
    hook = json.dumps(
        {"session_id": "s", "prompt": "预算是多少？", "hook_event_name": "UserPromptSubmit"}
    )
    done = subprocess.run(
        [
            sys.executable,
            "-c",
            "from lcm_adapter.entry import main; main()",
            "--db",
            "",
            "hook",
            "user-prompt-submit",
        ],
        input=hook,
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )
    assert done.returncode == 0 and done.stdout == ""
    assert "--db is empty" in done.stderr and not home.exists()
