"""The core's steps: the pre-step's stages in order, the dry run, capture's follow-up."""

from __future__ import annotations

from typing import Any

from lcm_core.assembly.step import StepMessage
from lcm_core.capture.events import CaptureReport
from lcm_core.config import load_config
from lcm_core.steps.capture import after_capture
from lcm_core.steps.prestep import StepRequest, dry_run, pre_step

S = "sess"
QUESTION = "预算上限是多少？ what is the budget cap?"


def ask(text: str) -> list[StepMessage]:
    return [StepMessage("user", text, "user")]


def _budget(script: Any) -> None:
    script.user(1, "预算上限是 3000 元（含税），the budget cap is 3000 yuan with tax")
    script.item(
        "预算上限是 3000 元（含税）",
        [1],
        kind="constraint",
        numbers=({"raw": "3000 元", "value": 3000, "unit": "元"},),
        conditions=("含税",),
    )


def test_a_turn_that_already_shows_the_block_gets_it_once(script: Any) -> None:
    """Step 2 of a turn is not sent the block step 1 sent; the next turn is, and both are logged."""
    _budget(script)
    first = pre_step(script.store, StepRequest(S, ask(QUESTION), turn=5, step=1))
    again = pre_step(script.store, StepRequest(S, ask(QUESTION), turn=5, step=2))
    later = pre_step(script.store, StepRequest(S, ask(QUESTION), turn=6, step=1))
    assert first.result.injected and "3000" in first.memory_text
    assert not again.result.injected and again.blocks == ()
    why = [r["why"] for r in again.result.reasons if r.get("kind") == "skipped"]
    assert why == ["the same block is already on screen (turn 5, step 1)"]
    assert later.result.injected and later.memory_text == first.memory_text
    logs = script.store.list_assembly_logs(S)
    assert [(log.turn, log.step, log.injected) for log in logs] == [
        (6, 1, True),
        (5, 2, False),
        (5, 1, True),
    ]
    assert first.log.id is not None and first.log.id == logs[-1].id


def test_a_dry_run_shows_the_block_and_moves_nothing(script: Any) -> None:
    """The dry run's text is the pre-step's; without `log` no row is written, no cursor moves."""
    _budget(script)
    config = load_config()
    shown = dry_run(script.store, StepRequest(S, query=QUESTION), config)
    assert shown.result.injected and "3000" in shown.result.text
    assert shown.log.trigger == "dry-run" and shown.log.id is None and shown.reminder is None
    assert script.store.list_assembly_logs(S) == []
    assert script.store.get_checkpoint(S).last_assembly_seq == -1
    logged = dry_run(script.store, StepRequest(S, query=QUESTION), config, log=True)
    (row,) = script.store.list_assembly_logs(S)
    assert row.id == logged.log.id and row.trigger == "dry-run"
    assert script.store.get_checkpoint(S).last_assembly_seq == -1
    live = pre_step(script.store, StepRequest(S, query=QUESTION), config)
    assert live.result.text == shown.result.text
    assert script.store.get_checkpoint(S).last_assembly_seq == 1


def test_capture_follow_up_extracts_after_a_user_message_only(script: Any) -> None:
    """A user message is extracted; an assistant message is validated, not extracted;
    a duplicate delivery runs nothing."""
    script.user(1, "不要使用 Redis，我们只用 PostgreSQL")
    config = load_config()
    new = CaptureReport(received=1, rows=1, inserted=1)
    duplicate = CaptureReport(received=1, rows=1, duplicates=1)
    assert after_capture(script.store, S, duplicate, config, {"user/message"}) == (
        after_capture(script.store, S, duplicate, config, set())
    )
    assert script.store.list_items(S) == []
    told = after_capture(script.store, S, new, config, {"user/message"})
    assert (told.extracted, told.validated, told.extraction_error) == (True, False, None)
    assert any("Redis" in item.content for item in script.store.list_items(S))
    script.assistant(2, "好的，不用 Redis。")
    answered = after_capture(script.store, S, new, config, {"assistant/message", None})
    assert (answered.extracted, answered.validated, answered.validation_error) == (
        False,
        True,
        None,
    )
