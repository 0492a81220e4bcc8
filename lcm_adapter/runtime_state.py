"""The runtime's counters, and what the `memory` command may read of the runtime.

`commands` and `memory_text` take a `RuntimeView`, not `MemoryRuntime`, so the runtime
imports them and they never import it.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, Protocol

from lcm_adapter.hostmsg import SurfaceMessages
from lcm_core.config import Config
from lcm_core.retrieval.shown import ShownItems
from lcm_core.store.ports import MemoryStore


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
