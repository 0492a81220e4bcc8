"""Diagnostics: status, explain and inspect read stored state only, in a fixed order."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from lcm_core.config import Config, load_config
from lcm_core.reports.diagnostics import compatibility_report, explain, inspect, status
from lcm_core.skills.select import ingest_skills, set_rule_override
from lcm_core.store.memory import InMemoryStore
from lcm_core.store.models import AssemblyLog, Event, MemoryItem
from lcm_core.text.tokens import sha256_hex, stable_item_id
from lcm_core.validation.validate import run_validation

SESSION = "s-diag"
FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "skills"


@pytest.fixture
def store() -> Iterator[InMemoryStore]:
    handle = InMemoryStore()
    yield handle
    handle.close()


def config(**overrides: Any) -> Config:
    base = {
        "skills": {"include": ["**/SKILL.md"], "exclude": ["drafts/**"]},
        "validation": {
            "checks": [
                {"id": "no-simply", "type": "forbidden_terms", "terms": ["simply"], "block": True}
            ]
        },
    }
    return load_config({**base, **overrides})


def add_events(store: InMemoryStore, *events: tuple[int, str, str]) -> None:
    for seq, kind, text in events:
        store.insert_event(Event(session_id=SESSION, seq=seq, type=kind, text=text))


def add_item(store: InMemoryStore, content: str, seq: int) -> MemoryItem:
    item = MemoryItem(
        id=stable_item_id(SESSION, "constraint", content),
        session_id=SESSION,
        kind="constraint",
        content=content,
        content_hash=sha256_hex(content),
        source_refs=(f"seq:{seq}",),
        derived_from_seq=seq,
    )
    return store.insert_item(item)[0]


@pytest.fixture
def populated(store: InMemoryStore) -> InMemoryStore:
    cfg = config()
    ingest_skills(store, cfg, FIXTURES)
    add_events(
        store,
        (0, "user/message", "预算不超过 3000 元（含税）。"),
        (1, "assistant/message", "Simply put, the budget is 3000."),
    )
    add_item(store, "预算不超过 3000 元（含税）", 0)
    run_validation(store, SESSION, cfg)
    store.add_assembly_log(
        AssemblyLog(
            SESSION,
            "pre-step",
            3000,
            120,
            injected=True,
            turn=2,
            step=1,
            sections=({"name": "memory", "entries": 1, "refs": ["mem_x"]},),
            item_ids=("mem_x",),
            omitted=(
                {
                    "section": "evidence",
                    "ref": "seq:1",
                    "reason": "event type is not inline-quotable",
                },
            ),
        ),
        retention=10,
    )
    return store


def test_status_reports_counts_cursors_budget_logs_skills_and_malformed_files(
    populated: InMemoryStore,
) -> None:
    """Every part of status comes from stored rows, including the malformed skill file."""
    report = status(populated, SESSION, config())
    assert report.counts["events"] == 2 and report.counts["memory_items"] == 1
    assert list(report.counts) == [
        "sessions", "events", "memory_items", "memory_events", "task_state", "checkpoints",
        "skill_versions", "rules", "assembly_logs", "validation_logs",
    ]  # fmt: skip
    assert report.items_by_status == {
        "active": 1,
        "superseded": 0,
        "disputed": 0,
        "retracted": 0,
        "forgotten": 0,
    }
    assert report.budget_tokens == 3000
    assert report.latest_assembly is not None and report.latest_assembly.used_tokens == 120
    assert [(m.path, m.line) for m in report.skills.malformed] == [
        ("broken-frontmatter/SKILL.md", 3)
    ]
    assert (report.skills.skills, report.skills.enabled, report.skills.rules_active) == (6, 6, 440)
    assert list(report.skills.by_category) == [
        "workflow",
        "constraint",
        "style",
        "safety",
        "current_state",
        "reference",
    ]
    validation = report.validation
    assert (validation.cursor, validation.repair_attempts, validation.pending_repair) == (
        1,
        1,
        True,
    )
    assert (
        validation.latest is not None
        and validation.latest.blocked
        and validation.latest.event_seq == 1
    )


def test_status_is_json_ready_and_deterministic(populated: InMemoryStore) -> None:
    """Two status calls on the same state give the same JSON text."""
    first = json.dumps(
        status(populated, SESSION, config()).to_dict(), ensure_ascii=False, sort_keys=True
    )
    second = json.dumps(
        status(populated, SESSION, config()).to_dict(), ensure_ascii=False, sort_keys=True
    )
    assert first == second
    assert json.loads(first)["skills"]["malformed"][0]["reason"].startswith("unterminated")


def test_explain_reads_the_latest_logs_without_rerunning(populated: InMemoryStore) -> None:
    """Explain returns the stored assembly and validation rows and the pending reminder; no row is added."""
    before = (
        len(populated.list_assembly_logs(SESSION)),
        len(populated.list_validation_logs(SESSION)),
    )
    report = explain(populated, SESSION, config())
    assert (
        report.assembly is not None
        and report.assembly.omitted[0]["reason"] == "event type is not inline-quotable"
    )
    assert report.validation is not None and report.validation.violations[0]["term"] == "simply"
    assert report.pending_repair is not None and "seq 1" in report.pending_repair
    assert (
        len(populated.list_assembly_logs(SESSION)),
        len(populated.list_validation_logs(SESSION)),
    ) == before
    assert explain(populated, "other-session").to_dict() == {
        "session_id": "other-session",
        "assembly": None,
        "validation": None,
        "pending_repair": None,
    }


def test_inspect_item_rule_skill_and_missing(populated: InMemoryStore) -> None:
    """An item shows its source event and lifecycle; a rule its override; a skill its versions."""
    item = populated.list_items(SESSION)[0]
    found = inspect(populated, item.id)
    assert found.kind == "item" and found.item is not None
    assert [s.text for s in found.item.sources] == ["预算不超过 3000 元（含税）。"]
    assert [row.event for row in found.item.lifecycle] == ["created"]

    rule = next(r for r in populated.list_rules() if r.text.startswith("Round percentages"))
    set_rule_override(populated, rule.id, category="style")
    shown = inspect(populated, rule.id)
    assert shown.kind == "rule" and shown.rule is not None and shown.effective is not None
    assert (shown.rule.category, shown.effective.category) == ("constraint", "style")
    assert shown.skill is not None and shown.skill.name == "data-report"

    skill = inspect(populated, "git-workflow")
    assert skill.kind == "skill" and [v.version for v in skill.versions] == [1]
    assert "content" not in skill.to_dict()["versions"][0]
    assert inspect(populated, "nope").kind == "missing"


# --- compatibility ---------------------------------------------------------------------------


def compaction(store: InMemoryStore, plugin_form: str | None) -> None:
    store.insert_event(Event(SESSION, 10, "compaction/start"))
    store.insert_event(
        Event(
            SESSION, 11, "compaction/summary", text="summary", source_kind="compaction-checkpoint"
        )
    )
    if plugin_form is not None:
        store.insert_event(
            Event(
                SESSION,
                12,
                "user/message",
                text="<summary>",
                source_kind="plugin",
                source_form=plugin_form,
            )
        )
    store.insert_event(Event(SESSION, 13, "compaction/end"))


@pytest.mark.parametrize(
    ("plugin_form", "detected", "effective"),
    [
        ("compact", "compaction-basic", "compaction-basic"),
        ("billion-context/summary", "billion-context", "billion-context"),
        ("someone-else", "unknown-compactor", "compaction-basic"),
    ],
)
def test_compaction_policy_is_detected_from_the_event_stream(
    store: InMemoryStore, plugin_form: str, detected: str, effective: str
) -> None:
    """The replacing message's plugin names the compactor; auto follows it, or assumes the basic model."""
    compaction(store, plugin_form)
    report = compatibility_report(store, SESSION, config())
    assert (report.detected_policy, report.effective_policy) == (detected, effective)
    assert report.compaction_events == {
        "compaction/end": 1,
        "compaction/start": 1,
        "compaction/summary": 1,
    }
    assert report.last_compaction_seq == 13
    assert any("summary fields" in line for line in report.unobservable)


def test_no_compaction_and_configured_mismatch_are_reported(store: InMemoryStore) -> None:
    """Without compaction events the compactor is unobservable; a configured policy that disagrees is noted."""
    quiet = compatibility_report(store, SESSION, config())
    assert quiet.detected_policy == "none-observed" and quiet.effective_policy == "compaction-basic"
    assert any("no compaction has happened" in line for line in quiet.unobservable)
    compaction(store, "compact")
    mismatch = compatibility_report(
        store,
        SESSION,
        config(
            compatibility={"compactionPolicy": "billion-context", "reinjectAfterCompaction": False}
        ),
    )
    assert mismatch.effective_policy == "billion-context"
    assert mismatch.notes == (
        "configured billion-context, but the event stream looks like compaction-basic",
        "reinjectAfterCompaction is off: memory does not re-arm after a compaction",
    )
