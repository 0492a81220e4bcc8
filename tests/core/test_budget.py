"""The block's budget follows the host: a share of its compaction threshold or window."""

from __future__ import annotations

from typing import Any

import pytest

from lcm_core.assembly.assemble import assemble
from lcm_core.assembly.budget import HostWindow, step_budget
from lcm_core.assembly.log import explain_text, log_assembly
from lcm_core.config import load_config

DEFAULT = load_config()
# `minBudgetTokens` lowered so the share itself shows at a small threshold.
LOW_FLOOR = load_config({"assembly": {"minBudgetTokens": 200}})
DSH_3000 = HostWindow(1_000_000, 3000, "DSH compaction-basic (deepseek-v4-flash)")


def test_without_host_facts_the_setting_is_the_budget() -> None:
    """a host that says nothing of its size gets `softBudgetTokens`, and the log says why."""
    budget = step_budget(DEFAULT, None)
    assert (budget.tokens, budget.origin) == (3000, "setting")
    assert "assembly.softBudgetTokens 3000" in budget.why
    assert step_budget(DEFAULT, HostWindow()).tokens == 3000


def test_a_small_compaction_threshold_sets_the_budget() -> None:
    """0.1 of a 3000-token threshold is 300; the reason names the host and the figures."""
    budget = step_budget(LOW_FLOOR, DSH_3000)
    assert (budget.tokens, budget.origin) == (300, "host")
    assert "0.1 x the DSH compaction-basic" in budget.why
    assert "compaction threshold of 3000 tokens = 300" in budget.why
    reason = budget.to_reason()
    assert reason["kind"] == "budget" and reason["host"]["compactAtTokens"] == 3000


def test_the_threshold_wins_over_the_window_and_the_floor_holds() -> None:
    """the compaction threshold is the size when both are known; below the floor, the floor."""
    small = step_budget(DEFAULT, HostWindow(1_000_000, 2000, "DSH"))
    assert small.tokens == 600 and "raised to assembly.minBudgetTokens 600" in small.why
    middle = step_budget(DEFAULT, HostWindow(1_000_000, 20_000, "DSH"))
    assert middle.tokens == 2000 and middle.origin == "host"
    window_only = step_budget(DEFAULT, HostWindow(context_tokens=8000, source="Claude Code"))
    assert window_only.tokens == 800 and "context window of 8000" in window_only.why


def test_a_large_host_keeps_the_setting() -> None:
    """DSH's default threshold (0.8 of 1M) leaves the budget at `softBudgetTokens`."""
    budget = step_budget(DEFAULT, HostWindow(1_000_000, 800_000, "DSH"))
    assert (budget.tokens, budget.origin) == (3000, "setting")
    assert "within 0.1 x" in budget.why


@pytest.mark.parametrize(
    ("settings", "expected"),
    [
        ({"assembly": {"hostShare": 0}}, 3000),  # off: the fixed budget
        ({"assembly": {"hostShare": 0.5}}, 1500),
        ({"assembly": {"minBudgetTokens": 200}}, 300),
        ({"assembly": {"minBudgetTokens": 800}}, 800),  # the floor is the least budget
        ({"assembly": {"softBudgetTokens": 1000, "hostShare": 1.0}}, 1000),  # never above
        ({"assembly": {"softBudgetTokens": 50, "minBudgetTokens": 50}}, 50),  # a tiny setting
    ],
)
def test_the_share_setting(settings: dict[str, Any], expected: int) -> None:
    """`assembly.hostShare` scales the host's size; the setting stays the ceiling."""
    assert step_budget(load_config(settings), DSH_3000).tokens == expected


def test_a_share_out_of_bounds_is_refused() -> None:
    """a share above 1 is a setting error, not a larger block."""
    config = load_config({"assembly": {"hostShare": 3}})
    assert config.assembly.host_share <= 1.0
    assert any("hostShare" in w for w in config.warnings)


ZH_RULES = [
    "发票服务的预算不超过3000元（含税）。",
    "发票服务的数据库只能部署在上海区域。",
    "发票服务不要用 Redis 做缓存，必须走 Postgres。",
    "发票服务的发布窗口定在周五晚上十点，需要两个人审批。",
    "发票服务的 p95 延迟在缓存预热时必须低于 180 毫秒。",
    "发票服务的日志至少保留九十天，不能存放身份证号。",
    "发票服务的接口必须使用 TLS 1.3，旧客户端不再支持。",
    "发票服务的备份每天凌晨两点执行，保留三十份。",
    "发票服务的告警发到值班群，夜间只发严重级别。",
    "发票服务的导出文件必须是 UTF-8 编码的 CSV。",
]
EN_RULES = [
    "The invoice service budget is at most 3000 yuan including tax.",
    "The invoice service database must stay in the Shanghai region.",
    "The invoice service must never use Redis for caching; use Postgres.",
    "The invoice service release window is Friday 22:00 with two approvers.",
    "The invoice service p95 latency must stay under 180 ms when the cache is warm.",
    "The invoice service keeps logs for ninety days and never stores ID numbers.",
    "The invoice service API must use TLS 1.3; old clients are no longer supported.",
    "The invoice service backup runs at 02:00 every day and keeps thirty copies.",
    "The invoice service alerts go to the on-call channel, only critical ones at night.",
    "The invoice service export files must be UTF-8 encoded CSV.",
]


@pytest.mark.parametrize(
    ("lines", "query"),
    [
        (ZH_RULES, "发票服务有哪些约束？"),
        (EN_RULES, "What are the constraints of the invoice service?"),
    ],
)
def test_a_block_on_a_small_host_fits_its_share(script: Any, lines: list[str], query: str) -> None:
    """with a 3000-token threshold the block stays within 300 tokens, and explain says why."""
    for seq, text in enumerate(lines, start=1):
        script.user(seq, text)
        script.item(text, [seq], kind="constraint")
    wide = assemble(script.store, "sess", query=query, config=LOW_FLOOR)
    fitted = assemble(script.store, "sess", query=query, config=LOW_FLOOR, host=DSH_3000)
    assert wide.injected and fitted.injected
    assert wide.budget_tokens == 3000 and fitted.budget_tokens == 300
    assert fitted.used_tokens <= 300 < wide.used_tokens
    assert any("of the budget 300" in o.reason for o in fitted.omitted)
    log_assembly(script.store, fitted, LOW_FLOOR)
    text = explain_text(script.store.list_assembly_logs("sess", limit=1)[0])
    assert "tokens: " in text and "of 300" in text
    assert "budget: 0.1 x the DSH compaction-basic" in text
