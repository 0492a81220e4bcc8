"""Resident memory after a compaction, the resident share, and blocks that say nothing new."""

from __future__ import annotations

from typing import Any

import pytest

from lcm_core.assembly.assemble import assemble
from lcm_core.assembly.packing import Candidate, Reserve, pack
from lcm_core.assembly.recall import asks_about_past
from lcm_core.assembly.resident import resident_items
from lcm_core.assembly.step import StepMessage
from lcm_core.config import load_config
from lcm_core.extraction.durability import is_durable
from lcm_core.retrieval.evidence import gather_evidence
from lcm_core.retrieval.shown import OWN_SOURCE_KIND, ShownItems, logged_shown
from lcm_core.steps.prestep import StepRequest, pre_step
from lcm_core.store.models import TaskState
from lcm_core.testing.builders import make_item
from lcm_core.text.block_words import EN, ZH
from lcm_core.text.query import query_signals
from lcm_core.text.tokens import estimate_tokens

S = "sess"
NAVIGATION = "Let's look at file src/module_17.py next"


def say(text: str) -> list[StepMessage]:
    return [StepMessage("user", text, "user")]


def compact(script: Any, first_seq: int) -> None:
    script.event(first_seq, "compaction/start", "")
    script.event(first_seq + 1, "compaction/summary", "之前是闲聊。")
    script.event(first_seq + 2, "compaction/end", "")


def budget_and_port(script: Any) -> tuple[Any, Any]:
    script.user(1, "预算不超过3000元（含税）", turn=1)
    script.user(2, "Decision: the staging database port is 6432.", turn=2)
    script.user(3, "Actually, the staging database port is 5433, not 6432.", turn=3)
    budget = script.item("预算不超过3000元（含税）", [1], kind="constraint", conditions=("含税",))
    old = script.item("Decision: the staging database port is 6432", [2], kind="decision")
    new = script.correct(old, "the staging database port is 5433, not 6432", 3)
    return budget, new


@pytest.mark.parametrize(
    ("fields", "durable"),
    [
        ({"kind": "constraint"}, True),
        ({"kind": "decision"}, True),
        ({"kind": "fact"}, True),
        ({"kind": "proposal"}, False),
        ({"kind": "open_question"}, False),
        ({"kind": "fact", "evidence_type": "assistant_proposal"}, False),
        ({"kind": "fact", "evidence_type": "inferred"}, False),
        ({"kind": "fact", "status": "superseded"}, False),
        ({"kind": "fact", "status": "disputed"}, False),
        ({"kind": "fact", "superseded_by": "mem_x"}, False),
    ],
)
def test_is_durable(fields: dict[str, Any], durable: bool) -> None:
    """Only the user's current constraints, decisions, facts and preferences are durable."""
    assert is_durable(make_item(S, "某个条目 an item", **fields)) is durable


def test_resident_order_kind_then_numbers_then_recency(script: Any) -> None:
    """Constraints first; among equals, one with numbers or conditions, then the newest."""
    for seq in range(1, 6):
        script.user(seq, f"message {seq}")
    fact = script.item("the office is in Porto", [5], kind="fact")
    bare = script.item("never deploy on Fridays", [4], kind="constraint")
    counted = script.item("预算不超过3000元", [1], kind="constraint", conditions=("含税",))
    decision = script.item("we use Postgres", [3], kind="decision")
    newer_bare = script.item("always write tests first", [2], kind="constraint")
    order = [i.id for i in resident_items(script.store, S, compacted_before=10)]
    assert order == [counted.id, bare.id, newer_bare.id, decision.id, fact.id]
    assert resident_items(script.store, S, compacted_before=None) == []
    # Items said after the compaction started are still in the host's history.
    assert [i.id for i in resident_items(script.store, S, compacted_before=3)] == [
        counted.id,
        newer_bare.id,
    ]


def test_after_a_compaction_a_navigation_step_gets_the_resident_set_first(script: Any) -> None:
    """The step's words find nothing; the budget and the corrected port still come first."""
    budget, port = budget_and_port(script)
    script.store.put_task_state(TaskState(S, goal="发票服务上线"))
    compact(script, 10)
    result = assemble(script.store, S, say(NAVIGATION))
    assert [s["name"] for s in result.sections][:2] == ["task", "resident"]
    assert result.sections[1]["refs"] == [budget.id, port.id]
    current, _, notice = result.text.partition("## 提示")
    assert "预算不超过3000元（含税）" in current and "5433" in current
    assert "port is 6432" not in current and "port is 6432" in notice and "旧值" in notice


