"""`MemoryRuntime`: the one object a host talks to (capture, pre-step, pre-tool, commands).

Every host-facing method is total: it returns a value and never raises, because memory
must never break the host. Problems are counted in `RuntimeStats` and shown by
`memory status`. The core features (extraction, assembly, validation, preconditions,
skills) are reached through the small `_call_*` functions at the bottom of this file,
so a change of a core API is a one-line change there.
"""

from __future__ import annotations

import dataclasses
import os
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final

from lcm_adapter import hostmsg
from lcm_adapter.envelope.capture import capture_batch, capture_event
from lcm_adapter.paths import resolve_db_url
from lcm_adapter.runtime_state import RuntimeStats
from lcm_core import usecases
from lcm_core.assembly.assemble import AssemblyResult, assemble
from lcm_core.assembly.budget import HostWindow
from lcm_core.assembly.log import log_assembly
from lcm_core.assembly.step import StepMessage
from lcm_core.capture.events import CaptureReport
from lcm_core.config import Config, load_config
from lcm_core.extraction.run import run_extraction
from lcm_core.retrieval.shown import Shown, ShownItems, logged_shown
from lcm_core.skills.ingest import ingest_skills
from lcm_core.store.models import AssemblyLog
from lcm_core.store.ports import MemoryStore
from lcm_core.store.registry import open_store

if TYPE_CHECKING:
    from lcm_adapter.commands import CommandResult

SOURCE_KIND: Final = "long-conversation-memory"
SOURCE_FORM: Final = "snapshot"
# A fixed namespace so the id of the memory message depends only on its inputs.
_MESSAGE_NAMESPACE: Final = uuid.UUID("6f1c2a4e-3b5d-4e8f-9a7b-1c2d3e4f5a6b")
MAX_ERROR_CHARS: Final = 300
ALLOW: Final[dict[str, str]] = {"kind": "allow"}
# How many recent assembly logs to read, in widening passes, for a block this turn showed.
SAME_TURN_LOOKBACK: Final = (2, 16, 64)


def _short(text: str) -> str:
    return text if len(text) <= MAX_ERROR_CHARS else text[: MAX_ERROR_CHARS - 1] + "…"


def configured_project(config: Config) -> str:
    """The project id the user set: `$LCM_PROJECT`, else `memory.project` ("" for none)."""
    return os.environ.get("LCM_PROJECT", "").strip() or config.memory.project.strip()


