"""Validation runs: configured checks over new assistant messages, logged, with bounded repair.

Flow: `run_validation` reads the session's `assistant/message` events after its cursor,
evaluates every configured check on each, stores one `validation_logs` row per message
and moves the cursor. A message *blocks* only when a violated check is deterministic,
has error severity, is configured to block (its own `block`, else `blockOnViolation`),
and the session has repair attempts left (`maxRepairAttempts`). A blocked run leaves a
pending repair reminder that `pending_repair_reminder` turns into a short, labelled text
for the next pre-step; the next clean run clears it. Attempts are counted per session
and never reset, so a model that cannot comply is reminded at most that many times.

State lives in store meta: `validation.last_seq.<session>`, `validation.attempts.<session>`
and `validation.pending.<session>` (JSON, or empty when nothing is pending).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Final

from lcm_core.config import Config
from lcm_core.retrieval.inspection import verbatim_text
from lcm_core.store.models import ValidationLog
from lcm_core.store.ports import AdminStore, MemoryStore
from lcm_core.validation.checks import CHECKS, CheckContext, CheckOutcome, check_id

TARGET_TYPE: Final = "assistant/message"
MAX_EVENTS_PER_RUN: Final = 200
REMINDER_MAX_ITEMS: Final = 5
REMINDER_ITEM_CHARS: Final = 200
REMINDER_LABEL: Final = "[校验修复提醒 · validation repair reminder"


def cursor_key(session_id: str) -> str:
    return f"validation.last_seq.{session_id}"


def attempts_key(session_id: str) -> str:
    return f"validation.attempts.{session_id}"


def pending_key(session_id: str) -> str:
    return f"validation.pending.{session_id}"


@dataclass(frozen=True, slots=True)
class Evaluation:
    """Every configured check applied to one text."""

    checked: int
    skipped: int
    deterministic: bool
    violations: tuple[dict[str, Any], ...]
    errors: tuple[str, ...]

    @property
    def ok(self) -> bool:
        return not self.violations and not self.errors

    @property
    def blocking(self) -> tuple[dict[str, Any], ...]:
        """The violations that may block (before counting repair attempts)."""
        return tuple(v for v in self.violations if v.get("block"))


@dataclass(frozen=True, slots=True)
class RepairState:
    """How many reminders the session has had, and the one waiting, if any."""

    attempts: int
    max_attempts: int
    pending: dict[str, Any] | None


def _script_dir(script_dir: str, base_dir: str | Path | None) -> Path | None:
    """Where the user's check scripts live: `validation.scriptDir`, relative to `base_dir`."""
    raw = str(script_dir or "").strip()
    if not raw:
        return None
    path = Path(raw).expanduser()
    return path if path.is_absolute() else Path(base_dir or ".") / path


def evaluate(
    text: str,
    config: Config,
    *,
    base_dir: str | Path | None = None,
    session_id: str = "",
    event_seq: int | None = None,
) -> Evaluation:
    """Apply `validation.checks` to one text; bad settings and failing scripts become errors."""
    ctx = CheckContext(_script_dir(config.validation.script_dir, base_dir), session_id, event_seq)
    block_default = config.validation.block_on_violation
    checked = skipped = 0
    deterministic = True
    violations: list[dict[str, Any]] = []
    errors: list[str] = []
    for index, check in enumerate(config.validation.checks):
        if not isinstance(check, dict):
            errors.append(
                f"check #{index}: expected an object, got {type(check).__name__}; skipped"
            )
            skipped += 1
            continue
        name, kind = check_id(check, index), check.get("type")
        runner = CHECKS.get(kind) if isinstance(kind, str) else None
        if runner is None:
            errors.append(f"{name}: unknown check type {kind!r}; skipped")
            skipped += 1
            continue
        try:
            outcome = runner(text, check, ctx)
        except Exception as exc:  # a bug in one check must not hide the others
            outcome = CheckOutcome(ran=False, errors=[f"failed: {type(exc).__name__}: {exc}"])
        errors.extend(f"{name}: {line}" for line in outcome.errors)
        if not outcome.ran:
            skipped += 1
            continue
        checked += 1
        deterministic = deterministic and outcome.deterministic
        severity = "warning" if check.get("severity") == "warning" else "error"
        wants_block = check.get("block") if isinstance(check.get("block"), bool) else block_default
        for violation in outcome.violations:
            violations.append(
                {
                    "check": name,
                    "type": kind,
                    "severity": severity,
                    "deterministic": outcome.deterministic,
                    "block": bool(wants_block and outcome.deterministic and severity == "error"),
                    **violation,
                }
            )
    return Evaluation(checked, skipped, deterministic, tuple(violations), tuple(errors))