def test_without_a_compaction_there_is_no_resident_section(script: Any) -> None:
    budget_and_port(script)
    result = assemble(script.store, S, say(NAVIGATION))
    assert not result.injected
    assert {"kind": "skipped", "why": "nothing relevant to inject"} in result.reasons


def test_reinject_off_means_no_resident_set(script: Any) -> None:
    budget_and_port(script)
    compact(script, 10)
    config = load_config({"compatibility": {"reinjectAfterCompaction": False}})
    assert not assemble(script.store, S, say(NAVIGATION), config).injected


def test_the_resident_set_stops_once_shown_and_returns_after_the_next_compaction(
    script: Any,
) -> None:
    """Shown again means listed by our block committed after the latest compaction."""
    budget, _ = budget_and_port(script)
    compact(script, 10)
    seen = ShownItems()
    first = pre_step(
        script.store, StepRequest(S, say(NAVIGATION), shown=seen.read(script.store, S))
    ).result
    assert budget.id in first.item_ids
    script.event(13, "user/message", first.text, source_kind=OWN_SOURCE_KIND, role="user")
    second = pre_step(
        script.store, StepRequest(S, say(NAVIGATION), shown=seen.read(script.store, S))
    ).result
    assert not second.injected
    compact(script, 14)
    third = pre_step(
        script.store, StepRequest(S, say(NAVIGATION), shown=seen.read(script.store, S))
    ).result
    assert budget.id in third.item_ids


def test_the_assembly_logs_say_what_was_injected_since_the_compaction(script: Any) -> None:
    """For hooks: items of injected blocks logged after the latest compaction count as shown."""
    budget, port = budget_and_port(script)
    compact(script, 10)
    first = pre_step(script.store, StepRequest(S, say(NAVIGATION))).result
    assert logged_shown(script.store, S).items == frozenset(first.item_ids) >= {budget.id, port.id}
    compact(script, 20)
    assert logged_shown(script.store, S).items == frozenset()


def test_the_resident_share_caps_the_resident_set_not_the_question() -> None:
    """Resident entries stop at the share; later sections keep the rest of the budget."""
    resident = [Candidate("resident", f"mem_{i}", f"- 常驻条目 {i} " + "字" * 40) for i in range(6)]
    asked = Candidate("memory", "mem_q", "- the answer to the question")
    budget = 300
    _text, used, sections, kept, omitted = pack(
        [*resident, asked], budget, estimate_tokens, [Reserve(("task", "resident"), 150)]
    )
    resident_tokens = sum(s["tokens"] for s in sections if s["name"] == "resident")
    assert 0 < resident_tokens <= 150 and used <= budget
    assert asked in kept
    assert any("resident share 150" in o.reason for o in omitted if o.section == "resident")


@pytest.mark.parametrize(
    ("text", "past"),
    [
        ("What did we decide about the budget?", True),
        ("What was the name of the vet we picked?", True),
        ("Remind me of the staging port", True),
        ("我们之前定的酒店预算是多少？", True),
        ("上次说的端口是哪个？", True),
        ("提醒我一下部署窗口", True),
        (NAVIGATION, False),
        ("第 12 轮闲聊，一些无关的填充文字。", False),
        ("好的，继续整理这份表格的格式", False),
        ("Please fix the failing test in tests/test_api.py", False),
        ("", False),
    ],
)
def test_asks_about_past(text: str, past: bool) -> None:
    assert asks_about_past(text) is past


def test_insufficient_evidence_only_for_a_question_about_the_past(script: Any) -> None:
    script.user(1, "we drove to Porto last weekend", turn=1)
    script.item("drove to Porto last weekend", [1])
    working = assemble(script.store, S, say("ok, format the table with two columns"), turn=2)
    assert not working.injected
    asked = assemble(script.store, S, say("What was the name of the vet we picked?"), turn=2)
    assert EN.insufficient in asked.text  # an English session: the English statement


def test_a_superseded_source_is_not_quoted_even_when_an_active_item_cites_it(
    script: Any,
) -> None:
    """One turn made two items; one was corrected: that turn is no longer quoted at all."""
    script.user(1, "The staging port is 6432 and the cache TTL is 60 seconds", turn=1)
    script.user(2, "Actually, the staging port is 5433, not 6432.", turn=2)
    old = script.item("the staging port is 6432", [1], kind="decision")
    ttl = script.item("the cache TTL is 60 seconds", [1], kind="decision")
    script.correct(old, "the staging port is 5433, not 6432", 2)
    result = assemble(script.store, S, say("what is the cache TTL we set?"), turn=3)
    assert ttl.id in result.item_ids and "seq:1" not in result.evidence_refs
    reasons = {o.ref: o.reason for o in result.omitted}
    assert reasons["seq:1"].startswith("source of superseded item")