@dataclass(slots=True)
class MemoryRuntime:
    """Capture, extraction, assembly, preconditions and commands over one store."""

    store: MemoryStore
    config: Config
    stats: RuntimeStats = field(default_factory=RuntimeStats)
    # The host's working folder: relative paths in tool calls and validation scripts
    # resolve against it. None means this process's working folder.
    cwd: str | None = None
    closed: bool = False
    # What our earlier blocks still in the host's history show, read incrementally.
    shown: ShownItems = field(default_factory=ShownItems)
    # Count the items of injected blocks in the assembly logs as shown too (hooks).
    shown_from_logs: bool = False
    # The host's surface events as messages, read once each (a DSH step names them all).
    surface: hostmsg.SurfaceMessages = field(default_factory=hostmsg.SurfaceMessages)

    @classmethod
    def open(
        cls, db_url: str | None = None, config: Config | Mapping[str, Any] | None = None
    ) -> MemoryRuntime:
        """Open the store a URL names (default: the SQLite file under `$DSH_HOME`).

        Raises `StoreError` with a one-line message when the database cannot be opened;
        that is the only method that may raise, since without a store there is nothing
        to run.
        """
        checked = config if isinstance(config, Config) else load_config(config)
        store = open_store(resolve_db_url(db_url))
        return cls(store=store, config=checked)

    # --- capture ---------------------------------------------------------------
    def on_event(self, session_id: str, event: Any) -> CaptureReport:
        """Capture one live host event, then extract and validate what it made new."""
        report = capture_event(self.store, session_id, event, self.config)
        self._after_capture(session_id, report, _event_type(event))
        return report

    def on_events(
        self,
        session_id: str,
        events: Sequence[Any],
        committed: Callable[[CaptureReport], None] | None = None,
    ) -> CaptureReport:
        """Capture a replayed batch (idempotent), then extract and validate once.

        `committed` hears the capture report as soon as the batch is committed, before
        extraction runs, so a caller interrupted during extraction still counts it.
        """
        report = capture_batch(self.store, session_id, events, self.config)
        if committed is not None:
            committed(report)
        types = {_event_type(event) for event in events}
        kind = "user/message" if "user/message" in types else None
        self._after_capture(session_id, report, kind, validate="assistant/message" in types)
        return report

    def _after_capture(
        self,
        session_id: str,
        report: CaptureReport,
        event_type: str | None,
        *,
        validate: bool | None = None,
    ) -> None:
        self.stats.events += report.received
        self.stats.inserted += report.inserted
        if report.inserted:
            self._note_project(session_id)
        if report.errors:
            self.stats.capture_errors += len(report.errors)
            self._note_error(f"capture: {report.errors[0].reason}")
        if report.inserted == 0:
            return  # a duplicate delivery: nothing new to derive
        # Extraction is cursor based, so running it only after a user message is enough;
        # the cursor makes the next run pick up anything an earlier failure left behind.
        if event_type == "user/message":
            try:
                _call_extraction(self.store, session_id, self.config)
            except Exception as exc:
                self.stats.extraction_errors += 1
                self._note_error(f"extraction: {exc!r}")
        if validate if validate is not None else event_type == "assistant/message":
            try:
                _call_validation(self.store, session_id, self.config, self.cwd)
            except Exception as exc:
                self.stats.validation_errors += 1
                self._note_error(f"validation: {exc!r}")

    def note_cwd(self, session_id: str, cwd: str | None) -> None:
        """Record the session's working folder and project (a log header's `cwd`); never raises."""
        try:
            usecases.record_project(self.store, session_id, cwd, configured_project(self.config))
        except Exception as exc:
            self._note_error(f"project: {exc!r}")

    def _note_project(self, session_id: str) -> None:
        """Give a session its project the first time it is captured (from `cwd` or the id set)."""
        try:
            if usecases.needs_project(self.store, session_id):
                configured = configured_project(self.config)
                if configured or self.cwd:
                    usecases.record_project(self.store, session_id, self.cwd, configured)
        except Exception as exc:
            self._note_error(f"project: {exc!r}")

    # --- pre-step --------------------------------------------------------------
    def pre_step(
        self,
        session_id: str,
        messages: Sequence[Any],
        turn: int | None,
        step: int | None,
        token_meter: Any = None,
        *,
        visible_seqs: Sequence[int] | None = None,
        surface_seqs: Sequence[int] | None = None,
        query: str | None = None,
        host: HostWindow | None = None,
    ) -> dict[str, Any] | None:
        """The memory message to append to this step, or None; the attempt is logged.

        `surface_seqs` are the events the host still holds in its history: raw turns
        among them are not quoted again. `query` replaces the step's task text ("" for
        none: only the task state, the resident set and notices). `host` is what the
        host says of its context size (the budget may then be a share of it).
        """
        self.stats.pre_steps += 1
        history = _int_set(surface_seqs)
        try:
            step_messages = hostmsg.step_messages(
                self.store, session_id, messages, visible_seqs, self.surface
            )
            result = _call_assembly(
                self.store,
                session_id,
                step_messages,
                turn,
                step,
                self.config,
                token_meter,
                self._shown(session_id, history),
                history,
                query,
                host,
            )
            result = _unless_shown_this_turn(self.store, result)
            result = _call_log_assembly(self.store, result, self.config)
        except Exception as exc:
            self.stats.pre_step_errors += 1
            self._note_error(f"pre-step: {exc!r}")
            self._log_failure(session_id, turn, step, f"assembly failed: {exc!r}")
            return None
        if result.errors:
            self.stats.pre_step_errors += 1
            self._note_error(f"pre-step: {result.errors[0]}")
        reminder = _call_repair_reminder(self.store, session_id, self.config)
        memory_text = result.text if result.injected else ""
        if not memory_text and not reminder:
            return None
        # A pending repair reminder rides in the same message as its own text block, so
        # the logged assembly (and its hash) stays exactly what assembly produced.
        blocks = [text for text in (memory_text, reminder) if text]
        sections = [_section_ref(section) for section in result.sections] if memory_text else []
        if reminder:
            sections.append({"name": "repair", "text": "validation repair reminder", "refs": []})
        key = "\n".join((session_id, str(turn), str(step), *blocks))
        message = {
            "id": str(uuid.uuid5(_MESSAGE_NAMESPACE, key)),
            "role": "user",
            "content": [{"type": "text", "text": text} for text in blocks],
            "source": {"kind": SOURCE_KIND, "form": SOURCE_FORM, "sections": sections},
        }
        self.stats.injected += 1
        return message

    def _shown(self, session_id: str, history: frozenset[int] = frozenset()) -> Shown:
        """What earlier blocks still in context show; with `shown_from_logs`, also the logs.

        `history` is what the host says it still holds (a compaction keeps a tail of it).
        A host that does not record our blocks in its transcript (Claude Code's hooks)
        leaves only the assembly logs to say what was injected since the compaction.
        """
        shown = self.shown.read(self.store, session_id, history)
        if not self.shown_from_logs:
            return shown
        logged = logged_shown(self.store, session_id)
        return dataclasses.replace(
            shown, items=shown.items | logged.items, seqs=shown.seqs | logged.seqs
        )

    def record_skip(self, session_id: str, turn: int | None, step: int | None, reason: str) -> None:
        """Log that the host went on without memory (deadline passed, sidecar down)."""
        self.stats.host_skips += 1
        self.stats.last_skip = _short(f"turn {turn} step {step}: {reason}")
        self._log_failure(session_id, turn, step, reason, trigger="host-skip")

    def _log_failure(
        self,
        session_id: str,
        turn: int | None,
        step: int | None,
        reason: str,
        *,
        trigger: str = "pre-step",
    ) -> None:
        try:
            log = AssemblyLog(
                session_id=session_id,
                trigger=trigger,
                budget_tokens=0,
                used_tokens=0,
                injected=False,
                turn=turn,
                step=step,
                errors=(_short(reason),),
            )
            usecases.record_assembly(self.store, log, self.config)
        except Exception as exc:  # the log is advisory; a failing store is already counted
            self._note_error(f"assembly log: {exc!r}")

    # --- pre-tool --------------------------------------------------------------
    def pre_tool(
        self, session_id: str, tool: str, args: Any, *, cwd: str | None = None
    ) -> dict[str, str]:
        """`{"kind": "allow"}`, or `{"kind": "deny", "reason": ...}` from a precondition."""
        try:
            reason, problems = _call_preconditions(
                self.store, session_id, tool, args, self.config, cwd or self.cwd
            )
        except Exception as exc:
            self.stats.pre_tool_errors += 1
            self._note_error(f"pre-tool: {exc!r}")
            return dict(ALLOW)  # a broken check must not stop the user's tools
        if problems:
            self._note_error(f"preconditions: {problems[0]}")
        if reason is None:
            return dict(ALLOW)
        self.stats.denials += 1
        return {"kind": "deny", "reason": reason}

    # --- skills ------------------------------------------------------------------
    def refresh_skills(self, base_dir: str | None = None) -> None:
        """Ingest the SKILL.md files `skills.include` selects (nothing when it is empty)."""
        if not self.config.skills.include:
            return
        try:
            _call_skill_ingest(self.store, self.config, base_dir or self.cwd or os.getcwd())
        except Exception as exc:
            self._note_error(f"skills: {exc!r}")

    # --- commands --------------------------------------------------------------
    def command(self, session_id: str, argv: Sequence[str]) -> str:
        """The text of `memory status|explain|inspect|search|export|purge`."""
        return self.command_result(session_id, argv).text

    def command_result(self, session_id: str, argv: Sequence[str]) -> CommandResult:
        """Like `command`, with whether it succeeded (the host shows errors differently)."""
        # Imported here: the slash commands pull in the reports, which a hook never needs.
        from lcm_adapter.commands import CommandResult, run_command

        try:
            return run_command(self, session_id, list(argv))
        except Exception as exc:
            self.stats.command_errors += 1
            self._note_error(f"command: {exc!r}")
            return CommandResult(False, f"memory: command failed: {_short(str(exc) or repr(exc))}")

    # --- lifetime ----------------------------------------------------------------
    def close(self) -> None:
        """Close the store; later calls are harmless."""
        if self.closed:
            return
        self.closed = True
        try:
            self.store.close()
        except Exception as exc:
            self._note_error(f"close: {exc!r}")

    def _note_error(self, text: str) -> None:
        self.stats.last_error = _short(text)


