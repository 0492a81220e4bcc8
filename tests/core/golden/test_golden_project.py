"""Golden sessions of project memory: what session A set down reaches session B of its project.

Sessions are captured as events and extracted by the real rules, then assembled as a
pre-step would be. The snapshot `project_memory.golden` beside this file holds every
block; the assertions below say what a reviewer checks in it. Regenerate with
`LCM_UPDATE_GOLDEN=1 pytest tests/core/golden/test_golden_project.py` and review.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from lcm_core.assembly.assemble import AssemblyResult
from lcm_core.assembly.step import StepMessage
from lcm_core.capture.project import record_project
from lcm_core.config import Config, load_config
from lcm_core.extraction.run import run_extraction
from lcm_core.steps.prestep import StepRequest, pre_step
from lcm_core.store.memory import InMemoryStore
from lcm_core.store.models import Event
from lcm_core.store.ports import MemoryStore

HERE = Path(__file__).parent
UPDATE = os.environ.get("LCM_UPDATE_GOLDEN") == "1"
# Folders that do not exist: no `.git` is found above them, so the folder is the project.
APP = "/nonexistent-lcm-golden/work/app"
APP2 = "/nonexistent-lcm-golden/work/app2"  # shares only a prefix with APP
PROJECT = load_config({"memory": {"scope": "project"}, "assembly": {"language": "en"}})
SESSION = load_config({"assembly": {"language": "en"}})
ASK = "Before we deploy: which region may we deploy to, and what batch size do we use? 预算多少？"


def _open(backend: str) -> MemoryStore:
    if backend == "reference":
        return InMemoryStore()
    sqlite = pytest.importorskip("lcm_store_sqlite")
    store: MemoryStore = sqlite.SQLiteMemoryStore(":memory:")
    return store


def _say(store: MemoryStore, session_id: str, seq: int, text: str, day: str) -> None:
    """A user message captured on `day`, then extraction as the runtime runs it."""
    store.insert_event(
        Event(
            session_id=session_id,
            seq=seq,
            type="user/message",
            text=text,
            role="user",
            source_kind="user",
            time=f"{day}T09:00:00Z",
        )
    )
    run_extraction(store, session_id, SESSION)


def _block(store: MemoryStore, session_id: str, config: Config) -> AssemblyResult:
    return pre_step(
        store, StepRequest(session_id, [StepMessage("user", ASK, "user")]), config
    ).result


def _scenario(store: MemoryStore) -> list[tuple[str, AssemblyResult]]:
    for session_id, cwd in (("A", APP), ("B", APP), ("C", APP2), ("D", f"{APP}/")):
        record_project(store, session_id, cwd, clock=lambda: "2026-11-01T00:00:00.000+00:00")
    _say(
        store,
        "A",
        1,
        "Rule: deploy only to the Shanghai region, never to any other region.",
        "2026-11-20",
    )
    _say(store, "A", 2, "The batch size is 500.", "2026-11-20")
    _say(store, "A", 3, "项目预算不超过3000元（含税）。", "2026-11-20")
    _say(store, "B", 1, "Let's write the deploy script today.", "2026-11-27")
    _say(store, "C", 1, "Let's write the deploy script for the other app.", "2026-11-27")
    steps = [
        (
            "session B, project scope: A's constraints, labelled with A and its date",
            _block(store, "B", PROJECT),
        ),
        ("session B, scope = session: nothing of A", _block(store, "B", SESSION)),
        ("session C (/work/app2, a prefix of A's path): nothing of A", _block(store, "C", PROJECT)),
    ]
    _say(store, "B", 2, "Correction: the batch size is 1000.", "2026-11-28")
    steps += [
        ("session B after its correction: 1000, not A's 500", _block(store, "B", PROJECT)),
        (
            "session A, project scope: B's correction replaces A's 500 there too",
            _block(store, "A", PROJECT),
        ),
        (
            "session D (the same folder with a trailing slash) is the same project",
            _block(store, "D", PROJECT),
        ),
    ]
    return steps


def _render(steps: list[tuple[str, AssemblyResult]]) -> str:
    parts: list[str] = []
    for title, result in steps:
        parts += [f"===== {title} =====", result.text or "(nothing injected)"]
    return "\n".join(parts) + "\n"


@pytest.mark.parametrize("backend", ["reference", "sqlite"])
def test_project_memory_golden(backend: str) -> None:
    """The blocks match the reviewed snapshot byte for byte, on both stores, twice."""
    store = _open(backend)
    steps = _scenario(store)
    actual = _render(steps)
    path = HERE / "project_memory.golden"
    if UPDATE:
        path.write_text(actual, encoding="utf-8")
    assert path.exists(), f"missing {path.name}; run with LCM_UPDATE_GOLDEN=1 and review it"
    assert actual == path.read_text(encoding="utf-8")
    store.close()
    again = _open(backend)
    assert _render(_scenario(again)) == actual
    again.close()

    b_project, b_session, c_other, b_corrected, a_after, d_same = (r.text for _, r in steps)
    # A's rules are B's too, each with the day it was said in A.
    assert "rule region: “Rule: deploy only to the Shanghai region" in b_project
    assert "“项目预算不超过3000元（含税）” · seq:3 · 2026-11-20" in b_project
    for text in (b_session, c_other):
        assert "Shanghai" not in text and "batch size is 500" not in text
        assert "from session A" not in text and "3000元" not in text
    for text in (b_corrected, a_after):
        assert "rule batch-size: “the batch size is 1000”" in text
        # A's 500 is shown only as the old value B's correction replaced.
        old = [line for line in text.splitlines() if "batch size is 500" in line]
        assert old and all(line.startswith("- old value, replaced by") for line in old)
    assert "“the batch size is 1000” · seq:2 · 2026-11-28 · from session B" in a_after
    assert "Shanghai region" in d_same