def test_raw_turns_still_in_the_hosts_history_are_not_quoted(script: Any) -> None:
    """A raw turn on the host's surface is not quoted; once compacted away it is."""
    script.user(1, "the kids loved the tram ride in Lisbon", turn=1)
    question = query_signals("which tram ride did the kids love?")
    on_screen = gather_evidence(
        script.store, S, [], question, load_config(), in_history=frozenset({1})
    )
    assert on_screen.rows == ()
    assert {o.ref: o.reason for o in on_screen.omitted}["seq:1"] == (
        "still in the host's history; not quoted again"
    )
    gone = gather_evidence(script.store, S, [], question, load_config(), in_history=frozenset())
    assert [r.ref for r in gone.rows] == ["seq:1"]


def test_a_raw_turn_that_echoes_the_step_is_not_quoted(script: Any) -> None:
    """The same chatter again says nothing new; a turn with other words still counts."""
    script.user(1, "第 5 轮闲聊，一些无关的填充文字。", turn=1)
    script.user(2, "闲聊的时候提到：填充文字要用宋体", turn=2)
    question = query_signals("第 9 轮闲聊，一些无关的填充文字。")
    found = gather_evidence(script.store, S, [], question, load_config(), current_turn=3)
    assert [r.ref for r in found.rows] == ["seq:2"]
    assert {o.ref: o.reason for o in found.omitted}["seq:1"] == (
        "repeats the step's own words; says nothing new"
    )


@pytest.mark.parametrize(
    ("stored", "question"),
    [
        ("Nicolas: I'm in the hospital", "When did Nicolas end up in the hospital?"),
        ("我们决定周五部署网关", "我们什么时候决定周五部署网关的？"),
    ],
)
def test_a_statement_holding_every_word_of_a_question_answers_it(
    script: Any, stored: str, question: str
) -> None:
    """Asked when it happened, the turn that says it happened is the evidence, not an
    echo; the same question asked again still says nothing new."""
    script.user(1, stored, turn=1)
    script.user(2, question.rstrip("?？") + " again?", turn=2)
    found = gather_evidence(
        script.store, S, [], query_signals(question), load_config(), current_turn=3
    )
    assert [r.ref for r in found.rows] == ["seq:1"]
    assert {o.ref: o.reason for o in found.omitted}["seq:2"] == (
        "repeats the step's own words; says nothing new"
    )


def test_the_steps_own_correction_holds_the_old_number_back(script: Any) -> None:
    """The correction is not stored yet when the host runs pre-step: 6432 is not current."""
    script.user(1, "Decision: the staging database port is 6432.", turn=1)
    old = script.item("Decision: the staging database port is 6432", [1], kind="decision")
    step = say("Actually, the staging database port is 5433, not 6432.")
    result = assemble(script.store, S, step, turn=2)
    assert "port is 6432" not in result.text
    reasons = {o.ref: o.reason for o in result.omitted}
    assert reasons[old.id] == "holds 6432, which this step's own message replaces"
    assert reasons["seq:1"] == "holds 6432, which this step's own message replaces"
    # A step that corrects nothing still finds the decision.
    assert old.id in assemble(script.store, S, say("which staging database port?"), turn=2).item_ids


def test_a_quote_its_items_repeat_goes_only_when_they_are_in_the_block() -> None:
    """An entry `said_by` others is left out when all of them were packed, and kept when
    one of them did not fit: the words are never lost from the block."""
    item = Candidate("memory", "mem_a", "- [mem mem_a] 约束: " + "预算不超过3000元 " * 8)
    quote = Candidate("evidence", "seq:1", "- [ev seq:1]\n  > 预算不超过3000元", ("mem_a",))
    _, _, _, kept, omitted = pack([item, quote], 3000, estimate_tokens)
    assert [c.ref for c in kept] == ["mem_a"]
    assert [(o.ref, o.reason) for o in omitted] == [
        ("seq:1", "mem_a in this block says every word of it")
    ]
    header = estimate_tokens(ZH.header + "\n")
    small = header + estimate_tokens("\n" + ZH.section_titles["evidence"] + "\n") + 20
    _, _, _, kept, omitted = pack([item, quote], small, estimate_tokens)
    assert [c.ref for c in kept] == ["seq:1"] and [o.ref for o in omitted] == ["mem_a"]
