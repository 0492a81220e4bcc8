"""Golden DSH session of issue 15: a plain fact, forty navigation turns, the correction.

The session arrives as DSH session events (the shape `lcm ingest` reads from a log and
the sidecar receives live), is captured and extracted, and the snapshot shows every item
with its status and links, the lifecycle rows, and the blocks of two next steps: one
whose text is another navigation line, one asking for the port. Regenerate with
`LCM_UPDATE_GOLDEN=1 pytest tests/adapter/golden` and review the diff.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from lcm_adapter.envelope.capture import capture_batch
from lcm_core.assembly.step import StepMessage
from lcm_core.config import load_config
from lcm_core.extraction.durability import is_durable
from lcm_core.extraction.run import run_extraction
from lcm_core.steps.prestep import StepRequest, pre_step
from lcm_store_sqlite import SQLiteMemoryStore

HERE = Path(__file__).parent
GOLDEN = HERE / "dsh_fact_navigation_correction.golden"
UPDATE = os.environ.get("LCM_UPDATE_GOLDEN") == "1"
SID = "dsh-issue-15"
T0 = 1796004637671
FACT = "The staging database listens on port 6432."
CORRECTION = "Correction: the staging database listens on port 5433, not 6432."


def _user(seq: int, text: str) -> dict[str, Any]:
    content = [{"type": "text", "text": text}]
    data = {"content": content, "source": {"kind": "user"}, "role": "user", "id": f"u-{seq}"}
    return {"type": "user/message", "seq": seq, "time": T0 + seq, "data": data}


def _assistant(seq: int, text: str, turn: int) -> dict[str, Any]:
    message = {
        "role": "assistant",
        "content": [{"type": "text", "text": text}],
        "source": {"kind": "model", "provider": "deepseek-official"},
        "id": f"a-{seq}",
    }
    data = {"turn": turn, "step": 1, "message": message}
    return {"type": "assistant/message", "seq": seq, "time": T0 + seq, "data": data}


def session_events() -> list[dict[str, Any]]:
    """Turn 1 the fact, turns 2..41 navigation, turn 42 the correction; each answered."""
    turns = [(FACT, "Noted; I will use that host when I run the migration check.")]
    turns += [
        (
            f"Let's look at file src/module_{n}.py next, it handles case {n}.",
            f"src/module_{n}.py reads the case {n} rows and hands them to the shared writer.",
        )
        for n in range(1, 41)
    ]
    turns.append((CORRECTION, "Understood, 5433 from now on."))
    events: list[dict[str, Any]] = []
    for turn, (question, answer) in enumerate(turns, start=1):
        seq = (turn - 1) * 2
        events += [_user(seq, question), _assistant(seq + 1, answer, turn)]
    return events


def snapshot() -> tuple[str, SQLiteMemoryStore]:
    store = SQLiteMemoryStore(":memory:")
    config = load_config()
    capture_batch(store, SID, session_events(), config)
    report = run_extraction(store, SID, config)
    assert not report.errors, report.errors
    items = sorted(store.list_items(SID), key=lambda i: (i.derived_from_seq or 0, i.id))
    lines = ["===== items after ingest ====="]
    for item in items:
        links = f" supersedes {','.join(item.supersedes)}" if item.supersedes else ""
        links += f" superseded_by {item.superseded_by}" if item.superseded_by else ""
        durable = "durable" if is_durable(item) else "not durable"
        lines.append(
            f"seq {item.derived_from_seq} {item.kind}/{item.status} ({durable}) {item.id}: "
            f"{item.content}{links}"
        )
    lines.append("===== lifecycle =====")
    lines += [
        f"{row.memory_id} {row.event} by {row.actor}"
        for row in store.list_memory_events(session_id=SID)
    ]
    for title, text in (
        (
            "step: another navigation line",
            "Let's look at file src/module_41.py next, it handles case 41.",
        ),
        ("step: which port", "Which port does the staging database listen on?"),
    ):
        block = pre_step(
            store, StepRequest(SID, [StepMessage("user", text, "user")]), config
        ).result
        lines += [f"===== {title} =====", block.text or "(nothing injected)"]
    return "\n".join(lines) + "\n", store


def test_dsh_session_fact_navigation_correction() -> None:
    """The fact is superseded by the corrected fact; no navigation turn is durable memory."""
    actual, store = snapshot()
    try:
        items = store.list_items(SID)
        (old,) = [i for i in items if i.content == FACT.rstrip(".")]
        (new,) = [i for i in items if "5433" in i.content]
        assert (old.kind, old.status, old.superseded_by) == ("fact", "superseded", new.id)
        assert (new.kind, new.status) == ("fact", "active")
        assert [i.id for i in items if is_durable(i)] == [new.id]
        assert not any("src/module_" in i.content for i in items if is_durable(i))
    finally:
        store.close()
    if UPDATE:
        GOLDEN.write_text(actual, encoding="utf-8")
    assert GOLDEN.exists(), f"missing {GOLDEN.name}; run with LCM_UPDATE_GOLDEN=1 and review it"
    assert actual == GOLDEN.read_text(encoding="utf-8")
    again, second = snapshot()
    second.close()
    assert again == actual  # the same session gives the same bytes