def _int_meta(store: AdminStore, key: str, default: int) -> int:
    raw = store.get_meta(key)
    try:
        return int(raw) if raw not in (None, "") else default
    except ValueError:
        return default


def repair_state(store: MemoryStore, session_id: str, config: Config) -> RepairState:
    """The session's repair bookkeeping as stored."""
    pending: dict[str, Any] | None = None
    raw = store.get_meta(pending_key(session_id))
    if raw:
        try:
            loaded = json.loads(raw)
            pending = loaded if isinstance(loaded, dict) else None
        except ValueError:
            pending = None
    return RepairState(
        attempts=_int_meta(store, attempts_key(session_id), 0),
        max_attempts=config.validation.max_repair_attempts,
        pending=pending,
    )


def _validate_event(
    store: MemoryStore,
    session_id: str,
    seq: int,
    text: str,
    config: Config,
    base_dir: str | Path | None,
) -> ValidationLog:
    result = evaluate(text, config, base_dir=base_dir, session_id=session_id, event_seq=seq)
    state = repair_state(store, session_id, config)
    errors = list(result.errors)
    blocked = False
    if result.blocking and state.attempts < state.max_attempts:
        blocked = True
        attempt = state.attempts + 1
        store.set_meta(attempts_key(session_id), str(attempt))
        pending = {
            "seq": seq,
            "attempt": attempt,
            "max": state.max_attempts,
            "violations": list(result.blocking),
        }
        store.set_meta(
            pending_key(session_id), json.dumps(pending, ensure_ascii=False, sort_keys=True)
        )
    else:
        if result.blocking:
            errors.append(
                f"repair attempts used up ({state.attempts} of {state.max_attempts}); violations logged without blocking"
            )
        if state.pending is not None:
            store.set_meta(pending_key(session_id), "")
    log = ValidationLog(
        session_id=session_id,
        target=f"{TARGET_TYPE} seq:{seq}",
        ok=result.ok,
        event_seq=seq,
        checked=result.checked,
        skipped=result.skipped,
        deterministic=result.deterministic,
        blocked=blocked,
        violations=result.violations,
        errors=tuple(errors),
    )
    log_id = store.add_validation_log(log)
    return replace(log, id=log_id)


def run_validation(
    store: MemoryStore,
    session_id: str,
    config: Config,
    *,
    base_dir: str | Path | None = None,
    limit: int = MAX_EVENTS_PER_RUN,
) -> list[ValidationLog]:
    """Validate the assistant messages committed since the last run; returns the new log rows.

    Never raises: a failure stops the run where it is, and the next call resumes there.
    With no checks configured the cursor simply moves to the newest event, so turning
    checks on later does not replay the whole history.
    """
    logs: list[ValidationLog] = []
    try:
        cursor = _int_meta(store, cursor_key(session_id), -1)
        if not config.validation.checks:
            newest = store.max_event_seq(session_id)
            if newest is not None and newest > cursor:
                store.set_meta(cursor_key(session_id), str(newest))
            return logs
        events = store.list_events(
            session_id, start_seq=cursor + 1, types=[TARGET_TYPE], limit=max(1, limit)
        )
        for event in events:
            with store.transaction():
                logs.append(
                    _validate_event(
                        store, session_id, event.seq, verbatim_text(store, event), config, base_dir
                    )
                )
                store.set_meta(cursor_key(session_id), str(event.seq))
    except Exception:  # the host's turn goes on; the cursor says where to resume
        return logs
    return logs


def _clip(text: str, limit: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def repair_reminder_text(pending: dict[str, Any]) -> str:
    """The labelled, bounded reminder for one pending repair."""
    violations = [v for v in pending.get("violations", []) if isinstance(v, dict)]
    lines = [
        f"{REMINDER_LABEL} {pending.get('attempt', '?')}/{pending.get('max', '?')}]",
        f"The previous assistant message (seq {pending.get('seq', '?')}) failed configured deterministic "
        "checks. Fix these in the next reply:",
    ]
    for violation in violations[:REMINDER_MAX_ITEMS]:
        detail = f"{violation.get('type', 'check')} {violation.get('check', '')}: {violation.get('message', '')}"
        lines.append("- " + _clip(detail, REMINDER_ITEM_CHARS))
    if len(violations) > REMINDER_MAX_ITEMS:
        lines.append(f"- … and {len(violations) - REMINDER_MAX_ITEMS} more")
    lines.append(
        "This reminder comes from the memory plugin's validation settings, not from the user."
    )
    return "\n".join(lines)


def pending_repair_reminder(store: MemoryStore, session_id: str, config: Config) -> str | None:
    """The repair reminder the next pre-step should show, or None; reads only, never raises."""
    try:
        pending = repair_state(store, session_id, config).pending
        return repair_reminder_text(pending) if pending else None
    except Exception:
        return None
