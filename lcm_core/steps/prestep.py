"""The pre-step: assemble, skip a block this turn already shows, log, add the repair reminder.

This is the one place the order of the pre-step's stages is written. The DSH sidecar
and the Claude Code hooks reach it through `MemoryRuntime`, the CLI's dry run through
`dry_run`, the golden tests and the benchmarks call `pre_step` directly.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

from lcm_core.assembly.assemble import AssemblyResult, assemble
from lcm_core.assembly.budget import HostWindow
from lcm_core.assembly.candidates import RuleProvider
from lcm_core.assembly.log import log_assembly, to_log
from lcm_core.assembly.packing import TokenMeter
from lcm_core.assembly.step import StepMessage
from lcm_core.config import Config, load_config
from lcm_core.retrieval.shown import Shown
from lcm_core.store.models import AssemblyLog
from lcm_core.store.ports import MemoryStore

DRY_RUN_TRIGGER: Final = "dry-run"
# How many recent assembly logs to read, in widening passes, for a block this turn showed.
SAME_TURN_LOOKBACK: Final = (2, 16, 64)


@dataclass(frozen=True, slots=True)
class StepRequest:
    """Everything one pre-step is asked with; a face fills what its host tells it.

    `messages` are what the model sees in this step (surface, then new messages).
    `query` replaces the step's task text ("" for none: only the task state, the
    resident set and notices). `shown` is what earlier blocks still in context show;
    `in_history` the seqs the host still holds (raw turns among them are not quoted).
    `host` is what the host says of its context size (the budget may be a share of it).
    `log` writes the attempt's row (a live step's injected block also moves the cursor).
    `dry_run` writes nothing a later step depends on: no cursor moves, no reminder is
    taken, and the row (written only with `log`) says `dry-run`.
    """

    session_id: str
    messages: Sequence[StepMessage] = ()
    turn: int | None = None
    step: int | None = None
    query: str | None = None
    token_meter: TokenMeter | None = None
    shown: Shown | None = None
    in_history: frozenset[int] = frozenset()
    rules: RuleProvider | None = None
    trigger: str = "pre-step"
    host: HostWindow | None = None
    dry_run: bool = False
    log: bool = True


@dataclass(frozen=True, slots=True)
class StepOutcome:
    """The assembly (as logged), its log row, and the repair reminder to send beside it."""

    result: AssemblyResult
    # The row as written (its `id` set), or as it would be when nothing was written.
    log: AssemblyLog
    reminder: str | None = None

    @property
    def memory_text(self) -> str:
        """The block's text when it is to be injected, else ""."""
        return self.result.text if self.result.injected else ""

    @property
    def blocks(self) -> tuple[str, ...]:
        """The texts to send, in order: the block, then the reminder as its own text."""
        return tuple(text for text in (self.memory_text, self.reminder) if text)

    @property
    def text(self) -> str:
        """The texts to send as one (a host with a single text field)."""
        return "\n".join(self.blocks)


def pre_step(store: MemoryStore, request: StepRequest, config: Config | None = None) -> StepOutcome:
    """Run the pre-step's stages in order; assembly and logging failures land in the result.

    1. assemble the block; 2. not injected when this turn already shows the same block;
    3. log the attempt (an injected block moves the assembly cursor); 4. take the pending
    repair reminder, which rides beside the block so the logged hash stays the block's.
    """
    config = config if config is not None else load_config()
    result = assemble(
        store,
        request.session_id,
        request.messages,
        config,
        query=request.query,
        turn=request.turn,
        step=request.step,
        token_meter=request.token_meter,
        rules=request.rules,
        trigger=request.trigger,
        shown=request.shown,
        in_history=request.in_history,
        host=request.host,
    )
    result = unless_shown_this_turn(store, result)
    result, row = _log(store, result, config, request)
    if request.dry_run:
        return StepOutcome(result, row)
    from lcm_core.validation.validate import pending_repair_reminder  # a hook's pre-tool skips it

    return StepOutcome(result, row, pending_repair_reminder(store, request.session_id, config))


def dry_run(
    store: MemoryStore, request: StepRequest, config: Config, *, log: bool = False
) -> StepOutcome:
    """The pre-step a person asks for: the block now, logged only with `log`, nothing moved."""
    asked = dataclasses.replace(request, trigger=DRY_RUN_TRIGGER, dry_run=True, log=log)
    return pre_step(store, asked, config)


def unless_shown_this_turn(store: MemoryStore, result: AssemblyResult) -> AssemblyResult:
    """Not injected when this turn already shows the very same block.

    DSH keeps every injected message in the history, so in a tool loop the same block
    would otherwise pile up once per step. After a compaction the earlier copy may be
    gone, so a post-compaction block is always injected.
    """
    if not result.injected or result.turn is None or result.trigger == "post-compaction":
        return result
    # Log rows are decoded whole, so read a few first: step 1 of a turn stops at once.
    for limit in SAME_TURN_LOOKBACK:
        logs = store.list_assembly_logs(result.session_id, limit=limit)
        for log in logs:
            if log.turn != result.turn:
                return result
            if log.injected and log.content_hash == result.content_hash:
                why = f"the same block is already on screen (turn {log.turn}, step {log.step})"
                reasons = (*result.reasons, {"kind": "skipped", "why": why})
                return dataclasses.replace(result, injected=False, reasons=reasons)
        if len(logs) < limit:
            break
    return result


def _log(
    store: MemoryStore, result: AssemblyResult, config: Config, request: StepRequest
) -> tuple[AssemblyResult, AssemblyLog]:
    """Write the attempt's log row; a live step's failure to log is an error, not a raise."""
    row = to_log(result)
    if request.dry_run:
        if row.trigger != DRY_RUN_TRIGGER:
            # The core names the situation (e.g. post-compaction); kept, marked as a dry run.
            row = dataclasses.replace(row, trigger=f"{DRY_RUN_TRIGGER}:{row.trigger}")
        if request.log:  # a person asked for it: a failure is theirs to see
            retention = config.diagnostics.assembly_log_retention
            row = dataclasses.replace(row, id=store.add_assembly_log(row, retention=retention))
        return result, row
    if not request.log:
        return result, row
    try:
        row = dataclasses.replace(row, id=log_assembly(store, result, config))
    except Exception as exc:  # a full disk must not cost the step its memory
        errors = (*result.errors, f"assembly log failed: {type(exc).__name__}: {exc}")
        result = dataclasses.replace(result, errors=errors)
    return result, row


def log_failure(
    store: MemoryStore,
    config: Config,
    request: StepRequest,
    reason: str,
) -> int:
    """Log a step that ran without memory (assembly crashed, the host's deadline passed)."""
    row = AssemblyLog(
        session_id=request.session_id,
        trigger=request.trigger,
        budget_tokens=0,
        used_tokens=0,
        injected=False,
        turn=request.turn,
        step=request.step,
        errors=(reason,),
    )
    return store.add_assembly_log(row, retention=config.diagnostics.assembly_log_retention)
