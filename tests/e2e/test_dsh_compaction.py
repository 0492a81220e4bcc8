"""Compaction survival on the real DSH runtime, and a history that does not fill up.

Four early turns set a budget (`预算不超过3000元（含税）`), a latency limit with its
condition (p95 of /invoices under 180 ms when the cache is warm) and a port that is
then corrected; 46 filler turns follow that mention none of these. DSH compacts on its
own (lowered thresholds) and once by a manual `/compact` run by the driver plugin.

After every compaction the next model request must carry the budget with 含税, the
limit with its condition and the corrected port, and the old port only marked as
superseded. At turn 50 the memory text DSH re-sends is at most 3x the first
post-compaction block, and no block in any request repeats only what an earlier block
of the same request already shows.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable
from pathlib import Path

from dsh_session import COMPACTION_ROWS, MEMORY_HEADER, DshSession, driver_rows
from fake_model import FakeModel, request_texts

from lcm_core.retrieval.shown import block_entries

BUDGET = "这个项目的预算不超过3000元（含税）。"
LATENCY = "The p95 latency of /invoices must stay under 180 ms when the cache is warm."
# The wording: a plain fact with no cue word, then its correction by subject.
PORT = "The staging database listens on port 6432."
CORRECTION = "Correction: the staging database listens on port 5433, not 6432."
# The notice marks an old value in the block's language.
OLD_MARKERS = ("旧值", "old value")
SETUP = (BUDGET, LATENCY, PORT, CORRECTION)
FILLER = "继续闲聊，" + "一些无关的填充文字。" * 30
TURNS = 50
MANUAL_AFTER_TURN = 8  # the driver runs /compact when this turn ends
SUMMARY = "<summary>第 {n} 次压缩：之前主要是闲聊。</summary>"
COMMAND_COMPACT_ROWS = """\
- insert:
    - id: command-compact
      name: '@deepseek-ai/dsh-command-compact'
"""
WAIT_SECONDS = 60  # an upper bound for slow machines, never a measured expectation


def memory_blocks(body: dict[str, object]) -> list[str]:
    return [t for t in request_texts(body) if t.startswith(MEMORY_HEADER)]


def assert_carries_what_the_user_set(request: str) -> None:
    """Budget with 含税, the latency limit with its condition, the new port; old one marked."""
    assert "预算不超过3000元（含税）" in request
    assert "/invoices" in request and "180 ms" in request and "when the cache is warm" in request
    assert "5433" in request
    for line in request.splitlines():
        if "6432" in line and not any(m in line for m in OLD_MARKERS):
            # Only the correction's own words may name it, as what the port is not.
            assert re.sub(r"not 6432", "", line).count("6432") == 0, line


def test_what_the_user_set_survives_every_compaction_and_blocks_stay_lean(
    dsh: Callable[..., DshSession], model: FakeModel, tmp_path: Path
) -> None:
    out = tmp_path / "compact.json"
    rows = COMPACTION_ROWS + COMMAND_COMPACT_ROWS + driver_rows("/compact", MANUAL_AFTER_TURN, out)
    model.numbered_summary = SUMMARY
    s = dsh(extra_rows=rows)
    for turn in range(1, TURNS + 1):
        text = SETUP[turn - 1] if turn <= len(SETUP) else FILLER
        assert not any(word in FILLER for word in ("预算", "180", "invoices", "5433", "6432"))
        result = s.run(text)
        assert result.finish_reason == "completed", s.stderr_tail()
        if turn == MANUAL_AFTER_TURN:
            deadline = time.monotonic() + WAIT_SECONDS
            while not out.exists():
                assert time.monotonic() < deadline, "the driver plugin never ran /compact"
                time.sleep(0.05)
            outcome = json.loads(out.read_text(encoding="utf-8"))
            assert outcome.get("result", {}).get("kind") == "success", outcome
    compactions = len(model.summary_bodies)
    assert compactions >= 2, f"expected the manual and at least one automatic, got {compactions}"

    first_after: list[int] = []
    for n in range(1, compactions + 1):
        marker = f"第 {n} 次压缩"
        index = next(
            (i for i, body in enumerate(model.bodies) if marker in "\n".join(request_texts(body))),
            None,
        )
        assert index is not None, f"no request after compaction {n}"
        first_after.append(index)
        request = "\n".join(request_texts(model.bodies[index]))
        assert_carries_what_the_user_set(request)
        # The early turns were compacted away: it is our block that carries them.
        block = memory_blocks(model.bodies[index])[-1]
        assert "预算不超过3000元（含税）" in block and "5433" in block
    # Every request from the first compaction on still carries them (the block stays
    # in the history until the next compaction brings a new one).
    for body in model.bodies[first_after[0] :]:
        assert_carries_what_the_user_set("\n".join(request_texts(body)))

    first_block = memory_blocks(model.bodies[first_after[0]])[-1]
    resent = sum(len(b) for b in memory_blocks(model.bodies[-1]))
    assert resent <= 3 * len(first_block), (resent, len(first_block))
    for body in model.bodies:
        earlier: set[str] = set()
        for block in memory_blocks(body):
            # Before any compaction too: no block of ours calls the old port current,
            # not even at the correction's own turn.
            for line in block.splitlines():
                if "6432" in line and not any(m in line for m in OLD_MARKERS):
                    assert re.sub(r"not 6432", "", line).count("6432") == 0, line
            entries = set(block_entries(block))
            assert entries - earlier, "a block repeats only what an earlier block shows"
            earlier |= entries

    runtime = s.runtime()
    try:
        logs = runtime.store.list_assembly_logs(s.session.id, limit=200)
        quiet = [log for log in logs if not log.injected and log.turn and log.turn > len(SETUP)]
        assert quiet, "filler steps should inject nothing"
        assert all(any(r.get("kind") == "skipped" for r in log.reasons) for log in quiet)
    finally:
        runtime.close()
