"""MemoryRuntime: the host-facing facade never raises, and its outputs are deterministic."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path
from typing import Any

import pytest

from lcm_adapter import runtime as runtime_module
from lcm_adapter.dsh.sample import assistant, conversation, sample_turns, user
from lcm_adapter.hostmsg import SOURCE_KIND
from lcm_adapter.runtime import MemoryRuntime
from lcm_core.config import load_config
from lcm_core.steps import tools

SID = "会话-1"


@pytest.fixture
def rt(tmp_path: Path) -> MemoryRuntime:
    runtime = MemoryRuntime.open(str(tmp_path / "m.sqlite"))
    yield runtime
    runtime.close()


def ask(text: str) -> list[dict[str, Any]]:
    return [
        {"role": "user", "content": [{"type": "text", "text": text}], "source": {"kind": "user"}}
    ]


def test_open_defaults_to_a_private_file_under_dsh_home(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With no URL the database is $DSH_HOME/long-conversation-memory/memory.sqlite, 0700/0600."""
    monkeypatch.setenv("DSH_HOME", str(tmp_path / "home"))
    monkeypatch.delenv("LCM_DB", raising=False)
    runtime = MemoryRuntime.open()
    runtime.close()
    path = tmp_path / "home" / "long-conversation-memory" / "memory.sqlite"
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    assert stat.S_IMODE(os.stat(path.parent).st_mode) == 0o700


def test_open_takes_a_mapping_config_and_keeps_its_warnings(tmp_path: Path) -> None:
    """A plain dict is checked like any config; a bad value becomes a warning, not an error."""
    runtime = MemoryRuntime.open(
        str(tmp_path / "m.sqlite"), {"assembly": {"softBudgetTokens": "x"}}
    )
    try:
        assert runtime.config.get("assembly.softBudgetTokens") == 3000
        assert any("softBudgetTokens" in w for w in runtime.config.warnings)
        assert "config warning" in runtime.command(SID, ["status"])
    finally:
        runtime.close()


def test_on_event_is_idempotent_by_seq(rt: MemoryRuntime) -> None:
    """Delivering the same event twice stores it once."""
    first = rt.on_event(SID, user(0, "不要使用 Redis。"))
    again = rt.on_event(SID, user(0, "不要使用 Redis。"))
    assert (first.inserted, again.inserted, again.duplicates) == (1, 0, 1)
    assert rt.store.stats(SID)["events"] == 1


def test_on_event_counts_bad_input_and_never_raises(rt: MemoryRuntime) -> None:
    """Garbage from the host is counted as a capture error."""
    for bad in (None, 42, "text", {"type": "user/message"}, {"seq": -1}):
        rt.on_event(SID, bad)
    rt.on_event("", user(1, "x"))
    assert rt.stats.capture_errors == 6
    assert rt.stats.last_error and rt.stats.last_error.startswith("capture:")


class ExplodingStore:
    """A store whose every call fails, standing in for a broken disk."""

    url = "broken://"

    def __getattr__(self, name: str) -> Any:
        def fail(*args: Any, **kwargs: Any) -> Any:
            raise OSError(f"disk on fire during {name}")

        return fail


def test_a_failing_store_never_reaches_the_host() -> None:
    """Capture, pre-step, pre-tool, commands and close all survive a store that raises."""
    runtime = MemoryRuntime(store=ExplodingStore(), config=load_config())  # type: ignore[arg-type]
    runtime.on_event(SID, user(0, "hello"))
    runtime.on_events(SID, [user(1, "a"), assistant(2, "b")])
    assert runtime.pre_step(SID, ask("hi"), 1, 1) is None
    assert runtime.pre_tool(SID, "write", {"path": "a"}) == {"kind": "allow"}
    result = runtime.command_result(SID, ["status"])
    assert not result.ok and result.text.startswith("memory: command failed")
    runtime.record_skip(SID, 1, 1, "deadline")
    runtime.close()
    runtime.close()
    assert runtime.stats.capture_errors >= 2
    assert runtime.stats.pre_step_errors == 1


