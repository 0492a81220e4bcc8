"""plugin.mjs without DSH: a stand-in plugin context run by Node drives every hook.

Skipped when `node` is not installed; the e2e tests run the same file inside DSH.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from lcm_adapter.dsh import plugin_path
from lcm_adapter.dsh.sample import conversation, sample_turns

HERE = Path(__file__).parent / "plugin"
NODE = shutil.which("node")
pytestmark = pytest.mark.skipif(NODE is None, reason="node is not installed")

ASK = [
    {
        "role": "user",
        "content": [{"type": "text", "text": "预算是多少？"}],
        "source": {"kind": "user"},
    }
]


def run(
    config: dict[str, Any], script: list[dict[str, Any]], tmp_path: Path
) -> list[dict[str, Any]]:
    script_file = tmp_path / "script.json"
    script_file.write_text(json.dumps(script, ensure_ascii=False), encoding="utf-8")
    proc = subprocess.run(
        [
            str(NODE),
            str(HERE / "harness.mjs"),
            plugin_path().as_uri(),
            json.dumps(config),
            str(script_file),
        ],
        capture_output=True,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr.decode()
    return [json.loads(line) for line in proc.stdout.splitlines()]


def fake(mode: str, log: Path) -> dict[str, Any]:
    # A deadline far above any start-up time, so outcomes never depend on machine load;
    # the deadline test sets its own.
    return {
        "command": [sys.executable, str(HERE / "fake_sidecar.py"), mode, str(log)],
        "deadlineMs": 60000,
    }


def received(log: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines()]


def events_ops() -> list[dict[str, Any]]:
    return [{"op": "event", "event": e} for e in conversation(sample_turns())]


def test_pre_step_appends_the_memory_message(tmp_path: Path) -> None:
    """With the real sidecar the decision keeps its messages and gains ours at the end.

    Only the last turn is on screen (as after a compaction), so the budget is recalled.
    """
    # The deadline is an upper bound for a loaded machine, not part of what is tested.
    config = {
        "python": sys.executable,
        "db": str(tmp_path / "m.sqlite"),
        "hideVisible": True,
        "deadlineMs": 60000,
    }
    script = [
        *events_ops(),
        {"op": "surface", "nodes": [13, 14]},
        {"op": "pre-step", "turn": 5, "step": 1, "messages": ASK},
        {"op": "pre-step", "turn": 5, "step": 2, "decision": {"kind": "reject"}},
        {"op": "pre-step", "turn": 5, "step": 3, "messages": ASK, "aborted": True},
        {"op": "command", "input": " status"},
        {"op": "unload"},
    ]
    enter, reject, aborted, command, _ = run(config, script, tmp_path)
    messages = enter["result"]["messages"]
    assert messages[0] == ASK[0] and len(messages) == 2
    assert "650" in messages[1]["content"][0]["text"]
    assert messages[1]["source"] == {
        **messages[1]["source"],
        "kind": "long-conversation-memory",
        "form": "snapshot",
    }
    assert reject["result"] == {"kind": "reject"}
    assert aborted["result"] == {"kind": "enter", "messages": ASK}
    assert command["name"] == "memory" and command["result"]["kind"] == "success"
    assert re.search(r"^events +16$", command["result"]["text"], re.M)


def test_deadline_passes_and_the_reason_is_recorded(tmp_path: Path) -> None:
    """A slow sidecar costs one deadline; the step goes on and the skip reaches the sidecar."""
    log = tmp_path / "received.jsonl"
    config = {**fake("slow", log), "deadlineMs": 50}
    script = [
        {"op": "pre-step", "turn": 2, "step": 1, "messages": ASK},
        {"op": "command", "input": "status"},  # answered after the late preStep and the skip
    ]
    step, command = run(config, script, tmp_path)
    assert step["result"] == {"kind": "enter", "messages": ASK}
    assert "steps without memory 1" in command["result"]["text"]
    skips = [m["params"] for m in received(log) if m["method"] == "skip"]
    assert skips == [
        {"sessionId": "plugin-会话", "turn": 2, "step": 1, "reason": "no answer within 50 ms"}
    ]


def test_a_new_sessions_first_turn_does_not_wait_for_a_starting_sidecar(tmp_path: Path) -> None:
    """Turn 1 of a new session waits `startWaitMs`, not the deadline, for a starting sidecar.

    The sidecar never answers `initialize`; with a 60 s deadline the first turn still
    goes on after the short start wait, and the reason says so. A later turn waits for
    the sidecar up to its deadline, as before.
    """
    log = tmp_path / "received.jsonl"
    config = {**fake("noinit", log), "deadlineMs": 60000, "startWaitMs": 100}
    script = [
        {"op": "pre-step", "turn": 1, "step": 1, "messages": ASK},
        {"op": "command", "input": "status"},
    ]
    step, command = run(config, script, tmp_path)
    assert step["result"] == {"kind": "enter", "messages": ASK}
    reason = "sidecar still starting after 100 ms (turn 1 of a new session)"
    assert reason in command["result"]["text"]
    skips = [m["params"] for m in received(log) if m["method"] == "skip"]
    assert skips == [{"sessionId": "plugin-会话", "turn": 1, "step": 1, "reason": reason}]
    assert not [m for m in received(log) if m["method"] == "preStep"]


def test_unload_kills_the_sidecar(tmp_path: Path) -> None:
    """The sidecar goes away when the plugin unloads, even one stuck in a call."""
    log = tmp_path / "received.jsonl"
    config = {**fake("hang", log), "deadlineMs": 50}
    script = [
        {"op": "command", "input": "status"},  # the sidecar is up and has written its pid
        {"op": "pre-step", "turn": 1, "step": 1, "messages": ASK},
        {"op": "unload"},
        {"op": "wait-gone", "pidFile": str(log) + ".pids", "ms": 20000},
    ]
    _, step, _, gone = run(config, script, tmp_path)
    assert step["result"] == {"kind": "enter", "messages": ASK}
    assert gone["gone"], "the sidecar outlived the plugin"


def test_dead_sidecar_restarts_at_most_once_per_turn(tmp_path: Path) -> None:
    """A sidecar that dies is restarted once per turn and then gets the session replayed."""
    log = tmp_path / "received.jsonl"
    script = [
        *events_ops()[:4],
        # Turns 2 and 3: turn 1 of a new session does not ask the sidecar at all.
        {"op": "pre-step", "turn": 2, "step": 1, "messages": ASK},
        {"op": "pre-step", "turn": 2, "step": 2},
        {"op": "pre-step", "turn": 2, "step": 3},
        {"op": "pre-step", "turn": 3, "step": 1, "messages": ASK},
        {"op": "command", "input": "status"},
    ]
    results = run(fake("die", log), script, tmp_path)
    assert all(r["result"]["kind"] == "enter" for r in results if r["op"] == "pre-step")
    spawns = (Path(str(log) + ".pids")).read_text().split()
    # The first start, one restart in turn 2 (not two), one in turn 3, one for the command.
    assert len(spawns) == 4
    got = received(log)
    replays = [m for m in got if m["method"] == "events"]
    assert len(replays) == 2 and len(replays[0]["params"]["events"]) == 4  # pre-steps replay
    skips = [m["params"] for m in got if m["method"] == "skip"]
    assert any("sidecar not running" in s["reason"] for s in skips)
    assert results[-1]["result"]["kind"] == "success"
    assert "sidecar restarts 3" in results[-1]["result"]["text"]


def test_pre_tool_deny_and_prior_decisions(tmp_path: Path) -> None:
    """A deny from the sidecar reaches the host; another plugin's deny is kept as it was."""
    log = tmp_path / "received.jsonl"
    script = [
        {"op": "pre-tool", "tool": "write", "args": {"path": "a.txt"}},
        {
            "op": "pre-tool",
            "tool": "write",
            "args": {},
            "prior": {"kind": "deny", "reason": "other"},
        },
    ]
    deny, prior = run(fake("deny", log), script, tmp_path)
    assert deny["result"] == {"kind": "deny", "reason": "必须先读取文件"}
    assert prior["result"] == {"kind": "deny", "reason": "other"}
    calls = [m for m in received(log) if m["method"] == "preTool"]
    assert len(calls) == 1 and calls[0]["params"]["args"] == {"path": "a.txt"}


