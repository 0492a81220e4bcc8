"""At small compaction thresholds memory does not make DSH compact much more often.

The same 70 scripted turns (`host_prompts.py`: a goal, a budget, a latency limit, a
corrected port, many files of one shape, questions about what was set, and a switch
from English to Chinese halfway; the model answers in a few sentences) run once without
our plugin and once with it, at DSH thresholds of 3000 and 2000 tokens. With the plugin
DSH compacts at most twice as often. Along the way: the block's budget follows the
threshold DSH reports (0.1 of it, here raised to the floor `minBudgetTokens` 600), the
log says so, and no block in any
request repeats only what an earlier block of that request shows, in either language.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from dsh_session import MEMORY_HEADER, DshSession, compaction_rows
from fake_model import FakeModel, request_texts
from host_prompts import REPLY, prompts

from lcm_core.retrieval.shown import block_entries

TURNS = 70


@pytest.mark.parametrize("threshold", [3000, 2000])
def test_memory_at_most_doubles_how_often_dsh_compacts(
    dsh: Callable[..., DshSession], model: FakeModel, threshold: int
) -> None:
    model.default_text = REPLY
    texts = prompts(TURNS)
    without = dsh(extra_rows=compaction_rows(threshold), memory=False).compactions(texts)
    first_body = len(model.bodies)
    s = dsh(extra_rows=compaction_rows(threshold))
    with_memory = s.compactions(texts)
    assert without >= 1, "the threshold is too high for the script to test anything"
    assert with_memory <= 2 * without, (with_memory, without)

    runtime = s.runtime()
    try:
        logs = runtime.store.list_assembly_logs(s.session.id, limit=500)
    finally:
        runtime.close()
    injected = [log for log in logs if log.injected]
    assert len(injected) >= 10, "memory should have worked on many turns"
    expected = max(600, threshold // 10)  # assembly.minBudgetTokens is the floor
    for log in injected:
        assert log.budget_tokens == expected and log.used_tokens <= expected
        budget: dict[str, Any] = next(r for r in log.reasons if r.get("kind") == "budget")
        assert budget["origin"] == "host"
        assert (
            f"DSH compaction-basic (deepseek-v4-flash) compaction threshold of {threshold}"
            in (budget["why"])
        )
    languages = {
        "zh" if log_text.startswith(MEMORY_HEADER[0]) else "en"
        for log_text in _blocks(model, first_body)
    }
    assert languages == {"zh", "en"}, "the script switches language: both kinds of block"
    for body in model.bodies[first_body:]:
        earlier: set[str] = set()
        for block in [t for t in request_texts(body) if t.startswith(MEMORY_HEADER)]:
            entries = set(block_entries(block))
            assert entries - earlier, f"a block repeats only what an earlier one shows:\n{block}"
            earlier |= entries


def _blocks(model: FakeModel, first: int) -> list[str]:
    """Every block of ours in the requests from `first` on."""
    return [
        t
        for body in model.bodies[first:]
        for t in request_texts(body)
        if t.startswith(MEMORY_HEADER)
    ]