def test_pre_step_on_an_empty_session_injects_nothing(rt: MemoryRuntime) -> None:
    """No history means no memory message (assembly.skipWhenEmpty)."""
    assert rt.pre_step(SID, ask("你好"), 1, 1) is None
    assert rt.stats.pre_steps == 1 and rt.stats.injected == 0


def test_pre_step_message_has_the_host_shape(rt: MemoryRuntime) -> None:
    """The injected message is a user message with our own source kind and form snapshot."""
    rt.on_events(SID, conversation(sample_turns()[:2]))
    message = rt.pre_step(SID, ask("预算是多少？"), 3, 1)
    assert message is not None
    assert set(message) == {"id", "role", "content", "source"}
    assert message["role"] == "user"
    assert message["content"][0]["type"] == "text" and message["content"][0]["text"]
    assert message["source"]["kind"] == SOURCE_KIND == "long-conversation-memory"
    assert message["source"]["form"] == "snapshot"
    assert all({"name", "text", "refs"} <= set(s) for s in message["source"]["sections"])
    json.dumps(message)  # crosses the JSON-RPC boundary as is


def test_pre_step_is_deterministic_across_databases(tmp_path: Path) -> None:
    """Same events and config in two databases give the same message, id included."""
    messages = []
    for name in ("a", "b"):
        runtime = MemoryRuntime.open(str(tmp_path / f"{name}.sqlite"))
        runtime.on_events(SID, conversation(sample_turns()))
        messages.append(runtime.pre_step(SID, ask("budget 预算?"), 5, 1))
        runtime.close()
    assert messages[0] is not None and messages[0] == messages[1]


def test_pre_step_logs_every_attempt(rt: MemoryRuntime) -> None:
    """Each pre-step leaves an assembly log row that `memory explain` shows."""
    rt.on_events(SID, conversation(sample_turns()))
    rt.pre_step(SID, ask("What is the budget?"), 5, 1)
    assert len(rt.store.list_assembly_logs(SID)) == 1
    assert "turn 5, step 1" in rt.command(SID, ["explain"])


