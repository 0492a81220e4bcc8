"""Plain facts with a subject, supersession by subject, chatter left out, identifiers unflagged."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from typing import Any

import pytest

from lcm_core.assembly.render import number_warning
from lcm_core.config import load_config
from lcm_core.extraction.durability import is_durable
from lcm_core.extraction.run import extract_text, run_extraction
from lcm_core.extraction.subject import subject_fact
from lcm_core.store.models import Event, MemoryItem
from lcm_core.testing.builders import make_item
from lcm_core.text.numbers import parse_quantities
from lcm_core.text.numbers_role import flagged_numbers
from lcm_core.text.tokens import normalize_text
from lcm_store_sqlite import SQLiteMemoryStore

SESSION = "s-subjects"
CONFIG = load_config()


@pytest.fixture
def store() -> Iterator[SQLiteMemoryStore]:
    opened = SQLiteMemoryStore(":memory:")
    yield opened
    opened.close()


def say(store: Any, *texts: str, role: str = "user") -> None:
    """Append messages after the session's last seq and run extraction."""
    last = store.max_event_seq(SESSION)
    start = 0 if last is None else last + 1
    source = "user" if role == "user" else "model"
    store.insert_events(
        Event(
            SESSION, start + i, f"{role}/message", normalize_text(t), role=role, source_kind=source
        )
        for i, t in enumerate(texts)
    )
    report = run_extraction(store, SESSION, CONFIG)
    assert not report.errors, report.errors


def live(store: Any) -> list[MemoryItem]:
    return [i for i in store.list_items(SESSION) if i.status == "active"]


def only(store: Any, fragment: str, status: str = "active") -> MemoryItem:
    found = [i for i in store.list_items(SESSION) if fragment in i.content and i.status == status]
    assert len(found) == 1, [(i.content, i.status) for i in store.list_items(SESSION)]
    return found[0]


@pytest.mark.parametrize(
    ("text", "subject", "value"),
    [
        ("The staging database listens on port 6432.", "staging database", "port 6432"),
        ("Prod runs on three c6i.xlarge nodes in eu-west-1.", "Prod", "three c6i.xlarge"),
        ("Maria owns the payments module.", "payments module", "Maria"),
        ("预发环境的数据库在 10.0.3.7 上，端口 6432。", "预发环境的数据库", "10.0.3.7"),
        ("支付模块由张伟负责。", "支付模块", "张伟"),
        ("报表服务用 Java 17。", "报表服务", "Java 17"),
        ("staging 的 DB 在 port 6432 上。", "staging 的 DB", "port 6432"),
    ],
)
def test_plain_statements_become_facts_with_their_subject(
    text: str, subject: str, value: str
) -> None:
    """A subject bound to a value is a fact without any cue word, in EN, ZH and mixed."""
    (candidate,) = extract_text(text).candidates
    assert candidate.kind == "fact" and candidate.scope["subject"] == subject
    stated = subject_fact(candidate.content)
    assert stated is not None and value in stated.value


@pytest.mark.parametrize(
    "text",
    [
        "Let's look at file src/module_7.py next, it handles case 7.",
        "ok let's look at src/db/pool.py next",
        "run the tests again",
        "next: src/db/migrate.py",
        "hmm that took forever",
        "ok",
        "继续",
        "看一下 src/api/user.py",
        "好的，下一个",
        "ok 看一下 pool.py",
        "run 一下 tests",
        "这个报错是啥",
        "还是不行，再查查",
    ],
)
def test_navigation_and_procedure_chatter_yields_nothing(text: str) -> None:
    """Steering the session is not memory, in English, Chinese and mixed."""
    assert extract_text(text).candidates == ()


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        ("Let's run the dev server on port 3000.", "decision"),
        ("We use Postgres 16 for every new service.", "decision"),
        ("Deploy only on Tuesdays and Thursdays.", "decision"),
        ("以后都用 pnpm。", "decision"),
        ("只在周二和周四发版。", "decision"),
        ("Retry failed webhooks up to 5 times.", "constraint"),
        ("Open question: do we keep the v1 endpoints?", "open_question"),
    ],
)
def test_choices_and_rules_that_look_like_steering_are_kept(text: str, kind: str) -> None:
    """A setting, a lasting choice or a rule is memory even when it starts like chatter."""
    assert [c.kind for c in extract_text(text).candidates] == [kind]


def test_a_new_value_for_the_same_subject_supersedes(store: SQLiteMemoryStore) -> None:
    """The issue's session: fact, forty navigation turns, the correction."""
    say(store, "The staging database listens on port 6432.")
    say(
        store,
        *(f"Let's look at file src/module_{n}.py next, it handles case {n}." for n in range(40)),
    )
    say(store, "Correction: the staging database listens on port 5433, not 6432.")
    old = only(store, "6432", "superseded")
    new = only(store, "5433")
    assert old.superseded_by == new.id and new.supersedes == (old.id,)
    assert new.kind == "fact" and old.kind == "fact"
    assert [i for i in live(store) if is_durable(i)] == [new]
    rows = store.list_memory_events(session_id=SESSION)
    assert any(r.memory_id == old.id and r.event == "superseded" for r in rows)
    assert number_warning(new) is None  # a port is an identifier


