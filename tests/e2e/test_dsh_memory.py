"""Memory through the real DSH runtime: recall, correction, compaction, log backfill.

Each test asserts on what the fake model received (the request bodies) and on our
database, never on timing.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from click.testing import CliRunner
from dsh_session import COMPACTION_ROWS, MEMORY_HEADER, DshSession, live_rows
from fake_model import FakeModel, Text, ToolCall, request_texts

from lcm_adapter.cli.main import cli
from lcm_adapter.dsh.logread import read_lines

CONSTRAINT = "约束：不要使用 Redis。预算上限是每月 500 美元（不含税）。"
CORRECTION = "更正：预算上限改为每月 650 美元（不含税）。"
QUESTION = "预算上限是多少？还有什么限制？"


def seq_of(result: Any, text: str) -> int:
    """The DSH seq of the user message with this text, from the SDK's event list."""
    for event in result.events:
        data = event.get("data") or {}
        if event.get("type") == "user/message" and data.get("content", [{}])[0].get("text") == text:
            return int(event["seq"])
    raise AssertionError(f"no user/message {text!r} in the turn's events")


def test_a_turn_one_constraint_and_number_reach_a_later_request(
    dsh: Callable[..., DshSession], model: FakeModel
) -> None:
    """(a) The constraint and the conditioned number of turn 1 are in turn 3's memory block."""
    s = dsh()
    first = s.run(CONSTRAINT)
    s.run("部署窗口是周五 18:00 UTC。")
    last = s.run(QUESTION)
    assert last.finish_reason == "completed"
    block = s.memory_block(model.bodies[-1])
    assert block is not None, s.stderr_tail()
    # The rules come back in the blocks the request holds (each is restated only while
    # no block still in the history shows it).
    memory = s.memory_in_context(model.bodies[-1])
    assert "Redis" in memory and "500 美元" in memory and "不含税" in memory
    seq = seq_of(first, CONSTRAINT)
    runtime = s.runtime()
    try:
        event = runtime.store.get_event(s.session.id, seq)
        assert event is not None and event.text == CONSTRAINT and event.source_kind == "user"
        assert f"seq:{seq}" in memory
    finally:
        runtime.close()


def test_b_a_correction_supersedes_the_old_value(
    dsh: Callable[..., DshSession], model: FakeModel
) -> None:
    """(b) After a turn-3 correction the block shows 650 as current and 500 as superseded."""
    s = dsh()
    s.run(CONSTRAINT)
    s.run("部署窗口是周五 18:00 UTC。")
    s.run(CORRECTION)
    s.run(QUESTION)
    block = s.memory_block(model.bodies[-1])
    assert block is not None, s.stderr_tail()
    current, _, notices = block.partition("## 提示")
    assert "650 美元" in current and "500 美元" not in current
    assert "500 美元" in notices and "旧值" in notices
    runtime = s.runtime()
    try:
        statuses = {i.content: i.status for i in runtime.store.list_items(s.session.id)}
        assert statuses["预算上限是每月 500 美元（不含税）"] == "superseded"
    finally:
        runtime.close()


def test_c_the_constraint_survives_compaction(
    dsh: Callable[..., DshSession], model: FakeModel
) -> None:
    """(c) After DSH compacts turn 1 away, the next request still carries the constraint."""
    s = dsh(extra_rows=COMPACTION_ROWS)
    s.run(CONSTRAINT)
    compacted = False
    # Memory blocks no longer pile up in the history, so DSH needs about 13 padded turns.
    for turn in range(30):
        result = s.run(f"第 {turn} 轮闲聊，" + "一些无关的填充文字。" * 80)
        compacted = any(e["type"] == "compaction/summary" for e in result.events)
        if compacted:
            break
    assert compacted, "DSH did not compact; the compaction rows may not apply"
    s.run(QUESTION)
    body = model.bodies[-1]
    plain = [t for t in request_texts(body) if not t.startswith(MEMORY_HEADER)]
    assert not any(CONSTRAINT in t for t in plain), "turn 1 is still on screen"
    block = s.memory_block(body)
    assert block is not None and "Redis" in block and "500 美元" in block
    runtime = s.runtime()
    try:
        kinds = {e.type for e in runtime.store.list_events(s.session.id)}
        assert {"compaction/start", "compaction/summary", "compaction/end"} <= kinds
    finally:
        runtime.close()


def test_g_ingesting_the_session_log_equals_live_capture(
    dsh: Callable[..., DshSession], model: FakeModel, tmp_path: Path
) -> None:
    """(g) `lcm ingest` of the log DSH wrote gives the events table live capture built."""
    s = dsh()
    model.script(ToolCall("bash", {"command": "echo 你好"}), Text("命令已运行。"))
    s.run("运行一个 echo 命令。" + CONSTRAINT)
    s.run(QUESTION)
    session_id = s.session.id
    s.close()  # flushes the log and stops the sidecar
    fresh = tmp_path / "ingested.sqlite"
    result = CliRunner().invoke(cli, ["--db", str(fresh), "ingest", "--json", str(s.session_log())])
    assert result.exit_code == 0, result.output
    live = live_rows(s.db, session_id)
    ingested = live_rows(fresh, session_id)
    assert {row[1] for row in live} >= {"tool/call", "tool/result", "user/message"}
    assert ingested == live


def test_h_a_private_span_never_reaches_the_database(
    dsh: Callable[..., DshSession], model: FakeModel, tmp_path: Path
) -> None:
    """(h) A `<private>` span typed into DSH is stored as `[private]`: absent from the file,
    search, export and later blocks, while DSH's own session log still holds it."""
    s = dsh()
    secret, chinese = "zebra-quartz-981", "保险箱密码"
    s.run(f"部署窗口是周五 18:00 UTC。<private>{chinese} {secret}</private> 端口是 8080。")
    s.run("部署窗口和端口是什么？")
    block = s.memory_block(model.bodies[-1]) or ""
    assert secret not in block and chinese not in block
    session_id = s.session.id
    s.close()  # flushes the log and stops the sidecar
    for file in s.db.parent.glob(s.db.name + "*"):
        data = file.read_bytes()
        assert secret.encode() not in data and chinese.encode() not in data, file.name
    runtime = s.runtime()
    try:
        texts = [e.text for e in runtime.store.list_events(session_id) if e.type == "user/message"]
    finally:
        runtime.close()
    assert any("[private]" in text and "8080" in text for text in texts), texts
    runner = CliRunner()
    found = runner.invoke(cli, ["--db", str(s.db), "search", secret, "--scope", "all", "--json"])
    assert found.exit_code == 0, found.output
    hits = json.loads(found.stdout)
    assert not hits["items"] and not hits["events"], hits
    out = tmp_path / "export"
    exported = runner.invoke(
        cli, ["--db", str(s.db), "export", "--format", "jsonl", "--out", str(out)]
    )
    assert exported.exit_code == 0, exported.output
    dumped = "".join(p.read_text("utf-8") for p in out.glob("*.jsonl"))
    assert "[private]" in dumped and secret not in dumped and chinese not in dumped
    # What lcm cannot reach (docs/privacy.md says so): the host's own log keeps the clear text.
    logs = [p for p in s.session_log().rglob("*") if p.is_file()]
    log_text = b"".join(line.data for log in logs for line in read_lines(log, []))
    assert secret.encode() in log_text