def test_capture_is_fire_and_forget_in_order(tmp_path: Path) -> None:
    """Every session event reaches the sidecar as a notification, in the order it came."""
    log = tmp_path / "received.jsonl"
    script = [*events_ops(), {"op": "pre-tool", "tool": "bash", "args": {}}]
    run(fake("allow", log), script, tmp_path)
    got = [m for m in received(log) if m["method"] == "event"]
    assert all("id" not in m for m in got)
    assert [m["params"]["event"]["seq"] for m in got] == list(range(16))


def test_visible_seqs_are_this_turn_or_the_whole_surface(tmp_path: Path) -> None:
    """By default only this turn's messages count as on screen; hideVisible sends the surface."""
    log = tmp_path / "received.jsonl"
    script = [
        *events_ops(),
        {"op": "pre-step", "turn": 4, "step": 2},
        {"op": "surface", "nodes": [1, 2, 13, 14]},
        {"op": "pre-step", "turn": 4, "step": 3},
        {"op": "command", "input": "status"},
    ]
    run(fake("allow", log), script, tmp_path)
    run({**fake("allow", log), "hideVisible": True}, script, tmp_path)
    sent = [m["params"].get("visibleSeqs") for m in received(log) if m["method"] == "preStep"]
    surface = [1, 2, 5, 6, 9, 10, 13, 14]  # every message event the harness appended
    assert sent == [[13, 14], [13, 14], surface, [1, 2, 13, 14]]


