"""Build the one memory message of a step under a token budget, in fixed section order.

Sections go task, resident, rules-core, rules, memory, evidence, notice. Each candidate
entry costs its tokens (the estimate, or the host's exact meter); whatever does not fit
the step's budget (`budget.py`: the setting, or a share of the host's context) is left
out with a reason. After a host compaction, and until each entry has been shown again,
the task state and the resident set (`resident.py`) come first within
`assembly.residentShare` of the budget, so the step's text never displaces what the
user set down. The insufficient-evidence statement is added only when the step asks
about the past (`recall.py`). The output depends only on stored state, the step's
messages and config: no clock, no randomness. The function the host calls never
raises; a failure comes back as `injected = False` with its errors.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from lcm_core.assembly.budget import HostWindow, StepBudget, step_budget
from lcm_core.assembly.candidates import (
    RuleProvider,
    collect_candidates,
    drop_shown_entries,
    fallback_task_text,
    session_words,
)
from lcm_core.assembly.compaction import CompactionStatus, compaction_status
from lcm_core.assembly.packing import Candidate, Reserve, TokenMeter, choose_meter, pack
from lcm_core.assembly.step import StepMessage, task_text
from lcm_core.capture.private import Scrubber
from lcm_core.config import Config, load_config
from lcm_core.retrieval.rank import ALREADY_SHOWN
from lcm_core.retrieval.ranked import Omission
from lcm_core.retrieval.retriever import Retriever
from lcm_core.retrieval.shown import Shown
from lcm_core.skills.select import rule_provider
from lcm_core.store.ports import MemoryStore
from lcm_core.text.tokens import sha256_hex


@dataclass(frozen=True, slots=True)
class AssemblyResult:
    """The block (possibly empty) and every decision behind it."""

    session_id: str
    text: str = ""
    injected: bool = False
    trigger: str = "pre-step"
    budget_tokens: int = 0
    used_tokens: int = 0
    token_source: str = "estimate"
    sections: tuple[dict[str, Any], ...] = ()
    item_ids: tuple[str, ...] = ()
    evidence_refs: tuple[str, ...] = ()
    omitted: tuple[Omission, ...] = ()
    reasons: tuple[dict[str, Any], ...] = ()
    errors: tuple[str, ...] = ()
    turn: int | None = None
    step: int | None = None
    state_seq: int | None = None
    compaction: CompactionStatus | None = field(default=None, compare=False)

    @property
    def content_hash(self) -> str | None:
        return sha256_hex(self.text) if self.text else None


def assemble(
    store: MemoryStore,
    session_id: str,
    messages: Sequence[StepMessage] = (),
    config: Config | None = None,
    *,
    query: str | None = None,
    turn: int | None = None,
    step: int | None = None,
    token_meter: TokenMeter | None = None,
    rules: RuleProvider | None = None,
    trigger: str = "pre-step",
    shown: Shown | None = None,
    retriever: Retriever | None = None,
    in_history: frozenset[int] = frozenset(),
    host: HostWindow | None = None,
) -> AssemblyResult:
    """Assemble the step's memory block; never raises (errors come back in the result).

    `rules` defaults to the skills provider (resident core plus task-relevant rules).
    `shown` is what earlier memory blocks still in context list: a host runtime keeps
    it incrementally with `ShownItems`, a one-off caller reads it with
    `ShownItems().read(store, session_id)`; by default nothing counts as shown.
    `retriever` finds the candidates (the store's lexical search by default).
    `in_history` are the seqs the host still holds in its history (its surface): raw
    turns among them are not quoted again.
    `host` is what the host says of its context size: the budget is then a share of it
    (`budget.py`), and the log's `budget` reason says which.
    """
    config = config if config is not None else load_config()
    budget = step_budget(config, host)
    base = AssemblyResult(
        session_id, trigger=trigger, budget_tokens=budget.tokens, turn=turn, step=step
    )
    provider = rules if rules is not None else rule_provider
    try:
        return _assemble(
            store,
            session_id,
            messages,
            config,
            base,
            query,
            token_meter,
            provider,
            shown,
            retriever,
            in_history,
            budget,
        )
    except Exception as exc:  # the host's step must go on without memory
        return AssemblyResult(
            session_id,
            trigger=trigger,
            budget_tokens=budget.tokens,
            turn=turn,
            step=step,
            reasons=(budget.to_reason(),),
            errors=(f"assembly failed: {type(exc).__name__}: {exc}",),
        )


def _assemble(
    store: MemoryStore,
    session_id: str,
    messages: Sequence[StepMessage],
    config: Config,
    base: AssemblyResult,
    query: str | None,
    token_meter: TokenMeter | None,
    rules: RuleProvider,
    shown: Shown | None,
    retriever: Retriever | None,
    in_history: frozenset[int],
    budget: StepBudget,
) -> AssemblyResult:
    cost, token_source, errors = choose_meter(token_meter)
    # The step's messages may not be captured yet; they are read as capture will store
    # them, so a private span never reaches the query, the log or the visibility test.
    scrubber = Scrubber.of(config)
    messages = [
        m if m.stored else dataclasses.replace(m, text=scrubber.text(m.text)) for m in messages
    ]
    query = None if query is None else scrubber.text(query)
    if shown is None:
        shown = Shown()
    newest = store.max_event_seq(session_id)
    checkpoint = store.get_checkpoint(session_id)
    status = compaction_status(store, session_id, checkpoint.last_assembly_seq, config)
    trigger = "post-compaction" if status.rearmed else base.trigger
    task = query if query is not None else task_text(messages)
    if task is None:
        task = fallback_task_text(store, session_id, newest)
    words = session_words(store, session_id, config, task, newest)
    candidates, omitted, reasons, has_history = collect_candidates(
        store,
        session_id,
        messages,
        config,
        query=task,  # the text found above, so the fallback's store reads are not repeated
        rules=rules,
        status=status,
        newest=newest,
        turn=base.turn,
        shown=shown,
        retriever=retriever,
        words=words,
        in_history=in_history,
        budget_tokens=budget.tokens,
    )
    reasons = [*reasons, budget.to_reason()]
    candidates, repeated = drop_shown_entries(candidates, shown)
    omitted = [*omitted, *repeated]
    # A policy notice alone is not worth a message: it says nothing about this session.
    content = [c for c in candidates if c.ref != "compaction-policy"]
    if not content:
        if config.assembly.skip_when_empty:
            why = _empty_reason(has_history, omitted)
            return _result(
                base, trigger, token_source, status, newest, omitted, reasons, errors, why
            )
        candidates.append(Candidate("memory", "insufficient-evidence", words.insufficient))
    reserves = [
        Reserve(("standing",), int(base.budget_tokens * config.assembly.rules_share), "rules")
    ]
    if any(c.section == "resident" for c in candidates):
        share = config.assembly.resident_share
        reserves.append(Reserve(("task", "resident"), int(base.budget_tokens * share)))
    text, used, sections, kept, left_out = pack(
        candidates, base.budget_tokens, cost, reserves, words
    )
    omitted.extend(left_out)
    if not kept:
        why = "no entry fits the budget"
        return _result(base, trigger, token_source, status, newest, omitted, reasons, errors, why)
    item_ids = tuple(c.ref for c in kept if c.ref.startswith("mem_"))
    evidence_refs = tuple(
        c.ref for c in kept if c.section == "evidence" and c.ref.startswith("seq:")
    )
    return AssemblyResult(
        session_id=session_id,
        text=text,
        injected=True,
        trigger=trigger,
        budget_tokens=base.budget_tokens,
        used_tokens=used,
        token_source=token_source,
        sections=tuple(sections),
        item_ids=item_ids,
        evidence_refs=evidence_refs,
        omitted=tuple(omitted),
        reasons=tuple(reasons),
        errors=tuple(errors),
        turn=base.turn,
        step=base.step,
        state_seq=newest,
        compaction=status,
    )


def _empty_reason(has_history: bool, omitted: Sequence[Omission]) -> str:
    """Why nothing is injected: no history, nothing relevant, or all of it already shown.

    Items retrieval left out as already listed count too, not only repeated entries: a
    question asked again finds its answer shown, and `explain` should say so.
    """
    if not has_history:
        return "empty session"
    shown = sum(1 for o in omitted if o.reason == ALREADY_SHOWN)
    if shown:
        return f"nothing new since the blocks in context ({shown} already shown)"
    return "nothing relevant to inject"


def _result(
    base: AssemblyResult,
    trigger: str,
    token_source: str,
    status: CompactionStatus,
    newest: int | None,
    omitted: list[Omission],
    reasons: list[dict[str, Any]],
    errors: list[str],
    why: str,
) -> AssemblyResult:
    """A not-injected result that still carries the decisions made on the way."""
    return AssemblyResult(
        session_id=base.session_id,
        injected=False,
        trigger=trigger,
        budget_tokens=base.budget_tokens,
        token_source=token_source,
        omitted=tuple(omitted),
        reasons=(*reasons, {"kind": "skipped", "why": why}),
        errors=tuple(errors),
        turn=base.turn,
        step=base.step,
        state_seq=newest,
        compaction=status,
    )
