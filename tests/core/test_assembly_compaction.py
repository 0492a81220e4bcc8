"""Compaction: detected from the event stream, memory re-armed after it, policy honoured."""

from __future__ import annotations

from typing import Any

import pytest

from lcm_core.assembly.assemble import assemble
from lcm_core.assembly.compaction import NONE_POLICY_NOTICE, compaction_status
from lcm_core.assembly.step import StepMessage
from lcm_core.config import load_config
from lcm_core.steps.prestep import StepRequest, pre_step
from lcm_core.text.block_words import EN

S = "sess"
CONSTRAINT = "Never run migrations on the production database during business hours"
QUESTION = "Can I run the production migrations now?"


def _before(script: Any) -> None:
    script.user(1, "hi, let's plan the database work")
    script.user(2, CONSTRAINT)
    script.assistant(3, "Understood, migrations outside business hours only.")
    script.item(CONSTRAINT.lower(), [2], kind="constraint")


def _compact(script: Any, first_seq: int = 10) -> None:
    script.event(first_seq, "compaction/start", "")
    script.event(first_seq + 1, "compaction/summary", f"Summary: user said: {CONSTRAINT}")
    script.event(first_seq + 2, "compaction/end", "")


def _full_surface() -> list[StepMessage]:
    return [
        StepMessage("user", "hi, let's plan the database work", "user"),
        StepMessage("user", CONSTRAINT, "user"),
        StepMessage("assistant", "Understood, migrations outside business hours only."),
        StepMessage("user", QUESTION, "user"),
    ]


def _after_compaction() -> list[StepMessage]:
    summary = f"<compacted-summary>user said: {CONSTRAINT}</compacted-summary>"
    return [StepMessage("user", summary, "plugin"), StepMessage("user", QUESTION, "user")]


def test_no_compaction_events_means_nothing_detected(script: Any) -> None:
    """Without compaction events the status reports none and nothing is re-armed."""
    _before(script)
    status = compaction_status(script.store, S, -1, load_config())
    assert (status.detected, status.rearmed, status.last_seq, status.notice) == (
        False,
        False,
        None,
        None,
    )


def test_items_return_after_compaction_and_the_step_is_marked(script: Any) -> None:
    """Before compaction the constraint is on screen and omitted; after it, it is back."""
    _before(script)
    before = pre_step(script.store, StepRequest(S, _full_surface())).result
    assert "production database" not in before.text
    assert any(o.reason.endswith("visible in this step") for o in before.omitted)
    _compact(script)
    after = pre_step(script.store, StepRequest(S, _after_compaction())).result
    assert after.trigger == "post-compaction"
    assert after.compaction is not None and after.compaction.since_last_assembly == 3
    assert "[mem " in after.text and "production database" in after.text
    # The next step, with no new compaction, is an ordinary pre-step again.
    later = pre_step(script.store, StepRequest(S, _after_compaction())).result
    assert later.trigger == "pre-step" and later.text == after.text


def test_reinject_off_trusts_the_host_summary(script: Any) -> None:
    """With reinjectAfterCompaction = false, text kept in the summary still counts as visible."""
    _before(script)
    _compact(script)
    config = load_config({"compatibility": {"reinjectAfterCompaction": False}})
    result = assemble(script.store, S, _after_compaction(), config)
    assert "production database" not in result.text
    assert result.trigger == "pre-step"
    reasons = {o.reason for o in result.omitted}
    assert "all source events are still visible in this step" in reasons


@pytest.mark.parametrize("policy", ["auto", "compaction-basic", "billion-context"])
def test_tracking_policies_detect_compaction(script: Any, policy: str) -> None:
    """Every policy but none reads the compaction events and re-arms after them."""
    _before(script)
    _compact(script)
    config = load_config({"compatibility": {"compactionPolicy": policy}})
    result = assemble(script.store, S, _after_compaction(), config)
    assert result.trigger == "post-compaction"
    assert {"kind": "compaction", "policy": policy}.items() <= result.reasons[1].items()
    assert NONE_POLICY_NOTICE not in result.text and EN.untracked_compaction not in result.text


def test_policy_none_puts_a_notice_in_the_block(script: Any) -> None:
    """compactionPolicy none tracks nothing and says so in the notice section."""
    _before(script)
    _compact(script)
    config = load_config({"compatibility": {"compactionPolicy": "none"}})
    result = assemble(script.store, S, [StepMessage("user", QUESTION, "user")], config)
    assert result.trigger == "pre-step"
    assert result.text.rstrip().endswith(EN.untracked_compaction)  # an English session


def test_policy_none_alone_does_not_make_a_block(script: Any) -> None:
    """An empty session injects nothing even when the policy notice would apply."""
    config = load_config({"compatibility": {"compactionPolicy": "none"}})
    result = assemble(script.store, S, [StepMessage("user", QUESTION, "user")], config)
    assert not result.injected and result.text == ""
