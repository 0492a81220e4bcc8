"""One scripted session that makes memory work on most turns, for the compaction-count runs.

A goal, a budget with its tax condition, a latency limit with its condition and a
corrected port are set first (and, with `rules`, that many rules of the service); then the user walks through many files of one shape
("src/module_N.py"), asks again about what was set, and halfway switches from English to
Chinese (the goal is then worth restating only if no block in view shows it yet). Every
turn carries some padding so DSH's lowered thresholds are crossed without memory too.
Used by `test_dsh_host_share.py` and `benchmarks/host_share.py`.
"""

from __future__ import annotations

from typing import Final

GOAL: Final = "Goal: ship the invoice export to staging by Friday."
SETUP: Final = (
    GOAL,
    "这个项目的预算不超过3000元（含税）。",
    "The p95 latency of /invoices must stay under 180 ms when the cache is warm.",
    "The staging database listens on port 6432.",
    "Correction: the staging database listens on port 5433, not 6432.",
)
# More standing rules for `prompts(..., rules=N)`: what memory must restate after every
# compaction grows with them.
RULES: Final = (
    "The invoice service must never use Redis for caching; use Postgres.",
    "发票服务的数据库只能部署在上海区域。",
    "The invoice service release window is Friday 22:00 with two approvers.",
    "发票服务的日志至少保留九十天，不能存放身份证号。",
    "The invoice service API must use TLS 1.3; old clients are no longer supported.",
    "发票服务的导出文件必须是 UTF-8 编码的 CSV。",
)
TOPICS: Final = ("invoice", "tax", "currency", "customer", "export", "audit", "refund")
PAD_EN: Final = " Some notes on naming and layout that matter little." * 6
PAD_ZH: Final = "，文件里主要是字段映射和格式转换的代码" * 6


# An assistant's answer of a few sentences (the fake model's default is seven characters,
# far shorter than any real reply, which would make every block look large).
REPLY: Final = (
    "Understood. I will keep the budget, the latency limit and the corrected port in mind, "
    "read the module you named, check how it maps each field and converts formats, and "
    "report anything that does not match the export spec before we move on. "
    "好的，我会按这个顺序继续检查，发现问题再告诉你。"
)


def prompts(turns: int, rules: int = 0) -> list[str]:
    """The user's messages of a `turns`-turn session (the same for every run)."""
    setup = (*SETUP, *RULES[:rules])
    out = list(setup[:turns])
    half = len(setup) + (turns - len(setup)) // 2
    for turn in range(len(setup) + 1, turns + 1):
        topic = TOPICS[turn % len(TOPICS)]
        chinese = turn > half
        if turn % 6 == 0:
            text = (
                "发票服务有哪些约束？staging 数据库的端口和预算呢？"
                if chinese
                else "What are the invoice service's rules, the staging port and the budget?"
            )
            if not rules:
                text = (
                    "staging 数据库的端口是多少？预算是多少？"
                    if chinese
                    else "What port does the staging database listen on, and what is the budget?"
                )
        elif turn % 6 == 3:
            text = (
                "/invoices 的 p95 延迟要求是什么？"
                if chinese
                else "What must the p95 latency of /invoices stay under?"
            )
        elif chinese:
            text = f"接下来看 src/module_{turn}.py 文件，它处理{topic}记录{PAD_ZH}。"
        else:
            text = f"Let's look at file src/module_{turn}.py next; it parses {topic} rows.{PAD_EN}"
        out.append(text)
    return out


# The compaction-survival test's script (`test_dsh_compaction.py`): four turns that set
# values, then chatter that mentions none of them (memory stays quiet on it).
FILLER_SETUP: Final = SETUP[1:]
FILLER: Final = "继续闲聊，" + "一些无关的填充文字。" * 30


def filler_prompts(turns: int) -> list[str]:
    """Four turns that set a budget, a limit and a corrected port, then filler."""
    return [FILLER_SETUP[i] if i < len(FILLER_SETUP) else FILLER for i in range(turns)]