def _unless_shown_this_turn(store: MemoryStore, result: AssemblyResult) -> AssemblyResult:
    """Not injected when this turn already shows the very same block.

    DSH keeps every injected message in the history, so in a tool loop the same block
    would otherwise pile up once per step. After a compaction the earlier copy may be
    gone, so a post-compaction block is always injected.
    """
    if not result.injected or result.turn is None or result.trigger == "post-compaction":
        return result
    # Log rows are decoded whole, so read a few first: step 1 of a turn stops at once.
    for limit in SAME_TURN_LOOKBACK:
        logs = usecases.recent_assemblies(store, result.session_id, limit)
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


def _int_set(values: Sequence[Any] | None) -> frozenset[int]:
    """The integers of a host-sent list (anything else is ignored)."""
    if not values:
        return frozenset()
    return frozenset(v for v in values if isinstance(v, int) and not isinstance(v, bool))


def _section_ref(section: Mapping[str, Any]) -> dict[str, Any]:
    """A section of the block as the host records it: its name, title and sources."""
    return {
        "name": str(section.get("name", "")),
        "text": str(section.get("title", "")),
        "refs": [str(ref) for ref in section.get("refs", ())],
    }


def _event_type(event: Any) -> str | None:
    if isinstance(event, Mapping):
        value = event.get("type")
        return value if isinstance(value, str) else None
    return None


