"""The runtime reads each surface event once; a new, purged or re-captured event still shows.

A DSH step names every event it still holds; `hostmsg.SurfaceMessages` keeps the ones
already read, per session, so only new seqs are read at the next step.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from lcm_adapter.dsh.sample import assistant, user
from lcm_adapter.hostmsg import SurfaceMessages, step_messages
from lcm_adapter.runtime import MemoryRuntime
from lcm_core import usecases

SID = "会话-surface"


@pytest.fixture
def rt(tmp_path: Path) -> Iterator[MemoryRuntime]:
    runtime = MemoryRuntime.open(str(tmp_path / "m.sqlite"))
    yield runtime
    runtime.close()


def ask(text: str) -> list[dict[str, Any]]:
    return [
        {"role": "user", "content": [{"type": "text", "text": text}], "source": {"kind": "user"}}
    ]


def test_surface_messages_match_an_uncached_read_step_after_step(rt: MemoryRuntime) -> None:
    rt.on_event(SID, user(1, "部署只在上海区域"))
    rt.on_event(SID, assistant(2, "好的，只部署到上海。"))
    surface = SurfaceMessages()
    first = step_messages(rt.store, SID, ask("下一步？"), [1, 2, 3], surface)
    assert [m.text for m in first] == ["部署只在上海区域", "好的，只部署到上海。", "下一步？"]
    # Seq 3 was named before it was stored: it is read once it is there.
    rt.on_event(SID, user(3, "批量大小是500，不是1000"))
    second = step_messages(rt.store, SID, [], [1, 2, 3], surface)
    assert second == step_messages(rt.store, SID, [], [1, 2, 3])
    assert [m.text for m in second][-1] == "批量大小是500，不是1000"


def test_a_purged_and_recaptured_session_is_read_afresh(rt: MemoryRuntime) -> None:
    rt.on_event(SID, user(1, "预算不超过3000元"))
    rt.on_event(SID, user(2, "端口是6432"))
    surface = SurfaceMessages()
    assert [m.text for m in surface.read(rt.store, SID, [1, 2])] == [
        "预算不超过3000元",
        "端口是6432",
    ]
    usecases.purge(rt.store, SID)  # another process: the runtime is not told
    rt.on_event(SID, user(1, "预算不超过5000元"))
    assert [m.text for m in surface.read(rt.store, SID, [1, 2])] == ["预算不超过5000元"]


def test_a_turn_on_the_surface_is_not_quoted_and_comes_back_once_it_leaves(
    rt: MemoryRuntime,
) -> None:
    """Through the runtime: the same seqs from step to step, then a surface without them."""
    rt.on_event(SID, user(1, "旅行的预算不超过3000元（含税）"))
    rt.on_event(SID, assistant(2, "记下了。"))
    rt.on_event(SID, user(3, "今天先看部署脚本"))
    on_screen = rt.pre_step(SID, ask("预算是多少？"), 2, 1, visible_seqs=[1, 2, 3])
    text = "" if on_screen is None else on_screen["content"][0]["text"]
    assert "3000元" not in text  # still on screen: not repeated
    gone = rt.pre_step(SID, ask("预算是多少？"), 3, 1, visible_seqs=[3])
    assert gone is not None and "3000元" in gone["content"][0]["text"]
