"""The runtime's counters, and what the `memory` command may read of the runtime.

`commands` and `memory_text` take a `RuntimeView`, not `MemoryRuntime`, so the runtime
imports them and they never import it.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, Final, Protocol

from lcm_adapter.hostmsg import SurfaceMessages
from lcm_core.capture.events import CaptureReport
from lcm_core.config import Config
from lcm_core.retrieval.shown import ShownItems
from lcm_core.steps.capture import FollowUp
from lcm_core.store.ports import MemoryStore

MAX_ERROR_CHARS: Final = 300


def short(text: str) -> str:
    """The text cut to `MAX_ERROR_CHARS`, an ellipsis marking the cut."""
    return text if len(text) <= MAX_ERROR_CHARS else text[: MAX_ERROR_CHARS - 1] + "…"


@dataclass(slots=True)
class RuntimeStats:
    """Counters of what this runtime did and what went wrong, since it was opened."""

    events: int = 0
    inserted: int = 0
    capture_errors: int = 0
    extraction_errors: int = 0
    validation_errors: int = 0
    pre_steps: int = 0
    injected: int = 0
    pre_step_errors: int = 0
    host_skips: int = 0
    pre_tool_errors: int = 0
    denials: int = 0
    command_errors: int = 0
    last_error: str | None = None
    last_skip: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    def note(self, text: str) -> None:
        """Keep the latest problem (cut short) for `memory status`."""
        self.last_error = short(text)

    def note_capture(self, report: CaptureReport, follow: FollowUp) -> None:
        """Count a capture and its follow-up; the last problem is kept."""
        self.events += report.received
        self.inserted += report.inserted
        if follow.project_error is not None:
            self.note(f"project: {follow.project_error}")
        if report.errors:
            self.capture_errors += len(report.errors)
            self.note(f"capture: {report.errors[0].reason}")
        if follow.extraction_error is not None:
            self.extraction_errors += 1
            self.note(f"extraction: {follow.extraction_error}")
        if follow.validation_error is not None:
            self.validation_errors += 1
            self.note(f"validation: {follow.validation_error}")


class RuntimeView(Protocol):
    """What the `memory` command reads and resets of the runtime that runs it."""

    @property
    def store(self) -> MemoryStore: ...

    @property
    def config(self) -> Config: ...

    @property
    def stats(self) -> RuntimeStats: ...

    @property
    def shown(self) -> ShownItems: ...

    @property
    def surface(self) -> SurfaceMessages: ...
