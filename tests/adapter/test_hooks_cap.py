"""`hooks.maxContextChars`: a long block is cut to whole entries, most important first."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from lcm_adapter.claude.cap import cap_block
from lcm_adapter.cli.main import cli
from lcm_core.text.block_words import EN, ZH

DEMO_SESSION = "0b6f3c2e-9a41-4d7e-b8c5-1e2f3a4b5c6d"


def _block(header: str, sections: dict[str, list[str]]) -> str:
    parts = [header]
    for title, entries in sections.items():
        parts.append(f"## {title}\n" + "\n".join(entries))
    return "\n\n".join(parts)


SECTIONS = {
    "记忆: 当前任务状态": ["- 目标: “把导出脚本换掉，周五前完成”", "- 进展: “extractor done”"],
    "记忆: 常驻": [
        f"- [mem mem_r{i}] 约束·用户明确: “预算不超过{i}000元（含税）”" for i in range(5)
    ],
    "记忆: 相关条目": [
        f"- [mem mem_m{i}] fact·user: “port {8000 + i} on loopback”" for i in range(20)
    ],
    "证据: 原文摘录": [
        f"- [ev seq:{i}] 用户消息\n  > 第 {i} 条：Now write the S3 uploader with retries，别忘了只读副本。"
        for i in range(40)
    ],
}


def _entries(text: str) -> list[str]:
    return [line for line in text.split("\n") if line.startswith("- ")]


def test_a_block_that_fits_is_returned_unchanged() -> None:
    text = _block(ZH.header, SECTIONS)
    assert cap_block(text, len(text)) == text


@pytest.mark.parametrize("words", [ZH, EN])
@pytest.mark.parametrize("cap", [1_000, 1_500, 2_500, 4_000])
def test_a_long_block_keeps_whole_entries_in_section_order(words: object, cap: int) -> None:
    text = _block(words.header, SECTIONS)  # type: ignore[attr-defined]
    assert len(text) > cap
    out = cap_block(text, cap)
    assert len(out) <= cap and out.startswith(words.header)  # type: ignore[attr-defined]
    original = text.split("\n- ")
    kept = out.split("\n- ")
    # Every kept entry is a whole entry of the original block (label, text and quote).
    for entry in kept[1:]:
        body = entry.split("\n\n")[0]
        assert any(o.split("\n\n")[0] == body for o in original[1:]), body
    # The task state comes first and survives; what is cut is the tail of the order.
    assert "目标" in out and "进展" in out
    order = [e for e in _entries(text)]
    positions = [order.index(e) for e in _entries(out)]
    assert positions == sorted(positions)
    dropped = len(order) - len(positions)
    assert dropped > 0 and f"{dropped}" in out.rsplit("\n", 1)[-1]
    # A heading is shown only with at least one of its entries under it.
    lines = out.split("\n")
    for i, line in enumerate(lines):
        if line.startswith("## "):
            assert i + 1 < len(lines) and lines[i + 1].startswith("- ")


def test_the_hook_reply_stays_under_the_configured_cap(tmp_path: Path) -> None:
    db = tmp_path / "memory.sqlite"
    assert CliRunner().invoke(cli, ["--db", str(db), "demo"]).exit_code == 0
    prompt = "port 8080 批大小 预算 只读副本 S3 uploader retries cron Parquet Friday"
    body = json.dumps({"session_id": DEMO_SESSION, "prompt": prompt})

    def context(name: str, config: dict[str, object]) -> str:
        # Each call on its own copy: a block logged by one call would hide its entries
        # from the next as already shown.
        copy = tmp_path / f"{name}.sqlite"
        shutil.copy(db, copy)
        path = tmp_path / f"{name}.json"
        path.write_text(json.dumps(config), encoding="utf-8")
        args = ["--db", str(copy), "--config", str(path), "hook", "user-prompt-submit"]
        result = CliRunner().invoke(cli, args, input=body)
        assert result.exit_code == 0
        reply = json.loads(result.stdout.strip().splitlines()[-1])
        return str(reply["hookSpecificOutput"]["additionalContext"])

    wide = context("wide", {"hooks": {"maxContextChars": 100_000}})
    capped = context("capped", {"hooks": {"maxContextChars": 500}})
    assert len(wide) > 500 >= len(capped)
    assert _entries(capped) and set(_entries(capped)) <= set(_entries(wide))