def test_pre_step_reads_the_visible_surface_from_the_store(
    rt: MemoryRuntime, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Visible seqs become step messages with the stored text, before the new messages."""
    rt.on_events(SID, conversation(sample_turns()[:1]))
    seen: list[Any] = []

    def spy(store: Any, request: Any, config: Any) -> Any:
        seen.extend(request.messages)
        raise RuntimeError("stop here")

    monkeypatch.setattr(runtime_module, "pre_step", spy)
    assert rt.pre_step(SID, ask("新问题"), 2, 1, visible_seqs=[1, 2, 999]) is None
    assert [(m.role, m.text) for m in seen] == [
        ("user", sample_turns()[0][0]),
        ("assistant", sample_turns()[0][1]),
        ("user", "新问题"),
    ]
    assert rt.stats.pre_step_errors == 1


def test_record_skip_is_logged_and_shown_in_status(rt: MemoryRuntime) -> None:
    """When the host goes on without memory, the reason lands in the log and in status."""
    rt.record_skip(SID, 3, 1, "no answer within 1500 ms")
    log = rt.store.list_assembly_logs(SID)[0]
    assert (log.trigger, log.injected, log.errors) == (
        "host-skip",
        False,
        ("no answer within 1500 ms",),
    )
    assert "no answer within 1500 ms" in rt.command(SID, ["status"])


def test_pre_tool_allows_by_default_and_denies_from_a_precondition(tmp_path: Path) -> None:
    """A configured precondition denies with its reason; other calls are allowed."""
    settings = {
        "validation": {
            "preconditions": [
                {"id": "先读后写", "pathPattern": "src/**", "mustExist": True, "tools": ["write"]}
            ]
        }
    }
    runtime = MemoryRuntime.open(str(tmp_path / "m.sqlite"), settings)
    try:
        assert runtime.pre_tool(SID, "bash", {"command": "ls"}) == {"kind": "allow"}
        denied = runtime.pre_tool(SID, "write", {"path": "src/新.py"}, cwd=str(tmp_path))
        assert denied["kind"] == "deny" and "先读后写" in denied["reason"]
        (tmp_path / "src").mkdir()
        (tmp_path / "src" / "新.py").write_text("x", encoding="utf-8")
        allowed = runtime.pre_tool(SID, "write", {"path": "src/新.py"}, cwd=str(tmp_path))
        assert allowed == {"kind": "allow"}
        assert runtime.stats.denials == 1
    finally:
        runtime.close()


def test_a_crashing_precondition_allows_and_is_counted(
    rt: MemoryRuntime, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A bug in the check must not stop the user's tool."""

    def boom(*args: Any) -> Any:
        raise ValueError("bad glob")

    monkeypatch.setattr(tools, "pre_tool", boom)
    assert rt.pre_tool(SID, "write", {}) == {"kind": "allow"}
    assert rt.stats.pre_tool_errors == 1


def test_a_failed_check_adds_a_repair_reminder_to_the_next_step(tmp_path: Path) -> None:
    """Validation runs on captured assistant messages; a blocking violation is reminded once."""
    settings = {
        "validation": {
            "checks": [{"id": "单位", "type": "required_terms", "terms": ["美元"], "block": True}],
            "maxRepairAttempts": 1,
        }
    }
    runtime = MemoryRuntime.open(str(tmp_path / "m.sqlite"), settings)
    try:
        runtime.on_event(SID, user(0, "预算上限是每月 500 美元。"))
        runtime.on_event(SID, assistant(1, "The budget is 500."))
        assert len(runtime.store.list_validation_logs(SID)) == 1
        message = runtime.pre_step(SID, ask("继续"), 2, 1)
        assert message is not None
        assert "validation repair reminder" in message["content"][-1]["text"]
        assert message["source"]["sections"][-1]["name"] == "repair"
    finally:
        runtime.close()


def test_the_same_block_is_not_repeated_within_a_turn(rt: MemoryRuntime) -> None:
    """A tool loop re-assembles at every step; an identical block is shown once per turn."""
    rt.on_events(SID, conversation(sample_turns()))
    # The question finds the stored budget (an English "What is the budget?" only echoed
    # the earlier question turn, which is not quoted as evidence any more).
    first = rt.pre_step(SID, ask("预算上限是多少？"), 5, 1)
    again = rt.pre_step(SID, ask("预算上限是多少？"), 5, 2)
    next_turn = rt.pre_step(SID, ask("预算上限是多少？"), 6, 1)
    assert first is not None and again is None and next_turn is not None
    log = rt.store.list_assembly_logs(SID)[1]
    assert (log.step, log.injected) == (2, False)
    assert {
        "kind": "skipped",
        "why": "the same block is already on screen (turn 5, step 1)",
    } in log.reasons


def test_memory_is_not_repeated_while_an_earlier_block_is_in_the_history(
    rt: MemoryRuntime,
) -> None:
    """DSH keeps injected blocks: once committed, the next turn does not restate them."""
    budget = "预算不超过3000元（含税），服务器只能部署在上海区域"
    for event in conversation([(budget, "好的，记住了。")]):
        rt.on_event(SID, event)
    question = "what is the server budget? 预算是多少"
    first = rt.pre_step(SID, ask(question), 2, 1)
    assert first is not None and "3000元" in first["content"][0]["text"]
    # The host commits our message into its log, as DSH does, and the turn goes on.
    committed = user(10, first["content"][0]["text"], kind=SOURCE_KIND)
    rt.on_event(SID, committed)
    for event in conversation([("and the deadline?", "Friday.")], start_seq=11):
        rt.on_event(SID, event)
    second = rt.pre_step(SID, ask(question), 3, 1)
    assert second is None or "3000元" not in second["content"][0]["text"]