def test_pre_step_sends_the_hosts_surface(tmp_path: Path) -> None:
    """The seqs DSH still holds in its history reach the sidecar as `surfaceSeqs`."""
    log = tmp_path / "received.jsonl"
    script = [
        {"op": "surface", "nodes": [4, 80, 59, 61]},
        {"op": "pre-step", "turn": 3, "step": 1, "messages": ASK},
    ]
    run(fake("ok", log), script, tmp_path)
    [params] = [m["params"] for m in received(log) if m["method"] == "preStep"]
    assert params["surfaceSeqs"] == [4, 80, 59, 61]


def test_by_default_a_new_sessions_first_turn_does_not_ask_the_sidecar(tmp_path: Path) -> None:
    """`startWaitMs` 0: turn 1 of a new session goes on at once; later turns ask as usual."""
    log = tmp_path / "received.jsonl"
    script = [
        {"op": "pre-step", "turn": 1, "step": 1, "messages": ASK},
        {"op": "pre-step", "turn": 2, "step": 1, "messages": ASK},
        {"op": "command", "input": "status"},
    ]
    first, _, command = run(fake("ok", log), script, tmp_path)
    assert first["result"] == {"kind": "enter", "messages": ASK}
    assert "steps without memory" not in command["result"]["text"]
    got = received(log)
    assert [m["params"]["turn"] for m in got if m["method"] == "preStep"] == [2]
    [skip] = [m["params"] for m in got if m["method"] == "skip"]
    assert skip["turn"] == 1 and "turn 1 of a new session" in skip["reason"]


def test_niceness_lowers_the_sidecars_priority(tmp_path: Path) -> None:
    """`niceness` is applied to the spawned sidecar; by default it runs like the host."""
    script = [{"op": "command", "input": "status"}]
    [plain] = run(fake("ok", tmp_path / "a.jsonl"), script, tmp_path)
    [niced] = run({**fake("ok", tmp_path / "b.jsonl"), "niceness": 7}, script, tmp_path)
    base = os.nice(0)  # the sidecar inherits ours; `niceness` sets an absolute value
    assert f"nice={base}" in plain["result"]["text"]
    assert f"nice={max(base, 7)}" in niced["result"]["text"]


def test_pre_step_sends_what_dsh_says_of_its_context(tmp_path: Path) -> None:
    """The model's window and compaction-basic's settings (its per-model policy applied)
    reach the sidecar as `host`; the model is looked up once, not at every step."""
    log = tmp_path / "received.jsonl"
    compaction = {
        "auto": True,
        "thresholdRatio": 0.8,
        "headroomTokens": 65536,
        "modelPolicies": [
            {"provider": "deepseek-official", "model": "deepseek-v4-flash", "thresholdRatio": 0.003}
        ],
    }
    host = {
        "op": "host",
        "provider": "deepseek-official",
        "model": "deepseek-v4-flash",
        "contextWindow": 1_000_000,
        "defaultMaxTokens": 32768,
        "compaction": compaction,
    }
    script = [
        {"op": "pre-step", "turn": 2, "step": 1, "messages": ASK},  # a host without them
        host,
        {"op": "pre-step", "turn": 3, "step": 1, "messages": ASK},
        {"op": "pre-step", "turn": 4, "step": 1, "messages": ASK},
        {"op": "model-lookups"},
    ]
    out = run(fake("ok", log), script, tmp_path)
    sent = [m["params"].get("host") for m in received(log) if m["method"] == "preStep"]
    expected = {
        "provider": "deepseek-official",
        "model": "deepseek-v4-flash",
        "contextWindow": 1_000_000,
        "defaultMaxTokens": 32768,
        "compaction": {
            "engine": "BasicCompactionEngine",
            "auto": True,
            "thresholdRatio": 0.003,
            "headroomTokens": 65536,
        },
    }
    assert sent == [None, expected, expected]
    assert out[-1] == {"op": "model-lookups", "count": 1}
