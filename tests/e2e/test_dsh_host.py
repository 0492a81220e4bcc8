"""The host side through the real DSH runtime: tool preconditions, the memory command, a
sidecar that dies mid-session."""

from __future__ import annotations

import json
import os
import signal
import time
from collections.abc import Callable
from pathlib import Path

from dsh_session import WRITE_TOOL_ROWS, DshSession, driver_rows
from fake_model import FakeModel, Text, ToolCall, request_texts

CONSTRAINT = "约束：不要使用 Redis。预算上限是每月 500 美元（不含税）。"
WAIT_SECONDS = 60  # an upper bound for slow machines, never a measured expectation


def wait_for(check: Callable[[], bool], what: str) -> None:
    """Poll until `check()` holds; fail with `what` after WAIT_SECONDS."""
    deadline = time.monotonic() + WAIT_SECONDS
    while not check():
        assert time.monotonic() < deadline, f"gave up waiting for {what}"
        time.sleep(0.05)


def test_d_a_precondition_denies_a_file_write(
    dsh: Callable[..., DshSession], model: FakeModel
) -> None:
    """(d) tools/pre-execute denies the write; the model's next request shows the reason."""
    settings = {
        "validation": {
            "preconditions": [
                {
                    "id": "受保护文件",
                    "pathPattern": "protected/**",
                    "mustNotExist": True,
                    "tools": ["write"],
                }
            ]
        }
    }
    s = dsh(settings=settings, extra_rows=WRITE_TOOL_ROWS)
    target = s.root / "work" / "protected" / "plan.md"
    target.parent.mkdir(parents=True)
    target.write_text("原计划\n", encoding="utf-8")
    model.script(
        ToolCall("write", {"file_path": "protected/plan.md", "content": "覆盖"}), Text("知道了。")
    )
    result = s.run("请改写 protected/plan.md")
    assert result.finish_reason == "completed"
    assert target.read_text(encoding="utf-8") == "原计划\n"
    after_tool = model.bodies[-1]
    denial = [t for t in request_texts(after_tool) if "受保护文件" in t]
    assert denial and "must not exist" in denial[0], request_texts(after_tool)
    runtime = s.runtime()
    try:
        results = runtime.store.list_events(s.session.id, types=["tool/result"])
        assert results and "受保护文件" in results[-1].text
    finally:
        runtime.close()


def test_e_memory_status_through_the_command_service(
    dsh: Callable[..., DshSession], model: FakeModel, tmp_path: Path
) -> None:
    """(e) `/memory status`, run by a driver plugin, returns our status text."""
    out = tmp_path / "command.json"
    s = dsh(extra_rows=driver_rows("/memory status", 1, out))
    s.run(CONSTRAINT)
    wait_for(out.exists, "the driver plugin's command result")
    outcome = json.loads(out.read_text(encoding="utf-8"))
    assert "error" not in outcome, outcome
    result = outcome["result"]
    assert result["kind"] == "success", result
    assert result["text"].startswith("long-conversation-memory status")
    assert s.session.id in result["text"]


def test_e2_memory_remember_and_forget_through_the_command_service(
    dsh: Callable[..., DshSession], model: FakeModel, tmp_path: Path
) -> None:
    """(e2) `/memory remember ...` in DSH stores the user's item; the sidecar answers."""
    out = tmp_path / "command.json"
    said = "上线前必须通知值班同事 on-call"
    s = dsh(extra_rows=driver_rows(f"/memory remember --kind constraint {said}", 1, out))
    s.run(CONSTRAINT)
    wait_for(out.exists, "the driver plugin's command result")
    result = json.loads(out.read_text(encoding="utf-8"))["result"]
    assert result["kind"] == "success" and said in result["text"], result
    item_id = result["text"].split()[1]
    runtime = s.runtime()
    try:
        item = runtime.store.get_item(item_id)
        assert item is not None and item.evidence_type == "user_explicit"
        assert runtime.command(s.session.id, ["forget", item_id]).startswith(f"forgot {item_id}")
    finally:
        runtime.close()


def test_f_a_killed_sidecar_is_restarted_and_memory_returns(
    dsh: Callable[..., DshSession], model: FakeModel
) -> None:
    """(f) Kill the sidecar mid-session: the turn completes, memory comes back, nothing is lost."""
    # A generous deadline: this test is about the restart, not about slow starts.
    s = dsh(settings={"host": {"preStepDeadlineMs": 20000}})
    results = [s.run(CONSTRAINT)]
    [first] = s.sidecar_pids()
    os.kill(first, signal.SIGKILL)
    wait_for(lambda: first not in s.sidecar_pids(), "the killed sidecar to go away")
    results.append(s.run("部署窗口是周五 18:00 UTC。"))
    assert results[-1].finish_reason == "completed"
    results.append(s.run("预算上限是多少？"))
    pids = s.sidecar_pids()
    assert len(pids) == 1 and pids[0] != first
    memory = s.memory_in_context(model.bodies[-1])
    assert "Redis" in memory and "500 美元" in memory
    sent = {int(e["seq"]) for r in results for e in r.events}

    def stored_seqs() -> set[int]:
        runtime = s.runtime()
        try:
            return {e.seq for e in runtime.store.list_events(s.session.id)}
        finally:
            runtime.close()

    # Capture is asynchronous: the last turn's events may still be on their way to the
    # sidecar when the turn returns, so give them until WAIT_SECONDS to arrive.
    deadline = time.monotonic() + WAIT_SECONDS
    stored = stored_seqs()
    while not sent <= stored and time.monotonic() < deadline:
        time.sleep(0.05)
        stored = stored_seqs()
    assert sent <= stored, f"events lost while the sidecar was down: {sorted(sent - stored)}"
