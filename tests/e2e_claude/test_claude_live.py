"""One live Claude Code process, prompt after prompt, compacting on its own mid-session.

This is how an interactive session runs: one process, hooks between turns, and an
automatic compaction right before a request once the context is nearly full. The first
request after it must carry what the user set, and nothing may be sent twice.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable

from claude_code import NEAR_FULL, Home, assert_carries_what_the_user_set, our_blocks
from fake_anthropic import FakeAnthropic, request_texts

from lcm_core.retrieval.shown import block_entries

SET = (
    "这个项目的预算不超过3000元（含税）。",
    "The p95 latency of /invoices must stay under 180 ms when the cache is warm.",
    "The staging database listens on port 6432.",
    "不对，staging 数据库的端口是 5433，不是 6432。",
)
FILLER = ("好的，继续。", "Let's look at the next file.")
AFTER = "下一步是什么？"


def test_an_automatic_compaction_in_a_live_session_keeps_what_the_user_set(
    user: Callable[[], Home], model: FakeAnthropic
) -> None:
    home = user()
    project = home.project("发票服务")
    live = home.live(project)
    try:
        for text in (*SET, *FILLER):
            assert live.say(text)["subtype"] == "success"
        model.report_size(NEAR_FULL)
        assert live.say("再看一个文件。")["subtype"] == "success"
        since = len(model.requests)
        assert live.say(AFTER)["subtype"] == "success"
        assert live.say("And then the tests.")["subtype"] == "success"
    finally:
        stderr = live.close()
    assert "hook" not in stderr.lower(), stderr
    after = model.requests[since:]
    assert after[0].summary, "Claude Code did not compact on its own"
    first = "\n".join(request_texts(after[1].body))
    assert AFTER in first
    assert_carries_what_the_user_set(first)
    blocks = our_blocks(home.transcripts(project))
    assert blocks
    for request in model.model_requests:
        text = "\n".join(request_texts(request.body))
        seen = Counter(e for b in dict.fromkeys(blocks) if b in text for e in block_entries(b))
        assert all(count == 1 for count in seen.values())
    assert home.hook_log() == ""
