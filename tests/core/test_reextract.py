"""Re-extraction: items re-derived from stored events, ids kept, user overrides kept."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from lcm_core.config import load_config
from lcm_core.extraction import lifecycle
from lcm_core.extraction.apply import EXTRACTOR
from lcm_core.extraction.reextract import ACTOR, mark_current, needs_reextract, reextract_session
from lcm_core.store.models import Event, Session
from lcm_core.testing.builders import make_item
from lcm_store_sqlite import SQLiteMemoryStore

SESSION = "s-re"
OLD = "lcm-rules@1"
TEXTS = (
    "Never push to main on Fridays.",
    "The staging database listens on port 6432.",
    "Let's look at file src/module_1.py next, it handles case 1.",
    "Let's look at file src/module_2.py next, it handles case 2.",
    "测试环境的数据库在 db-test-01。",
    "Correction: the staging database listens on port 5433, not 6432.",
)


@pytest.fixture
def store() -> Iterator[SQLiteMemoryStore]:
    """A session whose items were made by the old rules: navigation decisions, no facts."""
    opened = SQLiteMemoryStore(":memory:")
    opened.upsert_session(Session(SESSION))
    opened.insert_events(
        Event(SESSION, seq, "user/message", text, role="user", source_kind="user")
        for seq, text in enumerate(TEXTS)
    )
    old_items = [
        ("constraint", "Never push to main on Fridays", 0),
        ("decision", "Let's look at file src/module_1.py next, it handles case 1", 2),
        ("decision", "Let's look at file src/module_2.py next, it handles case 2", 3),
        ("decision", "the staging database listens on port 5433, not 6432", 5),
    ]
    for kind, content, seq in old_items:
        opened.insert_item(
            make_item(SESSION, content, kind=kind, extractor=OLD, derived_from_seq=seq)
        )
    yield opened
    opened.close()


def reextract(store: SQLiteMemoryStore) -> object:
    scratch = SQLiteMemoryStore(":memory:")
    try:
        return reextract_session(store, scratch, SESSION, load_config())
    finally:
        scratch.close()


def by_content(store: SQLiteMemoryStore) -> dict[str, tuple[str, str, str]]:
    return {i.content: (i.id, i.kind, i.status) for i in store.list_items(SESSION)}


def test_reextract_rederives_keeps_ids_and_records_changes(store: SQLiteMemoryStore) -> None:
    """Old navigation decisions retire, the fact and its correction appear, ids are kept."""
    before = by_content(store)
    assert needs_reextract(store)
    report = reextract(store)
    after = by_content(store)
    rule = "Never push to main on Fridays"
    assert after[rule] == before[rule]  # same content: same id, untouched
    for n in (1, 2):
        nav = f"Let's look at file src/module_{n}.py next, it handles case {n}"
        assert after[nav][0] == before[nav][0] and after[nav][2] == "retracted"
    assert after["The staging database listens on port 6432"][1:] == ("fact", "superseded")
    assert after["the staging database listens on port 5433, not 6432"][1:] == ("fact", "active")
    assert after["测试环境的数据库在 db-test-01"][1:] == ("fact", "active")
    assert report.before == {"constraint/active": 1, "decision/active": 3}  # type: ignore[attr-defined]
    assert report.after["fact/active"] == 2  # type: ignore[attr-defined]
    rows = [r for r in store.list_memory_events(session_id=SESSION) if r.actor == ACTOR]
    assert {r.event for r in rows} >= {"retracted", "superseded"}
    assert all(r.detail.get("extractor") == EXTRACTOR for r in rows if r.event == "retracted")


def test_reextract_twice_changes_nothing(store: SQLiteMemoryStore) -> None:
    """A second run finds everything derived already."""
    reextract(store)
    first = by_content(store)
    report = reextract(store)
    assert by_content(store) == first
    assert (report.added, report.retired, report.superseded, report.revived) == (0, 0, 0, 0)  # type: ignore[attr-defined]


def test_user_overrides_are_kept(store: SQLiteMemoryStore) -> None:
    """An item the user retracted stays retracted; one the user re-activated is not retired."""
    items = {i.content: i for i in store.list_items(SESSION)}
    nav = items["Let's look at file src/module_1.py next, it handles case 1"]
    rule = items["Never push to main on Fridays"]
    lifecycle.retract(store, rule.id, actor="user")
    lifecycle.retract(store, nav.id, actor="user")
    lifecycle.reactivate(store, nav.id, actor="user")
    report = reextract(store)
    after = {i.id: i.status for i in store.list_items(SESSION)}
    assert after[rule.id] == "retracted" and after[nav.id] == "active"
    assert report.overrides_kept == 2  # type: ignore[attr-defined]


def test_a_current_store_needs_nothing(store: SQLiteMemoryStore) -> None:
    """Once marked current, the version check is one meta read."""
    mark_current(store)
    assert not needs_reextract(store)


def test_chat_rules_of_the_old_rules_retire() -> None:
    """A store the rules before idioms.py derived: chatter 'constraints' retire, a description
    becomes a fact, and a real rule keeps its id."""
    texts = (
        "Mia: I don't know much about hiking gear",
        "他总是忘记带钥匙",
        "Never leave the trail after dark",
    )
    opened = SQLiteMemoryStore(":memory:")
    try:
        opened.upsert_session(Session(SESSION))
        opened.insert_events(
            Event(SESSION, seq, "user/message", text, role="user", source_kind="user")
            for seq, text in enumerate(texts)
        )
        for seq, text in enumerate(texts):
            opened.insert_item(
                make_item(
                    SESSION, text, kind="constraint", extractor="lcm-rules@2", derived_from_seq=seq
                )
            )
        before = by_content(opened)
        assert needs_reextract(opened)
        reextract(opened)
        after = by_content(opened)
        assert after[texts[0]][2] == "retracted"
        assert after[texts[1]][1:] == ("fact", "active")
        assert after[texts[2]] == before[texts[2]]
    finally:
        opened.close()
