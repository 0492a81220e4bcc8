"""The adapters read the host's context size as the host says it; the core sets the budget."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from lcm_adapter.claude.window import claude_host_window
from lcm_adapter.cli.main import cli
from lcm_adapter.dsh.host_window import dsh_host_window
from lcm_adapter.dsh.sample import conversation, user
from lcm_adapter.dsh.sidecar import Sidecar
from lcm_adapter.runtime import MemoryRuntime

# What the plugin sends on DSH 0.2.1 with `thresholdRatio: 0.003` (the e2e patch).
DSH_FACTS: dict[str, Any] = {
    "provider": "deepseek-official",
    "model": "deepseek-v4-flash",
    "contextWindow": 1_000_000,
    "defaultMaxTokens": 32_768,
    "compaction": {
        "engine": "BasicCompactionEngine",
        "auto": True,
        "thresholdRatio": 0.003,
        "headroomTokens": 65_536,
    },
}


def test_dsh_threshold_is_worked_out_as_compaction_basic_does() -> None:
    """window x thresholdRatio, capped by the window less output and headroom."""
    host = dsh_host_window(DSH_FACTS)
    assert host is not None
    assert (host.context_tokens, host.compact_at_tokens) == (1_000_000, 3000)
    assert host.source == "DSH compaction-basic (deepseek-v4-flash)"
    # DSH's default ratio 0.8: the pressure cap (1M - 32768 - 65536) is the lower one.
    default = {**DSH_FACTS, "compaction": {**DSH_FACTS["compaction"], "thresholdRatio": 0.8}}
    host = dsh_host_window(default)
    assert host is not None and host.compact_at_tokens == 800_000
    capped = {**default, "maxTokens": 200_000}
    host = dsh_host_window(capped)
    assert host is not None and host.compact_at_tokens == 1_000_000 - 200_000 - 65_536


@pytest.mark.parametrize(
    "facts",
    [
        {**DSH_FACTS, "compaction": {**DSH_FACTS["compaction"], "auto": False}},
        {**DSH_FACTS, "compaction": {**DSH_FACTS["compaction"], "thresholdRatio": "0.003"}},
        {**DSH_FACTS, "compaction": {**DSH_FACTS["compaction"], "thresholdRatio": 7}},
        {**DSH_FACTS, "compaction": None},
    ],
)
def test_dsh_without_a_usable_threshold_gives_the_window(facts: dict[str, Any]) -> None:
    """no automatic compaction, or a malformed ratio: only the window is known."""
    host = dsh_host_window(facts)
    assert host is not None
    assert (host.context_tokens, host.compact_at_tokens) == (1_000_000, None)


@pytest.mark.parametrize(
    "facts", [None, "x", {}, {"contextWindow": 0}, {"contextWindow": True}, {"contextWindow": "1M"}]
)
def test_dsh_saying_nothing_usable_gives_none(facts: Any) -> None:
    """an older host, or nonsense, leaves the budget to the setting."""
    assert dsh_host_window(facts) is None


def test_the_sidecar_passes_dsh_facts_to_the_budget(tmp_path: Path) -> None:
    """a preStep with DSH's facts logs a budget of 0.1 x its 3000-token threshold (floor 600)."""
    server = Sidecar(lambda settings: MemoryRuntime.open(str(tmp_path / "m.sqlite"), settings))
    sid = "会话-host"
    turns = [
        ("user", "约束：发票服务不要用 Redis 做缓存，必须走 Postgres。"),
        ("user", "The invoice service database must stay in the Shanghai region."),
    ]
    try:
        server.handle(
            {
                "jsonrpc": "2.0",
                "method": "events",
                "params": {"sessionId": sid, "events": conversation(turns)},
            }
        )
        ask = [{"role": "user", "content": [{"type": "text", "text": "发票服务有哪些约束？"}]}]
        params = {"sessionId": sid, "messages": ask, "turn": 3, "step": 1, "host": DSH_FACTS}
        server.handle({"jsonrpc": "2.0", "id": 1, "method": "preStep", "params": params})
        runtime = server.runtime()
        assert runtime is not None
        log = runtime.store.list_assembly_logs(sid, limit=1)[0]
    finally:
        server.close()
    assert log.budget_tokens == 600
    budget = next(r for r in log.reasons if r.get("kind") == "budget")
    assert budget["origin"] == "host"
    assert "DSH compaction-basic (deepseek-v4-flash) compaction threshold of 3000" in budget["why"]


def test_claude_code_window_and_percentage() -> None:
    """the auto-compact window and percentage set in Claude Code's environment are read."""
    env = {"CLAUDE_CODE_AUTO_COMPACT_WINDOW": "150_000", "CLAUDE_AUTOCOMPACT_PCT_OVERRIDE": "50"}
    host = claude_host_window(env, {})
    assert host is not None
    assert (host.context_tokens, host.compact_at_tokens) == (150_000, 75_000)
    assert "CLAUDE_CODE_AUTO_COMPACT_WINDOW" in host.source


@pytest.mark.parametrize(
    ("env", "payload", "window"),
    [
        ({}, {"model": "claude-sonnet-4-5[1m]"}, 1_000_000),
        ({"ANTHROPIC_MODEL": "opus[1m]"}, {}, 1_000_000),
        ({}, {"model": {"id": "claude-opus-4-1", "display_name": "Opus"}}, 200_000),
        ({"CLAUDE_AUTOCOMPACT_PCT_OVERRIDE": "80"}, {}, 200_000),
        ({"CLAUDE_CODE_AUTO_COMPACT_WINDOW": "200k"}, {"model": "sonnet"}, 200_000),
    ],
)
def test_claude_code_window_follows_the_model(
    env: dict[str, str], payload: dict[str, Any], window: int
) -> None:
    """a `[1m]` model is the 1M window, another model the default; a bad value is ignored."""
    host = claude_host_window(env, payload)
    assert host is not None and host.context_tokens == window


def test_claude_code_saying_nothing_gives_none() -> None:
    """no window, no model, no percentage (or a bad one): the setting stays the budget."""
    assert claude_host_window({}, {}) is None
    assert claude_host_window({"CLAUDE_AUTOCOMPACT_PCT_OVERRIDE": "150"}, {}) is None


def test_a_claude_code_hook_budget_follows_its_window(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """with an 8 000-token window the prompt's block is budgeted at 800, and explain says so."""
    monkeypatch.setenv("LCM_HOOK_SERVER", "0")
    monkeypatch.setenv("CLAUDE_CODE_AUTO_COMPACT_WINDOW", "8000")
    db = tmp_path / "m.sqlite"
    runtime = MemoryRuntime.open(str(db))
    try:
        runtime.on_events("s-1", [user(0, "约束：发票服务不要用 Redis 做缓存。")])
    finally:
        runtime.close()
    body = {"session_id": "s-1", "prompt": "发票服务能用 Redis 吗？"}
    result = CliRunner().invoke(
        cli, ["--db", str(db), "hook", "user-prompt-submit"], input=json.dumps(body)
    )
    assert result.exit_code == 0, result.output
    assert "Redis" in json.loads(result.stdout)["hookSpecificOutput"]["additionalContext"]
    explained = CliRunner().invoke(cli, ["--db", str(db), "explain", "--session", "s-1"])
    assert explained.exit_code == 0, explained.output
    assert "800" in explained.output and "Claude Code" in explained.output
