"""Forget, remember and pin in the core, over the in-memory reference store."""

from __future__ import annotations

import dataclasses
import json
from typing import Any

import pytest

from lcm_core import usecases
from lcm_core.assembly.step import StepMessage
from lcm_core.config import load_config
from lcm_core.extraction import control
from lcm_core.extraction.control import ControlError, pinned_ids
from lcm_core.extraction.reextract import reextract_session
from lcm_core.extraction.run import run_extraction
from lcm_core.steps.prestep import StepRequest, pre_step
from lcm_core.store.memory import InMemoryStore
from lcm_core.store.models import TaskState

SAID = "我们决定用 Postgres 16 作为主库"


def extract(script: Any) -> None:
    run_extraction(script.store, script.session_id, load_config({}))


def active_with(script: Any, words: str) -> list[str]:
    return [i.id for i in script.store.list_items(script.session_id) if words in i.content]


def test_saying_a_forgotten_thing_again_does_not_bring_it_back(script: Any) -> None:
    """The tombstone's id stops extraction from deriving the same content from a new message."""
    script.user(1, SAID + "。")
    extract(script)
    (item_id,) = active_with(script, "Postgres 16")
    control.forget_item(script.store, item_id, "不对")
    script.user(2, SAID + "。")
    extract(script)
    assert active_with(script, "Postgres 16") == []
    item = script.store.get_item(item_id)
    assert item is not None and item.status == "forgotten"
    assert script.store.list_pending(script.session_id) == []


def test_reextract_leaves_a_forgotten_item_forgotten(script: Any) -> None:
    """Re-derivation from the stored events neither revives nor re-adds a forgotten item."""
    script.user(1, SAID + "。")
    script.user(2, "staging 数据库的端口是 6432。")
    extract(script)
    (item_id,) = active_with(script, "Postgres 16")
    control.forget_item(script.store, item_id)
    report = reextract_session(script.store, InMemoryStore(), script.session_id, load_config({}))
    assert report.added == 0 and report.revived == 0 and report.overrides_kept >= 1
    assert active_with(script, "Postgres 16") == []
    assert active_with(script, "6432") != []


def test_forget_drops_task_state_entries_quoting_the_text(script: Any) -> None:
    """A task-state entry that quotes the erased message goes with it; others stay."""
    script.user(1, SAID + "。")
    extract(script)
    script.store.put_task_state(
        TaskState(script.session_id, goal="迁移数据库", progress=(SAID, "写好了迁移脚本"))
    )
    (item_id,) = active_with(script, "Postgres 16")
    report = control.forget_item(script.store, item_id)
    state = script.store.get_task_state(script.session_id)
    assert state is not None and state.progress == ("写好了迁移脚本",)
    assert state.goal == "迁移数据库" and report.task_entries_removed == 1


def test_forget_erases_the_step_text_an_assembly_log_recorded(script: Any) -> None:
    """A step whose own text was the forgotten message keeps no copy of it in its log
    (text and terms); the log of another step, and the rest of the row, stay as written."""
    script.user(1, "我的银行卡密码是 884412，别告诉别人")
    script.user(2, "上次的预算是 884412 日元")
    config = load_config({})
    for said in ("我的银行卡密码是 884412，别告诉别人", "预算是多少？"):
        pre_step(
            script.store,
            StepRequest(script.session_id, [StepMessage("user", said, "user")]),
            config,
        )
    kept, secret = script.store.list_assembly_logs(script.session_id)
    report = control.forget_event(script.store, script.session_id, 1)
    after_kept, after_secret = script.store.list_assembly_logs(script.session_id)
    assert report.log_entries_erased == 1 and after_kept == kept
    assert "884412" not in json.dumps(after_secret.reasons, ensure_ascii=False)
    assert after_secret.reasons[0] == {"kind": "query", "text": "", "terms": [], "erased": True}
    # The exact terms other reasons matched (884412 in seq 2) were the step's words too.
    assert any(r.get("exact") for r in secret.reasons)
    assert [r.get("exact", []) for r in after_secret.reasons if r["kind"] != "query"] == [
        [] for r in secret.reasons if r["kind"] != "query"
    ]
    assert [r["kind"] for r in after_secret.reasons] == [r["kind"] for r in secret.reasons]
    assert dataclasses.replace(after_secret, reasons=secret.reasons) == secret


def test_forget_erases_the_start_of_a_message_the_log_cut_through(script: Any) -> None:
    """A log keeps only the first characters of a step's text: when that cut runs through
    the forgotten message, its beginning at the end of the kept text goes too."""
    secret = "暗号是 Quokka-4412-zebra，别告诉任何人"
    filler = "先把发布清单过一遍，" * 19  # 190 characters: the cut runs through the message
    script.user(1, secret)
    script.user(2, filler + secret)
    said = filler + secret
    config = load_config({})
    pre_step(
        script.store, StepRequest(script.session_id, [StepMessage("user", said, "user")]), config
    )
    (logged,) = script.store.list_assembly_logs(script.session_id)
    kept = logged.reasons[0]["text"]
    assert kept == filler + secret[:10]
    report = control.forget_event(script.store, script.session_id, 1)
    (after,) = script.store.list_assembly_logs(script.session_id)
    assert report.log_entries_erased == 1 and after.reasons[0]["text"] == ""


def test_remember_checks_its_input(script: Any) -> None:
    script.user(1, "hello")
    for text, kind in (("   ", None), ("x" * 5000, None), ("好的", "proposal")):
        with pytest.raises(ControlError):
            usecases.remember(script.store, script.session_id, text, kind)


def test_remembering_a_forgotten_text_gets_a_new_id(script: Any) -> None:
    """The user may say on purpose what they had forgotten: a new item, the tombstone stays."""
    first = usecases.remember(script.store, script.session_id, SAID, "decision")
    control.forget_item(script.store, first.item.id)
    again = usecases.remember(script.store, script.session_id, SAID, "decision")
    assert again.created and again.item.id != first.item.id and again.seq == -2
    gone = script.store.get_item(first.item.id)
    assert gone is not None and gone.status == "forgotten"


def test_pins_keep_their_order_and_refuse_forgotten_items(script: Any) -> None:
    """Pins are listed earliest first; unpinning removes one; a forgotten item cannot be pinned
    and leaves the pinned set."""
    one = usecases.remember(script.store, script.session_id, "每次提交前跑 ruff", "constraint")
    two = usecases.remember(script.store, script.session_id, "预算不超过3000元", "constraint")
    control.set_pin(script.store, two.item.id, True)
    control.set_pin(script.store, one.item.id, True)
    assert pinned_ids(script.store, script.session_id) == [two.item.id, one.item.id]
    control.set_pin(script.store, two.item.id, False)
    control.set_pin(script.store, two.item.id, True)
    assert pinned_ids(script.store, script.session_id) == [one.item.id, two.item.id]
    control.forget_item(script.store, one.item.id)
    assert pinned_ids(script.store, script.session_id) == [two.item.id]
    with pytest.raises(ControlError):
        control.set_pin(script.store, one.item.id, True)
