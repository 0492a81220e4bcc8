"""The runtime facade on a PostgreSQL tenant gives the byte-identical memory block SQLite gives."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from lcm_adapter.dsh.sample import conversation, sample_turns
from lcm_adapter.runtime import MemoryRuntime

SID = "会话-1"


def _ask(text: str) -> list[dict[str, Any]]:
    return [
        {"role": "user", "content": [{"type": "text", "text": text}], "source": {"kind": "user"}}
    ]


def test_pre_step_matches_sqlite_byte_for_byte(tmp_path: Path, tenant_url: str) -> None:
    """the same conversation captured into SQLite and a server tenant assembles the same message."""
    messages = []
    for url in (str(tmp_path / "m.sqlite"), tenant_url):
        runtime = MemoryRuntime.open(url)
        try:
            runtime.on_events(SID, conversation(sample_turns()))
            message = runtime.pre_step(SID, _ask("预算是多少？ what is the budget"), 9, 1)
        finally:
            runtime.close()
        assert message is not None and "650" in json.dumps(message, ensure_ascii=False)
        messages.append(json.dumps(message, ensure_ascii=False, sort_keys=True))
    assert messages[0] == messages[1]
