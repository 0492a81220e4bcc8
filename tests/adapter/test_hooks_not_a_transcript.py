"""A hook whose `transcript_path` is not a transcript: one logged line, no cursor, no events."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from lcm_adapter.claude.transcript import META_PREFIX
from lcm_adapter.cli.main import cli
from lcm_core.store.registry import open_store

SESSION = "会话-hook-1"


@pytest.mark.parametrize(
    ("name", "content", "reason"),
    [
        ("passwd", b"root:x:0:0:root:/root:/bin/bash\n", "its first line is not JSON"),
        (
            "notes.jsonl",
            b'["a", "list"]\n{"type": "user"}\n',
            "its first line is not a transcript entry",
        ),
        (
            "config.json",
            '{"theme": "dark", "主题": "暗"}\n'.encode(),
            "its first line is not a transcript entry",
        ),
    ],
)
def test_a_file_that_is_no_transcript_is_not_read(
    tmp_path: Path, name: str, content: bytes, reason: str
) -> None:
    source = tmp_path / name
    source.write_bytes(content)
    db = tmp_path / "m.sqlite"
    body = {"session_id": SESSION, "transcript_path": str(source), "prompt": "预算是多少?"}
    result = CliRunner().invoke(
        cli, ["--db", str(db), "hook", "user-prompt-submit"], input=json.dumps(body)
    )
    assert result.exit_code == 0
    lines = result.stderr.splitlines()
    assert len(lines) == 1, result.stderr
    assert f"{source} is not a transcript ({reason}" in lines[0] and "not read" in lines[0]
    logged = (tmp_path / "hooks.log").read_text(encoding="utf-8").splitlines()
    assert len(logged) == 1 and "is not a transcript" in logged[0]
    store = open_store(str(db))
    try:
        assert store.get_meta(META_PREFIX + SESSION) is None  # no cursor recorded
        assert store.list_events(SESSION) == []
    finally:
        store.close()
    assert source.read_bytes() == content
