"""The host's other steps: a tool call checked against the preconditions, skills refreshed."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from lcm_core.config import Config
from lcm_core.store.ports import MemoryStore

if TYPE_CHECKING:
    from lcm_core.skills.ingest import IngestReport
    from lcm_core.validation.preconditions import PreconditionDecision


def pre_tool(
    config: Config, tool: str, args: Any, base_dir: str | Path | None = None
) -> PreconditionDecision:
    """Allow or deny one tool call by `validation.preconditions`; never raises."""
    from lcm_core.validation.preconditions import check_preconditions  # tool steps only

    return check_preconditions(config, tool, args, base_dir=base_dir)


def refresh_skills(store: MemoryStore, config: Config, base_dir: str | Path) -> IngestReport | None:
    """Ingest the SKILL.md files `skills.include` selects; None when it selects none."""
    if not config.skills.include:
        return None
    from lcm_core.skills.ingest import ingest_skills

    return ingest_skills(store, config, base_dir)
