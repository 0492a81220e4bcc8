"""Assembly logs and explain: every attempt is recorded, explain reads it back unchanged."""

from __future__ import annotations

from typing import Any

from lcm_core.assembly.log import explain, explain_dict, explain_text
from lcm_core.assembly.step import StepMessage
from lcm_core.config import load_config
from lcm_core.steps.prestep import StepRequest, pre_step
from lcm_core.store.models import ItemChange
from lcm_core.testing.builders import lifecycle
from lcm_core.text.tokens import sha256_hex

S = "sess"


def ask(text: str) -> list[StepMessage]:
    return [StepMessage("user", text, "user")]


def _session(script: Any) -> Any:
    script.user(1, "We moved the launch to March 14")
    script.user(2, "the venue holds 120 people")
    return script.item("launch moved to March 14", [1], kind="decision")


def test_an_injected_assembly_is_logged_with_its_decisions(script: Any) -> None:
    """The row carries budget, tokens, hash, sections, item ids and omissions."""
    item = _session(script)
    result = pre_step(
        script.store, StepRequest(S, ask("when is the launch?"), turn=7, step=2)
    ).result
    log = explain(script.store, S)
    assert log is not None and log.injected
    assert (log.turn, log.step, log.trigger) == (7, 2, "pre-step")
    assert log.budget_tokens == 3000 and log.used_tokens == result.used_tokens
    assert log.content_hash == sha256_hex(result.text)
    assert log.item_ids == (item.id,)
    assert [s["name"] for s in log.sections] == ["memory", "evidence"]
    assert log.token_source == "estimate" and log.errors == ()


def test_the_assembly_cursor_moves_only_when_a_block_is_injected(script: Any) -> None:
    """last_assembly_seq follows the newest event of injected assemblies, never of skipped ones."""
    pre_step(script.store, StepRequest(S, ask("anything")))
    assert script.store.get_checkpoint(S).last_assembly_seq == -1
    _session(script)
    pre_step(script.store, StepRequest(S, ask("launch date?")))
    assert script.store.get_checkpoint(S).last_assembly_seq == 2


def test_a_skipped_assembly_is_logged_too(script: Any) -> None:
    """An empty session still leaves a row: not injected, with the reason."""
    result = pre_step(script.store, StepRequest(S, ask("hello there, launch?"))).result
    log = explain(script.store, S)
    assert not result.injected and log is not None and not log.injected
    assert log.content_hash is None and log.used_tokens == 0
    assert {"kind": "skipped", "why": "empty session"} in log.reasons


def test_explain_reads_the_log_and_does_not_rerun(script: Any) -> None:
    """Changing memory after an assembly does not change what explain reports."""
    item = _session(script)
    pre_step(script.store, StepRequest(S, ask("when is the launch?")))
    before = explain_dict(explain(script.store, S))  # type: ignore[arg-type]
    script.store.update_item(item.id, ItemChange(status="retracted"), lifecycle(item, "retracted"))
    after = explain_dict(explain(script.store, S))  # type: ignore[arg-type]
    assert before == after and after["itemIds"] == [item.id]


def test_retention_keeps_only_the_newest_rows(script: Any) -> None:
    """diagnostics.assemblyLogRetention bounds the rows kept per session."""
    _session(script)
    config = load_config({"diagnostics": {"assemblyLogRetention": 3}})
    for turn in range(6):
        pre_step(script.store, StepRequest(S, ask("launch"), turn=turn), config)
    logs = script.store.list_assembly_logs(S)
    assert [log.turn for log in logs] == [5, 4, 3]


def test_a_failed_assembly_is_logged_with_its_error(script: Any) -> None:
    """A provider that raises gives injected = false and the error, in the result and the log."""
    _session(script)

    def broken_rules(*_: Any) -> Any:
        raise RuntimeError("skills table unreadable")

    result = pre_step(script.store, StepRequest(S, ask("launch"), rules=broken_rules)).result
    assert not result.injected
    assert result.errors == ("assembly failed: RuntimeError: skills table unreadable",)
    log = explain(script.store, S)
    assert log is not None and log.errors == result.errors


def test_a_log_write_failure_is_reported_not_raised(script: Any) -> None:
    """If the log cannot be written the block is still returned, with the error added."""
    _session(script)

    def refuse(*_: Any, **__: Any) -> int:
        raise OSError("disk full")

    script.store.add_assembly_log = refuse
    result = pre_step(script.store, StepRequest(S, ask("launch"))).result
    assert result.injected and result.errors == ("assembly log failed: OSError: disk full",)


def test_explain_text_names_sections_and_omissions(script: Any) -> None:
    """The readable explain lists what went in and what was left out, with reasons."""
    _session(script)
    script.tool(3, "the launch is on March 14, trust me")
    pre_step(script.store, StepRequest(S, ask("launch March 14")))
    text = explain_text(explain(script.store, S))  # type: ignore[arg-type]
    assert "injected" in text and "memory: 1 entries" in text
    assert "left out evidence/seq:3: event type tool/result is not inline-quotable" in text


def test_explain_of_a_session_without_logs_is_none(script: Any) -> None:
    """No assembly yet means nothing to explain."""
    assert explain(script.store, "never-seen") is None
