"""`MemoryRuntime`: the one object a host talks to (capture, pre-step, pre-tool, commands).

It keeps one host process's state (counters, working folder, what our blocks in the
history show) and leaves the order of the steps to the core (`lcm_core.steps`); its
`parser` reads the host's format, its `builder` writes the message (DSH's by default).
Every host-facing method is total: memory must never break the host, so problems are
counted in `RuntimeStats` (`memory status`), never raised.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final

from lcm_adapter import hostmsg
from lcm_adapter.paths import resolve_db_url
from lcm_adapter.runtime_state import RuntimeStats, short
from lcm_adapter.settings import configured_project
from lcm_core.assembly.budget import HostWindow
from lcm_core.assembly.step import StepMessage
from lcm_core.capture.events import CaptureReport
from lcm_core.capture.project import record_project
from lcm_core.capture.record import NewEvent, parse_new_event
from lcm_core.config import Config, load_config
from lcm_core.retrieval.shown import Shown, ShownItems, logged_shown
from lcm_core.steps import capture as capturing
from lcm_core.steps import tools
from lcm_core.steps.prestep import StepOutcome, StepRequest, log_failure, pre_step
from lcm_core.store.ports import MemoryStore
from lcm_core.store.registry import open_store

if TYPE_CHECKING:
    from lcm_adapter.commands import CommandResult

ALLOW: Final[dict[str, str]] = {"kind": "allow"}
Committed = Callable[[CaptureReport], None]


@dataclass(slots=True)
class MemoryRuntime:
    """One host's state over one store; the steps themselves are the core's."""

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
    parser: hostmsg.HostParser = field(default_factory=hostmsg.DshParser)
    builder: hostmsg.MessageBuilder = hostmsg.dsh_message

    @classmethod
    def open(
        cls, db_url: str | None = None, config: Config | Mapping[str, Any] | None = None
    ) -> MemoryRuntime:
        """Open the store a URL names (default: the SQLite file under `$DSH_HOME`).

        The only method that may raise (`StoreError`, one line): without a store there
        is nothing to run.
        """
        checked = config if isinstance(config, Config) else load_config(config)
        store = open_store(resolve_db_url(db_url))
        return cls(store=store, config=checked)

    # --- capture ---------------------------------------------------------------
    def on_event(self, session_id: str, event: Any) -> CaptureReport:
        """Capture one live host event, then extract and validate what it made new."""
        return self.on_events(session_id, [event])

    def on_events(
        self, session_id: str, events: Sequence[Any], committed: Committed | None = None
    ) -> CaptureReport:
        """Capture a replayed batch of host events (idempotent), then extract and validate once.

        `committed` hears the report once the batch is committed, before extraction, so a
        caller interrupted during extraction still counts it."""
        parse = self.parser.envelope
        report = capturing.capture(self.store, session_id, events, self.config, parse)
        if committed is not None:
            committed(report)
        return self._follow(session_id, report, {self.parser.event_type(e) for e in events})

    def on_records(self, session_id: str, events: Sequence[NewEvent]) -> CaptureReport:
        """Capture events a face built in the core's own terms (Claude Code's lines), alike."""
        report = capturing.capture(self.store, session_id, events, self.config, parse_new_event)
        return self._follow(session_id, report, {event.type for event in events})

    def _follow(self, session_id: str, report: CaptureReport, types: set[Any]) -> CaptureReport:
        """The core's follow-up of a capture (project, extraction, validation), counted."""
        project = configured_project(self.config)
        follow = capturing.after_capture(
            self.store, session_id, report, self.config, types, base_dir=self.cwd, project=project
        )
        self.stats.note_capture(report, follow)
        return report

    def note_cwd(self, session_id: str, cwd: str | None) -> None:
        """Record the session's working folder and project (a log header's `cwd`); never raises."""
        try:
            record_project(self.store, session_id, cwd, configured_project(self.config))
        except Exception as exc:
            self.stats.note(f"project: {exc!r}")

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
        """The host's message to append to this step (its `builder`'s), or None; logged.

        The `parser` reads `messages` and the stored `visible_seqs`; `surface_seqs` are the
        events the host still holds (raw turns among them are not quoted again); `query`
        replaces the task text ("" for none); `host` is what the host says of its context.
        """

        def read() -> Sequence[StepMessage]:
            return self.parser.step_messages(
                self.store, session_id, messages, visible_seqs, self.surface
            )

        history = hostmsg.int_set(surface_seqs)
        request = StepRequest(
            session_id, (), turn, step, query, token_meter, in_history=history, host=host
        )
        outcome = self.step(request, read)
        return None if outcome is None else self.builder(session_id, turn, step, outcome)

    def step(
        self, request: StepRequest, read: Callable[[], Sequence[StepMessage]] | None = None
    ) -> StepOutcome | None:
        """The core's pre-step with this host's state (what our blocks show; `read` gives
        the messages when the host's must be parsed); None when there is nothing to send."""
        self.stats.pre_steps += 1
        turn, step = request.turn, request.step
        try:
            messages = read() if read is not None else request.messages
            shown = self._shown(request.session_id, request.in_history)
            asked = dataclasses.replace(request, messages=messages, shown=shown)
            outcome = pre_step(self.store, asked, self.config)
        except Exception as exc:
            self.stats.pre_step_errors += 1
            self.stats.note(f"pre-step: {exc!r}")
            failed = f"assembly failed: {exc!r}"
            self._log_failure(request.session_id, turn, step, failed, "pre-step")
            return None
        if outcome.result.errors:
            self.stats.pre_step_errors += 1
            self.stats.note(f"pre-step: {outcome.result.errors[0]}")
        if not outcome.blocks:
            return None
        self.stats.injected += 1
        return outcome

    def _shown(self, session_id: str, history: frozenset[int]) -> Shown:
        """What earlier blocks still in the host's `history` (the seqs it holds) show; with
        `shown_from_logs` also the logs (a host keeping no copy of them: Claude's hooks)."""
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
        self.stats.last_skip = short(f"turn {turn} step {step}: {reason}")
        self._log_failure(session_id, turn, step, reason, "host-skip")

    def _log_failure(
        self, session_id: str, turn: int | None, step: int | None, reason: str, trigger: str
    ) -> None:
        try:
            request = StepRequest(session_id, turn=turn, step=step, trigger=trigger)
            log_failure(self.store, self.config, request, short(reason))
        except Exception as exc:  # the log is advisory; a failing store is already counted
            self.stats.note(f"assembly log: {exc!r}")

    # --- pre-tool and skills -----------------------------------------------------
    def pre_tool(
        self, session_id: str, tool: str, args: Any, *, cwd: str | None = None
    ) -> dict[str, str]:
        """`{"kind": "allow"}`, or `{"kind": "deny", "reason": ...}` from a precondition."""
        try:
            decision = tools.pre_tool(self.config, tool, args, cwd or self.cwd)
        except Exception as exc:
            self.stats.pre_tool_errors += 1
            self.stats.note(f"pre-tool: {exc!r}")
            return dict(ALLOW)  # a broken check must not stop the user's tools
        if decision.errors:
            self.stats.note(f"preconditions: {decision.errors[0]}")
        self.stats.denials += not decision.allow
        return decision.to_host()

    def refresh_skills(self, base_dir: str | None = None) -> None:
        """Ingest the SKILL.md files `skills.include` selects (nothing when it is empty)."""
        try:
            tools.refresh_skills(self.store, self.config, base_dir or self.cwd or os.getcwd())
        except Exception as exc:
            self.stats.note(f"skills: {exc!r}")

    # --- commands and lifetime ---------------------------------------------------
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
            self.stats.note(f"command: {exc!r}")
            return CommandResult(False, f"memory: command failed: {short(str(exc) or repr(exc))}")

    def close(self) -> None:
        """Close the store; later calls are harmless."""
        if self.closed:
            return
        self.closed = True
        try:
            self.store.close()
        except Exception as exc:
            self.stats.note(f"close: {exc!r}")