def test_restatement_without_a_cue_supersedes_by_subject(store: SQLiteMemoryStore) -> None:
    """'X now listens on Y' replaces X's earlier value; other subjects stay."""
    say(
        store,
        "The staging database listens on port 6432.",
        "The prod database listens on port 5432.",
        "The staging database now listens on 6433.",
    )
    assert only(store, "6432", "superseded").superseded_by == only(store, "6433").id
    assert only(store, "5432").status == "active"


def test_never_across_subjects_in_chinese(store: SQLiteMemoryStore) -> None:
    """测试环境 and 生产环境 are different subjects; only the named one is replaced."""
    say(store, "测试环境的数据库在 db-test-01。", "生产环境的数据库在 db-prod-01。")
    say(store, "更正：测试环境的数据库在 db-test-02。")
    assert only(store, "db-test-01", "superseded").superseded_by == only(store, "db-test-02").id
    assert only(store, "db-prod-01").status == "active"


def test_bare_value_takes_the_subject_of_the_turn_it_answers(store: SQLiteMemoryStore) -> None:
    """'no, 8081' then 'ugh, sorry, 8082': a correction, then a correction of it."""
    say(store, "The auth service listens on 8443.", "The staging web server runs on port 8080.")
    say(store, "no, 8081")
    say(store, "ugh, sorry, 8082")
    head = only(store, "8082")
    assert head.content == "The staging web server runs on port 8082"
    middle = only(store, "8081", "superseded")
    assert middle.superseded_by == head.id
    assert only(store, "8080", "superseded").superseded_by == middle.id
    assert only(store, "8443").status == "active"


def test_chinese_correction_of_a_correction(store: SQLiteMemoryStore) -> None:
    """预发网关端口 9000 → 9001 → 9002, each replacing the one before."""
    say(store, "预发的网关端口是 9000。", "不对，是 9001", "又说错了，是 9002")
    assert only(store, "9002").kind == "fact"
    assert {i.status for i in store.list_items(SESSION) if "900" in i.content} == {
        "active",
        "superseded",
    }
    assert len(live(store)) == 1


def test_a_bare_value_never_rewrites_a_measurement(store: SQLiteMemoryStore) -> None:
    """'说错了，k8s 是 1.30' must not turn the pod memory limit into 1.30 GB."""
    say(store, "k8s 集群是 1.29 版本。", "每个 pod 的内存上限是 2 GB。", "说错了，k8s 是 1.30。")
    assert only(store, "2 GB").status == "active"
    assert only(store, "1.29", "superseded").superseded_by == only(store, "1.30").id


@pytest.mark.parametrize(
    "text",
    [
        "The auth service listens on 8443.",
        "服务跑在 8080 端口。",
        "dev 的 MinIO 在 localhost:9000。",
        "Issue 15 tracks the import bug.",
        "Ticket 4821 is the one about the broken export.",
        "Build 5512 was the last green one.",
        "The 2024 roadmap doc has the migration plan.",
        "2025 年度预算表在共享盘里。",
        "这个问题是工单 7731 提的。",
        "We use dbt-core 1.8, not dbt Cloud.",
        "k8s 集群是 1.29 版本。",
    ],
)
def test_identifiers_are_never_flagged(text: str) -> None:
    """Ports, ids, case and build numbers, versions and years in names need no condition."""
    for candidate in extract_text(text).candidates:
        item = make_item(
            "s", candidate.content, numbers=tuple(q.to_dict() for q in candidate.quantities)
        )
        assert number_warning(item) is None, candidate.quantities


@pytest.mark.parametrize(
    "text", ["The build takes 7 minutes.", "磁盘使用率已经到 85%。", "Coverage on main is 81%."]
)
def test_measurements_without_conditions_are_flagged(text: str) -> None:
    """A duration, a share or a size with no condition still carries the warning."""
    (candidate,) = extract_text(text).candidates
    item = make_item(
        "s", candidate.content, numbers=tuple(q.to_dict() for q in candidate.quantities)
    )
    assert flagged_numbers(item) and number_warning(item) is not None


def test_identifier_words_keep_measurements_nearby() -> None:
    """'case 7' is no quantity, but '7 minutes' in the same sentence still is."""
    found = parse_quantities("case 7 takes 7 minutes on CI")
    assert [(q.value, q.unit) for q in found] == [(7, "min")]


def test_is_durable_is_the_one_predicate() -> None:
    """Active user kinds are durable; proposals, replaced items and transient ones are not."""
    fact = make_item("s", "The staging database listens on port 5433")
    assert is_durable(fact)
    assert not is_durable(replace(fact, status="superseded"))
    assert not is_durable(replace(fact, kind="proposal"))
    assert not is_durable(replace(fact, scope={"transient": True}))