# --- the core features other modules provide -------------------------------------------
# Each call site is one small function, so a change of a core API is a one-line edit.


def _call_extraction(store: MemoryStore, session_id: str, config: Config) -> None:
    report = run_extraction(store, session_id, config)
    if report.errors:  # failed events are queued for retry; count the run as an error
        raise RuntimeError(report.errors[0])


def _call_validation(store: MemoryStore, session_id: str, config: Config, cwd: str | None) -> None:
    from lcm_core.validation.validate import run_validation  # post-step only

    run_validation(store, session_id, config, base_dir=cwd)


def _call_repair_reminder(store: MemoryStore, session_id: str, config: Config) -> str | None:
    from lcm_core.validation.validate import pending_repair_reminder

    return pending_repair_reminder(store, session_id, config)


def _call_assembly(
    store: MemoryStore,
    session_id: str,
    messages: Sequence[StepMessage],
    turn: int | None,
    step: int | None,
    config: Config,
    token_meter: Any,
    shown: Shown,
    in_history: frozenset[int] = frozenset(),
    query: str | None = None,
    host: HostWindow | None = None,
) -> AssemblyResult:
    return assemble(
        store,
        session_id,
        messages,
        config,
        turn=turn,
        step=step,
        token_meter=token_meter,
        shown=shown,
        in_history=in_history,
        query=query,
        host=host,
    )


def _call_log_assembly(
    store: MemoryStore, result: AssemblyResult, config: Config
) -> AssemblyResult:
    try:
        log_assembly(store, result, config)
    except Exception as exc:  # a full disk must not cost the step its memory
        errors = (*result.errors, f"assembly log failed: {type(exc).__name__}: {exc}")
        return dataclasses.replace(result, errors=errors)
    return result


def _call_preconditions(
    store: MemoryStore, session_id: str, tool: str, args: Any, config: Config, cwd: str | None
) -> tuple[str | None, tuple[str, ...]]:
    from lcm_core.validation.preconditions import check_preconditions  # tool steps only

    decision = check_preconditions(config, tool, args, base_dir=cwd)
    return (None if decision.allow else decision.to_host()["reason"]), decision.errors


def _call_skill_ingest(store: MemoryStore, config: Config, base_dir: str) -> None:
    ingest_skills(store, config, base_dir)
